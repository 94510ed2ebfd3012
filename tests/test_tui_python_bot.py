"""The app launches a batch against a Python bot (`python:MODULE:NAME` in the form's bot field):
its conversations are the bot's, with the tool calls it made; a bot that cannot be imported is
one line in the form, and nothing is stored."""

from __future__ import annotations

import shutil

import pytest

from parley.core.store import Store
from parley.tui.app.panes.batches_pane import BatchesPane
from tests.test_tui_batches import fill, launch, open_form
from tests.test_tui_support import PROFILES, SIZE, db_path, make_app, settle  # noqa: F401  (fixture)

BOT = "python:tests.python_bots:order_bot"


@pytest.fixture
def folder(tmp_path):
    target = tmp_path / "suite"
    target.mkdir()
    shutil.copy(PROFILES / "track_shipped_order.yaml", target / "track_shipped_order.yaml")
    return target


async def test_a_batch_launched_from_the_app_runs_the_python_bot(db_path, folder):
    app = make_app(initial_pane="profiles", profile_dirs=[folder])
    async with app.run_test(size=SIZE) as pilot:
        await launch(pilot, folder, bot=BOT)
        pane = app.query_one(BatchesPane)
        assert pane.progress is not None and pane.progress.done == pane.progress.total == 1
        shown = pane.shown_batch
    with Store.open(db_path) as store:
        [row] = store.list_batches()
        [stored] = list(store.iter_conversations(shown or ""))
    assert row.batch.options.models.bot == BOT and row.batch.status == "completed"
    assert stored.conversation.bot_model == BOT
    assert "track_order" in [call.name for call in stored.conversation.tool_calls]
    assert stored.verdict is not None and stored.verdict.outcome == "passed"


async def test_a_python_bot_that_cannot_be_imported_is_one_line_in_the_form(db_path, folder):
    app = make_app(initial_pane="profiles", profile_dirs=[folder])
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_form(pilot, folder)
        fill(screen, bot="python:tests.python_bots:no_such_bot")
        await pilot.click("#launch-go")
        await settle(pilot)
        assert app.screen is screen, "the form stays open"
        error = screen.error_text
    assert "has no 'no_such_bot'" in error and "Traceback" not in error
    with Store.open(db_path) as store:
        assert store.list_batches() == []
