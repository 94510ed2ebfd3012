"""HTTP servers on loopback that misbehave below what a web framework lets one write: a raw
asyncio socket server in a background thread, one behaviour per path.

    with hostile_server(trickle_s=0.5) as base:          # http://127.0.0.1:PORT
        base + "/trickle"    status line and headers one byte every `trickle_s` seconds
        base + "/slow-body"  headers at once, then a JSON body one byte every `trickle_s`
        base + "/endless"    headers at once, then bytes without end (no Content-Length)
        base + "/huge"       a Rasa-shaped JSON reply of `huge_bytes`, its text without a full stop
        base + "/redirect"   302 to /elsewhere, with a body that reads like a good Rasa reply
        base + "/refuse"     401 to everything
        base + "/forbid"     403 to everything
        base + "/v1/models"  an OpenAI-style model list (`models`, each with vLLM's max_model_len
                             when `context` is set); 401 unless `Authorization: Bearer <key>`
                             when a `key` is set
        anything else        200 `[{"text": "hello"}]`

`server.requests` records (method, path, headers) of each request; `server.sent` counts the
bytes written by /endless, so a test can tell the client stopped reading.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field


@dataclass
class HostileServer:
    trickle_s: float = 0.5
    huge_bytes: int = 30 * 1024 * 1024
    models: list[str] = field(default_factory=lambda: ["served-model"])
    context: int | None = None
    key: str | None = None
    base_url: str = ""
    requests: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)
    sent: int = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, path, _ = lines[0].split(" ", 2)
            headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
            length = int(headers.get("content-length") or 0)
            if length:
                await reader.readexactly(length)
            self.requests.append((method, path, headers))
            await self.answer(path.split("?")[0], headers, writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):  # a client gone, the server stopping
            pass
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    async def answer(self, path: str, headers: dict[str, str], writer: asyncio.StreamWriter) -> None:
        if path == "/trickle":
            for byte in b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 19\r\n\r\n[{"text": "late"}]\n':
                writer.write(bytes([byte]))
                await writer.drain()
                await asyncio.sleep(self.trickle_s)
        elif path == "/slow-body":
            body = b'[{"text": "late"}]'
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body))
            for byte in body:
                writer.write(bytes([byte]))
                await writer.drain()
                await asyncio.sleep(self.trickle_s)
        elif path == "/endless":
            writer.write(b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n[{"text": "')
            chunk = b"la " * 20_000
            while True:
                writer.write(chunk)
                await writer.drain()
                self.sent += len(chunk)
        elif path == "/huge":
            prefix, suffix = b'[{"text": "', b'"}]'
            words = b"ORD-1003 is on its way and "
            filler = words * ((self.huge_bytes - len(prefix) - len(suffix)) // len(words))
            body = prefix + filler + suffix
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body))
            for start in range(0, len(body), 1 << 20):
                writer.write(body[start : start + (1 << 20)])
                await writer.drain()
        elif path == "/redirect":
            self.reply(writer, 302, json.dumps([{"text": "I moved, but here is an answer anyway"}]), {"Location": "/elsewhere"})
        elif path == "/refuse":
            self.reply(writer, 401, json.dumps({"error": {"message": "Incorrect API key provided"}}))
        elif path == "/forbid":
            self.reply(writer, 403, json.dumps({"detail": "forbidden"}))
        elif path.endswith("/models"):
            if self.key is not None and headers.get("authorization") != f"Bearer {self.key}":
                self.reply(writer, 401, json.dumps({"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}}))
            else:
                data = [{"id": m, "object": "model", **({"max_model_len": self.context} if self.context else {})} for m in self.models]
                self.reply(writer, 200, json.dumps({"object": "list", "data": data}))
        else:
            self.reply(writer, 200, json.dumps([{"text": "hello"}]))
        await writer.drain()

    @staticmethod
    def reply(writer: asyncio.StreamWriter, status: int, body: str, headers: dict[str, str] | None = None) -> None:
        reason = {200: "OK", 302: "Found", 401: "Unauthorized", 403: "Forbidden"}[status]
        extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
        data = body.encode()
        writer.write(
            f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n"
            f"Connection: close\r\n{extra}\r\n".encode()
            + data
        )


@contextlib.contextmanager
def hostile_server(**options: object) -> Iterator[HostileServer]:
    """Serve a HostileServer on a free loopback port in a thread until the block ends."""
    server = HostileServer(**options)  # type: ignore[arg-type]
    loop = asyncio.new_event_loop()
    started = threading.Event()
    holder: dict[str, asyncio.Server] = {}

    async def serve() -> None:
        holder["server"] = await asyncio.start_server(server.handle, "127.0.0.1", 0)
        port = holder["server"].sockets[0].getsockname()[1]
        server.base_url = f"http://127.0.0.1:{port}"
        started.set()

    def run() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(serve())
        loop.run_forever()

    thread = threading.Thread(target=run, name="hostile-server", daemon=True)
    thread.start()
    if not started.wait(10):
        raise RuntimeError("the hostile server did not start")
    try:
        yield server
    finally:

        async def stop() -> None:
            holder["server"].close()
            tasks = [t for t in asyncio.all_tasks(loop) if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            loop.stop()

        asyncio.run_coroutine_threadsafe(stop(), loop)
        thread.join(timeout=10)
        loop.close()
