"""The Batches pane, for now: past batches from the store, and how to run one.

Launching batches and watching their progress here arrives with the batch runner; until then
batches run from the terminal with `parley run`.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.widgets import DataTable, Static

from tui.messages import BatchesListed
from tui.panes.base import Pane

PLACEHOLDER = (
    "Batches run from the terminal for now: parley run profiles/ (or a file). "
    "Launching and watching them here comes with the batch runner. Past batches:"
)
COLUMNS = ("Batch", "Created (UTC)", "Status", "Sources", "Planned", "Done", "Passed", "Failed", "Errors")


def batch_cells(row: Any) -> tuple[str, ...]:
    b = row.batch
    created = b.created_at.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M")
    sources = ", ".join(b.sources)
    if len(sources) > 32:
        sources = sources[:31] + "…"
    return (b.id[:12], created, b.status, sources, str(b.planned), str(row.done), str(row.passed), str(row.failed), str(row.errors))


class BatchesPane(Pane):
    """A read-only list of past batches, newest first."""

    BINDINGS = [Binding("ctrl+r", "reload", "Reload")]

    def compose(self) -> ComposeResult:
        yield Static(Content(PLACEHOLDER), id="batches-hint", classes="pane-placeholder")
        table: DataTable[Any] = DataTable(cursor_type="row", zebra_stripes=True, id="batches-table")
        table.add_columns(*COLUMNS)
        yield table
        yield Static(Content(""), id="batches-status")

    def load_data(self) -> None:
        self.query_one("#batches-table").focus()
        self._list()

    def refresh_data(self) -> None:
        self._list()

    @work(thread=True, exclusive=True, exit_on_error=False, group="batches", description="reading the batches")
    def _list(self) -> None:
        self.post_message(BatchesListed(self.parley.store().list_batches(limit=500)))

    def on_batches_listed(self, message: BatchesListed) -> None:
        table = self.query_one("#batches-table", DataTable)
        table.clear()
        table.add_rows([Text(c) for c in batch_cells(row)] for row in message.rows)
        n = len(message.rows)
        status = "No batches yet." if not n else f"{n} batch{'es' if n != 1 else ''}" + (" (the latest 500)" if n == 500 else "")
        self.query_one("#batches-status", Static).update(Content(status))

    def action_reload(self) -> None:
        self._list()
