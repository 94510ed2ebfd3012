"""The Batches pane: past and running batches, newest first. The highlighted batch's
conversations fill the results table beside a histogram of their scores; a running batch
shows a progress bar and live counts from the runner's events. Enter on a result opens its
transcript and verdict; `c` stops the running batch (graceful), a second `c` cancels it now.

A batch runs on the app's own event loop, as an async worker: the runner is asyncio and
non-blocking (its store calls go through threads), so `stop()` and `cancel()` are called from
here directly.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.content import Content
from textual.widgets import DataTable, ProgressBar, Static

from parley.tui.app.messages import (
    BatchConcurrencyChanged,
    BatchesListed,
    BatchProgressed,
    BatchRowsLoaded,
    BatchRunEnded,
    BatchRunStarted,
    ConversationScored,
    SessionOpened,
)
from parley.tui.app.panes.base import Pane
from parley.tui.app.panes.session_detail import SessionScreen
from parley.tui.app.widgets.score_histogram import ScoreHistogram

HINT = "r in Profiles (or ctrl+p › Run batch) launches a batch here; from a terminal: parley run PATH."
COLUMNS = ("Batch", "Created (UTC)", "Status", "Sources", "Planned", "Done", "Passed", "Failed", "Apart", "Errors")
"""Failed: the bot's failures (failed checks, bot errors). Apart: unverified conversations and
simulator faults. Errors: runs that broke on the simulator's or parley's side."""
RESULT_COLUMNS = ("Profile", "Variables", "Stop", "Outcome", "Score", "Turns", "Tokens", "Cost", "Time")
OUTCOME_LABELS = {"passed": "yes", "failed": "no", "bot_error": "bot error", "user_fault": "user fault"}
OUTCOME_STYLES = {
    "failed": "red",
    "bot_error": "bold red",
    "unverified": "cyan",
    "user_fault": "magenta",
    "user_error": "yellow",
    "infrastructure_error": "yellow",
    "cancelled": "yellow",
    "evaluation_error": "yellow",
    "error": "yellow",
}
"""A results row's style by outcome: the bot's failures red, what is counted apart in its own colour."""
MAX_ROWS = 5000  # results shown per batch; the counts above are always complete


def batch_cells(row: Any) -> tuple[str, ...]:
    b = row.batch
    created = b.created_at.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M")
    sources = ", ".join(b.sources)
    if len(sources) > 26:  # room for the Apart column at 120 columns
        sources = sources[:25] + "…"
    apart = row.unverified + row.user_faults
    return (
        b.id[:12],
        created,
        b.status,
        sources,
        str(b.planned),
        str(row.done),
        str(row.passed),
        str(row.failed),
        str(apart),
        str(row.errors),
    )


def outcome_label(outcome: str | None) -> str:
    """What the results table says of an outcome: yes / no / bot error / unverified / ..."""
    if outcome is None:
        return "-"
    return OUTCOME_LABELS.get(outcome, outcome.replace("_", " "))


def result_texts(row: Any) -> list[Text]:
    """A results row as styled cells: the bot's failures in red, what is counted apart in its colour."""
    style = OUTCOME_STYLES.get(row.outcome or "", "")
    return [Text(c, style=style) for c in result_cells(row)]


def result_cells(row: Any) -> tuple[str, ...]:
    """A conversation as the results table shows it (durations to a tenth of a second)."""
    variables = ", ".join(f"{k}={v}" for k, v in row.variables.items()) or "-"
    if len(variables) > 15:
        variables = variables[:14] + "…"
    cost = "unknown" if row.cost_usd is None else f"${row.cost_usd:.4f}"
    return (
        row.name,
        variables,
        row.stop_reason,
        outcome_label(row.outcome),
        "-" if row.score is None else str(row.score),
        str(row.turns),
        f"{row.input_tokens + row.output_tokens:,}",
        cost,
        f"{row.duration_s:.1f}s",
    )


def _eta(seconds: float | None) -> str:
    if seconds is None:
        return "--:--"
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes // 60:d}:{minutes % 60:02d}:{secs:02d}" if minutes >= 60 else f"{minutes:02d}:{secs:02d}"


class ResultsTable(DataTable[Any]):
    """A batch's conversations: Enter opens the highlighted one (and says so in the footer)."""

    BINDINGS = [Binding("enter", "select_cursor", "Open transcript")]


class BatchesPane(Pane):
    """The batches on top; the progress of the running one; its results and score histogram."""

    BINDINGS = [
        Binding("c", "cancel_batch", "Stop/cancel batch"),
        Binding("ctrl+r", "reload", "Reload"),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.batch_ids: list[str] = []  # row i of the batches table
        self.shown_batch: str | None = None  # whose results are shown
        self.results: list[Any] = []  # row i of the results table (ConversationRow)
        self.runner: Any = None
        self.running_batch: str | None = None
        self.stop_requests = 0
        self.last_error: str | None = None
        self.progress: Any = None

    def compose(self) -> ComposeResult:
        yield Static(Content(HINT), id="batches-hint", classes="pane-placeholder")
        table: DataTable[Any] = DataTable(cursor_type="row", zebra_stripes=True, id="batches-table")
        table.add_columns(*COLUMNS)
        yield table
        yield Static(Content(""), id="batches-status")
        with Horizontal(id="batch-progress-row"):
            yield ProgressBar(show_eta=False, id="batch-progress")
            yield Static(Content(""), id="batch-counts")
        with Horizontal(id="batch-results-row"):
            results = ResultsTable(cursor_type="row", zebra_stripes=True, id="batch-results")
            results.add_columns(*RESULT_COLUMNS)
            yield results
            yield ScoreHistogram(id="batch-histogram")

    def on_mount(self) -> None:
        self.query_one("#batch-progress-row").display = False

    @property
    def table(self) -> DataTable[Any]:
        return self.query_one("#batches-table", DataTable)

    @property
    def results_table(self) -> ResultsTable:
        return self.query_one("#batch-results", ResultsTable)

    # ---- the list of batches ----------------------------------------------------------------------

    def load_data(self) -> None:
        self.table.focus()
        self._list()

    def refresh_data(self) -> None:
        self._list()

    @work(thread=True, exclusive=True, exit_on_error=False, group="batches", description="reading the batches")
    def _list(self) -> None:
        store = self.parley.store()
        store.interrupt_orphans()  # a batch whose process was killed shows as interrupted
        self.post_message(BatchesListed(store.list_batches(limit=500)))

    def on_batches_listed(self, message: BatchesListed) -> None:
        table = self.table
        table.clear()
        self.batch_ids = [row.id for row in message.rows]
        table.add_rows([Text(c) for c in batch_cells(row)] for row in message.rows)
        n = len(message.rows)
        status = "No batches yet." if not n else f"{n} batch{'es' if n != 1 else ''}" + (" (the latest 500)" if n == 500 else "")
        self.query_one("#batches-status", Static).update(Content(status))
        wanted = self.running_batch or self.shown_batch
        if wanted in self.batch_ids:
            table.move_cursor(row=self.batch_ids.index(wanted), animate=False)
        elif self.batch_ids:
            self.show_batch(self.batch_ids[0])

    @on(DataTable.RowHighlighted, "#batches-table")
    def _batch_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if 0 <= event.cursor_row < len(self.batch_ids):
            self.show_batch(self.batch_ids[event.cursor_row])

    def show_batch(self, batch_id: str) -> None:
        """Show `batch_id`'s conversations (the running batch's fill in as they end)."""
        if batch_id == self.shown_batch and (batch_id == self.running_batch or self.results):
            return
        self.shown_batch = batch_id
        self.query_one("#batch-progress-row").display = batch_id == self.running_batch
        self._load_rows(batch_id)

    @work(thread=True, exclusive=True, exit_on_error=False, group="batch-rows", description="reading the batch's results")
    def _load_rows(self, batch_id: str) -> None:
        from parley.core.reports.markdown import rates_line
        from parley.core.reports.stats import summarize

        store = self.parley.store()
        rows = store.conversation_rows(batch_id=batch_id, limit=MAX_ROWS)
        rows.sort(key=lambda r: (r.started_at, r.name, r.trial))  # in the order they ran
        self.post_message(BatchRowsLoaded(batch_id, rows, rates_line(summarize(store, batch_id, max_listed=0)) if rows else ""))

    def on_batch_rows_loaded(self, message: BatchRowsLoaded) -> None:
        if message.batch_id != self.shown_batch:
            return
        rows = list(message.rows)
        if message.batch_id == self.running_batch:  # keep what arrived while the store was read
            stored = {row.id for row in rows}
            rows += [row for row in self.results if row.id not in stored]
        self.results = rows
        table = self.results_table
        table.clear()
        table.add_rows(result_texts(row) for row in self.results)
        self._histogram()
        self._rates(message.rates)

    def _histogram(self) -> None:
        self.query_one(ScoreHistogram).show_scores(row.score for row in self.results)

    # ---- running a batch --------------------------------------------------------------------------

    def start(self, prepared: Any) -> None:
        """Run a prepared batch (parley.core.engine.batch_runner.PreparedBatch) here, on the app's loop."""
        self.running_batch = prepared.id
        self.shown_batch = prepared.id
        self.stop_requests = 0
        self.last_error = None
        self.progress = None
        self.results = []
        self.results_table.clear()
        self._histogram()
        bar = self.query_one("#batch-progress", ProgressBar)
        bar.update(total=prepared.total, progress=0)
        self.query_one("#batch-progress-row").display = True
        self._counts(f"starting {prepared.total} conversations…")
        self._run(prepared)
        self._list()

    @work(exclusive=False, exit_on_error=False, group="batch-run", description="running the batch")
    async def _run(self, prepared: Any) -> None:
        from parley.core.engine.batch_runner import BatchRunner
        from parley.core.records.events import (
            BatchFinished,
            BatchStarted,
            ConcurrencyChanged,
            ConversationFailed,
            ConversationFinished,
            Progress,
        )

        def on_event(event: Any) -> None:  # called on this loop's thread: post, never touch widgets
            if isinstance(event, Progress):
                self.post_message(BatchProgressed(event))
            elif isinstance(event, ConversationFinished):
                self.post_message(ConversationScored(event.batch_id, event.row))
            elif isinstance(event, ConversationFailed):
                self.post_message(ConversationScored(event.batch_id, event.row, event.error))
            elif isinstance(event, ConcurrencyChanged):
                self.post_message(BatchConcurrencyChanged(event.limit, event.reason))
            elif isinstance(event, BatchStarted):
                self.post_message(BatchRunStarted(event.batch_id, event.total, event.concurrency))
            elif isinstance(event, BatchFinished):
                self.post_message(
                    BatchRunEnded(
                        event.batch_id,
                        event.status,
                        event.done,
                        event.total,
                        event.passed,
                        event.failed,
                        event.errors,
                        event.error,
                        event.unverified,
                        event.user_faults,
                    )
                )

        store = self.parley.store()  # already open: prepare_batch used it
        self.runner = BatchRunner(store, prepared, on_event=on_event)
        try:
            await self.runner.run()
        except Exception as exc:  # the runner never raises for a conversation; this is the run itself
            self.post_message(BatchRunEnded(prepared.id, "failed", 0, prepared.total, 0, 0, 0, f"{type(exc).__name__}: {exc}"))
            raise
        finally:
            self.runner = None

    def on_batch_run_started(self, message: BatchRunStarted) -> None:
        self.query_one("#batch-progress", ProgressBar).update(total=message.total)
        self._list()  # its status is running now

    def on_batch_progressed(self, message: BatchProgressed) -> None:
        p = message.progress
        self.progress = p
        self.query_one("#batch-progress", ProgressBar).update(total=p.total, progress=p.done)
        stopping = ""
        if self.stop_requests == 1:
            stopping = " · stopping (c again cancels now)"
        self._counts(
            f"{p.done}/{p.total} done · {p.passed} passed · {p.failed} failed · {p.unverified + p.user_faults} apart"
            f" · {p.errors} errors"
            f" · {p.rate_per_s:.1f}/s · ETA {_eta(p.eta_s)} · concurrency {p.concurrency}{stopping}"
        )

    def on_conversation_scored(self, message: ConversationScored) -> None:
        if message.error:
            self.last_error = message.error
        if message.row is None or message.batch_id != self.shown_batch:
            return
        if any(row.id == message.row.id for row in self.results):
            return
        self.results.append(message.row)
        self.results_table.add_row(*result_texts(message.row))
        self._histogram()

    def on_batch_concurrency_changed(self, message: BatchConcurrencyChanged) -> None:
        self.notify(f"Concurrency now {message.limit}: {message.reason}", title="Batch", timeout=4)

    def on_batch_run_ended(self, message: BatchRunEnded) -> None:
        if message.batch_id != self.running_batch:
            return
        self.running_batch = None
        self.runner = None
        self.query_one("#batch-progress", ProgressBar).update(total=message.total, progress=message.done)
        text = (
            f"{message.status}: {message.done}/{message.total} done · {message.passed} passed"
            f" · {message.failed} failed · {message.unverified + message.user_faults} apart · {message.errors} errors"
        )
        error = message.error or (self.last_error if message.errors else None)
        if error:
            text += f"\n{'failed' if message.status == 'failed' else 'last error'}: {error}"
        self._counts(text, error=message.status == "failed" or bool(message.error))
        self.shown_batch = None  # reload its rows from the store, in the order they ran
        self.show_batch(message.batch_id)
        self.query_one("#batch-progress-row").display = True
        self._list()
        severity = "error" if message.status == "failed" else "information"
        self.notify(text.splitlines()[0], title="Batch finished", severity=severity)

    def _rates(self, rates: str) -> None:
        """The shown batch's pass rate and pass^k with their intervals, under the batches table."""
        status = self.query_one("#batches-status", Static)
        listed = f"{len(self.batch_ids)} batch{'es' if len(self.batch_ids) != 1 else ''}" if self.batch_ids else "No batches yet."
        status.update(Content(f"{listed} · {self.shown_batch[:12]}: {rates}" if rates and self.shown_batch else listed))

    def _counts(self, text: str, *, error: bool = False) -> None:
        counts = self.query_one("#batch-counts", Static)
        counts.update(Content(text))
        counts.set_class(error, "-error")

    # ---- opening a result -------------------------------------------------------------------------

    @on(DataTable.RowSelected, "#batch-results")
    def _result_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open_result()

    def action_open_result(self) -> None:
        table = self.results_table
        row = table.cursor_row
        if not self.results or row is None or not (0 <= row < len(self.results)):
            self.notify("No conversation selected.", severity="warning")
            return
        self._open(self.results[row].id)

    @work(thread=True, exclusive=True, exit_on_error=False, group="batch-open", description="opening the conversation")
    def _open(self, conversation_id: str) -> None:
        from parley.tui.app.panes.session_listing import load_detail

        self.post_message(SessionOpened(load_detail(self.parley.store(), "conversation", conversation_id)))

    def on_session_opened(self, message: SessionOpened) -> None:
        message.stop()
        from parley.tui.app.panes.sessions_pane import SessionsPane

        export = self.parley.query_one(SessionsPane).export
        self.app.push_screen(SessionScreen(message.detail, export=export))

    # ---- actions ----------------------------------------------------------------------------------

    def action_cancel_batch(self) -> None:
        runner = self.runner
        if runner is None:
            self.notify("No batch is running.")
            return
        self.stop_requests += 1
        if self.stop_requests == 1:
            runner.stop()
            self._counts("stopping: no new conversations; those in flight get a moment to end (c again cancels now)")
        else:
            runner.cancel()
            self._counts("cancelling the conversations in flight…")

    def action_reload(self) -> None:
        self._list()
        if self.shown_batch is not None and self.shown_batch != self.running_batch:
            batch, self.shown_batch = self.shown_batch, None
            self.show_batch(batch)
