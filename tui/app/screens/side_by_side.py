"""SideBySideScreen: one changed conversation of a comparison, the base batch's on the left and
the new batch's on the right: each side's outcome, its transcript with tool calls, and the
checks that failed on that side."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Header, Static
from textual.worker import Worker

from parley.tui.app.panes.session_detail import CheckView
from parley.tui.app.widgets.transcript_view import ChatLog
from parley.tui.terminal_text import visible

if TYPE_CHECKING:
    from parley.core.records import StoredConversation
    from parley.core.reports import PairChange, SideOfPair
    from parley.tui.app.app import ParleyApp

SIDES = ("base", "new")


@dataclass
class PairLoaded(Message):
    """Both stored conversations of a change."""

    base: StoredConversation
    new: StoredConversation


def side_title(side: str, part: SideOfPair, calibration: str | None = None) -> str:
    """One side's outcome, score (with its judge's `calibration` on the rubric once the
    conversation is read: "κw 0.80", "uncalibrated"...), stop reason and first divergence."""
    score = part.score if part.score is not None else "-"
    if calibration:
        score = f"{score} [{calibration}]"
    divergence = f" · diverged at turn {part.first_divergence}" if part.first_divergence is not None else ""
    return f"{side.capitalize()}: {part.outcome} · score {score} · {part.stop_reason}{divergence}"


class SideBySideScreen(Screen[None]):
    """Escape goes back to the comparison."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back")]
    DEFAULT_CSS = """
    #side-by-side-title { height: auto; padding: 0 1; text-style: bold; }
    #side-by-side-body { height: 1fr; }
    SideBySideScreen .side { width: 1fr; height: 1fr; }
    SideBySideScreen .side-title { height: auto; padding: 0 1; }
    SideBySideScreen .side-log { height: 2fr; padding: 0 1; }
    SideBySideScreen .side-checks { height: 1fr; border: round $error 60%; padding: 0 1; }
    SideBySideScreen .check { height: auto; }
    """

    def __init__(self, change: PairChange) -> None:
        super().__init__(id="side-by-side-screen")
        self.change = change

    @property
    def parley(self) -> ParleyApp:
        return cast("ParleyApp", self.app)

    def compose(self) -> ComposeResult:
        change = self.change
        yield Header()
        yield Static(Content(visible(f"{change.spec_id} trial {change.trial}: {change.kind.replace('_', ' ')}")), id="side-by-side-title")
        with Horizontal(id="side-by-side-body"):
            for side in SIDES:
                part = getattr(change, side)
                with Vertical(id=f"side-{side}", classes="side"):
                    yield Static(Content(visible(side_title(side, part))), id=f"side-{side}-title", classes="side-title")
                    log = ChatLog(id=f"side-{side}-log", user_name="Customer", bot_name="Bot", classes="side-log")
                    log.border_title = f"{side.capitalize()} transcript"
                    yield log
                    checks = VerticalScroll(id=f"side-{side}-checks", classes="side-checks")
                    checks.border_title = "Failing checks"
                    yield checks
        yield Footer()

    def on_mount(self) -> None:
        self._load()

    @work(thread=True, exclusive=True, exit_on_error=False, group="side-by-side", description="opening both conversations")
    def _load(self) -> None:
        store = self.parley.store()
        self.post_message(
            PairLoaded(store.load_conversation(self.change.base.conversation_id), store.load_conversation(self.change.new.conversation_id))
        )

    def on_pair_loaded(self, message: PairLoaded) -> None:
        from parley.core.evaluation import score_calibration  # the engine loads with a verdict, not with the app

        for side, stored in (("base", message.base), ("new", message.new)):
            conv = stored.conversation
            calibration = score_calibration(stored.verdict.checks) if stored.verdict is not None else None
            if calibration:  # how far the judge that gave the score was measured to agree with people
                title = side_title(side, getattr(self.change, side), calibration)
                self.query_one(f"#side-{side}-title", Static).update(Content(visible(title)))
            self.query_one(f"#side-{side}-log", ChatLog).show_transcript(conv.messages, conv.tool_calls)
            failing = [c for c in (stored.verdict.checks if stored.verdict is not None else []) if c.outcome in ("fail", "error")]
            box = self.query_one(f"#side-{side}-checks", VerticalScroll)
            if failing:
                box.mount_all(CheckView(check) for check in failing)
            else:
                box.mount(Static(Content("None: every check that applied held." if stored.verdict is not None else "Not evaluated.")))
        self.query_one("#side-new-log").focus()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        self.parley.worker_state_changed(event)
