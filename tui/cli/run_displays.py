"""How `parley run` shows a batch as it runs: a rich progress bar on a terminal, one plain line per
finished conversation in a log or a pipe, or one conversation streamed as it happens (`--single`).
Each display takes the runner's events (parley.core.records.events) and a note now and then."""

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.core.records import (
    BatchFinished,
    BatchStarted,
    ConcurrencyChanged,
    ConversationFailed,
    ConversationFinished,
    ConversationStarted,
    Progress,
    TranscriptEvent,
)
from parley.core.redaction import REDACTOR
from parley.tui.cli.conversation_view import tool_line
from parley.tui.terminal_text import for_rich, one_line, visible

if TYPE_CHECKING:
    from rich.progress import TaskID

    from parley.core.records import BatchEvent
    from parley.tui.cli.closed_pipe import PipeConsole


class Display:
    def __init__(self, out: PipeConsole) -> None:
        self.out = out

    def handle(self, event: BatchEvent) -> None:  # pragma: no cover - overridden
        pass

    def note(self, text: str) -> None:
        self.out.print(visible(text), highlight=False, markup=False)

    def close(self) -> None:
        pass


def row_line(event: ConversationFinished | ConversationFailed, done: int, total: int) -> str:
    """One finished conversation on one line; what came from files and bots spelled out
    (parley.tui.terminal_text), so no error text can draw on the terminal or break the line."""
    return one_line(_row_line(event, done, total))


def _row_line(event: ConversationFinished | ConversationFailed, done: int, total: int) -> str:
    width = len(str(total))
    if isinstance(event, ConversationFailed):
        return f"[{done:>{width}}/{total}] {event.stop_reason:<10} {event.spec_id} trial {event.trial}: {event.error}"
    row = event.row
    if event.outcome == "bot_error":
        return f"[{done:>{width}}/{total}] {'bot_error':<10} {event.spec_id} trial {event.trial}: {row.error}"
    score = "" if event.score is None else f"score {event.score}, "  # only a judge's: offline there is none
    return (
        f"[{done:>{width}}/{total}] {event.outcome:<10} {event.spec_id} trial {event.trial}: {score}"
        f"{row.turns} turn{'s' if row.turns != 1 else ''}, {event.stop_reason}, {row.duration_s:.2f} s"
    )


class PlainDisplay(Display):
    """One line per finished conversation: for logs and pipes."""

    def __init__(self, out: PipeConsole) -> None:
        super().__init__(out)
        self.done = 0
        self.total = 0

    def handle(self, event: BatchEvent) -> None:
        if isinstance(event, BatchStarted):
            self.total = event.total
            self.done = event.already_done
        elif isinstance(event, (ConversationFinished, ConversationFailed)):
            self.done += 1
            self.note(row_line(event, self.done, self.total))
        elif isinstance(event, ConcurrencyChanged):
            pause = f"; launches paused {event.paused_for_s:.1f} s" if event.paused_for_s else ""
            self.note(f"concurrency {event.previous} -> {event.limit} ({event.reason}{pause})")
        elif isinstance(event, BatchFinished):
            # The counts follow, from the batch's summary ("Conversations: ..."): said once.
            self.note(f"batch {event.status}: {event.done} of {event.total} done")


class BarDisplay(Display):
    """A rich progress bar (✓ passed, ✗ the bot's failures, ? counted apart, ! runs that broke on
    the simulator's or parley's side: the counts' passed, bot_failures, apart, errors:
    parley.core.records.OutcomeCounts); every conversation that did not pass is listed above it as it ends."""

    def __init__(self, out: PipeConsole) -> None:
        super().__init__(out)
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(bar_width=24),
            MofNCompleteColumn(),
            TextColumn(
                "[green]✓{task.fields[passed]}[/] [red]✗{task.fields[failed]}[/] [cyan]?{task.fields[apart]}[/] "
                "[yellow]!{task.fields[errors]}[/]"
            ),
            TextColumn("{task.fields[rate]}"),
            TextColumn("eta {task.fields[eta]}"),
            TextColumn("limit {task.fields[limit]}"),
            console=out,
            transient=False,
        )
        self.task: TaskID | None = None
        self.done = 0
        self.total = 0

    def handle(self, event: BatchEvent) -> None:
        if isinstance(event, BatchStarted):
            self.total = event.total
            self.done = event.already_done
            self.progress.start()
            self.task = self.progress.add_task(
                "batch " + event.batch_id[:8],
                total=event.total,
                completed=event.already_done,
                passed=0,
                failed=0,
                apart=0,
                errors=0,
                rate="-",
                eta="-",
                limit=event.concurrency,
            )
        elif self.task is None:
            return
        elif isinstance(event, Progress):
            eta = "-" if event.eta_s is None else duration_text(event.eta_s)
            self.progress.update(
                self.task,
                completed=event.done,
                passed=event.passed,
                failed=event.bot_failures,
                apart=event.apart,
                errors=event.errors,
                rate=f"{event.rate_per_s:.1f}/s",
                eta=eta,
                limit=event.concurrency,
            )
        elif isinstance(event, (ConversationFinished, ConversationFailed)):
            self.done += 1
            if isinstance(event, ConversationFailed) or event.outcome != "passed":
                self.progress.console.print(row_line(event, self.done, self.total), highlight=False, markup=False)
        elif isinstance(event, ConcurrencyChanged):
            self.progress.update(self.task, limit=event.limit)
            pause = f"; launches paused {event.paused_for_s:.1f} s" if event.paused_for_s else ""
            self.note(f"concurrency {event.previous} -> {event.limit} ({event.reason}{pause})")
        elif isinstance(event, BatchFinished):
            self.close()

    def note(self, text: str) -> None:
        self.progress.console.print(visible(text), highlight=False, markup=False)

    def close(self) -> None:
        self.progress.stop()


def duration_text(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


class SingleDisplay(Display):
    """One conversation streamed as it happens: customer lines, the bot's text, tool calls."""

    def __init__(self, out: PipeConsole) -> None:
        super().__init__(out)
        self.in_bot_line = False
        # The reply comes in pieces, and a piece may end inside a secret the bot echoes: the
        # stream holds such a tail back until the next piece (or the line's end) settles it.
        self.bot_text = REDACTOR.stream()

    def _write(self, text: str) -> None:
        """Bot text as it streams, past rich (which would wrap it); a closed pipe is rich's case too."""
        if self.out.closed:
            return
        try:
            self.out.file.write(text)
            self.out.file.flush()
        except BrokenPipeError:
            self.out.on_broken_pipe()

    def _end_bot_line(self) -> None:
        if self.in_bot_line:
            self._write(visible(self.bot_text.end()) + "\n")
            self.in_bot_line = False

    def handle(self, event: BatchEvent) -> None:
        if isinstance(event, ConversationStarted):
            self.out.print(f"── {for_rich(event.spec_id)} trial {event.trial} (conversation {event.conversation_id}) ──", highlight=False)
        elif isinstance(event, TranscriptEvent):
            self._step(event)
        elif isinstance(event, (ConversationFinished, ConversationFailed)):
            self._end_bot_line()
            ended = event.stop_reason + (f": {event.error}" if isinstance(event, ConversationFailed) else "")
            self.out.print(f"── ended: {one_line(ended)} ──", highlight=False, markup=False)
        elif isinstance(event, ConcurrencyChanged):
            self._end_bot_line()
            self.note(f"(rate limited: waiting {event.paused_for_s:.1f} s)" if event.paused_for_s else f"({event.reason})")

    def _step(self, event: TranscriptEvent) -> None:
        if event.step == "user":
            self._end_bot_line()
            self.out.print(f"customer: {visible(event.text or '')}", highlight=False, markup=False)
        elif event.step == "tool_call" and event.tool is not None:
            self._end_bot_line()
            self.out.print(f"  {visible(tool_line(event.tool))}", highlight=False, markup=False)
        elif event.step == "bot_text" and event.text and event.details.get("injected"):
            self._end_bot_line()
            self.out.print(f"bot (injected): {visible(event.text)}", highlight=False, markup=False)
        elif event.step == "bot_text" and event.text:
            if not self.in_bot_line:
                self._write("bot: ")
                self.in_bot_line = True
            self._write(visible(self.bot_text.feed(event.text)))
        elif event.step == "bot_done":
            self._end_bot_line()

    def note(self, text: str) -> None:
        self._end_bot_line()
        super().note(text)
