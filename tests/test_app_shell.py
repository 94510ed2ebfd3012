"""The app opens offline, with no key and no set-up, on the pane it was asked for."""

from __future__ import annotations

from textual.widgets import TabbedContent

from tui.app import ParleyApp


async def test_app_opens_on_chat_and_switches_panes_by_number(monkeypatch):
    for var in ("OPENAI_API_KEY", "OPENROUTER_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    app = ParleyApp()
    async with app.run_test(size=(100, 30)) as pilot:
        tabs = app.query_one("#panes", TabbedContent)
        assert tabs.active == "chat-pane"
        await pilot.press("3")
        assert tabs.active == "batches-pane"
        await pilot.press("4")
        assert tabs.active == "sessions-pane"


async def test_chat_command_opens_the_requested_pane():
    app = ParleyApp(initial_pane="profiles")
    async with app.run_test(size=(100, 30)):
        assert app.query_one("#panes", TabbedContent).active == "profiles-pane"
