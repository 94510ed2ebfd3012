"""Criteria and re-scoring in the app: Enter on a criterion goes to the turn its judge quoted (the
customer's words, a tool call's result, the bot's words); `R` on a batch re-scores it into a new
batch that runs in the Batches pane like any other."""

from __future__ import annotations

import shutil

import pytest
from textual.widgets import DataTable, Input

from parley.core.evaluation.criteria import CriteriaJudgement, Criterion, CriterionAnswer, criteria_checks
from parley.core.store.store import Store
from parley.tui.app.panes.batches_pane import BatchesPane
from parley.tui.app.panes.session_detail import CheckView, SessionScreen
from parley.tui.app.screens.rescore_batch import RescoreScreen
from parley.tui.app.widgets.row_table import RowTable
from parley.tui.app.widgets.transcript_view import ChatLog
from tests.lineage_support import parley
from tests.test_store_fixtures import T0, conversation, spec, verdict
from tests.test_tui_support import PROFILES, db_path, make_app, settle, until  # noqa: F401  (fixture)

QUOTED = {
    "The customer names the order": (1, "please cancel ORD-1001"),
    "The order ends cancelled": (2, '"status":"cancelled"'),
    "The bot says what it did": (2, "has been cancelled (it was pending)"),
}


async def test_enter_on_a_criterion_goes_to_the_turn_it_quotes(db_path):
    conv = conversation("cancel", started=T0)  # "please cancel ORD-1001", "yes": the bot cancels it
    criteria = [Criterion(number=n, text=text) for n, text in enumerate(QUOTED, 1)]
    answers = {
        n: CriterionAnswer(number=n, verdict="met", turns=(turn,), quote=quote) for n, (turn, quote) in enumerate(QUOTED.values(), 1)
    }
    checks = criteria_checks(criteria, CriteriaJudgement(judge="fake", answers=answers), conv)
    assert [c.outcome for c in checks] == ["pass"] * 3
    with Store.open(db_path) as store:
        store.save_conversation(None, spec("cancel_recent", 0), conv, verdict(conv, checks=checks))
    app = make_app(initial_pane="sessions")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        pilot.app.query_one("#sessions-table", DataTable).focus()
        await pilot.press("enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        log = screen.query_one(ChatLog)
        views = {v.check.name: v for v in screen.query(CheckView)}
        reached = {}
        for name in QUOTED:
            views[name].focus()
            await pilot.press("enter")
            await pilot.pause()
            [target] = [w for w in log.query(".-target")]
            reached[name] = (type(target).__name__, getattr(target, "role", None) or getattr(target, "tool_name", None))
        assert reached == {
            "The customer names the order": ("ChatMessageView", "user"),
            "The order ends cancelled": ("ToolCallView", "cancel_order"),
            "The bot says what it did": ("ChatMessageView", "bot"),
        }
        assert 'Evidence, turn 1: "please cancel ORD-1001"' in str(views["The customer names the order"].render())


@pytest.fixture
def parent(db_path, tmp_path) -> str:
    """A stored offline batch of one shipped profile (run as `parley run` runs it)."""
    suite = tmp_path / "suite"
    suite.mkdir()
    shutil.copy(PROFILES / "track_shipped_order.yaml", suite)
    assert parley("run", suite, "--db", db_path).exit_code == 0
    with Store.open(db_path) as store:
        return store.resolve_batch_ref("latest")


async def test_r_on_a_batch_rescores_it_into_a_new_batch(db_path, parent):
    app = make_app(initial_pane="batches")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        app.query_one("#batches-table", RowTable).focus()
        await pilot.press("R")
        await settle(pilot)
        form = app.screen
        assert isinstance(form, RescoreScreen) and form.query_one("#rescore-judge", Input).value == "offline"
        await pilot.click("#rescore-go")
        pane = app.query_one(BatchesPane)
        # the re-score runs in a worker: wait for its end, as long as a busy machine makes it take
        await until(pilot, lambda: not isinstance(app.screen, RescoreScreen) and pane.running_batch is None, "the re-score ends")
        assert pane.progress is not None and pane.progress.done == 1
        with Store.open(db_path) as store:
            child = store.get_batch("latest")
        assert child.parent_id == parent and child.options.rescore_of == parent and child.status == "completed"
        assert pane.batch_ids[:2] == [child.id, parent]
