"""CommandTable: a titled, read-only table of strings (a slash command's /database, /orders,
/metrics output), sized to its rows so it sits inline in a transcript."""

from __future__ import annotations

from collections.abc import Sequence

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Static

from parley.tui.app.widgets.row_table import Ranked, RowTable
from parley.tui.terminal_text import visible

# How much each column of the commands' tables matters when the terminal is narrow (1 stays
# longest): /database and /orders keep the order, its status and whether it can be cancelled.
RANKS = {"Order": 1, "Status": 1, "Cancellable": 1, "Why": 2, "Age (days)": 3, "Total": 3, "Customer": 4, "Placed": 5}
# Their widths, fixed: which columns fit then depends on the terminal alone, never on whose orders
# are listed, so /orders shows the same columns from call to call (the order API's values fit).
WIDTHS = {"Order": 8, "Customer": 8, "Placed": 10, "Age (days)": 10, "Status": 10, "Total": 12, "Cancellable": 11, "Why": 17}


class CommandTable(Vertical):
    """A title line and a DataTable of `rows` under `columns`."""

    def __init__(self, columns: Sequence[str], rows: Sequence[Sequence[str]], *, title: str = "", classes: str | None = None) -> None:
        super().__init__(classes=classes)
        self.columns = list(columns)
        self.rows = [list(r) for r in rows]
        self.title = title

    def compose(self) -> ComposeResult:
        count = f"{len(self.rows)} row{'' if len(self.rows) == 1 else 's'}"
        yield Static(Content(visible(f"{self.title} ({count})" if self.title else count)), classes="command-table-title")
        table = RowTable(ranked=[Ranked(c, RANKS.get(c, 1), width=WIDTHS.get(c)) for c in self.columns], classes="command-table")
        table.add_text_rows(self.rows)  # data, never markup
        yield table

    @property
    def table(self) -> RowTable:
        return self.query_one(RowTable)
