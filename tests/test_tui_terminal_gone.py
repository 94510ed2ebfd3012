"""The app in a real terminal (a pseudo-terminal) that stops reading and goes away, as a tmux
session killed on a busy machine does: the app ends within its bound, never waiting on writing
to a terminal nobody reads (on main it stayed alive for as long as the machine ran)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="a POSIX pseudo-terminal")

PARLEY = str(Path(sys.executable).parent / "parley")
PANES = b"\x1b[12~\x1b[13~\x1b[14~\x1b[11~"  # F2 F3 F4 F1: each key draws another pane, whole


def app_in_a_terminal(tmp_path: Path) -> tuple[subprocess.Popen[bytes], int]:
    import pty

    master, slave = pty.openpty()
    os.set_blocking(master, False)
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "100", "LINES": "30"}
    proc = subprocess.Popen(
        [PARLEY, "--db", str(tmp_path / "p.db")], stdin=slave, stdout=slave, stderr=slave, cwd=tmp_path, env=env, start_new_session=True
    )
    os.close(slave)
    shown = b""
    deadline = time.monotonic() + 60
    while b"Chat" not in shown:
        assert time.monotonic() < deadline, f"the app did not start: {shown[-500:]!r}"
        try:
            shown += os.read(master, 65536)
        except BlockingIOError:
            time.sleep(0.05)
    # The terminal stops reading while the app draws on: its writes pile up unread.
    for _ in range(60):
        try:
            os.write(master, PANES)
        except OSError:
            break
        time.sleep(0.05)
    time.sleep(1)
    return proc, master


def ended_within(proc: subprocess.Popen[bytes], seconds: float) -> float:
    started = time.monotonic()
    try:
        proc.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail(f"the app was still running {seconds:g} s after it was told to end")
    return time.monotonic() - started


def test_the_terminal_closed_and_sighup_the_app_ends(tmp_path):
    proc, master = app_in_a_terminal(tmp_path)
    os.close(master)  # the window is gone
    os.killpg(proc.pid, signal.SIGHUP)
    assert ended_within(proc, 30) < 30


def test_a_terminal_that_reads_nothing_does_not_keep_the_app_from_ending_on_sigterm(tmp_path):
    proc, master = app_in_a_terminal(tmp_path)
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        assert ended_within(proc, 30) < 30
    finally:
        os.close(master)
