"""A bot's reply holding escape sequences, shown by the app in a real terminal (a pseudo-terminal):
in the Chat pane and in the session view its control characters are spelled out (`\\x1b]0;...`),
as the command line shows them, and none reaches the terminal raw. On main the reply changed the
window's title, cleared the screen and drew red text over the app."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rich.console import Console
from rich.segment import ControlType, Segment
from textual.strip import Strip

from parley.tui.app.inert_text import keep_drawn_text_inert

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="a POSIX pseudo-terminal")

ROOT = Path(__file__).resolve().parent.parent
PARLEY = str(Path(sys.executable).parent / "parley")
RAW = [b"\x1b]0;PWNED", b"\x1b[2J", "\u009b".encode(), "\u202e".encode()]


def read_for(master: int, seconds: float, until: bytes | None = None) -> bytes:
    out = b""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            out += os.read(master, 65536)
        except BlockingIOError:
            time.sleep(0.05)
            continue
        except OSError:
            break
        if until is not None and until in out:
            break
    return out


def test_a_reply_s_escape_sequences_are_spelled_out_in_the_chat_pane_and_the_session_view(tmp_path):
    import pty

    master, slave = pty.openpty()
    os.set_blocking(master, False)
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"}
    command = [PARLEY, "chat", "--bot", "python:tests.python_bots:terminal_tricks_bot", "--db", str(tmp_path / "p.db")]
    proc = subprocess.Popen(command, stdin=slave, stdout=slave, stderr=slave, cwd=ROOT, env=env, start_new_session=True)
    os.close(slave)
    try:
        assert b"Message the bot" in read_for(master, 60, b"Message the bot")
        read_for(master, 2)
        for key in b"hello":
            os.write(master, bytes([key]))
            read_for(master, 0.2)
        os.write(master, b"\r")
        chat = read_for(master, 30, b"PWNED")
        chat += read_for(master, 2)
        os.write(master, b"\x1b[14~")  # F4: the Sessions pane
        read_for(master, 3)
        os.write(master, b"\r")  # the chat's session
        view = read_for(master, 10, b"PWNED")
        view += read_for(master, 2)
    finally:
        proc.kill()
        proc.wait()
        os.close(master)
    for where, shown in (("the Chat pane", chat), ("the session view", view)):
        assert b"\\x1b]0;PWNED-TITLE\\x07\\x1b[2J" in shown, where
        assert b"\\x9b2J" in shown and b"\\u202eevil" in shown, where
        for raw in RAW:
            assert raw not in shown, (where, raw)


def test_whatever_text_a_widget_draws_no_control_character_reaches_the_terminal():
    keep_drawn_text_inert()
    move = Segment("\x1b[1;1H", None, [(ControlType.CURSOR_MOVE_TO, 1, 1)])  # Textual's own: kept
    strip = Strip([Segment("ok \x1b]0;title\x07\x1b[2J\u009b2J\u202eevil"), move])
    drawn = strip.render(Console(color_system="truecolor"))
    assert drawn == "ok ]0;title[2J2Jevil\x1b[1;1H"
