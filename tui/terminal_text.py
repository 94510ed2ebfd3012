"""Text that came from a file, a bot or a user, made safe to put on a terminal.

Such text is data. Two things in it must not act on the terminal:
- Rich markup: a name like `closing[/bold]tag` made Rich raise MarkupError for a whole listing,
  and `[red]…[link=…]` was drawn as a colour and a hyperlink. `for_rich` escapes it for any
  string Rich parses (`console.print` with markup, table cells, progress columns).
- control characters: a bot reply holding `ESC[2J ESC[H` cleared the screen, colours and OSC 8
  hyperlinks reached the terminal raw. `visible` spells each one out (`\\x1b[2J`), so a person
  sees that they were there and nothing acts on them. Newlines and tabs stay what they are.

Rich's emoji codes (`:warning:`) are text too: every console of the CLI is made with
`emoji=False` (parley.tui.cli.command_io).

Secrets are never shown: `visible` (and so every function here) first takes out every secret the
process resolved (parley.core.redaction), before Rich lays the text out, so no cropped or
wrapped line shows part of one. `RedactingStream` does the same to whatever else reaches the
command's stdout and stderr (click's error lines, a traceback), and `SingleDisplay` streams a
reply through the redactor's stream, which holds back a piece that may be the start of a secret.

Only what is shown changes: the store, the exports and the reports on disk keep the text as it
was received (less its secrets). Every command prints such text through one of these functions.
"""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Iterable, Iterator
from typing import Any, TextIO

from parley.core.redaction import redact
from parley.core.reports import TERMINAL_ACTING

# C0 controls but tab and newline, DEL, C1 controls (CSI 0x9b acts as ESC [ on some terminals),
# and the bidirectional overrides and isolates that reorder what is drawn ("Trojan Source").
CONTROLS = re.compile(f"[\x00-\x08\x0b-\x1f{TERMINAL_ACTING}]")
"""The characters `visible` spells out."""


def _spelled(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """`text` with every secret redacted and every control character spelled out (`\\x1b`,
    `\\u202e`); tabs and newlines kept."""
    return CONTROLS.sub(_spelled, redact(text))


def one_line(text: str) -> str:
    """`visible(text)` for a single line: newlines and tabs spelled out too."""
    return visible(text.replace("\r", "\\r")).replace("\n", "\\n").replace("\t", "\\t")


def for_rich(text: object) -> str:
    """`text` (as str) for a place Rich reads markup in: control characters spelled out, markup
    escaped, so it prints exactly as it reads."""
    from rich.markup import escape  # rich loads with the command that prints through it, not at start-up

    return escape(visible(str(text)))


class RedactingStream:
    """A text stream (a command's stdout or stderr) that writes through the redactor; everything
    else (isatty, fileno, encoding...) is the stream's own, so Rich and click see a terminal
    where there is one."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        self.stream.write(redact(text))
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


@contextlib.contextmanager
def redacted_output() -> Iterator[None]:
    """sys.stdout and sys.stderr through the redactor while the block runs (a command)."""
    saved = sys.stdout, sys.stderr
    if not isinstance(sys.stdout, RedactingStream):
        sys.stdout = RedactingStream(sys.stdout)
    if not isinstance(sys.stderr, RedactingStream):
        sys.stderr = RedactingStream(sys.stderr)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


class VisibleWriter:
    """A text stream that writes through `visible`: for a report streamed to stdout a page at a time."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        return self.stream.write(visible(text))

    def flush(self) -> None:
        self.stream.flush()
