"""MutationScreen: the mutants of the highlighted batch (`M` in the Batches pane), run here and
shown as a table as each is decided: mutant, status, how many conversations it acted in, and the
conversations and checks that caught it (or, for a survivor, what would kill it). The run is
parley.core.mutation.mutate_batch in a worker thread; each mutant's batch is stored, a child of
the batch it mutates, and shows in the Batches pane like any other."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static
from textual.worker import Worker

if TYPE_CHECKING:
    from parley.core.mutation import MutantResult, MutationReport
    from parley.tui.app.app import ParleyApp
    from parley.tui.app.panes.batches_pane import BatchesPane

COLUMNS = ("Mutant", "Status", "Acted in", "Caught by (conversation: checks) / what would kill it")
STATUS_STYLES = {"killed": "green", "survived": "bold red"}


@dataclass
class MutantDecided(Message):
    """The worker decided one mutant."""

    result: MutantResult


@dataclass
class MutationFinished(Message):
    """The worker decided every mutant."""

    report: MutationReport


def result_cells(result: MutantResult) -> tuple[Any, ...]:
    """One mutant's row (bot text is data: every cell is a plain Text)."""
    from parley.core.mutation import STATUS_WORDS

    if result.caught_by:
        detail = "; ".join(f"{c.name}#{c.trial}: {', '.join(c.checks) or c.outcome}" for c in result.caught_by[:3])
    else:
        detail = result.would_kill or result.why or ""
    acted = f"{result.exercised_in}/{result.conversations}" if result.conversations else ""
    return (
        Text(result.mutant),
        Text(STATUS_WORDS[result.status], style=STATUS_STYLES.get(result.status, "")),
        Text(acted),
        Text(detail),
    )


def mutate_highlighted(pane: BatchesPane) -> None:
    """`M` in the Batches pane: the mutants of the highlighted batch (one that has ended)."""
    batch_id = pane.highlighted_batch()
    if batch_id is None:
        pane.notify("No batch to mutate.", severity="warning")
        return
    if batch_id == pane.running_batch:
        pane.notify("This batch is still running: mutate it when it has ended.", severity="warning")
        return
    pane.app.push_screen(MutationScreen(batch_id))


class MutationScreen(Screen[None]):
    """Escape goes back to the Batches pane (the run goes on, its batches are stored)."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back")]
    DEFAULT_CSS = """
    #mutation-body { height: 1fr; }
    #mutation-summary { height: auto; padding: 0 1; border: round $primary; }
    #mutation-results { height: 1fr; }
    """

    def __init__(self, batch_id: str) -> None:
        super().__init__(id="mutation-screen")
        self.batch_id = batch_id
        self.results: list[MutantResult] = []
        self.report: MutationReport | None = None

    @property
    def parley(self) -> ParleyApp:
        return cast("ParleyApp", self.app)

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="mutation-body"):
            yield Static(Content(f"Mutating batch {self.batch_id[:12]}: each mutant runs its conversations again…"), id="mutation-summary")
            table: DataTable[Any] = DataTable(cursor_type="row", zebra_stripes=True, id="mutation-results")
            table.add_columns(*COLUMNS)
            yield table
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(DataTable).focus()
        self._mutate()

    @work(thread=True, exclusive=True, exit_on_error=False, group="mutate", description="running the mutants")
    def _mutate(self) -> None:
        import asyncio

        from parley.core.mutation import mutate_batch

        def decided(result: MutantResult) -> None:
            self.post_message(MutantDecided(result))

        report = asyncio.run(mutate_batch(self.parley.store(), self.batch_id, on_result=decided))
        self.post_message(MutationFinished(report))

    def on_mutant_decided(self, message: MutantDecided) -> None:
        self.results.append(message.result)
        self.query_one(DataTable).add_row(*result_cells(message.result))

    def on_mutation_finished(self, message: MutationFinished) -> None:
        r = self.report = message.report
        if r.score is None:
            score = "no mutant was exercised"
        else:
            score = f"{r.killed} of {r.exercised} exercised mutants killed ({r.score * 100:.0f}%, 95% interval {r.interval})"
        self.query_one("#mutation-summary", Static).update(
            Content(f"Batch {r.base_batch_id[:12]}: {r.base_passed} of {r.base_conversations} passed. Mutation score: {score}.")
        )

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        self.parley.worker_state_changed(event)
