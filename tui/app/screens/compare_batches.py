"""CompareScreen: two batches side by side in the app, the way `parley compare` reads them.

A summary on top (both batches, the verdict with the paired test, pass rates with intervals,
what is not common), then a table of the changed conversations, most important first
(regressions, fixes, other outcome changes, score changes, check changes). Enter on a row opens
both transcripts side by side (SideBySideScreen). The comparison is
parley.core.reports.compare, computed in a worker thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static
from textual.worker import Worker

if TYPE_CHECKING:
    from parley.core.reports import BatchComparison, PairChange, Rate
    from parley.tui.app.app import ParleyApp
    from parley.tui.app.panes.batches_pane import BatchesPane

COLUMNS = ("Change", "Spec", "Trial", "Base", "New", "Score", "Checks")
KIND_LABELS = {
    "regression": "REGRESSION",
    "fix": "fix",
    "outcome_change": "outcome",
    "score_change": "score",
    "check_change": "checks",
}
KIND_STYLES = {"regression": "bold red", "fix": "green"}


@dataclass
class ComparisonLoaded(Message):
    """The worker computed the comparison."""

    comparison: BatchComparison


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.1f}%"


def _rate(rate: Rate) -> str:
    interval = rate.interval
    bounds = f" [{interval.low * 100:.0f}–{interval.high * 100:.0f}%]" if interval is not None else ""
    return f"{_pct(rate.value)} ({rate.successes}/{rate.n}){bounds}"


def summary_text(c: BatchComparison) -> str:
    """The comparison's head, in a few lines."""
    from parley.core.reports import verdict_line

    base, new = c.base.batch, c.new.batch
    lines = [
        f"Base {base.id[:12]} ({base.options.models.bot}) → new {new.id[:12]} ({new.options.models.bot})"
        + (f" · new is a {c.made_from_base} of base" if c.made_from_base else ""),
        f"Pass rate {_rate(c.base.pass_rate)} → {_rate(c.new.pass_rate)} · {c.matched_pairs} conversations matched by spec and trial",
        verdict_line(c),
    ]
    not_common = []
    if c.new_specs:
        not_common.append(f"{len(c.new_specs)} new spec(s)")
    if c.missing_news:
        not_common.append(f"{len(c.missing_news)} missing spec(s)")
    if c.sources_only_in_base or c.sources_only_in_new:
        not_common.append("the sources differ")
    if c.replay is not None:
        not_common.append(f"replay: {c.replay.diverged} of {c.replay.conversations} diverged, {c.replay.exhausted} exhausted")
    if not_common:
        lines.append("Not common: " + ", ".join(not_common) + " (parley compare has the full report)")
    if c.calibration is not None:
        lines.append(c.calibration.sentence())
    return "\n".join(lines)


def change_cells(change: PairChange) -> tuple[Text, ...]:
    """A changed conversation as the table shows it."""
    kind = change.kind
    score = "-"
    if change.base.score != change.new.score:
        score = f"{change.base.score if change.base.score is not None else '-'}→{change.new.score if change.new.score is not None else '-'}"
    checks = "; ".join([f"+{name}" for name in change.started_failing] + [f"-{name}" for name in change.stopped_failing]) or "-"
    if len(checks) > 60:
        checks = checks[:59] + "…"
    return (
        Text(KIND_LABELS[kind], style=KIND_STYLES.get(kind, "")),
        Text(change.spec_id),
        Text(str(change.trial)),
        Text(change.base.outcome),
        Text(change.new.outcome),
        Text(score),
        Text(checks),
    )


def mark_base(pane: BatchesPane) -> None:
    """`b` in the Batches pane: the highlighted batch becomes the base of the next comparison."""
    batch_id = pane.highlighted_batch()
    if batch_id is None:
        pane.notify("No batch to mark.", severity="warning")
        return
    pane.base_batch = batch_id
    pane.query_one("#batches-status", Static).update(Content(f"Base: {batch_id[:12]}. Highlight another batch and press c to compare."))
    pane.notify(f"Base for comparisons: {batch_id[:12]}", title="Compare")


def compare_highlighted(pane: BatchesPane) -> None:
    """`c` in the Batches pane (or the palette's "Compare batches"): the highlighted batch
    against the base, or, with no base marked, against the batch before it."""
    new = pane.highlighted_batch()
    if new is None:
        pane.notify("No batch to compare.", severity="warning")
        return
    base = pane.base_batch
    if base is None:
        index = pane.batch_ids.index(new)
        if index + 1 >= len(pane.batch_ids):
            pane.notify("Mark a base first: highlight a batch and press b.", severity="warning")
            return
        base = pane.batch_ids[index + 1]  # the list is newest first: the one before
    pane.app.push_screen(CompareScreen(base, new))


class ChangesTable(DataTable[Any]):
    """The changed conversations: Enter opens both sides (and says so in the footer)."""

    BINDINGS = [Binding("enter", "select_cursor", "Open both transcripts")]


class CompareScreen(Screen[None]):
    """Escape goes back to the Batches pane."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back")]
    DEFAULT_CSS = """
    #compare-body { height: 1fr; }
    #compare-summary { height: auto; padding: 0 1; border: round $primary; }
    #compare-changes { height: 1fr; }
    #compare-status { height: auto; padding: 0 1; color: $text-muted; }
    """

    def __init__(self, base_id: str, new_id: str) -> None:
        super().__init__(id="compare-screen")
        self.base_id = base_id
        self.new_id = new_id
        self.comparison: BatchComparison | None = None

    @property
    def parley(self) -> ParleyApp:
        return cast("ParleyApp", self.app)

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="compare-body"):
            yield Static(Content(f"Comparing {self.base_id[:12]} → {self.new_id[:12]}…"), id="compare-summary")
            table = ChangesTable(cursor_type="row", zebra_stripes=True, id="compare-changes")
            table.add_columns(*COLUMNS)
            yield table
            yield Static(Content(""), id="compare-status")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(ChangesTable).focus()
        self._compare()

    @work(thread=True, exclusive=True, exit_on_error=False, group="compare", description="comparing the batches")
    def _compare(self) -> None:
        from parley.core.reports import compare_batches

        self.post_message(ComparisonLoaded(compare_batches(self.parley.store(), self.base_id, self.new_id)))

    def on_comparison_loaded(self, message: ComparisonLoaded) -> None:
        c = self.comparison = message.comparison
        self.query_one("#compare-summary", Static).update(Content(summary_text(c)))
        table = self.query_one(ChangesTable)
        table.clear()
        table.add_rows(change_cells(change) for change in c.changes)
        status = "No conversation changed." if not c.changes else f"{len(c.changes)} changed conversation(s); Enter opens both transcripts."
        self.query_one("#compare-status", Static).update(Content(status))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        self.parley.worker_state_changed(event)

    @on(DataTable.RowSelected, "#compare-changes")
    def _open(self, event: DataTable.RowSelected) -> None:
        event.stop()
        changes = self.comparison.changes if self.comparison is not None else []
        if not 0 <= event.cursor_row < len(changes):
            return
        from parley.tui.app.screens.side_by_side import SideBySideScreen

        self.app.push_screen(SideBySideScreen(changes[event.cursor_row]))
