"""Live chats saved as they go, the LLM response cache, and API keys never reaching the file."""

from __future__ import annotations

import datetime as dt

import pytest

from parley.core.chat.session import ChatSession
from parley.core.errors import ParleyError
from parley.core.store.rows import cache_key
from parley.core.store.store import Store
from tests.test_store_fixtures import TODAY, batch, conversation, spec, store, verdict  # noqa: F401


async def test_a_live_chat_is_saved_as_it_goes_and_reads_back(store, today):
    async with ChatSession(customer_id="C-100", today=today) as chat:
        await chat.send("hi")
        store.save_chat_session(chat.snapshot(), started_at=chat.started_at)
        first = store.load_chat_session(chat.id)
        assert [m.content for m in first.chat.messages][:1] == ["hi"]

        await chat.send("please cancel ORD-1001")
        await chat.send("yes")
        snap = chat.snapshot()
        store.save_chat_session(snap)  # the same session: updated, not duplicated

    rows = store.list_chat_sessions()
    assert len(rows) == 1 and rows[0].id == chat.id
    assert rows[0].messages == len(snap.messages) and rows[0].turns == 3
    assert rows[0].created_at == first.created_at == chat.started_at  # kept from the first save
    got = store.load_chat_session(chat.id[:8])
    assert got.chat == snap
    assert got.chat.world_state.final_row("orders", "ORD-1001")["status"] == "cancelled"
    assert got.chat.tool_calls and got.chat.tool_calls[-1].name == "cancel_order"
    with pytest.raises(ParleyError, match="no chat session"):
        store.load_chat_session("0123456789")


async def test_chat_sessions_list_most_recent_first(store, today):
    ids = []
    for _ in range(3):
        async with ChatSession(customer_id="C-200", today=today) as chat:
            await chat.send("hello")
            store.save_chat_session(chat.snapshot())
            ids.append(chat.id)
    assert [r.id for r in store.list_chat_sessions()] == ids[::-1]
    assert [r.id for r in store.list_chat_sessions(limit=1, offset=1)] == [ids[1]]
    assert store.list_chat_sessions()[0].customer_id == "C-200"


def test_the_cache_returns_what_was_put_under_the_request_key(store):
    request = {"model": "openai/gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}], "temperature": 0}
    key = cache_key(request)
    assert key == cache_key(dict(reversed(list(request.items()))))  # canonical: key order does not matter
    assert key != cache_key({**request, "temperature": 1})
    assert store.cache_get(key) is None
    store.cache_put(key, "openai/gpt-4o-mini", request, {"text": "Hello!", "usage": {"input_tokens": 3}})
    assert store.cache_get(key) == {"text": "Hello!", "usage": {"input_tokens": 3}}
    store.cache_put(key, "openai/gpt-4o-mini", request, {"text": "Another"})  # the first answer is kept
    assert store.cache_get(key)["text"] == "Hello!"


def test_the_cache_survives_reopening(tmp_path):
    with Store.open(tmp_path / "c.db") as s:
        s.cache_put("k" * 64, "m", {"q": 1}, [1, 2, 3])
    with Store.open(tmp_path / "c.db") as s:
        assert s.cache_get("k" * 64) == [1, 2, 3]


FAKE_KEY = "sk-test-FAKE0123456789abcdefDEADBEEF"


async def test_no_api_key_is_ever_written_to_the_database_file(tmp_path, monkeypatch, today):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    monkeypatch.setenv("ACME_API_KEY", FAKE_KEY[::-1])
    path = tmp_path / "keys.db"
    store = Store.open(path)
    try:
        b = store.create_batch(batch(error=f"auth failed with key {FAKE_KEY}"))
        # A careless provider error that echoes the key, in the conversation and the verdict.
        conv = conversation(stop_reason="error", error=f"401 Incorrect API key provided: {FAKE_KEY}")
        conv.metadata["headers"] = {"Authorization": f"Bearer {FAKE_KEY}"}
        v = verdict(conv, "error", None, error=f"judge failed: key {FAKE_KEY[::-1]} rejected")
        store.save_conversation(b.id, spec(), conv, v)
        store.update_batch(b.id, status="failed", error=f"stopped: {FAKE_KEY}")
        request = {
            "model": "openai/x",
            "api_key": FAKE_KEY,
            "headers": {"Authorization": f"Bearer {FAKE_KEY}"},
            "messages": [{"role": "user", "content": "hi"}],
        }
        store.cache_put(cache_key(request), "openai/x", request, {"text": "ok"})
        async with ChatSession(customer_id="C-100", today=today) as chat:
            await chat.send(f"my key is {FAKE_KEY}")
            store.save_chat_session(chat.snapshot())
        loaded = store.load_conversation(conv.id)
        assert "[redacted]" in loaded.conversation.error  # the record says something was there
    finally:
        store.close()

    for file in tmp_path.iterdir():  # the db and any -wal / -shm left behind
        data = file.read_bytes()
        assert FAKE_KEY.encode() not in data, file.name
        assert FAKE_KEY[::-1].encode() not in data, file.name
    assert path.stat().st_size > 0


def test_cache_keys_do_not_depend_on_credentials():
    base = {"model": "m", "messages": []}
    assert cache_key({**base, "api_key": "sk-one-1234567890"}) == cache_key({**base, "api_key": "sk-two-0987654321"}) == cache_key(base)


def test_times_come_back_in_utc(store):
    b = store.create_batch(batch(created_at=dt.datetime(2026, 11, 21, 12, 0, tzinfo=dt.timezone(dt.timedelta(hours=2)))))
    got = store.get_batch(b.id)
    assert got.created_at == b.created_at and got.created_at.utcoffset() == dt.timedelta(0)
    assert TODAY.year == 2026


async def test_an_older_snapshot_saved_late_never_overwrites_a_newer_one(store, today):
    # Two saves of one chat finishing out of order (thread workers race): the older snapshot
    # arrives second and must change nothing, its usage row included.
    async with ChatSession(customer_id="C-100", today=today) as chat:
        await chat.send("hi")
        older = chat.snapshot()
        await chat.send("where is ORD-1003?")
        newer = chat.snapshot()
    assert newer.exported_at > older.exported_at
    store.save_chat_session(newer, started_at=chat.started_at)
    store.save_chat_session(older)
    got = store.load_chat_session(chat.id).chat
    assert got == newer and len(got.messages) > len(older.messages)
    row = store.list_chat_sessions()[0]
    assert row.turns == 2 and row.messages == len(newer.messages)
    assert row.input_tokens == newer.metrics.usage.input_tokens
