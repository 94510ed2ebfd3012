"""ResultsTable: a batch's conversations as a virtual table, so 10,000 rows cost what a screenful
costs. Only the visible lines are rendered (Textual's line API) from a list of plain rows;
the columns are chosen by the width available (the most important stay, the rest come back as
the table widens); each row is coloured by its outcome."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from rich.segment import Segment
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from parley.tui.app.panes.batch_results import result_cells

if TYPE_CHECKING:
    from parley.core.records import ConversationRow


@dataclass(frozen=True)
class Column:
    """A results column: its title, width, and rank (1 = the last to go as the table narrows)."""

    key: str
    title: str
    width: int
    rank: int
    right: bool = False


COLUMNS: tuple[Column, ...] = (
    Column("name", "Profile", 24, 1),
    Column("trial", "Trial", 5, 4, right=True),
    Column("variables", "Variables", 20, 7),
    Column("stop", "Stop", 12, 3),
    Column("outcome", "Outcome", 11, 1),
    Column("score", "Score", 5, 2, right=True),
    Column("turns", "Turns", 5, 5, right=True),
    Column("tokens", "Tokens", 8, 8, right=True),
    Column("cost", "Cost", 9, 9, right=True),
    Column("time", "Time", 7, 6, right=True),
)
GAP = 1
NAME_MIN = 14
RESIZE_INTERVAL_S = 1.0  # rows appended below the screen move the scrollbar at most this often


def columns_for(width: int, *, trials: bool = True) -> list[tuple[Column, int]]:
    """(column, width) pairs that fit `width`, in display order; the name column grows into
    what is left and shrinks (to NAME_MIN) before any other column is dropped."""
    candidates = [c for c in COLUMNS if trials or c.key != "trial"]
    chosen: set[str] = set()
    used = 0
    for column in sorted(candidates, key=lambda c: c.rank):
        need = (NAME_MIN if column.key == "name" else column.width) + (GAP if chosen else 0)
        if used + need <= width or not chosen:
            chosen.add(column.key)
            used += need
    shown = [c for c in candidates if c.key in chosen]
    others = sum(c.width for c in shown if c.key != "name") + GAP * (len(shown) - 1)
    return [(c, max(NAME_MIN, width - others) if c.key == "name" else c.width) for c in shown]


def _fit(text: str, width: int, right: bool) -> str:
    if len(text) > width:
        text = text[: max(width - 1, 0)] + "…"
    return text.rjust(width) if right else text.ljust(width)


class ResultsTable(ScrollView, can_focus=True):
    """The rows of `show(rows)`; Enter posts `ResultsTable.Opened` with the highlighted row."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open", "Open transcript"),
        Binding("up", "cursor(-1)", "Up", show=False),
        Binding("down", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "first", "First row", show=False),
        Binding("end", "last", "Last row", show=False),
    ]
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "results-table--header",
        "results-table--cursor",
        "results-table--passed",
        "results-table--failed",
        "results-table--bot-error",
        "results-table--unverified",
        "results-table--user-fault",
        "results-table--error",
        "results-table--other",
    }
    DEFAULT_CSS = """
    ResultsTable {
        background: $surface;
        overflow-x: hidden;
        & > .results-table--header { text-style: bold; color: $text-secondary; }
        & > .results-table--cursor { background: $block-cursor-background; color: $block-cursor-foreground; }
        &:blur > .results-table--cursor { background: $block-cursor-blurred-background; }
        & > .results-table--passed { color: $text-success; }
        & > .results-table--failed { color: $text-error; }
        & > .results-table--bot-error { color: $text-error; text-style: bold; }
        & > .results-table--unverified { color: cyan; }
        & > .results-table--user-fault { color: magenta; }
        & > .results-table--error { color: $text-warning; }
        & > .results-table--other { color: $text-muted; }
    }
    """
    # An outcome's colour: the bot's failures red (a bot error in bold), what is counted apart in
    # its own colour; one not listed (an outcome added later) is drawn as "other".
    OUTCOME_CLASSES: ClassVar[dict[str, str]] = {
        "passed": "passed",
        "failed": "failed",
        "bot_error": "bot-error",
        "unverified": "unverified",
        "user_fault": "user-fault",
        "error": "error",
        "infrastructure_error": "error",
        "user_error": "error",
        "evaluation_error": "error",
        "cancelled": "error",
    }

    cursor_row: reactive[int] = reactive(0, always_update=True)

    class Opened(Message):
        """Enter (or a click on the highlighted row) on a result."""

        def __init__(self, row: ConversationRow) -> None:
            super().__init__()
            self.row = row

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.rows: list[ConversationRow] = []
        self.trials = False
        self._fitted_at = 0.0  # when the virtual size last followed the rows (monotonic)

    # ---- data --------------------------------------------------------------------------------

    def show(self, rows: Sequence[ConversationRow], *, trials: bool | None = None, keep: str | None = None) -> None:
        """Show `rows` (ConversationRows in display order). The cursor stays on the row with id
        `keep` when it is still there, else on the same position."""
        self.rows = list(rows)
        if trials is not None:
            self.trials = trials
        self._fit_rows()
        if keep is not None:
            for i, row in enumerate(self.rows):
                if row.id == keep:
                    self.cursor_row = i
                    break
        self.cursor_row = min(self.cursor_row, max(len(self.rows) - 1, 0))
        self.refresh()

    def append(self, rows: Sequence[ConversationRow]) -> None:
        """Add rows at the end (a running batch's), without touching the cursor. Rows that land
        below the screen only move the scrollbar, and that once a second: a change of virtual size
        repaints every visible line."""
        if not rows:
            return
        first_new = len(self.rows)
        self.rows.extend(rows)
        top = int(self.scroll_offset.y)
        if first_new < top + self.scrollable_content_region.height:  # a new row is on screen
            self._fit_rows()
            self.refresh()
        elif time.monotonic() - self._fitted_at >= RESIZE_INTERVAL_S:
            self._fit_rows()

    def _fit_rows(self) -> None:
        """The scrollable height follows the rows (the header line is the +1)."""
        self._fitted_at = time.monotonic()
        size = Size(self.size.width, len(self.rows) + 1)
        if self.virtual_size != size:
            self.virtual_size = size

    @property
    def row_count(self) -> int:
        return len(self.rows)

    @property
    def current(self) -> ConversationRow | None:
        """The highlighted row, or None when there are none."""
        return self.rows[self.cursor_row] if 0 <= self.cursor_row < len(self.rows) else None

    def columns(self) -> list[tuple[Column, int]]:
        return columns_for(max(self.scrollable_content_region.width, 20), trials=self.trials)

    def row_text(self, index: int) -> list[str]:
        """Row `index`'s cells as shown (for tests and the snapshot-free checks)."""
        cells = result_cells(self.rows[index])
        return [cells[c.key] for c, _ in self.columns()]

    # ---- drawing ------------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        columns = self.columns()
        if y == 0:
            text = " ".join(_fit(c.title, w, c.right) for c, w in columns)
            style = self.get_component_rich_style("results-table--header")
            return Strip([Segment(text.ljust(width)[:width], style)], width)
        index = int(self.scroll_offset.y) + y - 1
        if index >= len(self.rows):
            return Strip.blank(width, self.rich_style)
        row = self.rows[index]
        cells = result_cells(row)
        text = " ".join(_fit(cells[c.key], w, c.right) for c, w in columns)
        kind = self.OUTCOME_CLASSES.get(row.outcome or "", "other")
        style = self.rich_style + self.get_component_rich_style(f"results-table--{kind}")
        if index == self.cursor_row:
            style += self.get_component_rich_style("results-table--cursor")
        return Strip([Segment(text.ljust(width)[:width], style)], width)

    def watch_cursor_row(self, old: int, new: int) -> None:
        self._scroll_cursor_into_view()
        self.refresh()

    def _scroll_cursor_into_view(self) -> None:
        visible = max(self.scrollable_content_region.height - 1, 1)
        top = int(self.scroll_offset.y)
        if self.cursor_row < top:
            self.scroll_to(y=self.cursor_row, animate=False)
        elif self.cursor_row >= top + visible:
            self.scroll_to(y=self.cursor_row - visible + 1, animate=False)

    def on_resize(self, event: events.Resize) -> None:
        self._fit_rows()

    # ---- actions ------------------------------------------------------------------------------

    def _move(self, row: int) -> None:
        self._fit_rows()  # rows appended since the last fit can be scrolled to
        if self.rows:
            self.cursor_row = max(0, min(row, len(self.rows) - 1))

    def action_cursor(self, delta: int) -> None:
        self._move(self.cursor_row + delta)

    def action_page(self, direction: int) -> None:
        self._move(self.cursor_row + direction * max(self.scrollable_content_region.height - 2, 1))

    def action_first(self) -> None:
        self._move(0)

    def action_last(self) -> None:
        self._move(len(self.rows) - 1)

    def action_open(self) -> None:
        if self.current is not None:
            self.post_message(self.Opened(self.current))

    def on_click(self, event: events.Click) -> None:
        if event.y < 1:
            return
        index = int(self.scroll_offset.y) + event.y - 1
        if 0 <= index < len(self.rows):
            if index == self.cursor_row and event.chain >= 2:
                self.action_open()
            self.cursor_row = index
