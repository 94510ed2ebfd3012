"""`parley run --resume` and a batch whose process was killed, or is still running elsewhere."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from parley.core.records.batch import BatchRecord
from parley.core.store.batch_owner import process_start
from parley.core.store.store import Store
from parley.tui.cli.main import cli

PLAYBOOKS = Path(__file__).resolve().parent.parent / "profiles" / "playbooks"


def parley(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def left_running(db: Path, pid: int, started: str | None) -> str:
    """A batch stored as `running` by process `pid` (as a killed or a busy `parley run` leaves it)."""
    with Store.open(db) as store:
        batch = store.create_batch(BatchRecord(sources=[str(PLAYBOOKS)], planned=7))
        store.update_batch(batch.id, status="running")
        store.db.execute(
            "UPDATE batches SET owner_pid = ?, owner_started = ?, owner_token = 'another-process' WHERE id = ?",
            [pid, started, batch.id],
        )
        store.db.conn.commit()
    return batch.id


def status(db: Path, batch_id: str) -> str:
    with Store.open(db) as store:
        return store.get_batch(batch_id).status


def test_a_batch_left_running_by_a_killed_process_resumes_to_completion(tmp_path):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    db = tmp_path / "p.db"
    batch_id = left_running(db, gone.pid, None)

    result = parley("run", "--resume", batch_id, "--db", db)

    assert result.exit_code == 0, result.output
    assert "Pass rate: 100.0% (7 of 7, 95% interval 64.6-100.0%)" in result.stdout
    assert status(db, batch_id) == "completed"


def test_resuming_a_batch_another_live_process_runs_is_refused(tmp_path):
    busy = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        db = tmp_path / "p.db"
        batch_id = left_running(db, busy.pid, process_start(busy.pid))

        result = CliRunner().invoke(cli, ["run", "--resume", batch_id, "--db", str(db)])

        assert result.exit_code == 1
        assert f"batch {batch_id} is still running (pid {busy.pid} on" in result.stderr
        assert status(db, batch_id) == "running"  # untouched: the live process still owns it
    finally:
        busy.kill()
        busy.wait()
