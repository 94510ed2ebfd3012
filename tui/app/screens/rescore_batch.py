"""RescoreScreen: the form that judges a stored batch again (`R` on a batch in the Batches pane),
as `parley rescore` does: a judge (the batch's by default), files to re-read the `expect:`
blocks from (none: the stored ones), Sensei rule files (none: the batch's own, if it had any),
and whether to cache the judge's replies. Re-score checks
the inputs with parley.core.engine.rescore.prepare_rescore in a worker; a problem shows in the
form, and the form closes with the prepared batch, which the Batches pane runs like any other."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Horizontal, Vertical
from textual.content import Content
from textual.widgets import Button, Checkbox, Input, Label, Static

from parley.tui.app.messages import BatchLaunchRefused, BatchPrepared
from parley.tui.app.screens.launch_batch import PreparingForm, parse_sources, problem_line

if TYPE_CHECKING:
    from parley.core.engine import PreparedBatch


class RescoreScreen(PreparingForm):
    """Dismissed with a parley.core.engine.batch_plan.PreparedBatch, or None when closed."""

    BINDINGS = [
        Binding("escape", "close", "Close"),
        Binding("ctrl+l", "rescore", "Re-score"),
    ]

    def __init__(self, batch_id: str, judge: str) -> None:
        super().__init__(id="rescore-screen")
        self.batch_id = batch_id
        self.judge = judge
        self.preparing = False

    def compose(self) -> ComposeResult:
        with Vertical(id="rescore-form") as form:
            form.border_title = f"Re-score batch {self.batch_id[:12]}"
            yield Static(
                Content("Its stored conversations are judged again into a new batch: no bot or customer is called."),
                id="rescore-note",
            )
            with Grid(id="rescore-fields"):
                yield Label("Judge model")
                yield Input(self.judge, placeholder="offline, openai/gpt-4o-mini, openrouter/…", id="rescore-judge")
                yield Label("Criteria from")
                yield Input("", placeholder="(the stored expectations) or files/folders, e.g. profiles/", id="rescore-criteria")
                yield Label("Rules")
                yield Input("", placeholder="(the batch's own, if any) or Sensei rule files, e.g. rules/", id="rescore-rules")
                yield Label("Cache")
                yield Checkbox("keep the judge's replies, replay identical requests", id="rescore-cache")
            yield Static(Content(""), id="rescore-error")
            with Horizontal(id="rescore-buttons"):
                yield Button("Re-score", variant="primary", id="rescore-go")
                yield Button("Close", id="rescore-close")

    def on_mount(self) -> None:
        self.query_one("#rescore-error").display = False
        self.query_one("#rescore-judge", Input).focus()

    def show_error(self, text: str) -> None:
        """Why the re-score did not start, in the form."""
        error = self.query_one("#rescore-error", Static)
        error.update(Content(text))
        error.display = bool(text)

    @on(Button.Pressed, "#rescore-go")
    @on(Input.Submitted)
    def _go_pressed(self) -> None:
        self.action_rescore()

    @on(Button.Pressed, "#rescore-close")
    def _close_pressed(self) -> None:
        self.action_close()

    def action_rescore(self) -> None:
        if self.preparing:
            return
        if self.parley.batch_running():
            self.show_error("A batch is already running: stop it in the Batches pane (x) or wait for it.")
            return
        judge = self.query_one("#rescore-judge", Input).value.strip() or self.judge
        criteria = parse_sources(self.query_one("#rescore-criteria", Input).value)
        rules = self.query_one("#rescore-rules", Input).value.strip() or None
        cache = self.query_one("#rescore-cache", Checkbox).value
        self.preparing = True
        self.show_error("")
        button = self.query_one("#rescore-go", Button)
        button.disabled, button.label = True, "Checking…"
        self._prepare(judge, criteria, rules, cache)

    @work(thread=True, exclusive=True, exit_on_error=False, group="rescore-prepare", description="checking the re-score")
    def _prepare(self, judge: str, criteria: list[str], rules: str | None, cache: bool) -> None:
        # In a thread, on a loop of its own, as the launch form does: reading the batch and
        # the files never holds up the screen.
        from parley.core.engine import InvalidInputs, prepare_rescore
        from parley.core.errors import ParleyError
        from parley.core.models import aclose_clients

        async def prepare() -> PreparedBatch:
            try:
                return await prepare_rescore(
                    self.parley.store(), self.batch_id, judge=judge, criteria_from=criteria, cache=cache, rules=rules
                )
            finally:
                await aclose_clients()

        try:
            prepared = asyncio.run(prepare())
        except InvalidInputs as exc:
            self.post_message(BatchLaunchRefused(str(exc), [problem_line(e) for e in exc.errors]))
            return
        except ParleyError as exc:  # an unknown judge, its missing key, files that make none of the specs, no rules there
            self.post_message(BatchLaunchRefused(str(exc)))
            return
        self.post_message(BatchPrepared(prepared))

    def _ready_again(self) -> None:
        self.preparing = False
        button = self.query_one("#rescore-go", Button)
        button.disabled, button.label = False, "Re-score"

    def action_close(self) -> None:
        self.dismiss(None)
