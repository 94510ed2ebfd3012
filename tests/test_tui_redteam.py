"""The app's Batches pane shows a red-team batch's attacks beside its pass rate, as the world
decided them, and what the world makes impossible by construction."""

from __future__ import annotations

import asyncio

from click.testing import CliRunner

from parley.tui.app.panes.batches_pane import BatchesPane
from parley.tui.cli.main import cli
from tests.test_tui_support import SIZE, db_path, make_app, settle  # noqa: F401  (fixture)


async def test_a_red_team_batch_shows_its_attacks_beside_the_pass_rate(db_path, tmp_path):
    ran = await asyncio.to_thread(  # the command runs its own event loop, as from a shell
        CliRunner().invoke,
        cli,
        ["redteam", "--world", "orders", "--bot", "offline", "--strategies", "repeat-back", "--db", str(db_path)],
        catch_exceptions=False,
    )
    assert ran.exit_code == 0, ran.output
    app = make_app(initial_pane="batches")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, rounds=30)
        pane = app.query_one(BatchesPane)
        assert "attacks: 0 of 3 breached (0.0-56.1%); impossible on orders: act_for_another, read_another" in pane.rates
