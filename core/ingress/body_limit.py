"""An ASGI middleware that refuses request bodies over a size (413) before the app reads them.

A declared Content-Length over the limit is refused at once; a body sent without one (chunked)
is read up to the limit and refused as soon as it passes it. Bodies under the limit are handed
to the app whole.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

DEFAULT_MAX_BODY_BYTES = 1024 * 1024

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


class BodyLimit:
    def __init__(self, app: Any, max_bytes: int = DEFAULT_MAX_BODY_BYTES) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = None
        for name, value in scope.get("headers", []):
            if name.lower() == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    await _reply(send, 400, "the Content-Length header is not a number")
                    return
        if declared is not None and declared > self.max_bytes:
            await _reply(send, 413, self._too_large(declared))
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                # The client went away before sending its body: let the app see that.
                first = message
                break
            body = message.get("body", b"")
            size += len(body)
            if size > self.max_bytes:
                await _reply(send, 413, self._too_large(None))
                return
            chunks.append(body)
            if not message.get("more_body", False):
                first = {"type": "http.request", "body": b"".join(chunks), "more_body": False}
                break
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return first
            return await receive()

        await self.app(scope, replay, send)

    def _too_large(self, declared: int | None) -> str:
        size = f" ({declared} bytes)" if declared is not None else ""
        return f"the request body{size} is larger than this service accepts ({self.max_bytes} bytes)"


async def _reply(send: Send, status: int, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})
