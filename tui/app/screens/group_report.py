"""GroupScreen: a group of batches side by side in the app (several bots run on the same specs
and seeds), as `parley compare --group` reads it: each bot's pass rate with its interval, every
two bots with the paired test, each spec's outcomes in a row (parley.core.reports.group_comparison,
computed in a worker thread before the screen opens)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Markdown

__all__ = ["GroupScreen"]


class GroupScreen(Screen[None]):
    """The group's markdown report, scrollable; Escape goes back."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back")]

    def __init__(self, group_id: str, markdown: str) -> None:
        super().__init__(id="group-screen")
        self.group_id = group_id
        self.markdown = markdown

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll(id="group-body"):
            yield Markdown(self.markdown, id="group-report")
        yield Footer()

    def on_mount(self) -> None:
        self.title = f"Side by side: group {self.group_id[:12]}"
