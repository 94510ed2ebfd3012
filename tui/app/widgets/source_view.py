"""SourceView: a read-only, line-numbered TextArea for profile files, highlighted by Textual's
own syntax highlighting (the `textual[syntax]` extra: tree-sitter's YAML and JSON grammars).

It is a viewer: typing into it says so, once in a while, and points at `e`, which opens the
file in $EDITOR (the Profiles pane's binding)."""

from __future__ import annotations

import time

from textual import events
from textual.widgets import TextArea

READ_ONLY_NOTE = "This view is read-only: press e to edit the file in $EDITOR."
NOTE_EVERY_S = 5.0  # say it again at most this often while someone keeps typing


class SourceView(TextArea):
    """`show(text, language)` replaces the content; `language` is "yaml", "json" or None."""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        # Soft-wrapped: a long line goes on below, numbered once, never cut at the view's edge.
        super().__init__("", read_only=True, show_line_numbers=True, soft_wrap=True, id=id, classes=classes)
        self.border_subtitle = "read-only · e edits"
        self._noted_at = 0.0

    def show(self, text: str, language: str | None) -> None:
        self.load_text(text)
        self.language = language if language in self.available_languages else None
        self.move_cursor((0, 0))

    def go_to_line(self, line: int, column: int = 1) -> None:
        """Put the cursor on a 1-based line and column and scroll it into view."""
        row = min(max(line - 1, 0), max(self.document.line_count - 1, 0))
        col = max(column - 1, 0)
        self.move_cursor((row, min(col, len(self.document.get_line(row)))), center=True)

    def on_key(self, event: events.Key) -> None:
        # A printable key that no binding takes would vanish silently: say why nothing happens.
        if self.read_only and event.is_printable and event.character not in (None, "e", "r", "n"):
            now = time.monotonic()
            if now - self._noted_at >= NOTE_EVERY_S:
                self._noted_at = now
                self.notify(READ_ONLY_NOTE, title="Read-only", severity="warning")
