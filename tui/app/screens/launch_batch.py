"""LaunchBatchScreen: the form that starts a batch (sources, a model per role, concurrency,
trials, seed). Launch checks the inputs with parley.core.engine.batch_runner.prepare_batch in a worker; a
problem (a broken file, a missing API key, an unknown model) shows in the form, and the form
closes with the prepared batch only when everything checked out.

Several bots, separated by commas in the Bot field (`offline, B=python:mybot:reply`), run the
same specs and seeds against each: one batch per bot, linked as a group as `parley run --bot A
--bot B` links them (parley.tui.cli.run_group), each checked before any runs; the Batches pane
runs them one after the other, and `g` there shows them side by side."""

from __future__ import annotations

import asyncio
import shlex
import uuid
from typing import TYPE_CHECKING, cast

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static
from textual.worker import Worker

from parley.core.option_declarations import option
from parley.tui.app.messages import BatchLaunchRefused, BatchPrepared

if TYPE_CHECKING:
    from parley.core.engine import PreparedBatch
    from parley.core.errors import ProfileError
    from parley.core.records import BatchOptions
    from parley.tui.app.app import ParleyApp

MAX_PROBLEMS_SHOWN = 8


def parse_sources(text: str) -> list[str]:
    """Sources as typed: separated by spaces or commas; quotes keep a path with spaces whole."""
    try:
        parts = shlex.split(text.replace(",", " "))
    except ValueError:
        parts = text.replace(",", " ").split()
    return [p for p in parts if p]


class PreparingForm(ModalScreen["PreparedBatch | None"]):
    """A form that prepares a batch (the launch and re-score forms): a refusal or an unexpected
    failure is said in the form, which is ready again; a prepared batch closes it."""

    @property
    def parley(self) -> ParleyApp:
        return cast("ParleyApp", self.app)

    def show_error(self, text: str) -> None:
        raise NotImplementedError

    def _ready_again(self) -> None:
        raise NotImplementedError

    def on_batch_launch_refused(self, message: BatchLaunchRefused) -> None:
        self._ready_again()
        lines = [message.reason, *message.problems[:MAX_PROBLEMS_SHOWN]]
        if len(message.problems) > MAX_PROBLEMS_SHOWN:
            lines.append(f"… and {len(message.problems) - MAX_PROBLEMS_SHOWN} more")
        self.show_error("\n".join(lines))

    def on_batch_prepared(self, message: BatchPrepared) -> None:
        self.queued = list(message.queued)
        self.dismiss(message.prepared)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        from textual.worker import WorkerState

        if event.state == WorkerState.ERROR:  # an unexpected failure: still said in the form
            self._ready_again()
            error = event.worker.error
            self.show_error(f"{type(error).__name__}: {error}")
        self.parley.worker_state_changed(event)


class LaunchBatchScreen(PreparingForm):
    """Dismissed with the PreparedBatch it checked, or None when closed."""

    BINDINGS = [
        Binding("escape", "close", "Close"),
        Binding("ctrl+l", "launch", "Launch"),
    ]

    def __init__(self, sources: str = "", *, seed: int = 0) -> None:
        super().__init__(id="launch-screen")
        self.sources = sources
        self.seed = seed
        self.launching = False
        self.queued: list[PreparedBatch] = []
        """Several bots: the group's other batches, to run after the one the form closes with."""

    def compose(self) -> ComposeResult:
        with Vertical(id="launch-form") as form:
            form.border_title = "Run a batch"
            with Grid(id="launch-fields"):
                yield Label("Sources")
                yield Input(self.sources, placeholder="files or folders, e.g. profiles/", id="launch-sources")
                for role in ("bot", "user", "judge"):
                    yield Label(f"{role.capitalize()} model")
                    hint = (
                        "offline, openai/gpt-4o-mini…; several bots: A=offline, B=openai/…"
                        if role == "bot"
                        else "offline, openai/gpt-4o-mini, openrouter/…"
                    )
                    yield Input("offline", placeholder=hint, id=f"launch-{role}")
                for name, value in (
                    ("concurrency", option("concurrency").default),
                    ("trials", option("trials").default),
                    ("seed", self.seed),
                ):
                    yield Label(name.capitalize())
                    yield Input(str(value), type="integer", id=f"launch-{name}")
            yield Static(Content(""), id="launch-error")
            with Horizontal(id="launch-buttons"):
                yield Button("Launch", variant="primary", id="launch-go")
                yield Button("Close", id="launch-close")

    def on_mount(self) -> None:
        self.query_one("#launch-error").display = False
        self.query_one("#launch-sources", Input).focus()

    def _value(self, name: str) -> str:
        return self.query_one(f"#launch-{name}", Input).value.strip()

    def show_error(self, text: str) -> None:
        """The reason the batch did not start, in the form."""
        from parley.core.redaction import redact

        error = self.query_one("#launch-error", Static)
        error.update(Content(redact(text)))  # an endpoint's refusal may quote the key it was sent
        error.display = bool(text)

    @property
    def error_text(self) -> str:
        return str(self.query_one("#launch-error", Static).render()) if self.query_one("#launch-error").display else ""

    def options(self) -> BatchOptions:
        """The form as BatchOptions; ValueError says which field is wrong."""
        from pydantic import ValidationError

        from parley.core.records import BatchOptions

        values: dict[str, object] = {}
        for name in ("concurrency", "trials", "seed"):
            declared = option(name)
            try:
                number = int(self._value(name))
            except ValueError:
                raise ValueError(f"{name.capitalize()} must be a whole number.") from None
            least, most = declared.minimum, declared.maximum
            if least is not None and number < least:
                raise ValueError(f"{name.capitalize()} must be at least {least:g}.")
            if most is not None and number > most:
                raise ValueError(f"{name.capitalize()} must be at most {most:g}.")
            values[name] = number
        for role in ("bot", "user", "judge"):
            values[role] = self._value(role) or option(role).default
        values["bot"] = self.bots()[0][1]
        values["personality_dirs"] = list(getattr(self.app, "personality_dirs", []))
        try:
            return BatchOptions.from_values(values)
        except ValidationError as exc:
            raise ValueError("; ".join(str(e["msg"]) for e in exc.errors())) from None

    def bots(self) -> list[tuple[str, str]]:
        """(name, bot) of each bot the Bot field names, separated by commas (`NAME=BOT` names one;
        else it is named by what it is, as `parley run --bot` names it)."""
        from parley.tui.cli.bot_lineup import name_bots

        written = [b.strip() for b in (self._value("bot") or option("bot").default).split(",") if b.strip()]
        try:
            names, targets, _ = name_bots(tuple(written or [option("bot").default]))
        except ValueError as exc:
            raise ValueError(f"Bot: {exc}") from None
        return list(zip(names, targets, strict=True))

    # ---- launching --------------------------------------------------------------------------------

    @on(Button.Pressed, "#launch-go")
    @on(Input.Submitted)
    def _launch_pressed(self) -> None:
        self.action_launch()

    @on(Button.Pressed, "#launch-close")
    def _close_pressed(self) -> None:
        self.action_close()

    def action_launch(self) -> None:
        if self.launching:
            return
        sources = parse_sources(self._value("sources"))
        if not sources:
            self.show_error("Give at least one profile file or folder to run.")
            return
        try:
            options = self.options()
            bots = self.bots()
        except ValueError as exc:
            self.show_error(str(exc))
            return
        if self.parley.batch_running():
            self.show_error("A batch is already running: cancel it in the Batches pane (c) or wait for it.")
            return
        self.launching = True
        self.show_error("")
        self.query_one("#launch-go", Button).disabled = True
        self.query_one("#launch-go", Button).label = "Checking…"
        self._prepare(sources, options, bots)

    @work(thread=True, exclusive=True, exit_on_error=False, group="launch-prepare", description="checking the batch")
    def _prepare(self, sources: list[str], options: BatchOptions, bots: list[tuple[str, str]]) -> None:
        # In a thread, on a loop of its own: the engine's first import and reading the files
        # (or a model generating a variable's values) never hold up the screen.
        from parley.core.engine import InvalidInputs, prepare_batch
        from parley.core.errors import ParleyError
        from parley.core.models import aclose_clients

        async def prepare() -> list[PreparedBatch]:
            store = self.parley.store()
            group = uuid.uuid4().hex if len(bots) > 1 else None
            planned: list[PreparedBatch] = []
            try:
                for name, bot in bots:
                    mine = options.model_copy(update={"models": options.models.model_copy(update={"bot": bot})})
                    try:
                        prepared = await prepare_batch(store, sources, mine)
                    except ParleyError:
                        for earlier in planned:  # nothing of the group runs when one of its bots cannot
                            store.update_batch(earlier.id, status="failed", error=f"its group could not start: the bot {name} could not")
                        raise
                    if group is not None:
                        prepared.batch = store.update_batch(prepared.id, group_id=group, group_role=name)
                    planned.append(prepared)
                return planned
            finally:
                await aclose_clients()

        try:
            first, *queued = asyncio.run(prepare())
        except InvalidInputs as exc:
            problems = [problem_line(e) for e in exc.errors]
            self.post_message(BatchLaunchRefused(str(exc), problems))
            return
        except ParleyError as exc:  # ConfigError (missing key, unknown model), no conversations
            self.post_message(BatchLaunchRefused(str(exc)))
            return
        self.post_message(BatchPrepared(first, queued))

    def _ready_again(self) -> None:
        self.launching = False
        button = self.query_one("#launch-go", Button)
        button.disabled = False
        button.label = "Launch"

    def action_close(self) -> None:
        self.dismiss(None)


def problem_line(error: ProfileError) -> str:
    where = getattr(error, "file", None) or ""
    line = getattr(error, "line", None)
    if line is not None:
        where += f":{line}"
    field = getattr(error, "field_path", None)
    reason = getattr(error, "reason", str(error))
    return f"{where}  {field + ': ' if field else ''}{reason}".strip()
