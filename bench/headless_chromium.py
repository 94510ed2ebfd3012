"""Headless Chromium driven over the DevTools protocol, for the benchmarks that look at a page
(not a test helper: the suite never needs a browser).

`Browser()` starts Debian's `chromium` with a fresh profile, every network feature off and the
DevTools protocol on a loopback port, and talks to its page over a WebSocket (a minimal client
written here on the standard library, so the benchmark needs nothing installed but Chromium).
Chromium's own `--screenshot` flag draws nothing when the address has a fragment (`#specs`), so
screenshots of a section are taken this way.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--remote-debugging-address=127.0.0.1",
    "--remote-debugging-port=0",
]


class WebSocket:
    """A WebSocket client for one loopback connection: text frames, no extensions."""

    def __init__(self, url: str, timeout: float = 60) -> None:
        parts = urllib.parse.urlparse(url)
        self.sock = socket.create_connection((parts.hostname, parts.port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            (
                f"GET {parts.path} HTTP/1.1\r\nHost: {parts.hostname}:{parts.port}\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        self.reader = self.sock.makefile("rb")
        status = self.reader.readline()
        if b" 101 " not in status:
            raise ConnectionError(f"no WebSocket upgrade: {status!r}")
        while self.reader.readline() not in (b"\r\n", b""):
            pass

    def send(self, text: str) -> None:
        payload = text.encode()
        n = len(payload)
        header = bytes([0x81]) + (
            bytes([0x80 | n])
            if n < 126
            else bytes([0x80 | 126]) + struct.pack(">H", n)
            if n < 2**16
            else bytes([0x80 | 127]) + struct.pack(">Q", n)
        )
        mask = os.urandom(4)
        self.sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def _exactly(self, n: int) -> bytes:
        data = self.reader.read(n)
        if data is None or len(data) < n:
            raise ConnectionError("the browser closed the connection")
        return data

    def receive(self) -> str:
        message = b""
        while True:
            first, second = self._exactly(2)
            length = second & 0x7F
            if length == 126:
                length = struct.unpack(">H", self._exactly(2))[0]
            elif length == 127:
                length = struct.unpack(">Q", self._exactly(8))[0]
            payload = self._exactly(length)
            opcode = first & 0x0F
            if opcode == 0x8:
                raise ConnectionError("the browser closed the connection")
            if opcode == 0x9:  # ping: answer, then read on
                continue
            message += payload
            if first & 0x80:
                return message.decode()

    def close(self) -> None:
        self.sock.close()


class Browser:
    """One headless Chromium with one page (a context manager)."""

    def __init__(self) -> None:
        if shutil.which("chromium") is None:
            raise SystemExit("chromium is not installed: apt-get update && apt-get install -y chromium")
        self.profile = tempfile.mkdtemp(prefix="parley-chromium-")
        self.log = Path(self.profile) / "chromium.log"  # a file, not a pipe: nobody reads Chromium's chatter after start-up
        with self.log.open("w") as log:
            self.process = subprocess.Popen(
                ["chromium", *FLAGS, f"--user-data-dir={self.profile}/profile", "about:blank"],
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
        port = self._port()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=30) as answer:
            pages = [t for t in json.load(answer) if t["type"] == "page"]
        self.ws = WebSocket(pages[0]["webSocketDebuggerUrl"])
        self.ids = itertools.count(1)
        self.events: list[dict[str, Any]] = []
        self.call("Page.enable")
        self.call("Runtime.enable")

    def _port(self) -> int:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            found = re.search(r"DevTools listening on ws://127\.0\.0\.1:(\d+)/", self.log.read_text(errors="replace"))
            if found:
                return int(found.group(1))
            if self.process.poll() is not None:
                break
            time.sleep(0.1)
        raise SystemExit(f"chromium did not start its DevTools endpoint:\n{self.log.read_text(errors='replace')[-2000:]}")

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        ident = next(self.ids)
        self.ws.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.receive())
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            self.events.append(message)

    def wait_for(self, event: str, timeout: float = 120) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for i, seen in enumerate(self.events):
                if seen.get("method") == event:
                    return self.events.pop(i)
            self.events.append(json.loads(self.ws.receive()))
        raise TimeoutError(event)

    def size(self, width: int, height: int) -> None:
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=width < 600)

    def open(self, url: str) -> None:
        """Load `url` afresh and wait for its load event."""
        self.events.clear()
        self.call("Page.navigate", url="about:blank")
        self.wait_for("Page.loadEventFired")
        self.events.clear()
        self.call("Page.navigate", url=url)
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result.get("result", {}).get("value")

    def screenshot(self, path: Path) -> None:
        time.sleep(0.3)  # the scroll and any opened <details> painted
        data = self.call("Page.captureScreenshot", format="png")["data"]
        path.write_bytes(base64.b64decode(data))

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.ws.close()
        finally:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
            shutil.rmtree(self.profile, ignore_errors=True)
