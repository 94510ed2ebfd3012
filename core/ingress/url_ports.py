"""A URL's port, checked before anything connects with it.

A port outside 0-65535 (`http://127.0.0.1:99999/`, a typo away from a real one) passed every
check and reached the socket, whose OverflowError came back as a 137-line ExceptionGroup
traceback. Every URL parley is given (a deployed bot's, a YAML bot's `base_url`, a model's
`*_BASE_URL`) is checked here first, and a bad port is one line.
"""

from __future__ import annotations

from urllib.parse import urlsplit

__all__ = ["port_problem"]


def port_problem(url: str) -> str | None:
    """Why the port of `url` is not one a connection can use (None: it has none, or a good one)."""
    parts = urlsplit(url)
    try:
        port = parts.port  # ValueError for a port out of range or not a number
    except ValueError:
        return f"its port {parts.netloc.rpartition(':')[2]!r} is not a number from 0 to 65535"
    return None if port is None or 0 <= port <= 65535 else f"its port {port} is not a number from 0 to 65535"
