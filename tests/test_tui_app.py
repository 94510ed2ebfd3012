"""The app around the panes: a light start-up, the command palette, the one error handler, the
Batches pane's list of past batches, and the CLI's --db / --profiles-dir."""

from __future__ import annotations

import subprocess
import sys

from click.testing import CliRunner
from textual.widgets import TabbedContent

from parley.core.store.store import Store
from parley.tui.app.panes.batches_pane import BatchesPane
from parley.tui.app.widgets.row_table import RowTable
from tests.test_store_fixtures import build_scored_batch
from tests.test_tui_support import REPO, SIZE, db_path, make_app, run_from_palette, settle, until  # noqa: F401  (fixture)


def test_importing_the_app_loads_no_engine_database_or_web_stack():
    heavy = ("parley.core.store.store", "parley.core.chat.session", "parley.mockapi.worlds", "fastapi", "openai", "sqlite_utils", "httpx")
    code = f"import sys, parley.tui.app.app; print([m for m in {heavy!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert out.stdout.strip() == "[]"


async def test_the_batches_pane_lists_past_batches(db_path):
    with Store.open(db_path) as store:
        batch = build_scored_batch(store)
        counts = store.list_batches()[0]
    # apart: the judge (evaluation) error and the unevaluated one; errors: the infrastructure error
    s = counts.summary
    assert (s.passed, s.failed, s.bot_errors, s.unverified, s.user_faults, s.apart, s.errors) == (6, 3, 0, 0, 0, 2, 1)
    app = make_app(initial_pane="batches")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        pane = app.query_one(BatchesPane)
        assert "parley run" in str(pane.query_one("#batches-hint").render())
        table = pane.query_one("#batches-table", RowTable)
        assert table.row_count == 1
        row = list(table.full_row(0))
        assert row[0] == batch.id[:12] and row[2] == "completed"
        assert row[4:] == ["12", "12", "6", "3", "0", "2", "1"]  # planned, done, passed, failed, bot errors, apart, errors


async def test_an_empty_batches_pane_says_so(db_path):
    app = make_app(initial_pane="batches")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert str(app.query_one("#batches-status").render()) == "No batches yet: r in Profiles launches one."


async def test_a_failing_worker_becomes_a_notification_not_a_crash(db_path):
    db_path.parent.mkdir(parents=True)
    db_path.write_bytes(b"this is not a database" * 100)
    app = make_app(initial_pane="sessions")
    async with app.run_test(size=SIZE) as pilot:

        def told() -> bool:
            messages = [(n.title, n.message, n.severity) for n in app._notifications]
            return any("is not a parley database" in m and s == "error" and "reading the sessions" in t for t, m, s in messages)

        await until(pilot, told, "the notification that the file is not a parley database")
        assert app.is_running


async def test_the_command_palette_offers_the_main_actions(db_path):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tabs = app.query_one("#panes", TabbedContent)
        await run_from_palette(pilot, "open s", "Open session")
        assert tabs.active == "sessions-pane"

        await run_from_palette(pilot, "run b", "Run batch")
        from parley.tui.app.screens.launch_batch import LaunchBatchScreen

        assert isinstance(app.screen, LaunchBatchScreen)  # the launch form, over the current pane
        assert app.screen.query_one("#launch-sources").value  # prefilled with the profiles folder


def test_cli_passes_db_and_profiles_dir_to_the_app(monkeypatch, tmp_path):
    seen = {}

    class FakeApp:
        def __init__(self, **kw):
            seen.update(kw)

        def run(self):
            seen["ran"] = True

    from parley.tui.app import app as app_module

    monkeypatch.setattr(app_module, "ParleyApp", FakeApp)
    from parley.tui.cli.main import cli

    result = CliRunner().invoke(cli, ["chat", "--customer", "C-200", "--db", str(tmp_path / "x.db"), "--profiles-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert seen["customer"] == "C-200" and seen["db_path"] == tmp_path / "x.db" and seen["profile_dirs"] == (tmp_path,)
    seen.clear()
    result = CliRunner().invoke(cli, ["--db", str(tmp_path / "y.db")])
    assert result.exit_code == 0 and seen["ran"] and seen["db_path"] == tmp_path / "y.db"
