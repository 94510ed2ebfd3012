"""Is anyone there? One request to each endpoint a batch will call, before it launches.

An endpoint that cannot be reached at all (no server on the port, a wrong host) would otherwise
cost every conversation its retries before each records the same "cannot reach" error. Any HTTP
answer, whatever its status (401, 404...), means something is listening: that is all this asks.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import httpx

from parley.core.errors import ParleyError

PROBE_TIMEOUT_S = 3.0


class UnreachableEndpoint(ParleyError):
    """A role's endpoint did not answer at all: the batch is not started. `role` says whose."""

    def __init__(self, message: str, *, role: str) -> None:
        super().__init__(message)
        self.role = role


@dataclass(frozen=True)
class Target:
    """An endpoint a role of the batch calls: who (role, model or connector name) and where."""

    role: str
    name: str
    url: str
    """What is shown (the base URL)."""
    probe_url: str
    """What is asked (a GET; any HTTP status is an answer)."""


async def why_unreachable(url: str, *, timeout_s: float = PROBE_TIMEOUT_S) -> str | None:
    """None when something answers a GET to `url` (any status), else why nothing did."""
    try:
        async with httpx.AsyncClient(timeout=timeout_s, follow_redirects=False) as client:
            await client.get(url)
    except httpx.TimeoutException:
        return f"no answer within {timeout_s:g} s"
    except httpx.TransportError as exc:
        return _reason(exc)
    return None


def _reason(exc: Exception) -> str:
    text = str(exc) or type(exc).__name__
    lowered = text.lower()
    if "refused" in lowered or "all connection attempts failed" in lowered:
        return "the connection was refused (is the server running?)"
    if "name or service not known" in lowered or "nodename nor servname" in lowered or "name resolution" in lowered:
        return "the host name does not resolve"
    return text


async def check_reachable(targets: list[Target], *, timeout_s: float = PROBE_TIMEOUT_S) -> None:
    """Probe every target at once (each URL once); UnreachableEndpoint, one line naming the role
    and the URL, for the first that does not answer."""
    unique = {t.probe_url: t for t in targets}
    answers = await asyncio.gather(*(why_unreachable(url, timeout_s=timeout_s) for url in unique))
    for target, why in zip(unique.values(), answers, strict=True):
        if why is not None:
            raise UnreachableEndpoint(
                f"cannot reach the {target.role}'s endpoint {target.url} ({target.name}): {why}; nothing was run", role=target.role
            )
