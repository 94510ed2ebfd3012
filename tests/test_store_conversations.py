"""Saving and reading conversations: round trip, one transaction, duplicates, resume keys,
listing, filtering, paging, id prefixes, batches."""

from __future__ import annotations

import datetime as dt

import pydantic
import pytest

from parley.core.errors import ParleyError
from parley.core.records.batch import BatchRecord
from parley.core.records.chat import Usage
from parley.core.records.verdict import ExtractedOutput
from parley.core.store import store as store_module
from parley.core.store.store import DuplicateConversationError
from tests.test_store_fixtures import T0, batch, check, conversation, spec, store, verdict  # noqa: F401


def _counts(store, conversation_id):
    return {
        table: store.db.execute(f"SELECT COUNT(*) FROM {table} WHERE conversation_id = ?", [conversation_id]).fetchone()[0]
        for table in ("messages", "tool_calls", "verdicts", "usage")
    } | {"conversations": store.db.execute("SELECT COUNT(*) FROM conversations WHERE id = ?", [conversation_id]).fetchone()[0]}


def test_a_saved_conversation_comes_back_equal(store):
    b = store.create_batch(batch())
    conv = conversation(
        "cancel",
        usage={
            "bot": Usage(input_tokens=120, output_tokens=40, calls=3, cost_usd=None, unreported_calls=1),
            "user": Usage(input_tokens=30, output_tokens=10, calls=2, cost_usd=0.0012),
        },
    )
    assert conv.tool_calls and conv.final_state is not None and conv.turns
    s = spec("cancel_recent", 2, ORDER="ORD-1001")
    v = verdict(
        conv,
        "failed",
        2,
        checks=[
            check("ORD-1001 ends cancelled"),
            check("bot never says 'refund'", "fail", "said 'refund' in turn 2", kind="bot_never_says"),
        ],
        judge_usage=Usage(input_tokens=500, output_tokens=30, calls=1, cost_usd=0.002),
    )
    v.outputs.append(ExtractedOutput(name="total", type="money", found=True, value={"amount": 92.49, "currency": "USD"}, raw="$92.49"))

    store.save_conversation(b.id, s, conv, v, trial=3)
    got = store.load_conversation(conv.id)

    assert got.conversation == conv
    assert got.conversation.messages == conv.messages and got.conversation.tool_calls == conv.tool_calls
    assert got.conversation.usage["bot"].cost_usd is None  # unknown stays unknown, not 0
    assert got.verdict == v and got.spec == s
    assert (got.trial, got.batch_id) == (3, b.id)

    row = store.conversation_rows(b.id)[0]
    assert (row.input_tokens, row.output_tokens) == (650, 80)
    assert row.cost_usd is None  # one unknown price makes the total unknown
    assert (row.outcome, row.passed, row.score, row.trial, row.turns) == ("failed", False, 2, 3, len(conv.turns))


def test_a_failure_mid_save_stores_nothing_of_that_conversation(store, monkeypatch):
    b = store.create_batch(batch())
    conv = conversation("cancel")

    def explode(*args, **kwargs):
        raise RuntimeError("disk on fire")

    # Messages and tool calls are written before the usage rows: fail there.
    monkeypatch.setattr(store_module, "usage_rows", explode)
    with pytest.raises(RuntimeError):
        store.save_conversation(b.id, spec(), conv, verdict(conv))
    assert _counts(store, conv.id) == {"messages": 0, "tool_calls": 0, "verdicts": 0, "usage": 0, "conversations": 0}
    assert store.completed_keys(b.id) == set()

    monkeypatch.undo()
    store.save_conversation(b.id, spec(), conv, verdict(conv))  # the retry goes through
    assert _counts(store, conv.id)["messages"] == len(conv.messages)


def test_duplicates_replace_nothing_but_a_retried_write_is_harmless(store):
    b = store.create_batch(batch())
    first = conversation()
    store.save_conversation(b.id, spec(), first, verdict(first), trial=1)
    assert store.save_conversation(b.id, spec(), first, verdict(first), trial=1) == first.id  # same id: no-op

    other = conversation()
    with pytest.raises(DuplicateConversationError, match=r"already has track_order#0 trial 1 .*nothing was replaced"):
        store.save_conversation(b.id, spec(), other, verdict(other, "failed", 1), trial=1)
    assert store.count_conversations(b.id) == 1
    assert store.load_conversation(first.id).verdict.outcome == "passed"


def test_an_infrastructure_error_is_rerun_on_resume_and_replaced(store):
    b = store.create_batch(batch(trials=2))
    ok = conversation()
    broken = conversation(stop_reason="error", error="provider 503 after retries")
    store.save_conversation(b.id, spec(), ok, verdict(ok), trial=1)
    store.save_conversation(b.id, spec(), broken, None, trial=2)
    store.save_conversation(b.id, spec("other"), conversation(), None, trial=1)

    assert store.completed_keys(b.id) == {("track_order#0", 1), ("other#0", 1)}
    assert store.completed_keys(b.id, retry_errors=False) == {("track_order#0", 1), ("track_order#0", 2), ("other#0", 1)}

    rerun = conversation()
    store.save_conversation(b.id, spec(), rerun, verdict(rerun), trial=2)
    assert store.completed_keys(b.id) == {("track_order#0", 1), ("track_order#0", 2), ("other#0", 1)}
    with pytest.raises(ParleyError, match="no conversation"):
        store.load_conversation(broken.id)
    assert _counts(store, broken.id)["messages"] == 0  # its rows went with it (cascade)


def test_saving_into_an_unknown_batch_is_a_clear_error(store):
    conv = conversation()
    with pytest.raises(ParleyError, match="no batch 'nope'"):
        store.save_conversation("nope", spec(), conv, None)


def test_a_conversation_outside_any_batch_can_be_saved(store):
    conv = conversation()
    conv.metadata.update(repeat=2, when=dt.date(2026, 11, 21))
    store.save_conversation(None, spec(), conv, verdict(conv))
    got = store.load_conversation(conv.id)
    assert got.batch_id is None and got.conversation.metadata == {"repeat": 2, "when": "2026-11-21"}


def _fill(store):
    b1 = store.create_batch(batch(created_at=T0))
    b2 = store.create_batch(batch(created_at=T0 + dt.timedelta(hours=1)))
    made = []
    plan = [
        (b1.id, "track_order", "passed", 3, {"ORDER": "ORD-1003"}),
        (b1.id, "cancel_recent", "failed", 1, {"ORDER": "ORD-1001"}),
        (b1.id, "track_order", "error", None, {"ORDER": "ORD-1002"}),
        (b2.id, "cancel_recent", "passed", 3, {"ORDER": "ORD-1002"}),
        (b2.id, "track_order", None, None, {"ORDER": "ORD-1004"}),
    ]
    for i, (bid, name, outcome, score, variables) in enumerate(plan):
        conv = conversation("cancel" if name == "cancel_recent" else "track", started=T0 + dt.timedelta(minutes=10 * i))
        v = verdict(conv, outcome, score) if outcome else None
        store.save_conversation(bid, spec(name, i, **variables), conv, v, trial=1)
        made.append(conv.id)
    return b1, b2, made


def test_rows_are_newest_first_and_page(store):
    b1, b2, made = _fill(store)
    rows = store.conversation_rows()
    assert [r.id for r in rows] == made[::-1]
    assert [r.id for r in store.conversation_rows(limit=2, offset=2)] == made[::-1][2:4]
    assert [r.id for r in store.conversation_rows(b1.id)] == made[:3][::-1]
    assert store.count_conversations() == 5 and store.count_conversations(b1.id) == 3
    assert rows[0].outcome is None and rows[0].passed is None  # not evaluated
    assert rows[-1].variables == {"ORDER": "ORD-1003"} and rows[-1].started_at == T0


def test_rows_filter_by_name_outcome_time_and_text(store):
    b1, b2, made = _fill(store)
    assert {r.id for r in store.conversation_rows(name="cancel_recent")} == {made[1], made[3]}
    assert [r.id for r in store.conversation_rows(outcome="failed")] == [made[1]]
    assert [r.id for r in store.conversation_rows(outcome="error")] == [made[2]]
    assert [r.id for r in store.conversation_rows(outcome="unevaluated")] == [made[4]]
    assert store.count_conversations(outcome="passed") == 2
    since = T0 + dt.timedelta(minutes=15)
    until = T0 + dt.timedelta(minutes=35)
    assert [r.id for r in store.conversation_rows(since=since, until=until)] == [made[3], made[2]]
    assert [r.id for r in store.conversation_rows(text="ORD-1004")] == [made[4]]  # a variable
    # the transcript is searched too: only the cancel script says "yes"
    assert {r.id for r in store.conversation_rows(b1.id, text="please cancel")} == {made[1]}
    odd = conversation()
    store.save_conversation(b2.id, spec("promo", 9, DISCOUNT="50% off"), odd, None)
    assert [r.id for r in store.conversation_rows(text="50% off")] == [odd.id]
    assert store.count_conversations(text="5_%") == 0  # % and _ are literal, not LIKE wildcards
    with pytest.raises(ParleyError, match="unknown outcome"):
        store.conversation_rows(outcome="great")


def test_ids_may_be_given_by_a_unique_prefix_of_six_characters(store):
    b = store.create_batch(BatchRecord(id="abcdef0001"))
    store.create_batch(BatchRecord(id="abcdef0002"))
    conv = conversation()
    store.save_conversation(b.id, spec(), conv, None)
    assert store.load_conversation(conv.id[:6]).conversation.id == conv.id
    assert store.get_batch("abcdef0001").id == b.id
    with pytest.raises(ParleyError, match="matches several batches"):
        store.get_batch("abcdef")
    with pytest.raises(ParleyError, match="too short"):
        store.load_conversation(conv.id[:4])
    with pytest.raises(ParleyError, match=r"no conversation 'ffffffffff'; `parley sessions list`"):
        store.load_conversation("ffffffffff")


def test_batches_are_created_updated_listed_newest_first(store):
    assert store.latest_batch_id() is None
    old = store.create_batch(batch(planned=4, created_at=T0))
    new = store.create_batch(batch(planned=2, created_at=T0 + dt.timedelta(days=1)))
    assert store.latest_batch_id() == new.id
    started = T0 + dt.timedelta(days=1, minutes=1)
    updated = store.update_batch(new.id, status="running", started_at=started)
    assert store.get_batch(new.id) == updated and updated.status == "running" and updated.started_at == started
    with pytest.raises(pydantic.ValidationError):
        store.update_batch(new.id, status="exploded")
    assert store.get_batch(new.id).status == "running"
    with pytest.raises(ValueError):
        store.update_batch(new.id, id="other")
    with pytest.raises(ParleyError, match=r"no batch 'zzzzzzzz'; `parley sessions list` shows"):
        store.get_batch("zzzzzzzz")
    with pytest.raises(ParleyError, match="already exists"):
        store.create_batch(old)

    conv = conversation()
    store.save_conversation(old.id, spec(), conv, verdict(conv))
    failing = conversation()
    store.save_conversation(old.id, spec("x"), failing, verdict(failing, "failed", 1))
    store.save_conversation(old.id, spec("y"), conversation(stop_reason="cancelled"), None)
    rows = store.list_batches()
    assert [r.id for r in rows] == [new.id, old.id]
    assert (rows[1].summary.done, rows[1].summary.passed, rows[1].summary.failed, rows[1].summary.errors) == (3, 1, 1, 1)
    assert (rows[0].summary.done, rows[0].batch.planned) == (0, 2)
    assert [r.id for r in store.list_batches(limit=1, offset=1)] == [old.id]
