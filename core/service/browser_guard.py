"""The service without a token: only what the machine itself sends, never a web page.

`parley serve` without a token (the default) listens on loopback, where any program of the
machine's user may call it; but a web page the user opens can reach loopback too:
- through DNS rebinding (a name the attacker controls first resolves to their server, then to
  127.0.0.1: the page's own origin then talks to the service, Host header and all), so without
  a token a request whose Host is not a loopback name (localhost, 127.x.x.x, [::1]) nor one
  named with `--allow-host` is refused (403);
- by a cross-origin request (`POST /api/batches/latest/cancel` needs no body a browser would
  hold back), so a request whose Origin is not the service's own is refused (403).
Programs (curl, `parley submit`, a CI job) send no Origin and a loopback Host: they are served.
With a token the guard steps aside: a browser cannot send the bearer header across origins
without the service's consent, which it never gives.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterable
from typing import Any

__all__ = ["BrowserGuard", "host_problem", "loopback_name"]

LOOPBACK_NAMES = frozenset({"localhost", "localhost."})


def _host_name(host: str) -> str:
    """The name of a Host header, without its port ("[::1]:5000" -> "::1")."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host[1:]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def loopback_name(name: str) -> bool:
    """Whether `name` is this machine by any of its loopback names."""
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def host_problem(host: str | None, allowed: Iterable[str]) -> str | None:
    """Why the service without a token does not answer a request with this Host header (None: it does)."""
    if not host:
        return None  # HTTP/1.0 without a Host: no browser sends that
    name = _host_name(host)
    if loopback_name(name) or name in allowed:
        return None
    return (
        f"the Host {host!r} is not this machine: without a token the service answers only its loopback names "
        "(localhost, 127.0.0.1, [::1]) and those given with --allow-host (or give it a token: PARLEY_API_TOKEN)"
    )


class BrowserGuard:
    """Refuses (403), when the service has no token, a request for another Host or from another origin."""

    def __init__(self, app: Any, token: str | None, allowed_hosts: Iterable[str] = ()) -> None:
        self.app = app
        self.active = token is None
        self.allowed = frozenset(_host_name(host) for host in allowed_hosts)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if not self.active or scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {name.lower(): value.decode("latin-1") for name, value in scope.get("headers", [])}
        host = headers.get(b"host")
        problem = host_problem(host, self.allowed)
        origin = headers.get(b"origin")
        if problem is None and origin is not None and origin.rstrip("/") != f"{scope.get('scheme', 'http')}://{host}":
            problem = (
                f"a request from the web page {origin!r}: without a token the service answers only programs "
                "and its own origin, never another site (give it a token to be called from a browser)"
            )
        if problem is None:
            await self.app(scope, receive, send)
            return
        body = json.dumps({"detail": problem}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 403,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": body})
