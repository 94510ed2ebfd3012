"""The mock API as a real server process on loopback, over a file database."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.child_process import stop_process
from tests.waiting import PATIENCE_S

REPO = Path(__file__).resolve().parent.parent
PARLEY = Path(sys.executable).with_name("parley")
STARTUP_TIMEOUT = PATIENCE_S


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def running_server(command: list[str], port: int) -> Iterator[str]:
    """Start the server, wait (bounded) until /health answers, terminate it afterwards."""
    proc = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env={**os.environ, "NO_COLOR": "1"})
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while True:
            if proc.poll() is not None:
                pytest.fail(f"server exited with {proc.returncode}: {proc.stdout.read().decode(errors='replace')}")
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"{base}/health", timeout=1.0).status_code == 200:
                    break
            if time.monotonic() > deadline:
                pytest.fail(f"server not up on port {port} after {STARTUP_TIMEOUT} s")
            time.sleep(0.1)
        yield base
    finally:
        stop_process(proc)


def server_command(launcher: str, port: int, db: Path, *extra: str) -> list[str]:
    if launcher == "module":
        return [sys.executable, "-m", "parley.mockapi.server", "--port", str(port), "--db", str(db), *extra]
    return [str(PARLEY), "mockapi", "--port", str(port), "--db", str(db), *extra]


def db_status(db: Path, order_id: str) -> tuple[str, int]:
    with contextlib.closing(sqlite3.connect(db)) as conn:
        status = conn.execute("SELECT status FROM orders WHERE id = ?", [order_id]).fetchone()[0]
        audits = conn.execute("SELECT count(*) FROM audit WHERE order_id = ?", [order_id]).fetchone()[0]
    return status, audits


LAUNCHERS = [
    "module",
    pytest.param(
        "parley",
        marks=pytest.mark.skipif(not shutil.which(str(PARLEY)), reason="the parley console script is not installed"),
    ),
]


@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_server_cancels_over_http_and_persists(tmp_path: Path, launcher: str) -> None:
    db = tmp_path / "orders.db"
    port = free_port()
    with running_server(server_command(launcher, port, db, "--today", "2026-11-21"), port) as base:
        health = httpx.get(f"{base}/health").json()
        assert health == {"status": "ok", "today": "2026-11-21", "orders": 18}
        response = httpx.post(f"{base}/orders/ORD-1004/cancel", headers={"X-Customer-Id": "C-100"}, json={"reason": "moving"})
        assert response.status_code == 200, response.text
        refused = httpx.post(f"{base}/orders/ORD-1005/cancel", headers={"X-Customer-Id": "C-100"})
        assert refused.status_code == 409 and refused.json()["detail"]["reason"] == "too_old"
    assert db_status(db, "ORD-1004") == ("cancelled", 1)
    assert db_status(db, "ORD-1005") == ("processing", 0)


def test_restart_keeps_data_and_pinned_today_until_reset(tmp_path: Path) -> None:
    db = tmp_path / "orders.db"
    port = free_port()
    with running_server(server_command("module", port, db, "--today", "2026-11-21"), port) as base:
        assert httpx.post(f"{base}/orders/ORD-1004/cancel", headers={"X-Customer-Id": "C-100"}).status_code == 200

    # Restarted without --today: same pinned day, the cancel is still there.
    with running_server(server_command("module", port, db), port) as base:
        assert httpx.get(f"{base}/health").json()["today"] == "2026-11-21"
        order = httpx.get(f"{base}/orders/ORD-1004", headers={"X-Customer-Id": "C-100"}).json()
        assert (order["status"], order["age_days"]) == ("cancelled", 10)

    # A new --today moves the clock: ORD-1003 (9 days old on the 21st) is now 11 days old.
    with running_server(server_command("module", port, db, "--today", "2026-11-23"), port) as base:
        check = httpx.get(f"{base}/orders/ORD-1003/cancellation", headers={"X-Customer-Id": "C-100"}).json()
        assert (check["age_days"], check["reason"]) == (11, "too_old")

    # --reset reloads the fixture as of the given day.
    with running_server(server_command("module", port, db, "--today", "2026-11-21", "--reset"), port) as base:
        order = httpx.get(f"{base}/orders/ORD-1004", headers={"X-Customer-Id": "C-100"}).json()
        assert order["status"] == "processing"
    assert db_status(db, "ORD-1004") == ("processing", 0)


def test_bad_today_is_one_clear_line(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "parley.mockapi.server", "--db", str(tmp_path / "x.db"), "--today", "21/11/2026"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode != 0
    assert "YYYY-MM-DD" in result.stderr and "Traceback" not in result.stderr
