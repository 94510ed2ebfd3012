"""The Batches pane: past and running batches, newest first; the highlighted batch's
conversations in a results table beside a histogram of their scores, filtered and sorted as
asked ("N of M shown"); a running batch's progress bar and live counts. Enter on a result opens
its transcript and verdict; `x` stops the running batch (graceful), a second `x` cancels it now.
`b` marks the highlighted batch as the base of a comparison, `c` compares the highlighted one
with it (parley.tui.app.screens.compare_batches). `R` re-scores the highlighted batch: its
stored conversations judged again into a new batch (parley.tui.app.screens.rescore_batch), run
here as any batch is. A batch run with `--rules` says on the status line how its pair and batch
rules came out; `u` shows them (parley.tui.app.screens.batch_rules).
`h` writes the highlighted batch's HTML report beside the database (reports/ID.html) and says
where.

A batch runs on an event loop of its own in a worker thread (parley.tui.app.panes.batch_feed),
never on the app's: its events are gathered there and drawn here at most ten times a second,
one draw however many conversations ended in between. Counts and the histogram are kept up to
date one row at a time (panes.batch_results), and the results table only draws the rows on
screen (widgets.results_table), so a 10,000-conversation batch stays smooth.

Batches other processes run (`parley run`, the service) show as they progress: while the pane is
shown it looks every POLL_S seconds, in a worker, at the database's data version (one pragma that
reads no table, parley.core.store.Store.data_version); only when another process committed since
the last look does it list the batches again, and reload the shown batch's results if its count
of done conversations moved.

Layout, top to bottom: the list of batches; the status and progress lines; the results' filter
line; the results table and the histogram.
"""

from __future__ import annotations

import datetime as dt
import logging
import sqlite3
import time
from dataclasses import replace
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.content import Content
from textual.timer import Timer
from textual.widgets import DataTable, Input, ProgressBar, Select, Static

from parley.tui.app import heap
from parley.tui.app.messages import (
    BatchesChanged,
    BatchesListed,
    BatchReportWritten,
    BatchRowsLoaded,
    BatchRunEnded,
    GroupCompared,
    SessionOpened,
    TranscriptMatched,
)
from parley.tui.app.panes.base import Pane
from parley.tui.app.panes.batch_feed import BatchFeed, FeedUpdate
from parley.tui.app.panes.batch_results import SORTS, BatchResults, ResultsFilter, plural, stored_order
from parley.tui.app.panes.session_detail import SessionScreen
from parley.tui.app.widgets.in_place import update_in_place
from parley.tui.app.widgets.results_table import ResultsTable
from parley.tui.app.widgets.row_table import Ranked, RowTable
from parley.tui.app.widgets.score_histogram import ScoreHistogram
from parley.tui.terminal_text import visible

if TYPE_CHECKING:
    from parley.core.engine import PreparedBatch
    from parley.core.records import BatchFinished, BatchRecord, ConversationRow, OutcomeCounts, Progress, UnreadableBatch
    from parley.core.rules import RuleSummary
    from parley.core.store import BatchRow

POLL_S = 3.0
"""How often the shown Batches pane looks for batches other processes changed."""
log = logging.getLogger("parley.tui")

HINT = "r in Profiles (or ctrl+p › Run batch) launches a batch here; from a terminal: parley run PATH."
COLUMNS = (
    Ranked("Batch", 1, 12),
    Ranked("Created (UTC)", 3, 16),
    Ranked("Status", 1, 11),
    Ranked("Sources", 6, 32),
    Ranked("Planned", 2, 7),
    Ranked("Done", 1, 7),
    Ranked("Passed", 2, 7),
    Ranked("Failed", 2, 7),
    Ranked("Bot errors", 2, 10),
    Ranked("Apart", 3, 7),
    Ranked("Errors", 4, 7),
)
"""The batch's summary (parley.core.evaluation.BatchSummary), under its names. Failed: a check
about the bot failed; Bot errors: the bot broke (with Failed, the bot's failures). Apart:
neither, and the run did not break (unverified, simulator faults, evaluation errors,
unevaluated). Errors: runs that broke on the simulator's or parley's side."""
MAX_BATCHES = 500
MAX_ROWS = 100_000  # rows read for a past batch; the counts in the list are always complete
DRAW_INTERVAL_S = 0.1  # a running batch is drawn at most ten times a second
# ... and its row in the list of batches once a second: a DataTable redraws (and caches anew)
# every visible row when one cell changes, which ten times a second filled its caches and so the
# heap that every full garbage collection walks.
LIST_INTERVAL_S = 1.0
FREEZE_INTERVAL_S = 1.0  # how often a running batch's rows so far are frozen (tui/app/heap.py)
SEARCH_DELAY_S = 0.3
FILTER_PLACEHOLDER = "(/) text profile: stop: score:<3 · s sorts"
ANY_OUTCOME = "Any outcome"


def batch_cells(row: BatchRow | UnreadableBatch) -> tuple[str, ...]:
    """A stored batch's row (parley.core.store.BatchRow): its record and its summary's counts; a
    row that cannot be read: its id, and why, in its place."""
    from parley.core.records import UnreadableBatch  # loaded already: the store listed the row

    if isinstance(row, UnreadableBatch):  # a damaged row: what it is, and why, in its place
        return (row.id[:12], (row.created_at or "-")[:16], "unreadable", row.reason, *["-"] * 7)
    return _cells(row.batch, row.summary)


def live_cells(row: BatchRow, p: Progress) -> tuple[str, ...]:
    """The running batch's row with the runner's live counts (parley.core.records.Progress):
    its stored summary is shown again once it ends."""
    return _cells(row.batch, p, "running")


def count_cells(c: OutcomeCounts) -> list[str]:
    """Done, Passed, Failed, Bot errors, Apart, Errors: the list's counts, as every surface names them."""
    return [str(n) for n in (c.done, c.passed, c.failed, c.bot_errors, c.apart, c.errors)]


def _cells(b: BatchRecord, counts: OutcomeCounts, status: str | None = None) -> tuple[str, ...]:
    created = b.created_at.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M")
    return (b.id[:12], created, status or b.status, ", ".join(b.sources), str(b.planned), *count_cells(counts))


def _eta(seconds: float | None) -> str:
    if seconds is None:
        return "--:--"
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes // 60:d}:{minutes % 60:02d}:{secs:02d}" if minutes >= 60 else f"{minutes:02d}:{secs:02d}"


class BatchesPane(Pane):
    """The batches on top; the progress of the running one; its results and score histogram."""

    # What the footer shows fits 80 columns: the keys that act on the shown batch; `u` only when it
    # has rules over pairs or the batch, `x` only while a batch runs (their twins below answer the
    # key otherwise). The filter and the sort are on screen, with their keys in the filter field's
    # placeholder; reloading is rarely needed (the list follows the store).
    BINDINGS = [
        Binding("c", "compare", "Compare"),
        Binding("b", "mark_base", "Base"),
        Binding("R", "rescore", "Re-score"),
        Binding("M", "mutate", "Mutants", show=False),  # in the palette too: "Mutants of a batch"
        Binding("h", "html_report", "Report"),
        Binding("u", "show_rules", "Rules"),
        Binding("u", "no_rules", "Rules", show=False),
        Binding("x", "cancel_batch", "Stop"),
        Binding("x", "nothing_running", "Stop", show=False),
        Binding("slash", "focus_filter", "Filter", show=False),
        Binding("s", "next_sort", "Sort", show=False),
        Binding("ctrl+r", "reload", "Reload", show=False),
        Binding("L", "label", "Label", show=False),  # label the highlighted conversation by hand
        Binding("K", "calibrations", "Calibrations", show=False),  # the judges' calibrations
        Binding("g", "side_by_side", "Side by side", show=False),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.batch_ids: list[str] = []  # row i of the batches table
        self.shown_batch: str | None = None  # whose results are shown
        self.results = BatchResults()
        self.feed: BatchFeed | None = None
        self.feed_result: BatchFinished | None = None  # the last batch's end (its own timing)
        self.running_batch: str | None = None
        self.queued: list[PreparedBatch] = []
        """Several bots launched at once: the group's batches still to run, one after the other."""
        self._group_started = False
        self.stop_requests = 0
        self.last_error: str | None = None
        self.progress: Progress | None = None
        self.base_batch: str | None = None  # marked with `b`: what `c` compares with
        self.draws = 0  # how many times a running batch was drawn (10/s at most)
        self._list_drawn = 0.0  # when the running batch's list row was last redrawn (monotonic)
        self._list_done = 0  # the Done it showed then
        self._list_timer: Timer | None = None
        self._frozen_at = 0.0
        self._timer: Timer | None = None
        self._debounce: Timer | None = None
        self._search_generation = 0
        self.listed = ""  # the status line's count of batches
        self.rates = ""  # the shown batch's pass rate and pass^k, with their intervals, and its counts
        self.rules: tuple[str, list[RuleSummary], dict[str, str]] | None = None  # the shown batch's pair and batch rules, with labels
        self.ended: tuple[str, str, bool] | None = None  # the batch that just ended: its id, last line, whether it failed
        self.data_version: int | None = None  # the database's, when the batches were last listed
        self._done_seen: dict[str, tuple[int, str]] = {}  # each listed batch's done count and status

    def compose(self) -> ComposeResult:
        yield Static(Content(HINT), id="batches-hint", classes="pane-placeholder")
        yield RowTable(ranked=COLUMNS, id="batches-table")
        yield Static(Content(""), id="batches-status")
        with Horizontal(id="batch-progress-row"):
            yield ProgressBar(show_eta=False, id="batch-progress")
            yield Static(Content(""), id="batch-counts")
        with Horizontal(id="batch-filters"):
            yield Input(placeholder=FILTER_PLACEHOLDER, id="batch-filter-text")
            yield Select[str]([], prompt=ANY_OUTCOME, id="batch-filter-outcome")
            yield Select[str]([(label, key) for key, label in SORTS.items()], value="run", allow_blank=False, id="batch-sort")
            yield Static(Content(""), id="batch-shown")
        with Horizontal(id="batch-results-row"):
            yield ResultsTable(id="batch-results")
            yield ScoreHistogram(id="batch-histogram")
        yield Static(Content(""), id="batch-empty")

    def on_mount(self) -> None:
        self.query_one("#batch-progress-row").display = False
        self.query_one("#batch-empty").display = False
        self.set_interval(POLL_S, self._poll)

    @property
    def table(self) -> RowTable:
        return self.query_one("#batches-table", RowTable)

    @property
    def results_table(self) -> ResultsTable:
        return self.query_one("#batch-results", ResultsTable)

    # ---- the list of batches ----------------------------------------------------------------------

    def main_widget(self) -> RowTable:
        return self.table

    def load_data(self) -> None:
        self._list()

    def refresh_data(self) -> None:
        self._list()

    @work(thread=True, exclusive=True, exit_on_error=False, group="batches", description="reading the batches")
    def _list(self) -> None:
        store = self.parley.store()
        store.interrupt_orphans()  # a batch whose process was killed shows as interrupted
        version = store.data_version()  # before the list: a change made while it is read is seen next time
        self.post_message(BatchesListed(store.list_batches(limit=MAX_BATCHES), version))

    def _poll(self) -> None:
        if self.shown and self._activated:
            self._look_for_changes()

    @work(thread=True, exclusive=True, exit_on_error=False, group="batches-poll", description="looking for changed batches")
    def _look_for_changes(self) -> None:
        from parley.core.errors import ParleyError

        try:
            version = self.parley.store().data_version()
        except (ParleyError, sqlite3.Error) as exc:  # the next look tries again; listing says what is wrong
            log.info("looking for changed batches failed: %s", exc)
            return
        self.post_message(BatchesChanged(version))

    def on_batches_changed(self, message: BatchesChanged) -> None:
        if self.data_version is not None and message.version != self.data_version:
            self.data_version = message.version  # one listing per change, however long it takes
            self._list()

    def on_batches_listed(self, message: BatchesListed) -> None:
        from parley.core.records import UnreadableBatch  # loaded already: the store listed the rows

        table = self.table
        rows = list(message.rows)
        if message.version is not None:
            self.data_version = message.version
        seen, self._done_seen = (
            self._done_seen,
            {row.id: (row.summary.done, row.batch.status) for row in rows if not isinstance(row, UnreadableBatch)},
        )
        shown = self.shown_batch
        if shown is not None and shown != self.running_batch and shown in seen and seen[shown] != self._done_seen.get(shown):
            self._load_rows(shown)  # another process moved it on: its results too
        live = self.running_batch if self.progress is not None else None
        self.batch_ids = [row.id for row in rows]
        wanted = self.running_batch or self.shown_batch
        table.set_rows(
            live_cells(row, self.progress)
            if row.id == live and self.progress is not None and not isinstance(row, UnreadableBatch)
            else batch_cells(row)
            for row in rows
        )
        n = len(rows)
        status = (
            "No batches yet: r in Profiles launches one."
            if not n
            else plural(n, "batch", "batches") + (f" (the latest {MAX_BATCHES})" if n == MAX_BATCHES else "")
        )
        self.listed = status
        self._status()
        if wanted in self.batch_ids:
            table.move_cursor(row=self.batch_ids.index(wanted), animate=False)
        elif self.batch_ids:
            table.move_cursor(row=0, animate=False)
            self.show_batch(self.batch_ids[0])
        if table.cursor_row < max(table.size.height - 2, 1):  # the newest batches stay in view
            table.scroll_home(animate=False, immediate=True)

    @on(DataTable.RowHighlighted, "#batches-table")
    def _batch_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if 0 <= event.cursor_row < len(self.batch_ids):
            self.show_batch(self.batch_ids[event.cursor_row])

    def show_batch(self, batch_id: str) -> None:
        """Show `batch_id`'s conversations (the running batch's fill in as they end)."""
        if batch_id == self.shown_batch and (batch_id == self.running_batch or self.results.rows):
            return
        if batch_id != self.shown_batch and self.rates:
            self.rates = ""
            self.shown_batch = batch_id
            self._status()
        self.shown_batch = batch_id
        self.refresh_bindings()  # `u` follows the shown batch's rules
        self.query_one("#batch-progress-row").display = batch_id == self.running_batch
        if batch_id == self.running_batch:
            return  # its rows are the feed's
        self._load_rows(batch_id)

    @work(thread=True, exclusive=True, exit_on_error=False, group="batch-rows", description="reading the batch's results")
    def _load_rows(self, batch_id: str) -> None:
        from parley.core.reports import attack_line, attack_report, batch_summary, rates_line, short_counts
        from parley.core.store import UnreadableBatchError, batch_rule_summaries, not_read

        store = self.parley.store()
        rows = stored_order(store.conversation_rows(batch_id=batch_id, limit=MAX_ROWS))
        rules = batch_rule_summaries(store, batch_id)
        labels = {row.id: f"{row.spec_id} trial {row.trial}" for row in rows} if rules else {}
        rates = counts = ""
        try:
            summary = batch_summary(store, batch_id) if rows else None
        except UnreadableBatchError as exc:  # its conversations still show; the store logged why
            rates, summary = str(exc), None
        if summary is not None:
            rates, counts = rates_line(summary), short_counts(summary)
            unread = not_read(store, batch_id)
            if unread:
                rates += f" · {unread.note}"
            attacks = attack_report(store, batch_id, total=summary.done)
            if attacks is not None:  # a red-team batch: its attacks beside the pass rate
                rates += f" · {attack_line(attacks)}"
        self.post_message(BatchRowsLoaded(batch_id, rows, rates, counts, rules, labels))

    def on_batch_rows_loaded(self, message: BatchRowsLoaded) -> None:
        if message.batch_id != self.shown_batch:
            return
        rows = list(message.rows)
        if message.batch_id == self.running_batch:  # keep what arrived while the store was read
            rows += self.results.rows
        self.results.reset(message.batch_id, rows)
        self._show_results()
        self.rates = f"{message.rates} · {message.counts}" if message.counts else message.rates
        self.rules = (message.batch_id, list(message.rules), dict(message.rule_labels)) if message.rules else None
        self.refresh_bindings()  # `u` shows for a batch with rules
        if self.ended is not None and self.ended[0] == message.batch_id:  # the run's last line, with its summary's counts
            batch_id, text, error = self.ended
            first, _, rest = text.partition("\n")
            self._counts("\n".join(filter(None, [f"{first} · {message.counts}" if message.counts else first, rest])), error=error)
            self.ended = None
        self._status()

    # ---- the results: filter, sort, draw ----------------------------------------------------------

    def _show_results(self, *, appended: list[ConversationRow] | None = None) -> None:
        """Draw the results, their count line, the outcome choices and the histogram."""
        results = self.results
        table = self.results_table
        if appended is not None:
            table.append(appended)
        else:
            table.show(results.view, trials=results.trials > 1, keep=getattr(table.current, "id", None))
        table.trials = results.trials > 1
        # Only what changed is touched: each update of a text or a display re-lays the screen out.
        self._text("#batch-shown", results.count_line())
        self.query_one(ScoreHistogram).show_counts(results.score_counts(), results.unscored)
        self._outcome_choices()
        empty = not results.rows and self.shown_batch is not None
        note = self.query_one("#batch-empty", Static)
        showing = empty or (bool(results.rows) and not results.view)
        if note.display != showing:
            note.display = showing
        if empty:
            running = self.shown_batch == self.running_batch
            note.update(
                Content(
                    "No conversation has ended yet."
                    if running
                    else "This batch has no conversations: it planned none, or none was stored before it stopped."
                )
            )
        elif not results.view and results.rows:
            note.update(Content("No conversation matches this filter."))

    def _outcome_choices(self) -> None:
        select = self.query_one("#batch-filter-outcome", Select)
        choices = self.results.outcome_choices()
        if choices == getattr(self, "_choices", None):
            return
        self._choices = choices
        current = select.value
        with self.prevent(Select.Changed):
            select.set_options(choices)
            if current in {value for _, value in choices}:
                select.value = current

    @on(Input.Changed, "#batch-filter-text")
    def _filter_typed(self) -> None:
        if self._debounce is not None:
            self._debounce.stop()
        self._debounce = self.set_timer(SEARCH_DELAY_S, self.apply_filter)

    @on(Input.Submitted, "#batch-filter-text")
    @on(Select.Changed, "#batch-filter-outcome, #batch-sort")
    def _filter_changed(self) -> None:
        self.apply_filter()

    def apply_filter(self) -> None:
        """Filter and sort the results as the filter line says; text is also looked for in the
        transcripts (in the store, in a thread), and rows that match there are added."""
        if self._debounce is not None:
            self._debounce.stop()
            self._debounce = None
        box = self.query_one("#batch-filter-text", Input)
        outcome = self.query_one("#batch-filter-outcome", Select).value
        try:
            flt = ResultsFilter.parse(box.value, None if outcome is Select.NULL else str(outcome))
        except ValueError as exc:
            box.add_class("-invalid")
            self.query_one("#batch-shown", Static).update(Content(visible(str(exc))))
            return
        box.remove_class("-invalid")
        sort = str(self.query_one("#batch-sort", Select).value)
        self.results.refilter(flt, sort)
        self._show_results()
        if flt.text and self.shown_batch is not None:
            self._search_generation += 1
            self._search_transcripts(self._search_generation, self.shown_batch, flt.text)

    @work(thread=True, exclusive=True, exit_on_error=False, group="batch-search", description="searching the transcripts")
    def _search_transcripts(self, generation: int, batch_id: str, text: str) -> None:
        store = self.parley.store()
        ids = {row.id for row in store.conversation_rows(batch_id=batch_id, text=text, limit=MAX_ROWS)}
        self.post_message(TranscriptMatched(generation, batch_id, text, ids))

    def on_transcript_matched(self, message: TranscriptMatched) -> None:
        flt = self.results.filter
        if message.generation != self._search_generation or message.batch_id != self.shown_batch or flt.text != message.text:
            return
        self.results.refilter(replace(flt, transcript_ids=frozenset(message.ids)))
        self._show_results()

    # ---- running a batch --------------------------------------------------------------------------

    def start(self, prepared: PreparedBatch) -> None:
        """Run a prepared batch in a thread of its own."""
        # The engine, imported to plan the batch, out of every full collection; after a batch, the
        # garbage that freeze_young() froze while it ran is collected (tui/app/heap.py).
        heap.settle(thaw=self._frozen_at > 0)
        self.running_batch = prepared.id
        self.shown_batch = prepared.id
        self._list_drawn, self._list_done = 0.0, 0
        self.stop_requests = 0
        self.last_error = None
        self.progress = None
        self.draws = 0
        self.results.reset(prepared.id)
        self._show_results()
        bar = self.query_one("#batch-progress", ProgressBar)
        bar.update(total=prepared.total, progress=0)
        self.query_one("#batch-progress-row").display = True
        placement = self.parley.placement
        over = f" over {placement.describe()}" if placement is not None else ""
        self._counts(f"starting {plural(prepared.total, 'conversation')}{over}…")
        preflight = getattr(prepared, "preflight", None)
        checked = preflight.warnings if preflight is not None else []
        if checked:  # the check before launch: a model its endpoint does not list
            self.notify("\n".join(checked), title="Warnings", severity="warning", markup=False)
        self.feed = BatchFeed(prepared.id, placement=self.parley.placement)
        self.refresh_bindings()  # `x` shows while it runs
        self._run(self.feed, prepared)
        if self._timer is None:
            self._timer = self.set_interval(DRAW_INTERVAL_S, self._draw)
        else:
            self._timer.resume()
        self._list()

    @work(thread=True, exit_on_error=False, group="batch-run", description="running the batch")
    def _run(self, feed: BatchFeed, prepared: PreparedBatch) -> None:
        try:
            feed.run(self.parley.store(), prepared)
        except Exception as exc:  # the runner never raises for a conversation; this is the run itself
            from parley.core.records import OutcomeCounts

            self.post_message(BatchRunEnded(prepared.id, "failed", prepared.total, OutcomeCounts.of(), f"{type(exc).__name__}: {exc}"))
            raise

    def _draw(self) -> None:
        """Ten times a second while a batch runs: draw whatever its feed gathered, once."""
        feed = self.feed
        if feed is None:
            return
        update = feed.drain()
        if update.empty:
            return
        self.draws += 1
        self._apply(update)
        if update.rows and time.monotonic() - self._frozen_at >= FREEZE_INTERVAL_S:
            self._frozen_at = time.monotonic()
            heap.freeze_young()  # the rows so far, out of the full collections while it runs

    def _apply(self, update: FeedUpdate) -> None:
        if update.last_error:
            self.last_error = update.last_error
        if update.started is not None:
            self.query_one("#batch-progress", ProgressBar).update(total=update.started.total)
        if update.rows and self.shown_batch == self.running_batch:
            appended = self.results.add(update.rows)
            # Rows in run order with no filter go at the end; otherwise the view was redone.
            self._show_results(appended=appended if self.results.sort == "run" else None)
        if update.progress is not None:
            self._progress(update.progress)
        for limit, reason in update.concurrency:
            self.notify(f"Concurrency now {limit}: {reason}", title="Batch", timeout=4)
        if update.finished is not None:
            e = self.feed_result = update.finished
            self.post_message(BatchRunEnded(e.batch_id, e.status, e.total, e, e.error))

    def _progress(self, p: Progress) -> None:
        self.progress = p
        self.query_one("#batch-progress", ProgressBar).update(total=p.total, progress=p.done)
        stopping = " · stopping (x again cancels now)" if self.stop_requests == 1 else ""
        self._counts(
            f"{p.done:,}/{p.total:,} done · {p.passed:,} passed · {p.failed:,} failed · {plural(p.bot_errors, 'bot error')}"
            f" · {p.apart:,} apart · {plural(p.errors, 'error')}"
            f" · {p.rate_per_s:.1f}/s · ETA {_eta(p.eta_s)} · concurrency {p.concurrency}{stopping}"
        )
        # The list's Done, Passed... move with it: at once when Done first leaves 0, then at most
        # once a second, the latest counts drawn when the second is up.
        wait = self._list_drawn + LIST_INTERVAL_S - time.monotonic()
        if wait <= 0 or (p.done and self._list_done == 0):
            self._draw_list_row()
        elif self._list_timer is None:
            self._list_timer = self.set_timer(wait, self._draw_list_row)

    def _draw_list_row(self) -> None:
        """The running batch's row in the list, with the latest progress."""
        self._list_timer = None
        p = self.progress
        if p is None or self.running_batch not in self.batch_ids:
            return
        self._list_drawn, self._list_done = time.monotonic(), p.done
        index = self.batch_ids.index(self.running_batch)
        cells = list(self.table.full_row(index))
        cells[5:11] = count_cells(p)
        cells[2] = "running"
        self.table.set_text_row(index, cells)

    def on_batch_run_ended(self, message: BatchRunEnded) -> None:
        if message.batch_id != self.running_batch:
            return
        if self.feed is not None:  # what was gathered after the last draw
            rest = self.feed.drain()
            rest.finished = None
            self._apply(rest)
        self.running_batch = None
        self.feed = None
        self.refresh_bindings()
        if self._timer is not None:
            self._timer.pause()
        self.query_one("#batch-progress", ProgressBar).update(total=message.total, progress=message.done)
        # The counts follow from the batch's summary, read from the store with its rows.
        text = f"{message.status}: {message.done:,}/{message.total:,} done"
        error = message.error or (self.last_error if message.counts.errors else None)
        if error:
            text += f"\n{'failed' if message.status == 'failed' else 'last error'}: {error}"
        failed = message.status == "failed" or bool(message.error)
        self._counts(text, error=failed)
        self.ended = (message.batch_id, text, failed)  # the counts follow with its rows (on_batch_rows_loaded)
        self.shown_batch = None  # reload its rows from the store, in the order they ran
        self.show_batch(message.batch_id)
        self.query_one("#batch-progress-row").display = True
        self._list()
        self.notify(text.splitlines()[0], title="Batch finished", severity="error" if message.status == "failed" else "information")
        self._next_of_group(message)

    def _next_of_group(self, ended: BatchRunEnded) -> None:
        """Several bots: the group's next batch starts when one completes; a group stopped on the
        way says how to go on; its last one says how to see them side by side."""
        if not self.queued:
            if self._group_started:
                self._group_started = False
                self.notify("Every bot of the group has run: g shows them side by side.", title="Side by side")
            return
        if ended.status != "completed":
            left, self.queued = self.queued, []
            self._group_started = False
            self.notify(
                f"The group stopped: {plural(len(left), 'batch', 'batches')} of it did not run; "
                f"go on with `parley run --resume {left[0].id}`.",
                title="Side by side",
                severity="warning",
            )
            return
        self._group_started = True
        following = self.queued.pop(0)
        self.call_after_refresh(self.start, following)

    def action_side_by_side(self) -> None:
        """The group of the highlighted batch, side by side (GroupScreen)."""
        batch_id = self.highlighted_batch()
        if batch_id is None:
            self.notify("No batch selected.", severity="warning")
            return
        self._compare_group(batch_id)

    @work(thread=True, exclusive=True, exit_on_error=False, group="batch-group", description="comparing the group")
    def _compare_group(self, batch_id: str) -> None:
        from parley.core.reports import compare_group, render_group_markdown

        store = self.parley.store()
        batch = store.get_batch(batch_id)
        if batch.group_id is None:
            self.app.call_from_thread(
                self.notify, "This batch belongs to no group: several bots in the launch form's Bot field make one.", severity="warning"
            )
            return
        comparison = compare_group(store, batch.group_id)
        self.post_message(GroupCompared(comparison.group_id, render_group_markdown(comparison)))

    def on_group_compared(self, message: GroupCompared) -> None:
        from parley.tui.app.screens.group_report import GroupScreen

        self.app.push_screen(GroupScreen(message.group_id, message.markdown))

    def _status(self) -> None:
        """The line under the batches: how many are listed, and the shown batch's pass rate and
        pass^k with their intervals."""
        parts = [self.listed] if self.listed else []
        if self.rates and self.shown_batch is not None and self.shown_batch != self.running_batch:
            parts.append(f"{self.shown_batch[:12]}: {self.rates}")
            if self.rules is not None and self.rules[0] == self.shown_batch:
                from parley.tui.app.screens.batch_rules import rules_line

                parts.append(rules_line(self.rules[1]))
        text = " · ".join(parts)
        if self.base_batch is not None:  # marked with `b`
            text = f"Base: {self.base_batch[:12]}. {text}"
        self.query_one("#batches-status", Static).update(Content(visible(text)))

    def _counts(self, text: str, *, error: bool = False) -> None:
        self._text("#batch-counts", text)
        counts = self.query_one("#batch-counts", Static)
        if counts.has_class("-error") != error:
            counts.set_class(error, "-error")

    def _text(self, selector: str, text: str) -> None:
        """Set a Static's text if it changed (in place: widgets/in_place.py)."""
        widget = self.query_one(selector, Static)
        if getattr(widget, "_shown_text", None) == text:
            return
        widget._shown_text = text  # type: ignore[attr-defined]
        update_in_place(widget, Content(visible(text)))

    # ---- opening a result -------------------------------------------------------------------------

    def on_results_table_opened(self, event: ResultsTable.Opened) -> None:
        event.stop()
        self._open(event.row.id)

    def action_open_result(self) -> None:
        row = self.results_table.current
        if row is None:
            self.notify("No conversation selected.", severity="warning")
            return
        self._open(row.id)

    @work(thread=True, exclusive=True, exit_on_error=False, group="batch-open", description="opening the conversation")
    def _open(self, conversation_id: str) -> None:
        from parley.tui.app.panes.session_listing import load_detail

        self.post_message(SessionOpened(load_detail(self.parley.store(), "conversation", conversation_id)))

    def on_session_opened(self, message: SessionOpened) -> None:
        message.stop()
        from parley.tui.app.panes.sessions_pane import SessionsPane

        export = self.parley.query_one(SessionsPane).export
        self.app.push_screen(SessionScreen(message.detail, export=export))

    def action_label(self) -> None:
        """Label the highlighted result by hand, walking the shown batch's conversations."""
        row = self.results_table.current
        if row is None:
            self.notify("No conversation selected: show a batch's results, then L on one.", severity="warning")
            return
        self.parley.label_conversations([r.id for r in self.results_table.rows], row.id)

    def action_calibrations(self) -> None:
        self.parley.show_calibrations()

    # ---- actions ----------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """`u` and `x` are shown (and answer) only when there is something to show or stop;
        their twins (`no_rules`, `nothing_running`) answer the key otherwise."""
        has_rules = self.rules is not None and self.rules[0] == self.shown_batch
        running = self.feed is not None
        if action in ("show_rules", "no_rules"):
            return has_rules == (action == "show_rules")
        if action in ("cancel_batch", "nothing_running"):
            return running == (action == "cancel_batch")
        return True

    def action_no_rules(self) -> None:
        self.notify("This batch has no rules over pairs of conversations or over the batch (parley run --rules DIR).")

    def action_nothing_running(self) -> None:
        self.notify("No batch is running.")

    def action_cancel_batch(self) -> None:
        feed = self.feed
        if feed is None:
            self.notify("No batch is running.")
            return
        self.stop_requests += 1
        if self.stop_requests == 1:
            feed.stop()
            self._counts("stopping: no new conversations; those in flight get a moment to end (x again cancels now)")
        else:
            feed.cancel()
            self._counts("cancelling the conversations in flight…")

    def highlighted_batch(self) -> str | None:
        row = self.table.cursor_row
        return self.batch_ids[row] if self.batch_ids and row is not None and 0 <= row < len(self.batch_ids) else None

    def action_mark_base(self) -> None:
        from parley.tui.app.screens.compare_batches import mark_base

        mark_base(self)

    def action_compare(self) -> None:
        from parley.tui.app.screens.compare_batches import compare_highlighted

        compare_highlighted(self)

    def action_mutate(self) -> None:
        from parley.tui.app.screens.mutation_run import mutate_highlighted

        mutate_highlighted(self)

    def action_rescore(self) -> None:
        """The re-score form for the highlighted batch; the batch it prepares runs here."""
        batch_id = self.highlighted_batch()
        if batch_id is None:
            self.notify("No batch to re-score.", severity="warning")
            return
        if batch_id == self.running_batch:
            self.notify("This batch is still running: re-score it when it has ended.", severity="warning")
            return
        self._open_rescore(batch_id)

    @work(thread=True, exclusive=True, exit_on_error=False, group="batch-rescore", description="reading the batch")
    def _open_rescore(self, batch_id: str) -> None:
        from parley.tui.app.screens.rescore_batch import RescoreScreen

        judge = self.parley.store().get_batch(batch_id).options.models.judge
        self.app.call_from_thread(self.app.push_screen, RescoreScreen(batch_id, judge), self._rescore_prepared)

    def _rescore_prepared(self, prepared: PreparedBatch | None) -> None:
        if prepared is not None:
            self.start(prepared)
            self.results_table.focus()

    def action_html_report(self) -> None:
        batch_id = self.highlighted_batch()
        if batch_id is None:
            self.notify("No batch selected.", severity="warning")
            return
        if batch_id == self.running_batch:
            self.notify("The batch is still running: its report is written once it ends.", severity="warning")
            return
        self.notify(f"Writing the HTML report of {batch_id[:12]}…", title="HTML report", timeout=3)
        self._write_report(batch_id)

    @work(thread=True, exit_on_error=False, group="batch-report", description="writing the HTML report")
    def _write_report(self, batch_id: str) -> None:
        from parley.core.reports import write_html

        path = self.parley.export_dir / "reports" / f"{batch_id}.html"  # beside `parley run`'s markdown reports
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".partial")
        with partial.open("w", encoding="utf-8") as out:
            n = write_html(self.parley.store(), batch_id, out)
        partial.replace(path)
        self.post_message(BatchReportWritten(batch_id, path.resolve(), n))

    def on_batch_report_written(self, message: BatchReportWritten) -> None:
        self.notify(
            f"{message.path}\n({plural(message.conversations, 'conversation', 'conversations')})",
            title=f"HTML report of {message.batch_id[:12]}",
            timeout=15,
            markup=False,
        )

    def action_reload(self) -> None:
        self._list()
        if self.shown_batch is not None and self.shown_batch != self.running_batch:
            batch, self.shown_batch = self.shown_batch, None
            self.show_batch(batch)

    def action_show_rules(self) -> None:
        """The shown batch's pair and batch rules, on a screen of their own."""
        if self.rules is None or self.rules[0] != self.shown_batch:
            self.notify("This batch has no rules over pairs of conversations or over the batch (parley run --rules DIR).")
            return
        from parley.tui.app.screens.batch_rules import BatchRulesScreen

        batch_id, rules, labels = self.rules
        self.app.push_screen(BatchRulesScreen(batch_id, rules, labels))

    def action_focus_filter(self) -> None:
        self.query_one("#batch-filter-text", Input).focus()

    def action_next_sort(self) -> None:
        select = self.query_one("#batch-sort", Select)
        keys = list(SORTS)
        select.value = keys[(keys.index(str(select.value)) + 1) % len(keys)]

    def cancel_running(self) -> None:
        """Cancel the running batch, if any: what is in flight is stored as cancelled."""
        if self.feed is not None:
            self.feed.cancel()

    def on_unmount(self) -> None:
        self.cancel_running()  # the app is closing: the batch's conversations end as cancelled
