"""The app opens offline, with no key and no set-up, on the pane it was asked for."""

from __future__ import annotations

from textual.widgets import Input, TabbedContent

from parley.tui.app.app import ParleyApp
from tests.test_tui_support import until


async def test_app_opens_on_chat_and_switches_panes_by_key(monkeypatch, tmp_path):
    for var in ("OPENAI_API_KEY", "OPENROUTER_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PARLEY_DB", str(tmp_path / "parley.db"))
    app = ParleyApp()
    async with app.run_test(size=(100, 30)) as pilot:
        tabs = app.query_one("#panes", TabbedContent)
        assert tabs.active == "chat-pane"
        chat_input = app.query_one("#chat-input", Input)
        await until(pilot, lambda: app.focused is chat_input, "the chat's input to take the keyboard")
        await pilot.press("3")  # typing in the chat: a digit is text, not a pane switch
        assert tabs.active == "chat-pane" and chat_input.value == "3"
        await pilot.press("f3")  # function keys switch panes from anywhere
        assert tabs.active == "batches-pane"
        await until(pilot, lambda: not isinstance(app.focused, Input), "the Batches pane to take the keyboard")
        await pilot.press("4")  # and digits do when no text field has the focus
        assert tabs.active == "sessions-pane"
        await pilot.press("f1")
        assert tabs.active == "chat-pane"


async def test_chat_command_opens_the_requested_pane(monkeypatch, tmp_path):
    monkeypatch.setenv("PARLEY_DB", str(tmp_path / "parley.db"))
    app = ParleyApp(initial_pane="profiles")
    async with app.run_test(size=(100, 30)):
        assert app.query_one("#panes", TabbedContent).active == "profiles-pane"
