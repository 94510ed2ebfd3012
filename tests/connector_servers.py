"""Real HTTP servers on loopback for the connector tests.

- `serve_bot_process()`: `parley serve-bot` as a child process (the real command), on a free
  port; yields its base URL once /health answers. `.kill()` on the handle kills it mid-batch.
- `serve_app(app)`: any ASGI app with uvicorn in a background thread; yields its base URL.
- `taskyto_app(shape)`: a small Taskyto-shaped server (`/conversation/new`,
  `/conversation/user_message`) answering in Taskyto's `{"success", "data": {"message"}}` shape
  or the older flat `{"message"}` shape; it echoes the message with the conversation's count.
- `misbehaving_app()`: routes that hang, answer 500, answer HTML, or require a bearer token.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse

from tests.child_process import stop_process
from tests.fake_openai_server import loopback_socket
from tests.waiting import PATIENCE_S

REPO = Path(__file__).resolve().parent.parent
PINNED_TODAY = "2026-11-21"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class ServedBot:
    def __init__(self, proc: subprocess.Popen[bytes], base_url: str) -> None:
        self.proc = proc
        self.base_url = base_url
        self.webhook = f"{base_url}/webhooks/rest/webhook"

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=10)


@contextlib.contextmanager
def serve_bot_process(*args: str) -> Iterator[ServedBot]:
    """`python -m parley.tui.cli.main serve-bot --port P --today 2026-11-21 ARGS` until the block ends."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "parley.tui.cli.main", "serve-bot", "--port", str(port), "--today", PINNED_TODAY, *args],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    base_url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + PATIENCE_S
    try:
        while True:
            if proc.poll() is not None:
                err = proc.stderr.read().decode() if proc.stderr else ""
                raise RuntimeError(f"parley serve-bot exited with {proc.returncode}: {err}")
            try:
                if httpx.get(f"{base_url}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"parley serve-bot did not start within {PATIENCE_S:.0f} s")
            time.sleep(0.05)
        yield ServedBot(proc, base_url)
    finally:
        stop_process(proc)


@contextlib.contextmanager
def serve_app(app: Any) -> Iterator[str]:
    """Serve `app` on a free loopback port in a thread; yields `http://127.0.0.1:PORT`."""
    sock = loopback_socket(0)
    host, port = sock.getsockname()[:2]
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off", timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + PATIENCE_S
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.01)
    try:
        yield f"http://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def taskyto_app(shape: str = "data") -> FastAPI:
    """A Taskyto-shaped server: each conversation counts its messages and echoes them."""
    app = FastAPI()
    conversations: dict[str, list[str]] = {}
    app.state.conversations = conversations

    @app.post("/conversation/new")
    async def new() -> dict[str, Any]:
        cid = str(uuid.uuid4())
        conversations[cid] = []
        return {"id": cid}

    @app.post("/conversation/user_message")
    async def user_message(request: Request) -> Any:
        body = await request.json()
        cid, message = body.get("id"), body.get("message")
        if cid not in conversations or message is None:
            return {"success": 0, "debug_msg": "Invalid conversation id.", "data": None}
        conversations[cid].append(message)
        text = f"Taskyto heard #{len(conversations[cid])}: {message}"
        if shape == "flat":
            return {"message": text}
        return {"success": 1, "debug_msg": "All Ok :)", "data": {"id": cid, "type": "chatbot_response", "message": text}}

    return app


def misbehaving_app() -> FastAPI:
    app = FastAPI()
    app.state.seen_auth = []

    @app.post("/hang")
    async def hang() -> dict[str, str]:
        await asyncio.sleep(5)
        return {"text": "too late"}

    @app.post("/boom")
    async def boom() -> JSONResponse:
        return JSONResponse({"detail": "database is on fire"}, status_code=500)

    @app.post("/html")
    async def html() -> PlainTextResponse:
        return PlainTextResponse("<html><body>Maintenance window</body></html>", media_type="text/html")

    @app.post("/secure")
    async def secure(request: Request) -> Any:
        auth = request.headers.get("authorization", "")
        app.state.seen_auth.append(auth)
        if auth != "Bearer s3cr3t-token":
            return JSONResponse({"detail": "unauthorized"}, status_code=401)
        body = await request.json()
        return {"reply": {"parts": [{"text": f"secure echo: {body['q']}"}]}}

    return app
