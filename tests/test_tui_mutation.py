"""The app's mutation run, driven with Pilot: `M` on a batch in the Batches pane runs every mutant
of it and fills a table as each is decided (mutant, status, the conversations it acted in, what
caught it or what would kill it), then the score; each mutant's batch is stored as a child of it.
The palette's "Mutants of a batch" does the same."""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual.widgets import DataTable, Static

from parley.core.engine import BatchRunner, prepare_batch
from parley.core.records import BatchOptions
from parley.core.store import BatchRow
from parley.core.store.store import Store
from parley.tui.app.panes.batches_pane import BatchesPane
from parley.tui.app.screens.mutation_run import MutationScreen
from tests.test_tui_support import SIZE, db_path, make_app, run_from_palette, settle  # noqa: F401  (fixture)

PROFILE = """\
test_name: cancel
user:
  language: English
  role: a customer
  goals:
    - cancel order ORD-1002
chatbot:
  fallback: "I'm sorry, I didn't understand that."
conversation:
  number: 1
  goal_style:
    all_answered:
      limit: 8
world:
  name: orders
  customer_id: C-100
  today: 2026-11-21
expect:
  unchanged_others: false
  tools_called: [cancel_order]
"""


def stored_batch(db: Path, folder: Path) -> str:
    (folder / "cancel.yaml").write_text(PROFILE, encoding="utf-8")

    async def run() -> str:
        with Store.open(db) as store:
            prepared = await prepare_batch(store, [folder], BatchOptions())
            await BatchRunner(store, prepared).run()
            return prepared.batch.id

    return asyncio.run(run())


async def test_m_runs_the_mutants_of_the_highlighted_batch_into_a_table(db_path, tmp_path):
    batch_id = await asyncio.to_thread(stored_batch, db_path, tmp_path)
    app = make_app(initial_pane="batches")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        pane = app.query_one(BatchesPane)
        pane.table.focus()
        pane.table.move_cursor(row=pane.batch_ids.index(batch_id), animate=False)
        await pilot.press("M")
        await settle(pilot, rounds=40)
        screen = app.screen
        assert isinstance(screen, MutationScreen) and screen.report is not None
        table = screen.query_one("#mutation-results", DataTable)
        rows = {str(table.get_row_at(i)[0]): [str(c) for c in table.get_row_at(i)] for i in range(table.row_count)}
        assert len(rows) == 10
        assert rows["acts_without_doing"][1:3] == ["SURVIVED", "1/1"] and "final-state check" in rows["acts_without_doing"][3]
        assert rows["gives_up"][1] == "killed" and rows["gives_up"][3].startswith("cancel#1: ")
        assert rows["trusts_the_claim"][1] == "not exercisable"
        summary = str(screen.query_one("#mutation-summary", Static).render())
        assert f"Batch {batch_id[:12]}: 1 of 1 passed." in summary and "Mutation score: " in summary
        await pilot.press("escape")
        assert isinstance(app.screen.query_one(BatchesPane), BatchesPane)
        await run_from_palette(pilot, "mutants", "Mutants of a batch")
        await settle(pilot, rounds=40)
        assert isinstance(app.screen, MutationScreen) and app.screen.batch_id == batch_id
        await pilot.press("escape")
    with Store.open(db_path) as store:
        children = [r.batch for r in store.list_batches() if isinstance(r, BatchRow) and r.batch.parent_id == batch_id]
    assert sorted(b.options.mutant or "" for b in children) == sorted([*rows, *rows])  # M, then the palette
