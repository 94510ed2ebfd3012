"""A batch built in code: prepared from specs (source `python`, never resumed from files), and open
while conversations are submitted to it, each awaited; the rows stored always equal what it plans."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from parley.core.engine import BatchModels, BatchRunner, NotRun, prepare_specs
from parley.core.engine.batch_runner import prepare_resume
from parley.core.errors import ParleyError
from parley.core.library import BatchSession, conversation, load_specs, say
from parley.core.records import BatchOptions, RoleModels
from parley.core.store import Store
from tests import python_bots
from tests.conftest import PINNED_TODAY
from tests.waiting import PATIENCE_S

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def store(tmp_path):
    s = Store.open(tmp_path / "parley.db")
    yield s
    s.close()


def track(name: str):
    return conversation(name, goals=["track order ORD-1003"], today=PINNED_TODAY, orders={"ORD-1003": "shipped"})


async def test_an_open_batch_runs_what_is_submitted_until_it_is_closed(store):
    prepared = await prepare_specs(store, [], BatchOptions(concurrency=2))
    assert store.get_batch(prepared.id).sources == ["python"] and store.get_batch(prepared.id).planned == 0
    runner = BatchRunner(store, prepared, open_ended=True)
    task = asyncio.create_task(runner.run())
    first = await runner.submit(track("a"))
    assert first.spec.spec_id == "a#0" and first.verdict is not None and first.verdict.outcome == "passed"
    later = [runner.submit(track(name), trial=2) for name in ("b", "c", "d")]
    stored = await asyncio.gather(*later)
    assert [s.trial for s in stored] == [2, 2, 2] and all(s.batch_id == prepared.id for s in stored)
    assert stored[0].spec.seed != track("b").seed  # trial 2 gets its own seed, as --trials gives it
    runner.close()
    result = await task
    assert (result.status, result.total, result.done, result.passed) == ("completed", 4, 4, 4)
    assert store.get_batch(prepared.id).planned == 4 == len(list(store.iter_conversations(prepared.id)))


async def test_a_conversation_may_run_with_another_bot_and_records_it(store):
    prepared = await prepare_specs(store, [], BatchOptions())
    runner = BatchRunner(store, prepared, open_ended=True)
    task = asyncio.create_task(runner.run())
    other = BatchModels(RoleModels(bot="python:tests.python_bots:lying_bot"), store=store)
    mine = await runner.submit(conversation("x", steps=[say("cancel ORD-1004")]))
    theirs = await runner.submit(conversation("y", steps=[say("cancel ORD-1004")]), models=other)
    runner.close()
    await task
    assert mine.conversation.bot_model == "offline" and theirs.conversation.bot_model == "python:tests.python_bots:lying_bot"
    assert theirs.verdict is not None and theirs.verdict.outcome == "failed"


async def test_the_stored_plan_counts_what_was_submitted_while_the_plan_was_being_stored(store, monkeypatch):
    """`pytest --parley` submits every item at once: those that come while the first update of the
    plan is being written are counted too, however the threads interleave."""
    prepared = await prepare_specs(store, [], BatchOptions(concurrency=2))
    runner = BatchRunner(store, prepared, open_ended=True)
    updating, release = threading.Event(), threading.Event()
    write = store.update_batch

    def slow_update(batch_id: str, **fields: object):
        if "planned" in fields and not updating.is_set():
            updating.set()
            release.wait(PATIENCE_S)
        return write(batch_id, **fields)

    monkeypatch.setattr(store, "update_batch", slow_update)
    task = asyncio.create_task(runner.run())
    first = runner.submit(track("a"))
    assert await asyncio.to_thread(updating.wait, PATIENCE_S)
    later = [runner.submit(track(name)) for name in ("b", "c", "d")]
    runner.close()
    release.set()
    await asyncio.gather(first, *later)
    result = await task
    assert (result.status, result.total, result.done) == ("completed", 4, 4)
    assert store.get_batch(prepared.id).planned == 4 == len(list(store.iter_conversations(prepared.id)))


async def test_what_a_stopped_batch_never_started_is_not_run_and_not_stored(store):
    prepared = await prepare_specs(store, [], BatchOptions(concurrency=1))
    runner = BatchRunner(store, prepared, open_ended=True)
    task = asyncio.create_task(runner.run())
    futures = [runner.submit(track(name)) for name in ("a", "b", "c")]
    await asyncio.sleep(0)
    runner.cancel()
    result = await task
    outcomes = await asyncio.gather(*futures, return_exceptions=True)
    not_run = [o for o in outcomes if isinstance(o, NotRun)]
    assert not_run and result.status == "cancelled"
    stored = list(store.iter_conversations(prepared.id))
    assert len(stored) == len(outcomes) - len(not_run)  # every future that came back is a row, nothing else is
    with pytest.raises(NotRun, match="takes no more conversations"):
        runner.submit(track("late"))


async def test_a_batch_run_from_python_is_not_resumed_from_files(store):
    prepared = await prepare_specs(store, [track("a")], BatchOptions())
    await BatchRunner(store, prepared).run()
    with pytest.raises(ParleyError, match=r"it was run from Python \(parley.api or `pytest --parley`\)"):
        await prepare_resume(store, prepared.id)


def test_a_session_batch_takes_conversations_from_other_threads(tmp_path):
    session = BatchSession(db=tmp_path / "p.db", concurrency=3)
    specs = load_specs([ROOT / "profiles" / "playbooks"])
    futures = [session.submit(spec) for spec in specs]
    results = [f.result() for f in futures]
    mine = session.converse("by_hand", steps=[say("Where is ORD-1003?")], bot=python_bots.order_bot, today=PINNED_TODAY)
    ended = session.close()
    assert ended is not None and (ended.status, ended.total, ended.done) == ("completed", len(specs) + 1, len(specs) + 1)
    assert all(r.passed for r in results) and mine.reply == "ORD-1003 is shipped, with UPS, due 2026-11-23."
    with Store.open(tmp_path / "p.db") as store:
        [row] = store.list_batches()
        assert row.batch.sources == ["python"] and row.summary.done == len(specs) + 1  # type: ignore[union-attr]


def test_a_session_whose_bot_cannot_be_imported_says_so_before_it_stores_anything(tmp_path):
    session = BatchSession(bot="python:tests.python_bots:no_such_bot", db=tmp_path / "p.db")
    with pytest.raises(ParleyError, match="has no 'no_such_bot'"):
        session.start()
    assert session.close() is None
    with Store.open(tmp_path / "p.db") as store:
        assert store.count_batches() == 0
