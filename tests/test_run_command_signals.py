"""`parley run` interrupted for real, in a subprocess: Ctrl-C leaves a consistent, cancelled
batch (exit 130); kill -9 loses nothing that finished; --resume finishes either and the report
equals an uninterrupted run's."""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.fake_openai_server import run_fake_server
from tests.test_batch_runner import deterministic_part
from tests.waiting import PATIENCE_S

ROOT = Path(__file__).resolve().parent.parent
PROFILES = ROOT / "profiles"
PLAYBOOKS = PROFILES / "playbooks"
PARLEY = str(Path(sys.executable).parent / "parley")
FAKE = "openai-api/fake/m"

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


@pytest.fixture(scope="module")
def server():
    with run_fake_server() as s:
        yield s


def query(db: Path, sql: str) -> list[tuple]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def stored(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        return query(db, "SELECT COUNT(*) FROM conversations")[0][0]
    except sqlite3.OperationalError:  # not created yet
        return 0


def wait_for(predicate, timeout: float = PATIENCE_S, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def start(args: list, env: dict | None = None, cwd: Path | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [PARLEY, *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
        cwd=cwd,
    )


def run(args: list, env: dict | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [PARLEY, *map(str, args)],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        cwd=cwd,
        timeout=120,
    )


def consistent(db: Path) -> None:
    """The file passes SQLite's own check and every stored conversation is whole."""
    assert query(db, "PRAGMA integrity_check") == [("ok",)]
    assert query(db, "PRAGMA foreign_key_check") == []
    incomplete = query(
        db,
        """SELECT c.id FROM conversations c
           WHERE NOT EXISTS (SELECT 1 FROM verdicts v WHERE v.conversation_id = c.id)
              OR NOT EXISTS (SELECT 1 FROM usage u WHERE u.conversation_id = c.id)
              OR c.turns != json_array_length(c.turn_timings)
              OR (SELECT COUNT(*) FROM messages m WHERE m.conversation_id = c.id) = 0""",
    )
    assert incomplete == []


def test_ctrl_c_cancels_in_flight_conversations_and_leaves_a_consistent_batch(server, tmp_path):
    server.reset()
    server.fixed_delay_ms = 500
    db = tmp_path / "p.db"
    env = {"FAKE_BASE_URL": server.base_url}
    proc = start(["run", PLAYBOOKS, "--bot", FAKE, "-c", "3", "--grace", "0.1", "--db", db], env=env)
    try:
        wait_for(lambda: stored(db) >= 1, what="a first stored conversation")
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=PATIENCE_S)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "stopping: no new conversations" in out
    assert "batch cancelled" in out and "continue it with: parley run --resume" in out
    assert query(db, "SELECT status, finished_at IS NOT NULL FROM batches") == [("cancelled", 1)]
    consistent(db)
    reasons = dict(query(db, "SELECT stop_reason, COUNT(*) FROM conversations GROUP BY stop_reason"))
    assert reasons.get("cancelled", 0) >= 1, reasons
    assert query(db, "SELECT COUNT(*) FROM conversations WHERE stop_reason = 'cancelled' AND error IS NULL") == [(0,)]

    server.fixed_delay_ms = 0
    resumed = run(["run", "--resume", "latest", "--db", db], env=env)
    assert resumed.returncode == 1, resumed.stderr  # the fake bot only says "ok": checks fail
    assert query(db, "SELECT status FROM batches") == [("completed",)]
    assert query(db, "SELECT COUNT(*) FROM conversations") == [(7,)]
    assert query(db, "SELECT COUNT(*) FROM conversations WHERE stop_reason IN ('cancelled', 'error')") == [(0,)]
    consistent(db)


def test_a_second_ctrl_c_cancels_at_once(server, tmp_path):
    server.reset()
    server.hold_requests()  # the bot answers nothing until the test is over
    db = tmp_path / "p.db"
    proc = start(["run", PLAYBOOKS, "--bot", FAKE, "-c", "2", "--grace", "60", "--db", db], env={"FAKE_BASE_URL": server.base_url})
    try:
        said = proc.stdout.readline()  # printed as the batch starts
        assert " started: 7 conversations" in said
        wait_for(lambda: server.held == 2, what="both conversations waiting for the bot")
        proc.send_signal(signal.SIGINT)
        while "stopping: no new conversations" not in said:  # the first Ctrl-C was heard
            line = proc.stdout.readline()
            assert line, f"parley ended before it said it was stopping: {said}"
            said += line
        interrupted = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=PATIENCE_S)
    finally:
        proc.kill()
        server.release_requests()
    assert proc.returncode == 130, err
    assert time.monotonic() - interrupted < 30  # at once: not the 60 s grace
    assert "cancelling the conversations in flight" in said + out
    assert query(db, "SELECT stop_reason, COUNT(*) FROM conversations GROUP BY 1") == [("cancelled", 2)]
    assert query(db, "SELECT status FROM batches") == [("cancelled",)]
    consistent(db)


def test_kill_9_loses_nothing_finished_and_resume_gives_the_uninterrupted_report(tmp_path):
    args = ["run", PROFILES, "--trials", "10", "-c", "1", "--seed", "4"]
    db = tmp_path / "killed.db"
    proc = start([*args, "--db", db], cwd=tmp_path)
    try:
        wait_for(lambda: stored(db) >= 40, what="40 stored conversations")
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        proc.kill()
    before = set(query(db, "SELECT id, spec_id, trial, stop_reason FROM conversations"))
    assert 40 <= len(before) < 270, "killed mid-way"
    assert query(db, "SELECT status FROM batches") == [("running",)]
    consistent(db)
    [batch_id] = [row[0] for row in query(db, "SELECT id FROM batches")]
    for listing in (run(["batches", "list", "--db", db]).stdout, run(["batches", "show", "latest", "--db", db]).stdout):
        # its owner is gone: every listing says interrupted (the file read as it is), and how to go on
        assert re.search(r"\binterrupted\b", listing) and not re.search(r"(: |  )running\b", listing), listing
        assert f"parley run --resume {batch_id[:12]}" in listing, listing

    resumed = run(["run", "--resume", "latest", "--db", db], cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{len(before)} already done, {270 - len(before)} to run" in resumed.stdout
    after = set(query(db, "SELECT id, spec_id, trial, stop_reason FROM conversations"))
    assert before <= after and len(after) == 270  # every finished conversation kept as it was

    straight_db = tmp_path / "straight.db"
    straight = run([*args, "--db", straight_db], cwd=tmp_path)
    assert straight.returncode == 0, straight.stderr
    resumed_md = run(["report", "latest", "--db", db]).stdout
    straight_md = run(["report", "latest", "--db", straight_db]).stdout
    assert "**100.0%** (220 of 220" in resumed_md and "| 270 | 270 | 220 | 0 | 0 | 50 |" in resumed_md
    assert deterministic_part(resumed_md) == deterministic_part(straight_md)


def test_sighup_stops_the_run_as_sigterm_does(server, tmp_path):
    # A closed terminal or ssh session: on main the run died at once (exit 129), its batch left running.
    server.reset()
    server.fixed_delay_ms = 500
    db = tmp_path / "p.db"
    proc = start(["run", PLAYBOOKS, "--bot", FAKE, "-c", "3", "--grace", "0.1", "--db", db], env={"FAKE_BASE_URL": server.base_url})
    try:
        wait_for(lambda: stored(db) >= 1, what="a first stored conversation")
        proc.send_signal(signal.SIGHUP)
        out, err = proc.communicate(timeout=PATIENCE_S)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "batch cancelled" in out
    assert query(db, "SELECT status FROM batches") == [("cancelled",)]
    assert query(db, "SELECT COUNT(*) FROM conversations WHERE stop_reason = 'cancelled'")[0][0] >= 1
    consistent(db)


def test_signals_are_obeyed_while_an_async_bot_blocks_its_loop(tmp_path):
    # `async def bot(m): time.sleep(...)`: on main it held parley's loop, SIGTERM and Ctrl-C unanswered.
    db = tmp_path / "p.db"
    bot = "python:tests.python_bots:blocking_async_bot"
    proc = start(
        ["run", PLAYBOOKS / "track_shipped_order.yaml", "--bot", bot, "--bot-timeout", "600", "--grace", "60", "--db", db], cwd=ROOT
    )
    try:
        said = proc.stdout.readline()
        assert " started: 1 conversation" in said, said + proc.stderr.read()
        time.sleep(1)  # the bot is called, and blocks
        proc.send_signal(signal.SIGTERM)
        while "stopping: no new conversations" not in said:
            line = proc.stdout.readline()
            assert line, f"parley ended before it said it was stopping: {said}"
            said += line
        second = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert time.monotonic() - second < 30
    assert proc.returncode == 130, err
    assert query(db, "SELECT stop_reason FROM conversations") == [("cancelled",)]
    assert query(db, "SELECT status FROM batches") == [("cancelled",)]
    consistent(db)
