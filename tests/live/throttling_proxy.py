"""A loopback proxy in front of a real model server: it answers the first N chat requests with
429 + Retry-After (so the retry path is exercised against a real model), forwards everything else,
and keeps every exchange (what parley sent, what the server answered), so a test can hold each
prompt parley sent against the model's own tokenizer."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route


@dataclass
class Exchange:
    """One chat request forwarded: its JSON body, the server's status and body, and how long it took."""

    request: dict[str, Any]
    status: int
    response: str
    seconds: float


class ThrottlingProxy:
    """`reply_limit(request)`: the most tokens the server may generate for that request (set as
    its max_tokens when the request asks for more or sets none), or None: as sent."""

    def __init__(
        self,
        upstream: str,
        *,
        throttle_first: int = 0,
        retry_after_s: int = 1,
        reply_limit: Callable[[dict[str, Any]], int | None] = lambda request: None,
    ) -> None:
        self.upstream = upstream.rstrip("/")
        self.reply_limit = reply_limit
        self.remaining_throttles = throttle_first
        self.retry_after_s = retry_after_s
        self.throttled_at: list[float] = []
        self.forwarded_at: list[float] = []
        self.exchanges: list[Exchange] = []

    async def chat(self, request: Request) -> Response:
        if self.remaining_throttles > 0:
            self.remaining_throttles -= 1
            self.throttled_at.append(time.monotonic())
            return JSONResponse(
                {"error": {"message": "rate limited by the test proxy", "type": "rate_limit"}},
                status_code=429,
                headers={"Retry-After": str(self.retry_after_s)},
            )
        started = time.monotonic()
        self.forwarded_at.append(started)
        sent = json.loads(await request.body())
        limit = self.reply_limit(sent)
        if limit is not None and (sent.get("max_tokens") is None or sent["max_tokens"] > limit):
            sent = {**sent, "max_tokens": limit}
        async with httpx.AsyncClient(timeout=None) as client:  # parley's own time limits apply
            upstream = await client.post(f"{self.upstream}/chat/completions", json=sent)
        self.exchanges.append(Exchange(sent, upstream.status_code, upstream.text, time.monotonic() - started))
        media_type = upstream.headers.get("content-type", "application/json")
        return Response(upstream.content, status_code=upstream.status_code, media_type=media_type)

    async def models(self, request: Request) -> Response:
        async with httpx.AsyncClient(timeout=30) as client:
            upstream = await client.get(f"{self.upstream}/models")
        return Response(upstream.content, status_code=upstream.status_code, media_type="application/json")

    def app(self) -> Starlette:
        return Starlette(
            routes=[Route("/v1/chat/completions", self.chat, methods=["POST"]), Route("/v1/models", self.models, methods=["GET"])]
        )


@contextlib.contextmanager
def run_proxy(proxy: ThrottlingProxy) -> Iterator[str]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(proxy.app(), log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("throttling proxy did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
