"""SessionScreen: one stored session in full: its transcript with tool calls, what it was, and
its verdict with each check's outcome."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Header, Static

from parley.core.users import only_stated_note_of
from parley.tui.app.widgets.transcript_view import ChatLog, ToolCallView
from parley.tui.terminal_text import visible

if TYPE_CHECKING:
    from parley.core.records import CheckResult
    from parley.tui.app.panes.session_listing import SessionDetail

CHECK_MARKS = {"pass": "✓ pass", "fail": "✗ fail", "not_applicable": "– n/a", "not_run": "· not run", "error": "! error"}


def verdict_summary(detail: SessionDetail) -> str:
    """The verdict in a few lines (or why there is none)."""
    verdict = detail.verdict
    if detail.item_kind == "chat":
        return "Live chat: not evaluated."
    if verdict is None:
        return "Not evaluated (no verdict was stored)."
    from parley.core.evaluation import score_calibration  # the engine loads with a verdict, not with the app

    lines = [f"Outcome: {verdict.outcome}"]
    calibrated = score_calibration(verdict.checks)
    lines.append(f"Score: {verdict.score if verdict.score is not None else '-'} of 3" + (f" [{calibrated}]" if calibrated else ""))
    if verdict.comment:
        lines.append(f"Comment: {verdict.comment}")
    if verdict.error:
        lines.append(f"Error: {verdict.error}")
    for fault in verdict.user_faults:
        lines.append(f"{fault.label.capitalize()} ({fault.kind}): {fault.text}")
    if verdict.policy_violations:
        lines.append(f"Policy violations: {len(verdict.policy_violations)}")
    for output in verdict.outputs:
        lines.append(f"Output {output.name}: {output.value if output.found else 'not found'}")
    conversation = getattr(detail.record, "conversation", None)
    note = only_stated_note_of(conversation.metadata if conversation is not None else None)
    if note is not None:
        lines.append(f"Note: {note}")
    return "\n".join(lines)


class CheckView(Static, can_focus=True):
    """One check: its outcome, what it checked, and why it came out so. Enter on a failed one
    goes to the turn it refers to."""

    BINDINGS = [Binding("enter", "go_to_turn", "Go to its turn")]

    class TurnWanted(Message):
        def __init__(self, check: CheckResult) -> None:
            super().__init__()
            self.check = check

    def action_go_to_turn(self) -> None:
        self.post_message(self.TurnWanted(self.check))

    def __init__(self, check: CheckResult) -> None:
        from parley.core.evaluation import marked_name

        self.check = check
        mark = CHECK_MARKS.get(check.outcome, check.outcome)
        text = (
            Content(f"{mark}  ").stylize("bold")
            + Content(visible(marked_name(check)))
            + Content(visible(f"\n   {check.reason}")).stylize("dim")
        )
        if check.policy_violation and check.outcome == "fail":
            text += Content("  (policy violation)").stylize("bold")
        super().__init__(text, classes=f"check -{check.outcome}")


class SessionScreen(Screen[None]):
    """Escape goes back; `e` exports the session as JSON."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("e", "export", "Export JSON"),
        Binding("c", "focus_checks", "Checks"),
        Binding("L", "label", "Label"),
    ]

    def __init__(self, detail: SessionDetail, *, export: Callable[[str, str], None] | None = None) -> None:
        super().__init__(id="session-screen")
        self.detail = detail
        self._export = export

    def compose(self) -> ComposeResult:
        detail = self.detail
        yield Header()
        yield Static(Content(visible(detail.title)), id="detail-title")
        with Horizontal(id="detail-body"):
            log = ChatLog(id="detail-log", user_name="User", bot_name="Bot")
            log.border_title = "Transcript"
            yield log
            with VerticalScroll(id="detail-side"):
                width = max(len(k) for k, _ in detail.facts)
                facts = Static(Content(visible("\n".join(f"{k.ljust(width)}  {v}" for k, v in detail.facts))), id="detail-facts")
                facts.border_title = "Session"
                yield facts
                with Vertical(id="detail-verdict-box") as box:
                    box.border_title = "Verdict"
                    yield Static(Content(visible(verdict_summary(detail))), id="detail-verdict")
                    checks = detail.verdict.checks if detail.verdict is not None else []
                    for check in checks:
                        yield CheckView(check)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#detail-log", ChatLog).show_transcript(self.detail.messages, self.detail.tool_calls)
        self.query_one("#detail-log").focus()

    def action_focus_checks(self) -> None:
        """To the verdict's checks, the first failed one first (Enter there goes to its turn)."""
        checks = list(self.query(CheckView))
        if not checks:
            self.notify("No checks: this session was not evaluated.")
            return
        failed = [c for c in checks if c.check.outcome == "fail"]
        (failed or checks)[0].focus()

    def on_check_view_turn_wanted(self, message: CheckView.TurnWanted) -> None:
        self.go_to_turn(message.check)

    def go_to_turn(self, check: CheckResult) -> Widget | None:
        """Scroll the transcript to the turn `check` refers to and mark it; None (and a note)
        when no single turn is to blame."""
        log = self.query_one("#detail-log", ChatLog)
        from parley.core.reports import check_target

        target = check_target(check, self.detail.messages, self.detail.tool_calls)
        widget: Widget | None = None
        if target is not None and target[0] == "call":
            widget = next((v for v in log.tool_calls if v.call_id == target[1]), None)
            if isinstance(widget, ToolCallView):
                widget.collapsed = False
        elif target is not None:
            role = "user" if target[0] == "user" else "bot"
            said = [m for m in log.messages if m.role == role]
            widget = said[target[1] - 1] if 0 < target[1] <= len(said) else None
        for marked in log.query(".-target"):
            marked.remove_class("-target")
        if widget is None:
            self.notify(f"{check.name}: no single turn to show ({check.reason})", title="Check", timeout=6)
            return None
        widget.add_class("-target")
        log.scroll_to_widget(widget, animate=False, top=True)
        return widget

    def action_label(self) -> None:
        """Label this conversation by hand."""
        if self.detail.item_kind == "chat":
            self.notify("A live chat has no criteria to label.", severity="warning")
            return
        from parley.tui.app.app import ParleyApp

        if isinstance(self.app, ParleyApp):
            self.app.label_conversations([self.detail.id], self.detail.id)

    def action_export(self) -> None:
        if self._export is not None:
            self._export(self.detail.item_kind, self.detail.id)
