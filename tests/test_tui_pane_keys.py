"""Switching panes keeps the keyboard: whichever way a pane is shown (F-key, digit, palette,
mouse), its main widget has the focus, so the pane's keys work right away and the footer offers
them (switching used to leave the focus nowhere: the footer said only `^q Quit`, and `r`, `b`,
`c`, Enter did nothing until Tab)."""

from __future__ import annotations

import pytest
from textual.widgets import Input, Select

from parley.core.store.store import Store
from parley.tui.app.panes.session_detail import SessionScreen
from parley.tui.app.screens.launch_batch import LaunchBatchScreen
from tests.test_store_fixtures import build_scored_batch
from tests.test_tui_support import PROFILES, db_path, make_app, run_from_palette, settle  # noqa: F401  (fixture)

SMALL = (80, 24)
FOCUSED = {  # the pane's main widget
    "chat": "chat-input",
    "profiles": "profile-tree",
    "batches": "batches-table",
    "sessions": "sessions-table",
}
PANE_KEYS = {"chat": "ctrl+n", "profiles": "r", "batches": "b", "sessions": "ctrl+r"}
"""One key of each pane's own, which the footer must offer once the pane is shown."""


@pytest.fixture
def stored(db_path):
    """A database with a scored batch in it, so every pane has something to act on."""
    with Store.open(db_path) as store:
        return build_scored_batch(store)


def footer_keys(app) -> set[str]:
    return {key for key, active in app.screen.active_bindings.items() if active.binding.show}


async def shown(pilot, pane: str) -> None:
    await settle(pilot)
    app = pilot.app
    assert app.query_one("#panes").active == f"{pane}-pane"
    assert app.focused is not None and app.focused.id == FOCUSED[pane], f"{pane}: the focus is on {app.focused!r}"
    assert PANE_KEYS[pane] in footer_keys(app), f"{pane}: the footer offers {sorted(footer_keys(app))}"


async def press_the_panes_key(pilot, pane: str, stored_batch) -> None:
    """Press one of the pane's own keys right after it was shown, and see it act."""
    app = pilot.app
    if pane == "chat":
        await pilot.press("h", "i")
        assert app.query_one("#chat-input", Input).value.endswith("hi")
        app.query_one("#chat-input", Input).value = ""
    elif pane == "profiles":
        await pilot.press("r")
        await settle(pilot)
        assert isinstance(app.screen, LaunchBatchScreen)
        await pilot.press("escape")
        await settle(pilot)
    elif pane == "batches":
        sort = app.query_one("#batch-sort", Select).value
        await pilot.press("b")
        assert app.query_one("#batches").base_batch == stored_batch.id
        await pilot.press("s")
        assert app.query_one("#batch-sort", Select).value != sort
    else:
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, SessionScreen)
        await pilot.press("escape")
        await settle(pilot)


@pytest.mark.parametrize("route", ["f-keys", "digits"])
async def test_each_pane_takes_the_keyboard_when_shown_by_key(stored, route):
    app = make_app(profile_dirs=[PROFILES])
    async with app.run_test(size=SMALL) as pilot:
        await shown(pilot, "chat")
        # the sequence, then every pane again
        for pane in ("profiles", "batches", "sessions", "profiles", "batches", "chat", "sessions", "batches"):
            number = list(FOCUSED).index(pane) + 1
            if route == "digits" and app.focused is not None and isinstance(app.focused, Input):
                await pilot.press(f"f{number}")  # a digit is text in the chat's input
            else:
                await pilot.press(f"f{number}" if route == "f-keys" else str(number))
            await shown(pilot, pane)
            await press_the_panes_key(pilot, pane, stored)


async def test_each_pane_takes_the_keyboard_when_shown_from_the_palette_or_by_mouse(stored):
    app = make_app(profile_dirs=[PROFILES])
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        for pane in ("batches", "sessions", "profiles", "chat"):
            await run_from_palette(pilot, f"show {pane}", f"Show {pane}")
            await shown(pilot, pane)
            await press_the_panes_key(pilot, pane, stored)
        for pane in ("sessions", "batches", "profiles", "chat", "batches"):
            await pilot.click(f"#--content-tab-{pane}-pane")
            await shown(pilot, pane)
            await press_the_panes_key(pilot, pane, stored)


async def test_an_empty_sessions_pane_keeps_the_keyboard_for_its_keys(db_path):
    app = make_app(initial_pane="batches")
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press("f4")
        await settle(pilot)
        # nothing stored: the table gives way to the message, which takes the keyboard
        assert app.focused is not None and app.focused.id == "sessions-empty"
        assert "ctrl+r" in footer_keys(app)
        await pilot.press("slash")  # the pane's search, as its footer says
        assert app.focused is app.query_one("#sessions-text")
