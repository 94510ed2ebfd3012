"""SessionScreen: one stored session in full: its transcript with tool calls, what it was, and
its verdict with each check's outcome."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from parley.tui.app.widgets.transcript_view import ChatLog

CHECK_MARKS = {"pass": "✓ pass", "fail": "✗ fail", "not_applicable": "– n/a", "not_run": "· not run", "error": "! error"}


def verdict_summary(detail: Any) -> str:
    """The verdict in a few lines (or why there is none)."""
    verdict = detail.verdict
    if detail.item_kind == "chat":
        return "Live chat: not evaluated."
    if verdict is None:
        return "Not evaluated (no verdict was stored)."
    lines = [f"Outcome: {verdict.outcome}" + (" (passed)" if verdict.passed else "")]
    lines.append(f"Score: {verdict.score if verdict.score is not None else '-'} of 3")
    if verdict.comment:
        lines.append(f"Comment: {verdict.comment}")
    if verdict.error:
        lines.append(f"Error: {verdict.error}")
    for fault in verdict.user_faults:
        lines.append(f"Simulator fault ({fault.kind}): {fault.reason}")
    if verdict.policy_violations:
        lines.append(f"Policy violations: {len(verdict.policy_violations)}")
    for output in verdict.outputs:
        lines.append(f"Output {output.name}: {output.value if output.found else 'not found'}")
    return "\n".join(lines)


class CheckView(Static):
    """One check: its outcome, what it checked, and why it came out so."""

    def __init__(self, check: Any) -> None:
        self.check = check
        mark = CHECK_MARKS.get(check.outcome, check.outcome)
        text = Content(f"{mark}  ").stylize("bold") + Content(check.name) + Content(f"\n   {check.reason}").stylize("dim")
        if check.policy_violation and check.outcome == "fail":
            text += Content("  (policy violation)").stylize("bold")
        super().__init__(text, classes=f"check -{check.outcome}")


class SessionScreen(Screen[None]):
    """Escape goes back; `e` exports the session as JSON."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("e", "export", "Export JSON"),
    ]

    def __init__(self, detail: Any, *, export: Callable[[str, str], None] | None = None) -> None:
        super().__init__(id="session-screen")
        self.detail = detail
        self._export = export

    def compose(self) -> ComposeResult:
        detail = self.detail
        yield Header()
        yield Static(Content(detail.title), id="detail-title")
        with Horizontal(id="detail-body"):
            log = ChatLog(id="detail-log", user_name="User", bot_name="Bot")
            log.border_title = "Transcript"
            yield log
            with VerticalScroll(id="detail-side"):
                width = max(len(k) for k, _ in detail.facts)
                facts = Static(Content("\n".join(f"{k.ljust(width)}  {v}" for k, v in detail.facts)), id="detail-facts")
                facts.border_title = "Session"
                yield facts
                with Vertical(id="detail-verdict-box") as box:
                    box.border_title = "Verdict"
                    yield Static(Content(verdict_summary(detail)), id="detail-verdict")
                    checks = detail.verdict.checks if detail.verdict is not None else []
                    for check in checks:
                        yield CheckView(check)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#detail-log", ChatLog).show_transcript(self.detail.messages, self.detail.tool_calls)
        self.query_one("#detail-log").focus()

    def action_export(self) -> None:
        if self._export is not None:
            self._export(self.detail.item_kind, self.detail.id)
