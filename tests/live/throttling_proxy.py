"""A loopback proxy that answers the first N chat requests with 429 + Retry-After and forwards
everything else to a real model server, so the retry path is exercised against a real model."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route


class ThrottlingProxy:
    def __init__(self, upstream: str, *, throttle_first: int, retry_after_s: int = 1) -> None:
        self.upstream = upstream.rstrip("/")
        self.remaining_throttles = throttle_first
        self.retry_after_s = retry_after_s
        self.throttled_at: list[float] = []
        self.forwarded_at: list[float] = []

    async def chat(self, request: Request) -> Response:
        if self.remaining_throttles > 0:
            self.remaining_throttles -= 1
            self.throttled_at.append(time.monotonic())
            return JSONResponse(
                {"error": {"message": "rate limited by the test proxy", "type": "rate_limit"}},
                status_code=429,
                headers={"Retry-After": str(self.retry_after_s)},
            )
        self.forwarded_at.append(time.monotonic())
        async with httpx.AsyncClient(timeout=120) as client:
            upstream = await client.post(
                f"{self.upstream}/chat/completions",
                content=await request.body(),
                headers={"content-type": "application/json"},
            )
        return Response(upstream.content, status_code=upstream.status_code, media_type="application/json")

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/v1/chat/completions", self.chat, methods=["POST"])])


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
