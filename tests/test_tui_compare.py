"""The app's compare flow, driven with Pilot: in Batches, `b` marks the base, `c` (or the
palette's "Compare batches") compares the highlighted batch with it; the changed conversations
fill a table; Enter opens both transcripts side by side with each side's failing checks.
On batches made to order, and on a real offline batch against its replay to a prompt bot on
the fake OpenAI server."""

from __future__ import annotations

import asyncio

from textual.widgets import DataTable, Static

from parley.core.store.store import Store
from parley.tui.app.panes.batches_pane import BatchesPane
from parley.tui.app.panes.session_detail import CheckView
from parley.tui.app.screens.compare_batches import CompareScreen
from parley.tui.app.screens.side_by_side import SideBySideScreen
from parley.tui.app.widgets.transcript_view import ChatMessageView
from tests.comparison_fixtures import FAIL, PASS, make_batch
from tests.fake_openai_server import TextReply
from tests.lineage_support import make_suite, parley
from tests.test_tui_support import SIZE, db_path, make_app, run_from_palette, settle  # noqa: F401  (fixture)


def _row(table: DataTable, index: int) -> list[str]:
    return [str(cell) for cell in table.get_row_at(index)]


async def _highlight(pilot, pane: BatchesPane, batch_id: str) -> None:
    pane.table.focus()
    pane.table.move_cursor(row=pane.batch_ids.index(batch_id), animate=False)
    await pilot.pause()


async def test_b_marks_the_base_and_c_lists_the_changes_most_important_first(db_path):
    with Store.open(db_path) as store:
        base = make_batch(store, {("kept#0", 1): PASS, ("broke#0", 1): PASS, ("mended#0", 1): FAIL}, minutes=1)
        new = make_batch(store, {("kept#0", 1): PASS, ("broke#0", 1): FAIL, ("mended#0", 1): PASS}, minutes=2)
    app = make_app(initial_pane="batches")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        pane = app.query_one(BatchesPane)
        assert pane.batch_ids == [new.id, base.id]
        await _highlight(pilot, pane, base.id)
        await pilot.press("b")
        assert pane.base_batch == base.id
        assert str(app.query_one("#batches-status", Static).render()).startswith(f"Base: {base.id[:12]}.")
        await _highlight(pilot, pane, new.id)
        await pilot.press("c")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, CompareScreen) and (screen.base_id, screen.new_id) == (base.id, new.id)
        table = screen.query_one("#compare-changes", DataTable)
        assert table.row_count == 2
        assert _row(table, 0)[:5] == ["REGRESSION", "broke#0", "1", "passed", "failed"]
        assert _row(table, 1)[:5] == ["fix", "mended#0", "1", "failed", "passed"]
        assert "+ORD-1001 ends cancelled" in _row(table, 0)[6]
        summary = str(screen.query_one("#compare-summary", Static).render())
        assert "Pass rate 66.7% (2/3)" in summary and "1 regression, 1 fix" in summary
        assert str(screen.query_one("#compare-status", Static).render()).startswith("2 changed conversation(s)")

        await pilot.press("enter")
        await settle(pilot)
        side = app.screen
        assert isinstance(side, SideBySideScreen) and side.change.spec_id == "broke#0"
        assert str(side.query_one("#side-base-title", Static).render()).startswith("Base: passed")
        assert str(side.query_one("#side-new-title", Static).render()).startswith("New: failed")
        for name in ("base", "new"):
            assert side.query_one(f"#side-{name}-log").query(ChatMessageView), f"the {name} transcript is shown"
        assert [c.check.name for c in side.query_one("#side-new-checks").query(CheckView)] == ["ORD-1001 ends cancelled"]
        assert not side.query_one("#side-base-checks").query(CheckView)
        await pilot.press("escape")
        assert app.screen is screen
        await pilot.press("escape")
        assert isinstance(app.screen.query_one(BatchesPane), BatchesPane)


async def test_the_palette_compares_a_real_batch_with_its_replay_to_a_prompt_bot(db_path, tmp_path, server, monkeypatch):
    monkeypatch.setenv("FAKE_BASE_URL", server.base_url)
    server.default = TextReply("We only sell gift cards here. Anything else?")
    prompt = tmp_path / "shop.txt"
    prompt.write_text("You answer customers of an online shop.\n", encoding="utf-8")
    suite = make_suite(tmp_path / "suite")
    # the command line runs its own event loop: off this test's loop
    assert (await asyncio.to_thread(parley, "run", suite, "--db", db_path)).exit_code == 1
    replay = await asyncio.to_thread(
        parley, "run", "--replay", "latest", "--bot", "openai-api/fake/bot", "--bot-prompt", prompt, "--db", db_path
    )
    assert replay.exit_code == 1, replay.output
    with Store.open(db_path) as store:
        new_id, base_id = store.resolve_batch_ref("latest"), store.resolve_batch_ref("latest~1")

    app = make_app(initial_pane="batches")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await run_from_palette(pilot, "compare batches", "Compare batches")
        screen = app.screen
        assert isinstance(screen, CompareScreen), "no base marked: the highlighted batch against the one before it"
        assert (screen.base_id, screen.new_id) == (base_id, new_id)
        summary = str(screen.query_one("#compare-summary", Static).render())
        assert "(offline) → new" in summary and "(openai-api/fake/bot)" in summary and "new is a replay of base" in summary
        assert "replay: 4 of 4 diverged" in summary
        table = screen.query_one("#compare-changes", DataTable)
        kinds = [_row(table, i)[0] for i in range(table.row_count)]
        assert kinds[0] == "REGRESSION" and "REGRESSION" in kinds
        await pilot.press("enter")
        await settle(pilot)
        side = app.screen
        assert isinstance(side, SideBySideScreen)
        assert "diverged at turn 1" in str(side.query_one("#side-new-title", Static).render())
        bot_lines = [v.text for v in side.query_one("#side-new-log").query(ChatMessageView) if v.role == "bot"]
        assert bot_lines and all(text == "We only sell gift cards here. Anything else?" for text in bot_lines)
        assert side.query_one("#side-new-checks").query(CheckView)


async def test_c_without_a_base_on_the_oldest_batch_says_what_to_do(db_path):
    with Store.open(db_path) as store:
        only = make_batch(store, {("a#0", 1): PASS})
    app = make_app(initial_pane="batches")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.query_one(BatchesPane).batch_ids == [only.id]
        await pilot.press("c")
        await pilot.pause()
        assert not isinstance(app.screen, CompareScreen)
        assert any("Mark a base first" in n.message for n in app._notifications)
