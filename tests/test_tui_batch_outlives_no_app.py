"""The app's batch runs in a child process of the app (parley.tui.app.panes.batch_feed); it must
never run on alone. With real processes on a real pseudo-terminal and a 1,000-conversation
offline batch (enough to fill the pipe of events nobody reads any more):

- kill -9 of the app: the child sees it gone, stops launching, stores what was in flight as
  `cancelled` and exits (the batch `cancelled`, resumable: --resume finishes it), however full
  the pipe of events nobody reads;
- closing the app's terminal (SIGHUP to its process group, as a shell does when its terminal
  closes): handled as a quit, with the same honest end;
- `--replay` of the batch while it runs is refused, saying how much is stored so far; once it
  has stopped short, the replay says how many of how many it replays.

Every wait is for an event (a row stored, a process gone), never for a time."""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import sqlite3
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

import pytest

from tests.waiting import PATIENCE_S

ROOT = Path(__file__).resolve().parent.parent
PROFILES = ROOT / "profiles"
PARLEY = str(Path(sys.executable).parent / "parley")
SMALL = ("track_shipped_order.yaml", "cancel_eligible_order.yaml", "list_my_orders.yaml")
TRIALS = 250  # x 4 specs (the three profiles expand to four): 1,000 conversations

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and pseudo-terminals")


class RunningApp:
    """`python -m tests.app_batch_process` on a pseudo-terminal of its own, in a session of its
    own (so its process group is the app and its batch's process, as under a shell)."""

    def __init__(self, home: Path, trials: int = TRIALS, bot: str = "offline", env: dict[str, str] | None = None) -> None:
        self.home = home
        self.db = home / "sessions" / "parley.db"
        folder = home / "suite"
        folder.mkdir()
        for name in SMALL:
            shutil.copy(PROFILES / name, folder / name)
        self.master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 36, 120, 0, 0))
        env = {**os.environ, "PARLEY_DB": str(self.db), "TERM": "xterm-256color", **(env or {})}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.app_batch_process", str(folder), str(trials), "4", bot],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=ROOT,
            env=env,
            start_new_session=True,
        )
        os.close(slave)
        self.screen = bytearray()
        # Drained all along: an app whose terminal nobody reads blocks drawing.
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 65536)
            except OSError:  # the terminal is closed
                return
            if not chunk:
                return
            self.screen += chunk

    def close_terminal(self) -> None:
        """What closing a terminal window does: its side of the pty goes, and the shell hangs up
        the job's process group."""
        os.close(self.master)
        os.killpg(self.proc.pid, signal.SIGHUP)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=PATIENCE_S)
        try:
            os.close(self.master)
        except OSError:
            pass


def query(db: Path, sql: str, params: tuple = ()) -> list[tuple]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def batch_state(db: Path) -> tuple[str, str, int | None, int, int] | None:
    """(id, status, owner pid, planned, stored) of the one batch, once it exists."""
    if not db.exists():
        return None
    try:
        rows = query(db, "SELECT id, status, owner_pid, planned FROM batches")
        if not rows:
            return None
        bid, status, pid, planned = rows[0]
        stored = query(db, "SELECT COUNT(*) FROM conversations WHERE batch_id = ?", (bid,))[0][0]
    except sqlite3.OperationalError:  # being created
        return None
    return bid, status, pid, planned, stored


def wait_for(predicate, what: str):
    deadline = time.monotonic() + PATIENCE_S
    while True:
        value = predicate()
        if value:
            return value
        assert time.monotonic() < deadline, f"waited {PATIENCE_S:.0f} s for {what}"
        time.sleep(0.02)


def gone(pid: int) -> bool:
    """Whether process `pid` has ended (a zombie nobody reaps has ended too)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state in ("Z", "X")


def running_with(db: Path, stored_at_least: int):
    state = batch_state(db)
    if state and state[1] == "running" and state[2] and state[4] >= stored_at_least:
        return state
    return None


def parley(home: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PARLEY_DB": str(home / "sessions" / "parley.db"), **(env or {})}
    return subprocess.run([PARLEY, *args], capture_output=True, text=True, cwd=home, env=env, timeout=PATIENCE_S * 3)


def test_kill_9_of_the_app_leaves_no_batch_running_alone(tmp_path):
    app = RunningApp(tmp_path)
    try:
        bid, _, child, planned, _ = wait_for(lambda: running_with(app.db, 5), "the app's batch to store 5 conversations")
        assert planned == 1000 and child != app.proc.pid, "the batch runs in a process of its own"

        refused = parley(tmp_path, "run", "--replay", bid)  # while it runs: refused, with how far it is
        assert refused.returncode == 1, refused.stdout + refused.stderr
        assert f"batch {bid} is still running" in refused.stderr and f"of its {planned} conversations are stored" in refused.stderr

        app.proc.kill()  # kill -9: no handler runs in the app
        app.proc.wait(timeout=PATIENCE_S)
        killed_at = time.monotonic()
        wait_for(lambda: gone(child), "the batch's process to end after its app")
        print(f"the batch's process ended {time.monotonic() - killed_at:.1f} s after kill -9 of the app")
    finally:
        app.stop()
    _, status, _, planned, stored = batch_state(app.db)
    assert status == "cancelled", "an honest end, not `running` nor `completed`"
    assert stored < planned, "it stopped launching"
    assert "the app is gone" in (app.db.parent / "parley.log").read_text(encoding="utf-8")
    assert batch_state(app.db)[4] == stored, "nothing is stored once it has ended"

    replay = parley(tmp_path, "run", "--replay", bid, "--dry-run")  # stopped short: how many of how many
    assert f"replays the {stored} of its {planned} conversations it stored" in replay.stdout + replay.stderr, replay.stdout

    cancelled = query(app.db, "SELECT COUNT(*) FROM conversations WHERE stop_reason = 'cancelled'")[0][0]
    plan = parley(tmp_path, "run", "--resume", bid, "--dry-run")  # resumable: the rest, and what was cut short
    assert f"Planned: {planned - stored + cancelled} conversations" in plan.stdout, plan.stdout + plan.stderr


@pytest.fixture
def held(server):
    """The bot's model on the fake server, whose every request is held in flight until released."""
    wait_for(lambda: server.held == 0, "the last test's held requests to end")
    server.hold_requests()
    yield {"FAKE_BASE_URL": server.base_url}
    server.release_requests()


def in_flight(app: RunningApp, server, count: int) -> tuple[str, str, int | None, int, int]:
    """Once `count` conversations are in flight, each held in the middle of a call to the bot."""
    state = wait_for(lambda: batch_state(app.db), "the batch")
    wait_for(lambda: server.held >= count, f"{count} conversations held in flight")
    return state


@pytest.mark.parametrize("how", ["kill -9", "closing its terminal"])
def test_what_was_in_flight_when_the_app_went_is_stored_as_cancelled(tmp_path, server, held, how):
    app = RunningApp(tmp_path, trials=2, bot="openai-api/fake/m", env=held)
    try:
        in_flight(app, server, 4)
        child = wait_for(lambda: batch_state(app.db)[2], "the batch's owner")
        if how == "kill -9":
            app.proc.kill()
        else:  # a quit: the app cancels its batch and waits for it
            app.close_terminal()
        app.proc.wait(timeout=PATIENCE_S)
        wait_for(lambda: gone(child), "the batch's process to end after its app")
    finally:
        app.stop()
    _, status, _, planned, stored = batch_state(app.db)
    assert status == "cancelled" and stored < planned
    cancelled = query(app.db, "SELECT COUNT(*) FROM conversations WHERE stop_reason = 'cancelled'")[0][0]
    reasons = query(app.db, "SELECT stop_reason, error FROM conversations")
    assert cancelled == 4, ("the four in flight, each stored with what it had", reasons, (app.db.parent / "parley.log").read_text()[-3000:])
    log = (app.db.parent / "parley.log").read_text(encoding="utf-8")
    assert ("the app is gone" if how == "kill -9" else "SIGHUP: quitting") in log, log[-2000:]

    server.release_requests()
    resumed = parley(tmp_path, "run", "--resume", "latest", env=held)
    assert resumed.returncode in (0, 1), resumed.stderr
    _, status, _, planned, stored = batch_state(app.db)
    assert status == "completed" and stored == planned, "resumable: --resume finishes it, the cancelled ones again"
    assert query(app.db, "SELECT COUNT(*) FROM conversations WHERE stop_reason = 'cancelled'")[0][0] == 0
