"""A batch sharded over worker processes on Ray (parley.core.engine.distributed), in this process:
what it stores equals a single-process run field for field (timings and ids apart); a worker
killed with kill -9 loses nothing finished, its conversations run again elsewhere, nothing is
stored twice; one adaptive limit holds for all workers together; a stop reaches into the workers
and leaves a resumable batch; progress events and the batch service work the same way.

One local Ray instance with a pool of two workers serves the whole module (starting Ray takes
seconds on a busy machine); the tests share the module's event loop for it.
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from pathlib import Path

import pytest
import pytest_asyncio
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from parley.core.engine.batch_runner import BatchRunner, prepare_batch, prepare_resume
from parley.core.engine.distributed.placement import Placement
from parley.core.engine.distributed.pool import WorkerPool
from parley.core.engine.distributed.sharded_runner import ShardedRunner, endpoint_env
from parley.core.models.openai_provider import aclose_clients
from parley.core.records.batch import BatchOptions, RoleModels
from parley.core.store.store import Store
from tests.connector_servers import serve_app
from tests.fake_openai_server import FakeOpenAIServer, run_fake_server
from tests.service_support import service, wait_for
from tests.stored_rows import query
from tests.test_batch_runner import transcripts

pytestmark = pytest.mark.asyncio(loop_scope="module")

ROOT = Path(__file__).resolve().parent.parent
PROFILES = ROOT / "profiles"
PLAYBOOKS = PROFILES / "playbooks"
FAKE = "openai-api/fake/m"
TIMINGS = {"started_at", "ended_at", "duration_s", "latency_s", "turn_timings", "id", "conversation_id"}


class CountingServer(FakeOpenAIServer):
    """The fake server, counting the requests it holds at once (its fixed delay). With
    `gather_at` set, the first requests also wait until that many are held together (an event:
    however busy the machine, calls that may overlap do), or until `gather_timeout_s` passes
    once, after which nothing waits. After `hold()`, no request is answered until `release()`
    (or HOLD_MOST_S): a conversation then in flight cannot end on its own."""

    HOLD_MOST_S = 60.0

    def __init__(self) -> None:
        super().__init__()
        self.holding = 0
        self.most_held = 0
        self.gather_at: int | None = None
        self.gather_timeout_s = 60.0  # a worker's first call may come late on a busy machine (10 s was once too short)
        self._gathered = asyncio.Event()
        self._held = threading.Event()  # set and cleared from the test's thread, read on the server's

    def forget_gathering(self) -> None:
        self.gather_at = None
        self._gathered = asyncio.Event()

    def hold(self) -> None:
        self._held.set()

    def release(self) -> None:
        self._held.clear()

    async def _held_back(self) -> None:
        deadline = time.monotonic() + self.HOLD_MOST_S
        while self._held.is_set() and time.monotonic() < deadline:
            await asyncio.sleep(0.02)

    async def _pause(self, seconds: float) -> None:
        self.holding += 1
        self.most_held = max(self.most_held, self.holding)
        try:
            if self.gather_at is not None and not self._gathered.is_set():
                if self.holding >= self.gather_at:
                    self._gathered.set()
                else:
                    try:
                        await asyncio.wait_for(self._gathered.wait(), self.gather_timeout_s)
                    except TimeoutError:
                        self._gathered.set()  # waited once: the rest go at their pace
            await super()._pause(seconds)
            await self._held_back()
        finally:
            self.holding -= 1


@pytest.fixture(scope="module")
def server():
    with run_fake_server(CountingServer()) as s:
        yield s


@pytest.fixture
def fake(server, monkeypatch):
    server.reset()
    server.most_held = 0
    server.forget_gathering()
    server.release()
    monkeypatch.setenv("FAKE_BASE_URL", server.base_url)
    yield server
    server.reset()
    server.forget_gathering()
    server.release()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def pool():
    pool = WorkerPool(Placement(workers=2))
    await pool.start()
    yield pool
    await pool.stop()


@pytest.fixture
def store(tmp_path):
    s = Store.open(tmp_path / "parley.db")
    yield s
    s.close()


async def run_sharded(store, pool, prepared, **kwargs):
    runner = ShardedRunner(store, prepared, pool=pool, **kwargs)
    events = []
    runner.subscribe(events.append)
    try:
        result = await runner.run()
    finally:
        await aclose_clients()
    return runner, result, events


async def run_here(store, prepared):
    try:
        return await BatchRunner(store, prepared).run()
    finally:
        await aclose_clients()


def rows(store, batch_id):
    """(spec_id, trial) -> the results row, timings and ids left out."""
    return {(r.spec_id, r.trial): r.model_dump(exclude=TIMINGS | {"batch_id"}) for r in store.conversation_rows(batch_id, limit=10_000)}


TIMING_COLUMNS = {
    "conversations": {"id", "batch_id", "started_at", "ended_at", "duration_s", "turn_timings"}
    | {"bot_latency_total_s", "bot_latency_min_s", "bot_latency_max_s"},
    "messages": {"conversation_id"},
    "tool_calls": {"conversation_id", "latency_s"},
    "verdicts": {"conversation_id"},
    "usage": {"id", "conversation_id"},
}


def stored(store, batch_id):
    """(spec_id, trial) -> every row the store holds for that conversation, table by table, with
    only the timings and ids left out: what a field-for-field comparison of two batches compares."""
    out = {}
    for conv in query(store, "SELECT * FROM conversations WHERE batch_id = ?", [batch_id]):
        tables = {"conversations": [conv]}
        for table in ("messages", "tool_calls", "verdicts", "usage"):
            order = " ORDER BY position" if table in ("messages", "tool_calls") else " ORDER BY rowid"
            tables[table] = query(store, f"SELECT * FROM {table} WHERE conversation_id = ?{order}", [conv["id"]])
        out[(conv["spec_id"], conv["trial"])] = {
            table: [{k: v for k, v in row.items() if k not in TIMING_COLUMNS[table]} for row in found] for table, found in tables.items()
        }
    return out


def stored_keys(store, batch_id):
    return [(r["spec_id"], r["trial"]) for r in query(store, "SELECT spec_id, trial FROM conversations WHERE batch_id = ?", [batch_id])]


async def test_a_sharded_batch_stores_what_one_process_stores_field_for_field(store, pool):
    options = BatchOptions(concurrency=6, trials=2, seed=11, max_turns=6)
    sharded = await prepare_batch(store, [PROFILES], options)
    runner, result, events = await run_sharded(store, pool, sharded)
    alone = await prepare_batch(store, [PROFILES], options)
    alone_result = await run_here(store, alone)

    assert result.status == alone_result.status == "completed"
    assert result.done == result.total == 54 and result.passed == alone_result.passed
    assert len(runner.by_worker) == 2 and sum(runner.by_worker.values()) == 54, "both workers ran conversations"
    assert transcripts(store, sharded.id) == transcripts(store, alone.id)
    assert rows(store, sharded.id) == rows(store, alone.id)
    assert stored(store, sharded.id) == stored(store, alone.id), "every stored row, field for field"
    outcomes = {r["outcome"] for r in query(store, "SELECT outcome FROM verdicts")}
    assert {"passed", "unverified"} <= outcomes, outcomes
    keys = stored_keys(store, sharded.id)
    assert len(keys) == len(set(keys)) == 54

    # progress as a single-process batch reports it: counts that only grow, to the total
    progress = [e for e in events if e.kind == "progress"]
    assert [p.done for p in progress] == sorted(p.done for p in progress)
    assert progress[-1].done == progress[-1].total == 54 and progress[-1].passed == result.passed
    assert sum(e.kind == "conversation_finished" for e in events) == 54
    assert events[0].kind == "batch_started" and events[-1].kind == "batch_finished"


def picky_rasa() -> FastAPI:
    """A deployed (Rasa REST) bot that breaks (HTTP 500) whenever a customer speaks of cancelling
    and otherwise always says the same: which conversations break depends on what they say only."""
    app = FastAPI()

    @app.post("/webhooks/rest/webhook")
    async def webhook(request: Request):
        body = await request.json()
        if "cancel" in body["message"].lower():
            return JSONResponse({"error": "internal error"}, status_code=500)
        return [{"recipient_id": body["sender"], "text": "Your order 1001 is on its way."}]

    @app.get("/webhooks/rest/webhook")
    async def probe():
        return {"status": "ok"}

    return app


async def test_a_deployed_bot_that_breaks_is_recorded_as_one_process_records_it(store, pool):
    with serve_app(picky_rasa()) as url:
        options = BatchOptions(models=RoleModels(bot=f"rasa:{url}/webhooks/rest/webhook"), concurrency=6, seed=3, max_turns=6)
        sharded = await prepare_batch(store, [PROFILES], options)
        _, result, events = await run_sharded(store, pool, sharded)
        alone = await prepare_batch(store, [PROFILES], options)
        alone_result = await run_here(store, alone)

    assert result.bot_errors == alone_result.bot_errors >= 3 and result.failed == alone_result.failed
    assert result.unverified == alone_result.unverified and result.errors == alone_result.errors == 0
    assert stored(store, sharded.id) == stored(store, alone.id), "every stored row, field for field"
    broke = query(store, "SELECT stop_reason, error FROM conversations WHERE batch_id = ? AND stop_reason = 'bot_error'", [sharded.id])
    assert len(broke) == result.bot_errors and all("500" in r["error"] for r in broke)
    assert sum(e.kind == "conversation_finished" and e.outcome == "bot_error" for e in events) == result.bot_errors


async def test_a_worker_killed_with_kill_9_loses_nothing_and_nothing_is_stored_twice(store, pool, fake):
    fake.fixed_delay_ms = 150
    options = BatchOptions(models=RoleModels(bot=FAKE), concurrency=8, trials=3, max_turns=4)
    prepared = await prepare_batch(store, [PLAYBOOKS], options)
    runner = ShardedRunner(store, prepared, pool=pool)
    task = asyncio.create_task(runner.run())
    deadline = time.monotonic() + 60
    while len(stored_keys(store, prepared.id)) < 3:
        assert time.monotonic() < deadline and not task.done(), "no conversation was stored"
        await asyncio.sleep(0.05)
    victim = max(pool.live, key=lambda w: w.in_flight)
    assert victim.in_flight > 0
    os.kill(victim.pid, signal.SIGKILL)
    try:
        result = await asyncio.wait_for(task, 120)
    finally:
        await aclose_clients()

    assert result.status == "completed" and result.done == result.total == 21
    assert runner.reruns >= 1, "the killed worker's conversations ran again"
    keys = stored_keys(store, prepared.id)
    assert len(keys) == len(set(keys)) == 21, "each conversation stored once"
    reasons = {r["stop_reason"] for r in query(store, "SELECT stop_reason FROM conversations WHERE batch_id = ?", [prepared.id])}
    assert not reasons & {"cancelled", "infrastructure_error"}, reasons
    assert victim.pid not in pool.pids() and len(pool.live) == 2, "a new worker took the dead one's place"

    fake.fixed_delay_ms = 0
    alone = await prepare_batch(store, [PLAYBOOKS], options)
    await run_here(store, alone)
    assert transcripts(store, prepared.id) == transcripts(store, alone.id)


async def test_one_adaptive_limit_holds_for_all_workers_together(store, pool, fake):
    fake.fixed_delay_ms = 400
    fake.gather_at = 4  # the first calls wait for each other: more than one worker's share in flight at once
    for _ in range(4):  # the first wave is throttled
        fake.push_error(429, "slow down", retry_after=1)
    options = BatchOptions(models=RoleModels(bot=FAKE), concurrency=6, trials=4, max_turns=3)
    prepared = await prepare_batch(store, [PLAYBOOKS], options)
    started = time.monotonic()
    runner, result, events = await run_sharded(store, pool, prepared)

    assert fake.most_held <= 6, "the concurrency asked for is the total over the workers"
    assert fake.most_held > 3, "both workers had conversations in flight together"
    changes = [e for e in events if e.kind == "concurrency_changed"]
    assert result.rate_limited >= 1 and result.lowest_limit < 6
    assert changes[0].reason.startswith("rate limited") and changes[0].paused_for_s == pytest.approx(1.0, abs=0.3)
    assert changes[-1].limit == 6, "the shared limit grows back as the workers' calls succeed"
    assert result.status == "completed" and result.errors == 0 and result.done == 28
    assert time.monotonic() - started >= 1.0


async def test_a_rate_limit_storm_heard_by_every_worker_shrinks_the_one_limit(store, pool, fake):
    fake.fixed_delay_ms = 50
    fake.rate_limit_storm(0.4, retry_after="0.2")  # 40% of all calls, from any worker, get 429
    options = BatchOptions(models=RoleModels(bot=FAKE), concurrency=8, trials=6, max_turns=4)
    prepared = await prepare_batch(store, [PLAYBOOKS], options)
    runner, result, events = await run_sharded(store, pool, prepared)

    assert result.status == "completed" and result.done == 42 and result.errors == 0
    assert len(runner.by_worker) == 2, "both workers ran conversations"
    assert fake.storm_hits >= 5
    assert result.rate_limited == fake.storm_hits, "every 429 any worker heard reached the batch's one limit"
    assert result.lowest_limit < 8
    assert any(e.kind == "concurrency_changed" and e.reason.startswith("rate limited") for e in events)
    assert fake.most_held <= 8, "never more calls at once than the total asked for"


async def test_a_stop_reaches_the_workers_and_the_batch_resumes_to_the_end(store, pool, fake):
    fake.fixed_delay_ms = 400
    options = BatchOptions(models=RoleModels(bot=FAKE), concurrency=4, trials=2, max_turns=6)
    prepared = await prepare_batch(store, [PLAYBOOKS], options)
    runner = ShardedRunner(store, prepared, pool=pool, grace_s=0.1)
    task = asyncio.create_task(runner.run())
    deadline = time.monotonic() + 60
    while runner.in_flight < 4 or not stored_keys(store, prepared.id):
        assert time.monotonic() < deadline and not task.done()
        await asyncio.sleep(0.05)
    # From here the model answers nothing: the conversations in flight end only if the stop
    # reaches them on their workers (however slowly it travels on a busy machine).
    fake.hold()
    runner.stop()
    try:
        result = await asyncio.wait_for(task, 30)
    finally:
        fake.release()
    await aclose_clients()

    assert result.status == "cancelled"
    cancelled = query(
        store,
        "SELECT COUNT(*) AS n, MIN(turns) AS fewest FROM conversations WHERE batch_id = ? AND stop_reason = 'cancelled'",
        [prepared.id],
    )[0]
    assert cancelled["n"] >= 1, "conversations running on the workers were interrupted and saved as cancelled"
    assert all(w.in_flight == 0 for w in pool.live)

    fake.fixed_delay_ms = 0
    resumed = await prepare_resume(store, prepared.id)
    _, again, _ = await run_sharded(store, pool, resumed)
    assert again.status == "completed" and again.done == again.total == 14
    keys = stored_keys(store, prepared.id)
    assert len(keys) == len(set(keys)) == 14
    assert not query(store, "SELECT id FROM conversations WHERE batch_id = ? AND stop_reason = 'cancelled'", [prepared.id])


async def test_the_service_runs_a_batch_over_workers(tmp_path, pool, fake):
    fake.fixed_delay_ms = 50
    async with service(tmp_path, placement=Placement(workers=2)) as client:
        launched = await client.post(
            "/api/batches",
            json={"profiles": ["profiles/playbooks"], "models": {"bot": FAKE}, "trials": 2, "concurrency": 4, "max_turns": 3},
        )
        assert launched.status_code == 201, launched.text
        batch_id = launched.json()["batch_id"]
        manager = client.app.state.service.manager
        seen_running = False
        for _ in range(2000):
            progress = manager.progress(batch_id)
            if progress is not None and progress.in_flight:
                seen_running = True
                break
            await asyncio.sleep(0.02)
        view = await wait_for(client, batch_id, timeout_s=90)
        served_by = manager._pool
    assert seen_running
    assert view["status"] == "completed" and view["completed_scenarios"] == 14, view
    assert served_by is not None and served_by is not pool and not served_by.live, "the service stopped its workers"


async def test_the_environment_a_cluster_worker_gets_is_the_endpoints_only():
    from parley.core.engine.batch_models import BatchModels

    models = BatchModels(RoleModels(bot="openai-api/vllm/m", user="openai/gpt-4o-mini", judge="offline"))
    env = {"VLLM_BASE_URL": "http://gpu:8000/v1", "OPENAI_API_KEY": "sk-x", "AWS_SECRET_ACCESS_KEY": "no", "HOME": "/root"}
    assert endpoint_env(models, [], env) == {"OPENAI_API_KEY": "sk-x", "VLLM_BASE_URL": "http://gpu:8000/v1"}
