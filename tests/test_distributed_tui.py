"""The app's Batches pane with a batch over worker processes (`parley --workers 2`): launched
from Profiles through the form as any batch, it runs in the batch's child process, which is the
coordinator: it starts the workers, stores what they send back and stops them when the batch
ends; the pane shows its progress and results as for any batch."""

from __future__ import annotations

import threading

from textual.widgets import ProgressBar

from parley.core.engine.distributed.placement import Placement
from parley.core.store.store import Store
from parley.tui.app.panes.batches_pane import BatchesPane
from parley.tui.app.widgets.results_table import ResultsTable
from parley.tui.app.widgets.row_table import RowTable
from tests.test_distributed_cli import alive, worker_processes
from tests.test_tui_batches import folder, launch, planned  # noqa: F401  (fixture)
from tests.test_tui_support import SIZE, db_path, make_app  # noqa: F401  (fixture)


class WorkerWatch:
    """The Ray worker processes (ConversationWorker) that appear while it watches."""

    def __init__(self) -> None:
        self.before = worker_processes()
        self.seen: set[int] = set()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._done.wait(0.1):
            self.seen |= worker_processes() - self.before

    def stop(self) -> set[int]:
        self._done.set()
        self._thread.join()
        return self.seen


async def test_a_batch_over_workers_runs_in_the_batches_pane_like_any_other(db_path, folder):
    app = make_app(initial_pane="profiles", profile_dirs=[folder], placement=Placement(workers=2))
    watch = WorkerWatch()
    async with app.run_test(size=SIZE) as pilot:
        pane = app.query_one(BatchesPane)
        said: list[str] = []
        counts = pane._counts
        pane._counts = lambda text, **kw: (said.append(str(text)), counts(text, **kw))[1]  # type: ignore[method-assign]
        await launch(pilot, folder, seed="7", concurrency="3", trials="4")
        workers = watch.stop()
        total = planned(folder, 4)
        assert said[0] == f"starting {total} conversations over 2 workers on a local Ray instance…"
        assert pane.running_batch is None and pane.progress is not None
        assert pane.progress.done == pane.progress.total == total
        bar = app.query_one("#batch-progress", ProgressBar)
        assert bar.progress == bar.total == total
        assert str(app.query_one("#batch-counts").render()).startswith(f"completed: {total}/{total} done")
        assert app.query_one("#batch-results", ResultsTable).row_count == total
        assert app.query_one("#batches-table", RowTable).full_row(0)[2] == "completed"
    assert len(workers) == 2, "the batch ran over two worker processes"
    assert not any(alive(pid) for pid in workers), "the workers ended with the batch"
    with Store.open(db_path) as store:
        rows = store.conversation_rows(batch_id=store.list_batches()[0].batch.id, limit=100)
    assert len(rows) == total and len({(r.spec_id, r.trial) for r in rows}) == total
