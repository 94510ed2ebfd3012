"""The last guard on what the app draws: no control character in a widget's text reaches the terminal.

Every place the app shows text it did not write (a bot's reply, a stored transcript, a file, an
error) spells its control characters out (`parley.tui.terminal_text.visible`), as the command
line does. Should one be missed, what Textual finally writes for it still must not act on the
terminal: a reply holding `ESC]0;title BEL ESC[2J` changed the window's title and cleared the
screen. `keep_drawn_text_inert` makes Textual's Strip (one line of a widget, as it is written to
the terminal) drop every such character from the text of its segments; they take no cell on the
screen, so nothing moves. Textual's own control sequences (cursor moves, colours, links) are
not text and stay as they are.

Textual is pinned to one exact version (pyproject.toml): this replaces `Strip.render`, whose
body it repeats with the text cleaned, and reads its private `_segments` and `_render_cache`.
"""

from __future__ import annotations

from rich.color import ColorSystem
from rich.console import Console
from textual.strip import Strip

from parley.tui.terminal_text import CONTROLS

__all__ = ["keep_drawn_text_inert"]


def _inert(text: str) -> str:
    return CONTROLS.sub("", text) if CONTROLS.search(text) else text


def _render(self: Strip, console: Console) -> str:
    """Strip.render, each segment's text without control characters."""
    if self._render_cache is None:
        color_system = console._color_system or ColorSystem.TRUECOLOR
        render = self.render_style
        self._render_cache = "".join(
            [
                text if control else _inert(text) if style is None else render(style, _inert(text), color_system=color_system)
                for text, style, control in self._segments
            ]
        )
    return self._render_cache


def keep_drawn_text_inert() -> None:
    """From now on, no widget's text carries a control character to the terminal (see the module)."""
    if Strip.render is not _render:
        Strip.render = _render  # type: ignore[method-assign]
