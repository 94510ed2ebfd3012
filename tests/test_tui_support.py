"""Helpers shared by the TUI tests (this module holds no tests): a pinned app on a private
database, settling workers, typing into the chat, frozen cursors for snapshots."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.command import CommandInput, CommandList, CommandPalette
from textual.pilot import Pilot
from textual.widgets import Input, TextArea
from textual.worker import WorkerCancelled, WorkerFailed

from parley.tui.app.app import ParleyApp
from tests import waiting

TODAY = dt.date(2026, 11, 21)
SIZE = (120, 36)
REPO = Path(__file__).resolve().parent.parent
PROFILES = REPO / "profiles"


@pytest.fixture
def db_path(tmp_path, monkeypatch) -> Path:
    """A private database for the test, through PARLEY_DB as a person would set it."""
    path = tmp_path / "sessions" / "parley.db"
    monkeypatch.setenv("PARLEY_DB", str(path))
    for var in ("OPENAI_API_KEY", "OPENROUTER_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    return path


def make_app(**kw: Any) -> ParleyApp:
    kw.setdefault("today", TODAY)
    kw.setdefault("profile_dirs", [])
    return ParleyApp(**kw)


async def settle(pilot: Pilot, rounds: int = 10) -> None:
    """Let workers finish and the messages they posted be handled (they may start more)."""
    for _ in range(rounds):
        try:
            await pilot.app.workers.wait_for_complete()
        except (WorkerCancelled, WorkerFailed):
            pass  # superseded or failed workers are the app's business (and some tests')
        await pilot.pause()
        if not any(worker.is_running for worker in pilot.app.workers):
            await pilot.pause()  # the last worker's messages
            if not any(worker.is_running for worker in pilot.app.workers):
                return


async def until(pilot: Pilot, done: Callable[[], bool], what: str) -> None:
    """Let the app run until `done()` holds: the test waits for that event, not for a time."""
    await waiting.until(done, what, step=lambda: pilot.pause(0.02))


async def run_from_palette(pilot: Pilot, words: str, command: str) -> None:
    """Open the command palette, type `words`, wait until it highlights `command` (its search
    runs in a worker, as slowly as the machine makes it) and press Enter, as a person would."""
    await pilot.press("ctrl+p")
    await until(pilot, lambda: isinstance(pilot.app.screen, CommandPalette), "the command palette")
    palette = pilot.app.screen
    await pilot.press(*words)

    def highlighted() -> str | None:
        options = palette.query_one(CommandList)
        if palette.query_one(CommandInput).value != words or options.highlighted is None:
            return None
        return options.get_option_at_index(options.highlighted).hit.text  # type: ignore[attr-defined]

    await until(pilot, lambda: highlighted() == command, f"the palette to highlight {command!r} for {words!r}")
    await pilot.press("enter")
    await settle(pilot)


async def say(pilot: Pilot, text: str) -> None:
    """Type a line into the chat input and press Enter, as a person would."""
    field = pilot.app.query_one("#chat-input", Input)
    field.focus()
    field.value = text
    await pilot.press("enter")
    await settle(pilot)


def freeze_cursors(app: ParleyApp) -> None:
    """No blinking cursors: a snapshot must not depend on when it was taken."""
    for screen in app.screen_stack:
        for widget in screen.query("Input, TextArea"):
            widget.cursor_blink = False  # type: ignore[attr-defined]
    for widget in app.query(TextArea):
        widget.cursor_blink = False


async def type_slowly(pilot, text: str, *, pause: float = 0.4) -> None:
    """Type `text` a key at a time, pausing longer than the search box's debounce after each key,
    as a person does: every pause lets the pane reload its rows between two keys."""
    for ch in text:
        await pilot.press("space" if ch == " " else ch)
        await pilot.pause(pause)
        await settle(pilot)
