"""Batches survive the service: a stop marks them interrupted, a killed owner is noticed, and
resuming (over the API or with `parley run --resume`) finishes them without losing or repeating
a conversation."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest
from click.testing import CliRunner
from service_support import sample_scenarios, service, wait_done_at_least, wait_for

from parley.core.records.batch import BatchRecord
from parley.core.store.batch_owner import BatchOwner, current_owner, owner_alive, process_start
from parley.core.store.store import Store
from parley.tui.cli.main import cli
from tests.stored_rows import query

pytestmark = pytest.mark.usefixtures("close_model_clients")


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def set_owner(db, batch_id: str, pid: int, started: str | None, token: str = "another-process") -> None:
    with Store.open(db) as store:
        store.db.execute(
            "UPDATE batches SET owner_pid = ?, owner_started = ?, owner_token = ? WHERE id = ?",
            [pid, started, token, batch_id],
        )
        store.db.conn.commit()


def stored_keys(db, batch_id: str) -> list[tuple[str, int, str]]:
    with Store.open(db) as store:
        rows = query(store, "SELECT spec_id, trial, stop_reason FROM conversations WHERE batch_id = ?", [batch_id])
    return [(r["spec_id"], r["trial"], r["stop_reason"]) for r in rows]


async def test_stopping_the_service_leaves_its_batch_interrupted_and_a_restart_resumes_it(tmp_path, slow_bot):
    body = {"scenarios": sample_scenarios(), "models": {"bot": slow_bot}, "concurrency": 1, "max_turns": 2, "trials": 2}
    async with service(tmp_path) as client:
        batch_id = (await client.post("/api/batches", json=body)).json()["batch_id"]
        await wait_done_at_least(client, batch_id, 2)
    # the service stopped (lifespan ended) mid-batch
    finished_before = [k for k in stored_keys(tmp_path / "parley.db", batch_id) if k[2] != "cancelled"]
    async with service(tmp_path) as client:
        view = (await client.get(f"/api/batches/{batch_id}")).json()
        assert view["status"] == "interrupted" and "service stopped" in view["error"]
        assert 2 <= view["completed_scenarios"] < 10
        resumed = await client.post(f"/api/batches/{batch_id}/resume")
        assert resumed.status_code == 202 and resumed.json()["already_done"] == len(finished_before)
        done = await wait_for(client, batch_id)
    assert done["status"] == "completed" and done["completed_scenarios"] == 10 and done["error"] is None
    keys = stored_keys(tmp_path / "parley.db", batch_id)
    assert len(keys) == 10 and len({k[:2] for k in keys}) == 10
    assert set(finished_before) <= set(keys)  # nothing that had finished was run again or lost


async def test_a_batch_whose_process_died_is_interrupted_when_the_service_starts(tmp_path):
    db = tmp_path / "parley.db"
    with Store.open(db) as store:
        orphan = store.create_batch(BatchRecord(status="running", sources=["x"], planned=3)).id
        legacy = store.create_batch(BatchRecord(status="pending", sources=["x"], planned=3)).id
        done = store.create_batch(BatchRecord(status="completed", sources=["x"], planned=3)).id
    set_owner(db, orphan, dead_pid(), None)
    with Store.open(db) as store:
        store.db.execute("UPDATE batches SET owner_token = NULL WHERE id = ?", [legacy])
        store.db.conn.commit()
    async with service(tmp_path) as client:
        views = {b: (await client.get(f"/api/batches/{b}")).json() for b in (orphan, legacy, done)}
    assert views[orphan]["status"] == "interrupted" and "ended before the batch did" in views[orphan]["error"]
    assert views[legacy]["status"] == "interrupted"
    assert views[done]["status"] == "completed"


async def test_a_batch_another_live_process_runs_is_left_alone(tmp_path):
    db = tmp_path / "parley.db"
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        with Store.open(db) as store:
            batch_id = store.create_batch(BatchRecord(status="running", sources=["x"], planned=3)).id
        set_owner(db, batch_id, other.pid, process_start(other.pid))
        async with service(tmp_path) as client:
            view = (await client.get(f"/api/batches/{batch_id}")).json()
            cancel = await client.post(f"/api/batches/{batch_id}/cancel")
            resume = await client.post(f"/api/batches/{batch_id}/resume")
            other.kill()
            other.wait()
            after = (await client.get(f"/api/batches/{batch_id}")).json()
    finally:
        other.kill()
        other.wait()
    assert view["status"] == "running" and view["running_here"] is False
    assert view["owner"] == f"pid {other.pid} on {current_owner().host}"
    assert cancel.status_code == 409 and "another process" in cancel.json()["detail"]
    assert resume.status_code == 409 and "cannot be resumed while it runs" in resume.json()["detail"]
    assert after["status"] == "interrupted"  # its owner died while the service was up


def test_owner_liveness_rules():
    me = current_owner()
    assert owner_alive(me)
    assert not owner_alive(BatchOwner(host=me.host, pid=dead_pid(), started=None, token="x"))
    # a live pid with another start time is a reused pid, not the owner
    assert not owner_alive(BatchOwner(host=me.host, pid=me.pid, started="1", token="x")) or me.started is None
    # another host cannot be checked: assumed alive
    assert owner_alive(BatchOwner(host=me.host + "-elsewhere", pid=dead_pid(), started=None, token="x"))


def test_starting_or_resuming_a_batch_records_this_process_as_its_owner(tmp_path):
    with Store.open(tmp_path / "p.db") as store:
        batch = store.create_batch(BatchRecord(status="pending", sources=["x"], planned=1))
        assert store.batch_owner(batch.id) == current_owner()
        store.update_batch(batch.id, status="interrupted")
        store.db.execute("UPDATE batches SET owner_token = 'old' WHERE id = ?", [batch.id])
        store.update_batch(batch.id, status="running")
        assert store.batch_owner(batch.id) == current_owner()
        assert store.interrupt_orphans() == []  # this process is alive


async def test_parley_run_resume_finishes_a_batch_the_service_left_interrupted(tmp_path, slow_bot):
    body = {"scenarios": sample_scenarios(), "models": {"bot": slow_bot}, "concurrency": 1, "max_turns": 2}
    async with service(tmp_path) as client:
        batch_id = (await client.post("/api/batches", json=body)).json()["batch_id"]
        await wait_done_at_least(client, batch_id, 1)
    db = tmp_path / "parley.db"
    with Store.open(db) as store:
        assert store.get_batch(batch_id).status == "interrupted"
    args = ["run", "--resume", batch_id, "--db", str(db), "--report", str(tmp_path / "r.md")]
    result = await asyncio.to_thread(CliRunner().invoke, cli, args)  # it runs its own event loop
    assert "resumed" in result.output, result.output
    with Store.open(db) as store:
        assert store.get_batch(batch_id).status == "completed"
    assert len(stored_keys(db, batch_id)) == 5
