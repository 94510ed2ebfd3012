"""`parley sessions`: chats and batch conversations in one list, shown in full, exported."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from parley.core.chat.session import ChatSession
from parley.core.store.store import Store
from parley.tui.cli.main import cli

ROOT = Path(__file__).resolve().parent.parent
PROFILES = ROOT / "profiles"


def parley(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("sessions") / "p.db"
    assert parley("run", PROFILES / "playbooks", "--db", path).exit_code == 0
    failing = tmp_path_factory.mktemp("failing") / "expects_too_much.yaml"
    text = (PROFILES / "cancel_at_eleven_days.yaml").read_text(encoding="utf-8")
    text = text.replace("test_name: cancel_at_eleven_days", "test_name: expects_too_much")
    text = text.replace("ORD-1005: processing", "ORD-1005: cancelled")
    failing.write_text(text, encoding="utf-8")
    assert parley("run", failing, "--db", path).exit_code == 1
    return path


@pytest.fixture(scope="module")
def chat_id(db):
    import asyncio

    async def chat() -> str:
        async with ChatSession(today=dt.date(2026, 11, 21)) as session:
            await session.send("where is ORD-1003?")
            with Store.open(db) as store:
                store.save_chat_session(session.snapshot())
            return session.snapshot().session_id

    return asyncio.run(chat())


def test_list_shows_chats_and_conversations_newest_first(db, chat_id):
    result = parley("sessions", "list", "--db", db)
    assert result.exit_code == 0
    out = result.stdout
    assert "9 sessions, newest first" in out
    assert chat_id[:12] in out and "chat" in out
    # the chat was saved last, the failing batch ran after the playbooks
    assert out.index(chat_id[:12]) < out.index("expects_too_much#0") < out.index("playbook_cancel_at_ten_days#0")


def test_list_filters(db, chat_id):
    failed = parley("sessions", "list", "--outcome", "failed", "--db", db).stdout
    assert "expects_too_much#0" in failed and "playbook_" not in failed and chat_id[:12] not in failed
    named = parley("sessions", "list", "--profile", "playbook_track_shipped_order", "--db", db).stdout
    assert "1 session," in named and "playbook_track_shipped_order#0" in named
    text = parley("sessions", "list", "--text", "ORD-1003", "--db", db).stdout
    assert chat_id[:12] in text and "playbook_track_shipped_order#0" in text and "expects_too_much" not in text
    limited = parley("sessions", "list", "--limit", "2", "--db", db).stdout
    assert "2 of 9 sessions" in limited and "--limit 9 shows them all" in limited  # never "2 sessions" when 9 are stored
    named = parley("sessions", "list", "--text", "chat as C-100", "--db", db).stdout  # the name the list shows
    assert chat_id[:12] in named and "1 session," in named
    future = parley("sessions", "list", "--since", "2999-01-01", "--db", db)
    assert future.exit_code == 0 and "No sessions stored match these filters." in future.stdout
    assert "9 sessions" in parley("sessions", "list", "--since", "1d", "--db", db).stdout
    assert parley("sessions", "list", "--since", "yesterday", "--db", db).exit_code == 2


def conversation_id(db, name: str) -> str:
    with Store.open(db) as store:
        return store.conversation_rows(name=name)[0].id


def test_show_prints_the_transcript_tool_calls_and_every_check(db):
    cid = conversation_id(db, "expects_too_much")
    result = parley("sessions", "show", cid[:8], "--db", db)
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert f"conversation {cid}" in out
    assert "customer: " in out and "bot: " in out
    assert "tool check_cancellation(order_id=ORD-1005) -> ok:" in out
    assert "verdict: failed" in out
    assert "✗ fail           ORD-1005 ends cancelled: ORD-1005 is processing, expected cancelled" in out
    assert "✓ pass           no other order changed" in out


def test_show_a_chat(db, chat_id):
    result = parley("sessions", "show", chat_id[:10], "--db", db)
    assert result.exit_code == 0
    assert f"chat {chat_id}" in result.stdout and "customer: where is ORD-1003?" in result.stdout
    assert "tool track_order(order_id=ORD-1003) -> ok:" in result.stdout


def test_export_writes_json(db, chat_id, tmp_path):
    cid = conversation_id(db, "playbook_track_shipped_order")
    record = json.loads(parley("sessions", "export", cid, "--db", db).stdout)
    assert record["session_id"] == cid and record["spec_id"] == "playbook_track_shipped_order#0"
    assert record["messages"] and record["tool_calls"] and record["verdict"]["outcome"] == "passed"
    target = tmp_path / "chat.json"
    assert parley("sessions", "export", chat_id, "-o", target, "--db", db).exit_code == 0
    assert json.loads(target.read_text(encoding="utf-8"))["session_id"] == chat_id


def test_unknown_and_ambiguous_ids_are_one_line_and_exit_1(db):
    missing = parley("sessions", "show", "nothing-like-this", "--db", db)
    assert missing.exit_code == 1
    assert (
        missing.stderr.strip() == "error: no conversation or chat session 'nothing-like-this'; `parley sessions list` shows what is stored"
    )
    short = parley("sessions", "export", "abc", "--db", db)
    assert short.exit_code == 1 and "error:" in short.stderr
