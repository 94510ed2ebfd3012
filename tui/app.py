"""The parley terminal app: one tab per pane, each pane its own module as they land."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Header, Static, TabbedContent, TabPane

PANES: dict[str, tuple[str, str]] = {
    "chat": ("Chat", "Live chat with the bot under test arrives with the app work."),
    "profiles": ("Profiles", "Profile browsing and batch launching arrive with the profiles work."),
    "batches": ("Batches", "Batch progress and result tables arrive with the batches work."),
    "sessions": ("Sessions", "Past chats and conversations arrive with the batches work."),
}


class ParleyApp(App[None]):
    """Chat, profiles, batches and sessions in one window."""

    TITLE = "parley"
    SUB_TITLE = "test customer-service bots with simulated customers"
    CSS_PATH = "app.tcss"
    BINDINGS = [
        Binding("q", "quit", "Quit"),
        *(Binding(str(i), f"show_pane('{pane}')", title) for i, (pane, (title, _)) in enumerate(PANES.items(), 1)),
    ]

    def __init__(self, *, initial_pane: str = "chat", customer: str = "C-100", bot_model: str = "offline") -> None:
        super().__init__()
        self.initial_pane = initial_pane
        self.customer = customer
        self.bot_model = bot_model

    def compose(self) -> ComposeResult:
        yield Header()
        with TabbedContent(initial=f"{self.initial_pane}-pane", id="panes"):
            for pane, (title, blurb) in PANES.items():
                with TabPane(title, id=f"{pane}-pane"):
                    yield Static(blurb, classes="pane-placeholder")
        yield Footer()

    def action_show_pane(self, pane: str) -> None:
        self.query_one("#panes", TabbedContent).active = f"{pane}-pane"
