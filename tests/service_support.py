"""Helpers shared by the batch service's tests: an app over a temp database, driven through
httpx's ASGI transport with its lifespan running (the transport alone does not run it), and a
real `parley serve` process on a free port."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from parley.core.service.app import create_app
from tests.waiting import PATIENCE_S

ROOT = Path(__file__).resolve().parent.parent
PROFILES = ROOT / "profiles"
SCENARIOS = PROFILES / "scenarios" / "sample_scenarios.json"
FINISHED = ("completed", "failed", "cancelled", "interrupted")
SLOW_BOT = "openai-api/fake/m"


def sample_scenarios() -> list[dict[str, Any]]:
    return json.loads(SCENARIOS.read_text(encoding="utf-8"))


@contextlib.asynccontextmanager
async def service(
    tmp_path: Path, *, token: str = "", profile_dirs: list[Path] | None = None, **kwargs: Any
) -> AsyncIterator[httpx.AsyncClient]:
    """A started service over tmp_path/parley.db; yields a client whose `.app` is the app."""
    app = create_app(
        db_path=tmp_path / "parley.db",
        profile_dirs=profile_dirs or [PROFILES],
        token=token,
        inputs_dir=tmp_path / "inputs",
        **kwargs,
    )
    async with app.router.lifespan_context(app):
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://localhost"
        ) as client:  # a loopback name: what a client on the machine sends
            client.app = app  # type: ignore[attr-defined]
            yield client


async def wait_for(
    client: httpx.AsyncClient, batch_id: str, statuses: tuple[str, ...] = FINISHED, timeout_s: float = PATIENCE_S
) -> dict[str, Any]:
    """Poll GET /batches/ID until its status is one of `statuses`."""
    deadline = time.monotonic() + timeout_s
    while True:
        view = (await client.get(f"/api/batches/{batch_id}")).json()
        if view["status"] in statuses:
            return view
        if time.monotonic() > deadline:
            raise AssertionError(f"batch {batch_id} still {view['status']} after {timeout_s} s: {view}")
        await asyncio.sleep(0.05)


async def wait_done_at_least(client: httpx.AsyncClient, batch_id: str, n: int, timeout_s: float = PATIENCE_S) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while True:
        view = (await client.get(f"/api/batches/{batch_id}")).json()
        if view["completed_scenarios"] >= n:
            return view
        if time.monotonic() > deadline or view["status"] in FINISHED:
            raise AssertionError(f"batch {batch_id} did not reach {n} done: {view}")
        await asyncio.sleep(0.05)


# ---- a real `parley serve` process --------------------------------------------------------------

STARTUP_TIMEOUT = PATIENCE_S


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class ServeProcess:
    """`python -m parley.tui.cli.main serve` on a free port, in `home` (its working directory)."""

    home: Path
    port: int = field(default_factory=free_port)
    env: dict[str, str] = field(default_factory=dict)
    proc: subprocess.Popen[bytes] | None = None
    log: Path | None = None
    args: tuple[str, ...] = ()
    """More options of `parley serve` (e.g. --allow-python-bots)."""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> ServeProcess:
        self.log = self.home / f"serve-{self.port}-{time.monotonic_ns()}.log"
        command = [
            sys.executable,
            "-m",
            "parley.tui.cli.main",
            "serve",
            "--port",
            str(self.port),
            "--db",
            str(self.home / "parley.db"),
            "--profiles-dir",
            str(PROFILES),
            "--grace",
            "0.5",
            "--log-level",
            "warning",
            *self.args,
        ]
        env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(ROOT), **self.env}
        with self.log.open("wb") as out:
            self.proc = subprocess.Popen(command, cwd=self.home, stdout=out, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while True:
            if self.proc.poll() is not None:
                raise AssertionError(f"parley serve exited with {self.proc.returncode}: {self.log.read_text()}")
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"{self.url}/api/health", timeout=1.0).status_code == 200:
                    return self
            if time.monotonic() > deadline:
                raise AssertionError(f"parley serve not up after {STARTUP_TIMEOUT} s: {self.log.read_text()}")
            time.sleep(0.05)

    def kill(self) -> None:
        """kill -9: no shutdown code runs."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> int:
        """SIGTERM, as a service manager stops it; returns the exit code."""
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else 0
        self.proc.terminate()
        try:
            return self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("parley serve did not stop on SIGTERM within 20 s") from None


def poll(
    url: str,
    batch_id: str,
    statuses: tuple[str, ...] = FINISHED,
    *,
    headers: dict[str, str] | None = None,
    timeout_s: float = PATIENCE_S,
    done_at_least: int | None = None,
) -> dict[str, Any]:
    """GET /api/batches/ID until its status is in `statuses` (or `done_at_least` are done)."""
    deadline = time.monotonic() + timeout_s
    while True:
        view = httpx.get(f"{url}/api/batches/{batch_id}", headers=headers, timeout=5).json()
        if done_at_least is not None and view["completed_scenarios"] >= done_at_least:
            return view
        if done_at_least is None and view["status"] in statuses:
            return view
        if time.monotonic() > deadline:
            raise AssertionError(f"batch {batch_id}: {view}")
        time.sleep(0.1)
