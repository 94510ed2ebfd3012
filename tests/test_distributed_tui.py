"""The app's Batches pane with a batch over worker processes (`parley --workers 2`): launched
from Profiles through the form as any batch, its progress and results shown live, its workers
ended with the app."""

from __future__ import annotations

from textual.widgets import DataTable, ProgressBar

from parley.core.engine.distributed.placement import Placement
from parley.core.store.store import Store
from parley.tui.app.panes.batches_pane import BatchesPane
from tests.test_distributed_cli import alive
from tests.test_tui_batches import folder, launch, planned  # noqa: F401  (fixture)
from tests.test_tui_support import SIZE, db_path, make_app  # noqa: F401  (fixture)


async def test_a_batch_over_workers_runs_in_the_batches_pane_like_any_other(db_path, folder):
    app = make_app(initial_pane="profiles", profile_dirs=[folder], placement=Placement(workers=2))
    async with app.run_test(size=SIZE) as pilot:
        pane = app.query_one(BatchesPane)
        await launch(pilot, folder, seed="7", concurrency="3", trials="4")
        total = planned(folder, 4)
        assert pane.running_batch is None and pane.progress is not None
        assert pane.progress.done == pane.progress.total == total
        bar = app.query_one("#batch-progress", ProgressBar)
        assert bar.progress == bar.total == total
        assert str(app.query_one("#batch-counts").render()).startswith(f"completed: {total}/{total} done")
        assert app.query_one("#batch-results", DataTable).row_count == total
        assert str(app.query_one("#batches-table", DataTable).get_row_at(0)[2]) == "completed"
        workers = app._worker_pool.pids()
        assert len(workers) == 2
    assert not any(alive(pid) for pid in workers), "the app's workers ended with it"
    with Store.open(db_path) as store:
        rows = store.conversation_rows(batch_id=store.list_batches()[0].batch.id, limit=100)
    assert len(rows) == total and len({(r.spec_id, r.trial) for r in rows}) == total
