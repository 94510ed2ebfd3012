"""A re-score reads its stored conversations a page at a time and writes its copies together
(parley.core.engine.stored_copies): what it judges and stores is what judging each stored
conversation alone gave, and one conversation the store cannot read or write fails alone."""

from __future__ import annotations

import sqlite3

import pytest

from parley.core.engine import BatchRunner, prepare_batch, prepare_rescore, stored_copies
from parley.core.errors import ParleyError
from parley.core.records import BatchOptions, BatchRecord, ConversationCopy
from parley.core.store import DuplicateConversationError
from parley.core.store.store import Store
from tests.lineage_support import make_suite

TRIALS = 3


@pytest.fixture
def small_pages(monkeypatch):
    """Pages of 3 conversations: a batch of 12 reads in several pages, as a large one does."""
    monkeypatch.setattr(stored_copies, "PAGE_SIZE", 3)


@pytest.fixture
async def parent(tmp_path, small_pages):
    """A stored offline batch of the small suite, 4 specs x 3 trials."""
    store = Store.open(tmp_path / "p.db")
    prepared = await prepare_batch(store, [make_suite(tmp_path / "suite")], BatchOptions(seed=5, trials=TRIALS))
    result = await BatchRunner(store, prepared).run()
    assert result.done == 4 * TRIALS
    yield store, prepared.id
    store.close()


def by_run(store: Store, batch_id: str):
    return {(c.spec.spec_id, c.trial): c for c in store.iter_conversations(batch_id)}


async def test_a_rescore_judges_and_stores_every_conversation_as_it_was_judged_alone(parent):
    store, parent_id = parent
    prepared = await prepare_rescore(store, parent_id, concurrency=2)
    result = await BatchRunner(store, prepared).run()
    assert (result.status, result.done, result.errors) == ("completed", 4 * TRIALS, 0)
    before, after = by_run(store, parent_id), by_run(store, prepared.id)
    assert sorted(after) == sorted(before)
    for key, copy in after.items():
        original = before[key]
        # the same judge and expectations: every verdict as the batch's own run gave it, check for check
        assert copy.verdict.model_dump(exclude={"conversation_id"}) == original.verdict.model_dump(exclude={"conversation_id"})
        assert copy.conversation.messages == original.conversation.messages
        assert copy.conversation.tool_calls == original.conversation.tool_calls
        assert copy.conversation.metadata["rescored_from"]["conversation_id"] == original.conversation.id


async def test_a_stored_conversation_that_can_no_longer_be_read_fails_its_own_run_alone(parent):
    store, parent_id = parent
    prepared = await prepare_rescore(store, parent_id)
    gone = prepared.rescores[(next(iter(prepared.rescores))[0], 2)]
    with sqlite3.connect(store.path) as other:  # another process deletes it after the re-score was planned
        other.execute("PRAGMA foreign_keys = ON")
        other.execute("DELETE FROM conversations WHERE id = ?", [gone])
    result = await BatchRunner(store, prepared).run()
    assert (result.done, result.passed + result.failed, result.errors) == (4 * TRIALS, 4 * TRIALS - 1, 1)
    broken = [c for c in by_run(store, prepared.id).values() if c.conversation.stop_reason == "infrastructure_error"]
    assert len(broken) == 1 and gone in (broken[0].conversation.error or "")


async def test_copies_stored_together_are_each_stored_or_refused_alone(parent):
    store, parent_id = parent
    originals = list(by_run(store, parent_id).values())[:5]
    record = BatchRecord(status="running", sources=[], options=store.get_batch(parent_id).options, planned=5)
    store.create_batch(record)

    def copy_of(stored, conversation_id: str) -> ConversationCopy:
        conversation = stored.conversation.model_copy(update={"id": conversation_id})
        verdict = stored.verdict.model_copy(update={"conversation_id": conversation_id})
        return ConversationCopy(
            spec=stored.spec, conversation=conversation, verdict=verdict, trial=stored.trial, source_id=stored.conversation.id
        )

    first = [copy_of(originals[0], "c1"), copy_of(originals[1], "c2")]
    assert store.save_copies(record.id, first) == [None, None]
    # the same run again under another id is refused; the copies beside it are stored all the same
    errors = store.save_copies(record.id, [copy_of(originals[1], "c2-again"), copy_of(originals[2], "c3")])
    assert isinstance(errors[0], DuplicateConversationError) and errors[1] is None
    # a copy whose source no longer has the messages it counts is refused alone too
    changed = copy_of(originals[3], "c4")
    changed.conversation.messages = [*changed.conversation.messages, changed.conversation.messages[-1]]
    errors = store.save_copies(record.id, [changed, copy_of(originals[4], "c5")])
    assert isinstance(errors[0], ParleyError) and "changed while it was copied" in str(errors[0]) and errors[1] is None
    stored = by_run(store, record.id)
    assert sorted(c.conversation.id for c in stored.values()) == ["c1", "c2", "c3", "c5"]
    for original in (originals[0], originals[2], originals[4]):
        assert stored[(original.spec.spec_id, original.trial)].conversation.messages == original.conversation.messages
        assert stored[(original.spec.spec_id, original.trial)].conversation.tool_calls == original.conversation.tool_calls
