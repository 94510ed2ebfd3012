"""The real app, on a real (pseudo-)terminal, with a batch running in its Batches pane: what the
tests that kill it (kill -9) or close its terminal (SIGHUP) start as a process of its own.

    python -m tests.app_batch_process FOLDER TRIALS CONCURRENCY [BOT]     # PARLEY_DB says where

It launches the batch as the launch form does once its inputs are checked (prepare_batch in a
worker, then the Batches pane's `start`), so the batch runs in the app's own child process.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import sys
from pathlib import Path

from textual import work

from parley.tui.app.app import ParleyApp
from parley.tui.app.panes.batches_pane import BatchesPane


class AppWithBatch(ParleyApp):
    def __init__(self, folder: Path, trials: int, concurrency: int, bot: str = "offline") -> None:
        super().__init__(initial_pane="batches", today=dt.date(2026, 11, 21), profile_dirs=[folder])
        self.folder, self.trials, self.concurrency, self.bot = folder, trials, concurrency, bot

    def on_mount(self) -> None:  # after ParleyApp's own (Textual calls each class's handler)
        self._launch()

    @work(thread=True, exit_on_error=True, description="launching the test's batch")
    def _launch(self) -> None:
        from parley.core.engine import prepare_batch
        from parley.core.records import BatchOptions, RoleModels

        options = BatchOptions(models=RoleModels(bot=self.bot), trials=self.trials, concurrency=self.concurrency, seed=7)
        prepared = asyncio.run(prepare_batch(self.store(), [str(self.folder)], options))
        self.call_from_thread(self.query_one("#batches", BatchesPane).start, prepared)


if __name__ == "__main__":
    from parley.core.log_file import configure_logging
    from parley.core.settings import settings

    configure_logging(settings().db_path)  # as `parley` does before it opens the app
    AppWithBatch(Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), *sys.argv[4:5]).run()
