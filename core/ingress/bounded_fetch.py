"""One HTTP request to a server parley does not control, bounded in time and in size.

httpx's timeouts bound each step (connect, each read), not the whole: a server that sends one
byte every two seconds never trips a 3-second read timeout, and `response.read()` keeps an
endless body in memory. `fetch_bounded` gives the request one deadline from connect to the
last byte (`asyncio.timeout`) and streams the body, keeping at most `max_bytes` of it: past
that the connection is dropped and `ReplyTooLarge` says so (with `keep_partial`, the first
`max_bytes` are returned instead, for callers that only want to peek).

Redirects are never followed here: a 3xx comes back as it is, and the caller says what it
means (`location` is where it pointed).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

import httpx

from parley.core.errors import ParleyError


class ReplyTooLarge(ParleyError):
    """A reply's body passed the size limit; it was not read further."""

    def __init__(self, message: str, *, status: int, max_bytes: int) -> None:
        super().__init__(message)
        self.status = status
        self.max_bytes = max_bytes


@dataclass(frozen=True)
class FetchedReply:
    """What a bounded request brought back: the status, the headers and at most the size
    limit's worth of body (`truncated`: there was more, and it was not read)."""

    status: int
    headers: httpx.Headers
    body: bytes
    truncated: bool = False
    timed_out: bool = False
    """With `keep_partial`: the deadline passed while the body was read (`truncated` too)."""
    encoding: str | None = None

    @property
    def location(self) -> str | None:
        """Where a redirect points (the Location header), None when there is none."""
        location: str | None = self.headers.get("location")
        return location

    @property
    def is_redirect(self) -> bool:
        return 300 <= self.status < 400

    @property
    def text(self) -> str:
        return self.body.decode(self.encoding or "utf-8", errors="replace")

    def json(self) -> Any:
        """The body as JSON; ValueError when it is not (a truncated body never is)."""
        if self.truncated:
            raise ValueError("the body was cut at the size limit")
        return json.loads(self.body)


async def fetch_bounded(
    client: httpx.AsyncClient,
    method: str,
    url: str,
    *,
    deadline_s: float,
    max_bytes: int,
    keep_partial: bool = False,
    **request: Any,
) -> FetchedReply:
    """`method url` through `client`, done within `deadline_s` seconds from connect to the last
    byte (TimeoutError otherwise) with at most `max_bytes` of body kept (ReplyTooLarge past it).
    With `keep_partial`, a body past `max_bytes` or past the deadline is cut there instead (the
    reply is `truncated`; `max_bytes=0` reads no body at all), once the status is in. httpx errors (a refused connection, an invalid
    URL...) propagate as they are. `request` goes to `client.stream` (json, headers...)."""
    seen: httpx.Response | None = None
    body = bytearray()
    try:
        async with asyncio.timeout(deadline_s):
            async with client.stream(method, url, follow_redirects=False, **request) as response:
                seen = response
                declared = response.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > max_bytes and not keep_partial:
                    raise _too_large(response.status_code, max_bytes, f"it declares {int(declared):,} bytes")
                if max_bytes == 0 and keep_partial:  # only the status and headers were wanted
                    return _reply(response, body, truncated=declared != "0")
                # aiter_bytes undoes a content encoding (gzip...): what is counted is what is kept
                async for chunk in response.aiter_bytes():
                    room = max_bytes - len(body)
                    if len(chunk) > room:
                        if not keep_partial:
                            raise _too_large(response.status_code, max_bytes, "it went on past that")
                        body += chunk[:room]
                        return _reply(response, body, truncated=True)
                    body += chunk
                return _reply(response, body)
    except TimeoutError:
        if keep_partial and seen is not None:  # the status came in time; the body did not
            return _reply(seen, body, truncated=True, timed_out=True)
        raise


def _reply(response: httpx.Response, body: bytearray, *, truncated: bool = False, timed_out: bool = False) -> FetchedReply:
    return FetchedReply(
        status=response.status_code,
        headers=response.headers,
        body=bytes(body),
        truncated=truncated,
        timed_out=timed_out,
        encoding=response.charset_encoding,
    )


def _too_large(status: int, max_bytes: int, how: str) -> ReplyTooLarge:
    return ReplyTooLarge(
        f"the reply is larger than {describe_size(max_bytes)} ({how}); it was not read further", status=status, max_bytes=max_bytes
    )


def describe_size(n: int) -> str:
    """`1 MiB`, `512 KiB`, `300 bytes`: a byte count as a person reads it."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n:,} bytes"
