"""Which bots the batch service may run: connector URLs named over the API must be on a host its
operator allows (`parley serve --allow-bot-host HOST[:PORT]`, none by default), and a Python bot
(`python:MODULE:NAME`) or a check written in Python (`expect.python`) is run only when the
operator says so (`parley serve --allow-python-bots`): it imports a module and calls its code on
the server, which is code execution.

A client that names `rasa:URL` or `taskyto:URL` makes the service post to that URL and read an
excerpt of the reply back in the results: without this list, anyone who can reach the API could
make the service probe its own network (a server-side request forgery). `parley run` is not
affected: whoever runs it already has the network the service would be reaching into.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from parley.core.errors import ConfigError

ALLOW_OPTION = "--allow-bot-host"
ALLOW_PYTHON_OPTION = "--allow-python-bots"


@dataclass(frozen=True)
class AllowedHost:
    """One `--allow-bot-host` value: a host name or address, and a port (None: any port)."""

    host: str
    port: int | None = None

    def allows(self, host: str, port: int) -> bool:
        return self.host == host and (self.port is None or self.port == port)


def parse_allowed_host(text: str) -> AllowedHost:
    """`HOST`, `HOST:PORT`, `[IPv6]` or `[IPv6]:PORT`; ConfigError saying the form otherwise."""
    raw = text.strip()
    try:
        parts = urlsplit(f"//{raw}")
        host, port = parts.hostname, parts.port
    except ValueError:
        host, port = None, None
    if not raw or not host or "/" in raw or "@" in raw or parts.path or parts.query:
        raise ConfigError(f"{ALLOW_OPTION} {text!r}: give HOST or HOST:PORT, e.g. 127.0.0.1:5005 or bots.example.com")
    return AllowedHost(host=host.lower(), port=port)


def _host_port(url: str) -> tuple[str, int] | None:
    try:
        parts = urlsplit(url.strip())
        host, port = parts.hostname, parts.port
    except ValueError:
        return None
    if not host:
        return None
    return host.lower(), port or (443 if parts.scheme == "https" else 80)


def bot_host_problem(bot: str | None, allowed: Sequence[AllowedHost]) -> str | None:
    """Why the service may not call `bot` (a `--bot` value), or None: model names are always
    fine; a connector's URL must be on an allowed host."""
    from parley.core.bots import parse_bot_spec

    try:
        spec = parse_bot_spec(bot)
    except ConfigError:
        return None  # not a bot name at all: the request's validation says so
    if spec.kind not in ("rasa", "taskyto"):
        return None
    found = _host_port(spec.target)
    if found is None:
        return f"{bot!r} names no host"
    host, port = found
    if any(a.allows(host, port) for a in allowed):
        return None
    shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    return (
        f"this service does not call bots at {shown}: connector URLs must be on a host its operator allows "
        f"(none is allowed by default). To allow this one, start the service with `parley serve {ALLOW_OPTION} {shown}`"
    )


def python_bot_problem(bot: str | None, allowed: bool) -> str | None:
    """Why the service may not run `bot`, a Python bot, or None (any other bot, or allowed)."""
    from parley.core.bots import parse_bot_spec

    if allowed:
        return None
    try:
        spec = parse_bot_spec(bot)
    except ConfigError:
        return None  # not a bot name at all: the request's validation says so
    if spec.kind != "python":
        return None
    return python_refusal(f"Python bots ({bot}): a python: bot")


def python_check_problem(target: str) -> str:
    """Why the service does not run a check written in Python (`expect.python`), when its operator
    has not allowed Python: the same refusal as a Python bot's."""
    return python_refusal(f"checks written in Python ({target}): such a check")


def python_refusal(what: str) -> str:
    """The refusal of code the service would import and run: `what` names it and what it is."""
    return (
        f"this service does not run {what} imports a module and runs its code on the server. "
        f"Its operator allows Python (bots and checks) by starting it with `parley serve {ALLOW_PYTHON_OPTION}`"
    )
