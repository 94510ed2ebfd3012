"""`parley run --replay BATCH --bot NEW`: the stored customers' words, replayed to another bot
with no simulator call; where the bot's answers diverge is recorded, and a customer with no
words left ends the conversation with `replay_exhausted`. Against the same offline bot nothing
changes; against a prompt bot on the fake OpenAI server, everything diverges and compare shows
the regressions."""

from __future__ import annotations

import asyncio

import pytest

from parley.core.records.chat import ChatMessage
from parley.core.records.conversation import Conversation
from parley.core.store.store import Store
from parley.core.users.replay_user import ReplayScript, ReplayUser, finish_replay
from tests.fake_openai_server import TextReply
from tests.lineage_support import make_suite, parley
from tests.test_store_fixtures import T0

FAKE_BOT = "openai-api/fake/bot"


@pytest.fixture
def suite(tmp_path):
    return make_suite(tmp_path / "suite")


@pytest.fixture
def prompt_file(tmp_path):
    path = tmp_path / "shop.txt"
    path.write_text("You answer customers of an online shop.\n", encoding="utf-8")
    return path


def _latest(db, back: int = 0):
    with Store.open(db) as store:
        batch = store.get_batch(f"latest~{back}")
        return batch, {(c.spec.spec_id, c.trial): c for c in store.iter_conversations(batch.id)}


def test_replaying_to_the_same_bot_changes_nothing(tmp_path, suite):
    db = tmp_path / "p.db"
    assert parley("run", suite, "--trials", "2", "--db", db).exit_code == 1
    replay = parley("run", "--replay", "latest", "--db", db)
    assert replay.exit_code == 1, replay.output  # the failing spec still fails
    parent, before = _latest(db, 1)
    child, after = _latest(db)
    assert child.parent_id == parent.id and child.options.replay_of == parent.id and child.options.models.user == "replay"
    assert f"started (replay of {parent.id}): 8 conversations" in replay.stdout
    assert sorted(after) == sorted(before)
    for key, stored in after.items():
        old = before[key].conversation
        assert [m.content for m in stored.conversation.messages if m.role == "user"] == [
            m.content for m in old.messages if m.role == "user"
        ]
        assert stored.conversation.user_simulator == "replay" and stored.conversation.stop_reason == old.stop_reason
        info = stored.conversation.metadata["replay"]
        assert info["of_conversation"] == old.id and info["divergent_turns"] == [] and info["first_divergence"] is None
    compared = parley("compare", "latest~1", "latest", "--db", db)
    assert compared.exit_code == 0 and "**No change**" in compared.stdout
    assert "in 0 of 8 conversations the bot's answers diverged from the stored ones; 0 ended with replay_exhausted" in compared.stdout
    shown = parley("batches", "show", "latest", "--db", db)
    assert f"Made from: replay of {parent.id} (its customers' words, to bot offline)" in shown.stdout


def test_a_replay_calls_no_user_model(tmp_path, suite, server, monkeypatch):
    monkeypatch.setenv("FAKE_BASE_URL", server.base_url)
    server.default = TextReply("Where is my order ORD-1003? Thanks, goodbye.")
    db = tmp_path / "p.db"
    first = parley("run", suite / "track_shipped_order.yaml", "--user", "openai-api/fake/user", "--max-turns", "3", "--db", db)
    assert first.exit_code in (0, 1), first.output
    asked = len(server.requests)
    assert asked >= 2  # the LLM customer spoke
    replay = parley("run", "--replay", "latest", "--db", db)
    assert replay.exit_code in (0, 1), replay.output
    assert len(server.requests) == asked, "a replay never calls the user's model"
    _, before = _latest(db, 1)
    _, after = _latest(db)
    [(key, stored)] = after.items()
    assert [m.content for m in stored.conversation.messages if m.role == "user"] == [
        m.content for m in before[key].conversation.messages if m.role == "user"
    ]
    assert stored.conversation.usage["user"].calls == 0


def test_a_prompt_bot_that_hangs_up_early_exhausts_the_replay(tmp_path, suite, server, monkeypatch, prompt_file):
    monkeypatch.setenv("FAKE_BASE_URL", server.base_url)
    server.default = TextReply("Our shop is closed today. [END]", usage=(40, 8))
    db = tmp_path / "p.db"
    assert parley("run", suite, "--trials", "2", "--db", db).exit_code == 1
    replay = parley("run", "--replay", "latest", "--bot", FAKE_BOT, "--bot-prompt", prompt_file, "--db", db)
    assert replay.exit_code == 1, replay.output
    child, after = _latest(db)
    assert child.options.models.bot == FAKE_BOT and child.options.models.bot_prompt == str(prompt_file)
    exhausted = [s for s in after.values() if s.conversation.stop_reason == "replay_exhausted"]
    assert exhausted, "multi-line customers had words left when the bot hung up"
    for stored in exhausted:
        info = stored.conversation.metadata["replay"]
        assert info["user_lines_sent"] == 1 < info["user_lines"]
        assert info["exhausted"] == f"the bot ended the conversation after 1 of the {info['user_lines']} stored customer lines"
        assert info["first_divergence"] == 1
        assert stored.conversation.usage["bot"].input_tokens == 40  # one bot call: the replay stopped there

    compared = parley("compare", "latest~1", "latest", "--fail-on-regression", "--db", db)
    out = compared.stdout
    assert "the bot's answers diverged from the stored ones" in out and f"{len(exhausted)} ended with replay_exhausted" in out
    assert (
        "## Regressions (passed → failed, bot_error, or user_fault with a failed check)" in out
        and "| track_shipped_order#0 | 1 | failed |" in out
    )
    assert compared.exit_code == 1, "six regressions and no fix: worse beyond noise"
    assert "| Models | `offline`; user `offline`, judge `offline` | `openai-api/fake/bot` with the prompt" in out


def test_a_question_the_stored_customer_never_answered_exhausts_the_replay():
    script = ReplayScript(
        batch_id="b", conversation_id="c", user_lines=["where is ORD-1003?"], bot_replies=["It has shipped."], stop_reason="user_stop"
    )
    user = ReplayUser(script)
    first = asyncio.run(user.next_message([]))
    assert (first.text, first.stop) == ("where is ORD-1003?", False)
    said = [ChatMessage(role="user", content="where is ORD-1003?")]
    same = asyncio.run(ReplayUser(script).next_message([*said, ChatMessage(role="assistant", content="It  has shipped.")]))
    assert same.stop and same.stop_reason == "user_stop"  # the old answer, whitespace aside: stop as the customer did
    asked = asyncio.run(user.next_message([*said, ChatMessage(role="assistant", content="Which order?\nCan you give its id?")]))
    assert asked.stop and asked.stop_reason == "replay_exhausted"
    assert user.stop_note == "the bot asked something the stored customer never answered"

    closed_before = script.model_copy(update={"stop_reason": "bot_stop"})
    went_on = asyncio.run(ReplayUser(closed_before).next_message([*said, ChatMessage(role="assistant", content="It has shipped.")]))
    assert went_on.stop_reason == "replay_exhausted" and "the old bot closed the conversation here" in (went_on.note or "")

    goodbye = script.model_copy(update={"user_lines": ["hi", "bye"], "last_line_stops": True, "bot_replies": ["hello", ""]})
    last = asyncio.run(
        ReplayUser(goodbye).next_message([ChatMessage(role="user", content="hi"), ChatMessage(role="assistant", content="hello")])
    )
    assert (last.text, last.stop, last.stop_reason) == ("bye", True, "user_stop")


def test_finish_replay_records_each_divergent_turn():
    script = ReplayScript(
        batch_id="b", conversation_id="c", user_lines=["a", "b", "c"], bot_replies=["one", "two", "three"], stop_reason="user_stop"
    )
    messages = [
        ChatMessage(role="user", content="a"),
        ChatMessage(role="assistant", content="one"),
        ChatMessage(role="user", content="b"),
        ChatMessage(role="assistant", content="TWO"),
    ]
    conv = Conversation(
        id="n", customer_id="C-100", bot_model="x", user_simulator="replay", messages=messages,
        started_at=T0, ended_at=T0, duration_s=0.1, stop_reason="bot_stop",
    )  # fmt: skip
    done = finish_replay(conv, script)
    assert done.stop_reason == "replay_exhausted"
    info = done.metadata["replay"]
    assert (info["divergent_turns"], info["first_divergence"], info["user_lines_sent"]) == ([2], 2, 2)
    assert info["exhausted"] == "the bot ended the conversation after 2 of the 3 stored customer lines"


def test_a_replay_of_nothing_or_of_an_unknown_batch_is_refused(tmp_path):
    db = tmp_path / "p.db"
    none = parley("run", "--replay", "latest", "--db", db)
    assert none.exit_code == 1 and "there are no batches in" in none.stderr
    with Store.open(db) as store:
        from parley.core.records.batch import BatchRecord

        store.create_batch(BatchRecord(status="cancelled"))
    empty = parley("run", "--replay", "latest", "--db", db)
    assert empty.exit_code == 1 and "has no stored conversation to replay" in empty.stderr
    note = parley("run", "--replay", "latest", "--user", "offline", "--db", db)
    assert "note: a replay keeps its parent's --user; ignoring them" in note.stderr


def test_a_rerun_of_a_replays_failures_replays_them_again(tmp_path, suite):
    db = tmp_path / "p.db"
    assert parley("run", suite, "--trials", "2", "--db", db).exit_code == 1
    assert parley("run", "--replay", "latest", "--db", db).exit_code == 1
    original, _ = _latest(db, 1)
    replay, _ = _latest(db)
    again = parley("run", "--rerun", "failed", "latest", "--db", db)
    assert again.exit_code == 1, again.output  # the same customers, the same bot: still failing
    assert f"started (re-run of {replay.id}): 2 conversations" in again.stdout
    child, after = _latest(db)
    assert child.parent_id == replay.id and child.options.rerun == ["failed"] and child.options.replay_of == original.id
    assert sorted(after) == [("track_and_refund#0", 1), ("track_and_refund#0", 2)]
    assert all(s.conversation.user_simulator == "replay" for s in after.values())
    shown = parley("batches", "show", "latest", "--db", db)
    assert f"Made from: re-run of {replay.id} (failed conversations, same seeds)" in shown.stdout
    resumed = parley("run", "--resume", "latest", "--db", db)  # nothing left: the same 2 conversations
    assert "2 conversations, 2 already done, 0 to run" in resumed.stdout
