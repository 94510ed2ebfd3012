"""RowTable: the app's read-only table of text rows. Home and End go to the first and last row
(DataTable's own End scrolls sideways), and when it is given ranked columns it shows those that
fit its width, dropping the least important first, so a narrow terminal cuts no cell in half.

`clip_option` keeps a Select's choices on one line each."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.coordinate import Coordinate
from textual.widgets import DataTable

from parley.tui.terminal_text import visible

CELL_PADDING = 2  # DataTable's padding around each cell
OPTION_WIDTH = 28


def clip_option(label: str, width: int = OPTION_WIDTH) -> str:
    """A Select choice on one line: long profile names end in an ellipsis instead of wrapping."""
    label = " ".join(label.split())
    return label if len(label) <= width else label[: width - 1] + "…"


@dataclass(frozen=True)
class Ranked:
    """A column and how much it matters: rank 1 stays longest as the table narrows; `cap`
    bounds the column's width (longer cells end in an ellipsis)."""

    title: str
    rank: int = 1
    cap: int = 40
    width: int | None = None
    """A fixed width: the column is this wide whatever its cells (cut at it), so which columns
    fit never depends on the rows shown."""


class RowTable(DataTable[Any]):
    """A DataTable of plain text rows (never read as markup). With `ranked` columns, the cells
    of every row are kept and the columns shown follow the table's width."""

    BINDINGS = [
        Binding("home", "scroll_top", "First row", show=False),
        Binding("end", "scroll_bottom", "Last row", show=False),
    ]

    def __init__(self, *, ranked: Sequence[Ranked] | None = None, **kwargs: Any) -> None:
        kwargs.setdefault("cursor_type", "row")
        kwargs.setdefault("zebra_stripes", True)
        super().__init__(**kwargs)
        self.ranked = list(ranked or [])
        self.data: list[tuple[str, ...]] = []
        self._widths = self._start_widths()
        self.shown: list[int] = []  # indexes of the ranked columns on screen
        if self.ranked:
            self.shown = list(range(len(self.ranked)))
            for i, c in enumerate(self.ranked):
                self.add_column(c.title, width=self._widths[i])

    def _start_widths(self) -> list[int]:
        return [c.width or len(c.title) for c in self.ranked]

    def _cap(self, i: int) -> int:
        column = self.ranked[i]
        return column.width or column.cap

    # ---- rows ---------------------------------------------------------------------------------

    def set_rows(self, rows: Iterable[Sequence[str]]) -> None:
        """Replace every row (the cursor stays where it was, as far as the rows go)."""
        row = self.cursor_row
        self.data = []
        self._widths = self._start_widths()
        self.clear()
        if self.ranked:  # the widths start again from the titles: lay the columns out anew
            self.data = [tuple(visible(str(c)) for c in r) for r in rows]
            for r in self.data:
                for i, cell in enumerate(r):
                    self._widths[i] = max(self._widths[i], min(len(cell), self._cap(i)))
            self._rebuild()
        else:
            self.add_text_rows(rows)
        if self.row_count:
            self.move_cursor(row=min(row, self.row_count - 1), animate=False, scroll=False)

    def add_text_rows(self, rows: Iterable[Sequence[str]]) -> None:
        """Append rows of strings."""
        texts = [tuple(visible(str(c)) for c in r) for r in rows]
        if not self.ranked:
            self.add_rows([[Text(c) for c in r] for r in texts])
            return
        self.data.extend(texts)
        widened = False
        for r in texts:
            for i, cell in enumerate(r):
                if len(cell) > self._widths[i] and self._widths[i] < self._cap(i):
                    self._widths[i] = min(len(cell), self._cap(i))
                    widened = True
        if widened or self._choose() != self.shown:
            self._rebuild()
        else:
            self.add_rows([self._cells(r) for r in texts])

    def set_text_row(self, index: int, row: Sequence[str]) -> None:
        """Change row `index` in place (a running batch's counts)."""
        texts = tuple(visible(str(c)) for c in row)
        if self.ranked:
            self.data[index] = texts
            widened = False
            for i, text in enumerate(texts):
                if len(text) > self._widths[i] and self._widths[i] < self._cap(i):
                    self._widths[i] = min(len(text), self._cap(i))
                    widened = True
            if widened or self._choose() != self.shown:
                self._rebuild()
                return
            cells = self._cells(texts)
        else:
            cells = [Text(c) for c in texts]
        for column, cell in enumerate(cells):
            current = self.get_cell_at(Coordinate(index, column))
            if str(current) == str(cell):
                continue  # unchanged cells cost nothing (a change of width re-lays the table out)
            widen = cell.cell_len > self.ordered_columns[column].get_render_width(self) - 2 * self.cell_padding
            self.update_cell_at(Coordinate(index, column), cell, update_width=widen)

    def full_row(self, index: int) -> tuple[str, ...]:
        """Every cell of row `index`, shown or not."""
        if self.ranked:
            return self.data[index]
        return tuple(str(c) for c in self.get_row_at(index))

    # ---- columns by width ---------------------------------------------------------------------

    def _cells(self, row: Sequence[str]) -> list[Text]:
        out = []
        for i in self.shown:
            cell, cap = row[i] if i < len(row) else "", self._cap(i)
            out.append(Text(cell if len(cell) <= cap else cell[: cap - 1] + "…"))
        return out

    def _choose(self) -> list[int]:
        width = self.scrollable_content_region.width or self.size.width
        if not width:
            return self.shown
        order = sorted(range(len(self.ranked)), key=lambda i: (self.ranked[i].rank, i))
        chosen: list[int] = []
        used = 0
        for i in order:
            need = self._widths[i] + CELL_PADDING
            if used + need <= width or not chosen:
                chosen.append(i)
                used += need
        return sorted(chosen)

    def _rebuild(self) -> None:
        row = self.cursor_row
        self.shown = self._choose()
        self.clear(columns=True)
        # Explicit widths: the columns do not wait for DataTable's lazy auto-sizing, which a
        # screen drawn at once (a snapshot, a fast terminal) could catch half done.
        for i in self.shown:
            self.add_column(self.ranked[i].title, width=self._widths[i])
        self.add_rows([self._cells(r) for r in self.data])
        if self.row_count:
            self.move_cursor(row=min(row, self.row_count - 1), animate=False)

    def on_resize(self, event: events.Resize) -> None:
        if self.ranked and self._choose() != self.shown:
            self._rebuild()

    @property
    def shown_titles(self) -> list[str]:
        return [self.ranked[i].title for i in self.shown] if self.ranked else [str(c.label) for c in self.columns.values()]
