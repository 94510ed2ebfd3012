"""The second shipped world's suite (the returns desk, worlds/returns/suite) runs offline against its
reference bot from every face a user has: the command line, the Python API, the pytest plugin and
the app; every conversation passes, decided by the world's checks."""

from __future__ import annotations

import shutil
from pathlib import Path

from click.testing import CliRunner

from parley.api import load_specs, run_sync
from parley.core.store import Store
from parley.tui.app.panes.batches_pane import BatchesPane
from parley.tui.cli.main import cli
from tests.test_pytest_plugin import pytest_run
from tests.test_tui_batches import launch
from tests.test_tui_support import SIZE, db_path, make_app  # noqa: F401  (fixture)

SUITE = Path(__file__).resolve().parent.parent / "worlds" / "returns" / "suite"
BOT = "python:parley.worlds.returns.reference_bot:ReturnsDeskBot"
SPECS = len(load_specs(SUITE))


def test_the_suite_has_profiles_and_playbooks_on_the_returns_world():
    specs = load_specs(SUITE)
    assert 6 <= len({s.source for s in specs}) <= 10 and {s.kind for s in specs} == {"profile", "playbook"}
    assert all(s.world.name == "returns" for s in specs)


def test_the_command_line_runs_it_and_every_conversation_passes(tmp_path):
    ran = CliRunner().invoke(cli, ["run", str(SUITE), "--bot", BOT, "--db", str(tmp_path / "p.db")], catch_exceptions=False)
    assert ran.exit_code == 0, ran.output
    assert f"Pass rate: 100.0% ({SPECS} of {SPECS}" in ran.output


def test_the_python_api_runs_it_and_the_world_decides(tmp_path):
    result = run_sync(load_specs(SUITE), bot=BOT, db=tmp_path / "p.db")
    assert result.passed, result.explain()
    decided = {c.kind for one in result.conversations for c in one.checks if c.outcome in ("pass", "fail")}
    assert "record_state" in decided  # the returns and exchanges themselves, read from the world


def test_the_pytest_plugin_runs_it(tmp_path):
    done = pytest_run("--parley", str(SUITE), "--parley-bot", BOT, "--parley-db", str(tmp_path / "p.db"))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    assert f"{SPECS} passed" in done.stdout


async def test_the_app_launches_it(db_path, tmp_path):
    folder = tmp_path / "suite"
    shutil.copytree(SUITE, folder)
    app = make_app(initial_pane="profiles", profile_dirs=[folder])
    async with app.run_test(size=SIZE) as pilot:
        await launch(pilot, folder, bot=BOT)
        pane = app.query_one(BatchesPane)
        assert pane.progress is not None and pane.progress.done == pane.progress.total == SPECS
        shown = pane.shown_batch
    with Store.open(db_path) as store:
        stored = list(store.iter_conversations(shown or ""))
    assert len(stored) == SPECS and all(s.verdict is not None and s.verdict.outcome == "passed" for s in stored)
