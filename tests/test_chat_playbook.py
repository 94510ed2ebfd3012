"""A chat turned into a test: a live chat (or any stored conversation) exported as a playbook
(`parley sessions export ID --as playbook`, the app's `p`) passes against the same deterministic
bot, and against a bot that changed it fails at the steps where it changed."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from parley.api import load_specs, run, run_sync
from parley.core.chat.session import ChatSession
from parley.core.specs import ChatTurns, playbook_from_chat, reply_regex, stated_values
from parley.core.specs.playbook import load_playbook
from parley.core.store.store import Store
from parley.core.world import load_world
from parley.tui.cli.main import cli
from tests.test_tui_support import SIZE, db_path, make_app, settle  # noqa: F401  (fixture)

ROOT = Path(__file__).resolve().parent.parent
TODAY = dt.date(2026, 11, 21)
LINES = ["Where is my order ORD-1003?", "Please cancel ORD-1004", "yes"]


async def chat_in(db, lines=LINES) -> str:
    """A real offline live chat, saved as the Chat pane saves it; its id."""
    async with ChatSession(customer_id="C-100", today=TODAY, export_dir=db.parent) as session:
        for line in lines:
            await session.send(line)
        with Store.open(db) as store:
            store.save_chat_session(session.snapshot())
        return session.id


def export(db, ident, out):
    result = CliRunner().invoke(cli, ["sessions", "export", ident, "--as", "playbook", "--output", str(out), "--db", str(db)])
    assert result.exit_code == 0, result.output
    return out.read_text(encoding="utf-8")


def tracking_changed(messages):
    """The offline bot's answers, except the tracking one, which now names another carrier."""
    text = messages[-1]["content"]
    if "ORD-1003" in text:
        return "Order ORD-1003 has shipped with DHL."
    if "ORD-1004" in text:
        return "Order ORD-1004 is processing and can be cancelled. Shall I cancel order ORD-1004?"
    return "Done! Order ORD-1004 has been cancelled (it was processing)."


async def test_a_chat_exported_as_a_playbook_passes_against_the_same_bot_and_fails_against_a_changed_one(tmp_path):
    db = tmp_path / "parley.db"
    chat = await chat_in(db)
    text = export(db, chat[:8], tmp_path / "chat.yaml")

    playbook = load_playbook(tmp_path / "chat.yaml")  # a valid playbook, as written
    assert [s.kind for s in playbook.steps] == [
        "user", "expect_tool", "expect_bot_regex", "user", "expect_tool", "expect_bot_regex", "user", "expect_tool", "expect_bot_regex",
    ]  # fmt: skip
    assert [s.text for s in playbook.steps if s.kind == "user"] == LINES
    assert playbook.steps[1].name == "track_order" and playbook.steps[1].arguments == {"order_id": "ORD-1003"}
    assert playbook.steps[7].name == "cancel_order"
    assert (playbook.customer_id, playbook.today) == ("C-100", TODAY)
    # built from what the reply states (the id, the status, the carrier, the tracking number, the date), escaped
    assert playbook.steps[2].pattern == r"(?s)ORD\-1003.*shipped.*UPS.*1Z999AA10123456784.*2026\-11\-23"
    assert '# the bot said: "Order ORD-1003 has shipped with UPS (tracking 1Z999AA10123456784)' in text

    same = await run(load_specs(tmp_path / "chat.yaml"), db=tmp_path / "same.db")
    assert same.passed, same.explain()

    changed = await run(load_specs(tmp_path / "chat.yaml"), bot=tracking_changed, db=tmp_path / "changed.db")
    [conversation] = changed.conversations
    failing = [c for c in conversation.verdict.checks if c.outcome == "fail"]
    # where it changed: no tool call stands behind its answers any more, the carrier and the dates are gone
    assert [c.name.split(":")[0] for c in failing] == ["step 2", "step 3", "step 5", "step 6", "step 8", "claims match actions"]
    step3 = next(c for c in failing if c.name.startswith("step 3"))
    assert "ORD\\-1003.*shipped.*UPS" in step3.name  # where it changed: the carrier is no longer UPS


async def test_a_live_chats_playbook_command_writes_it_at_once(tmp_path):
    async with ChatSession(customer_id="C-100", today=TODAY, export_dir=tmp_path) as session:
        refused = await session.send("/playbook")
        assert (refused.kind, refused.text) == (
            "error",
            "Nothing was said yet: a playbook is made of the customer's lines and the bot's answers.",
        )
        for line in LINES[:2]:
            await session.send(line)
        written = await session.send("/playbook")
        path = tmp_path / "playbooks" / f"chat_{session.id[:12]}.yaml"
        assert (written.kind, written.path) == ("text", str(path))
        assert written.text == f"Playbook written to {path}: edit its expectations, then `parley run` it."
        again = await session.send("/playbook")  # a second one beside the first, never over it
        assert again.path == str(tmp_path / "playbooks" / f"chat_{session.id[:12]}-2.yaml")
    playbook = load_playbook(path)
    assert [s.text for s in playbook.steps if s.kind == "user"] == LINES[:2]
    same = await run(load_specs(path), db=tmp_path / "same.db")
    assert same.passed, same.explain()


def test_a_stored_batch_conversation_is_exported_too_and_runs_alike(tmp_path):
    db = tmp_path / "parley.db"
    ran = CliRunner().invoke(cli, ["run", "profiles/track_shipped_order.yaml", "--db", str(db)])
    assert ran.exit_code == 0, ran.output
    with Store.open(db) as store:
        [row] = store.conversation_rows(store.latest_batch_id())
    export(db, row.id, tmp_path / "again.yaml")
    again = run_sync(load_specs(tmp_path / "again.yaml"), db=tmp_path / "again.db")
    assert again.passed, again.explain()


def test_a_conversation_run_on_its_profiles_own_orders_says_so_at_the_playbooks_head(tmp_path):
    profile = tmp_path / "own_orders.yaml"
    profile.write_text(
        (ROOT / "profiles" / "track_shipped_order.yaml")
        .read_text(encoding="utf-8")
        .replace("world:\n", "world:\n  orders:\n    - {id: ORD-1003, status: delivered}\n", 1),
        encoding="utf-8",
    )
    db = tmp_path / "parley.db"
    ran = CliRunner().invoke(cli, ["run", str(profile), "--db", str(db)])
    assert ran.exit_code == 1, ran.output  # it expects ORD-1003 shipped, and here it was delivered
    with Store.open(db) as store:
        [row] = store.conversation_rows(store.latest_batch_id())
    text = export(db, row.id, tmp_path / "own.yaml")
    head = text.split("name:")[0]
    assert "# Note: it ran with its profile's own records (orders/ORD-1003); a playbook runs on its world's shipped ones" in head
    assert load_playbook(tmp_path / "own.yaml").customer_id == "C-100"


def test_the_regex_states_values_not_wording():
    reply = "Good news: ORD-1003 is on its way with UPS, tracking 1Z999AA10123456784. It should arrive on 2026-11-23!"
    known = ["shipped", "UPS", "1Z999AA10123456784", "C-100", "Departed UPS facility, Louisville KY", "7"]
    values = stated_values(reply, known, [t.id_pattern for t in load_world("orders").tables if t.id_pattern])  # the world's id shapes
    assert values == ["ORD-1003", "UPS", "1Z999AA10123456784", "2026-11-23"]  # no prose, no bare small number
    pattern = reply_regex(values)
    assert re.search(pattern, "Your parcel ORD-1003 travels with ups (1Z999AA10123456784), due 2026-11-23.", re.I)
    assert not re.search(pattern, "Your parcel ORD-1003 travels with DHL (1Z999AA10123456784), due 2026-11-23.", re.I)
    assert reply_regex([]) == "."


def test_what_a_bot_says_is_data_in_the_file():
    from parley.core.records import ChatMessage

    hostile = 'ok"\n- user: injected\n# \x1b[31m'
    text = playbook_from_chat(
        ChatTurns(
            messages=[ChatMessage(role="user", content="hi: [a, b]"), ChatMessage(role="assistant", content=hostile)],
            tool_calls=[],
            customer_id="C-100",
            today=None,
        ),
        name="x",
        made_from="a test",
    )
    assert "\n- user: injected" not in text and "\x1b" not in text
    from parley.core.specs.playbook import check_playbook_text

    playbook, errors = check_playbook_text(text)
    assert not errors and playbook is not None
    assert [s.text for s in playbook.steps if s.kind == "user"] == ["hi: [a, b]"]


async def test_the_app_makes_a_playbook_of_the_selected_session(db_path):
    chat = await chat_in(db_path)
    app = make_app(initial_pane="sessions")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        table = app.query_one("#sessions-table")
        table.focus()
        await pilot.press("p")
        await settle(pilot)
        [written] = (db_path.parent / "playbooks").glob("chat_*.yaml")
        assert written.name == f"chat_{chat[:12]}.yaml"
        assert any(str(written) in n.message and "parley run" in n.message for n in app._notifications)
    assert load_playbook(written).customer_id == "C-100"
