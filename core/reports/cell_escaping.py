"""Text parley writes to files and pipes, made safe: CSV cells no spreadsheet runs, no NUL
characters, and in JSON and XML no raw character that acts on a terminal.

A cell that begins with `=`, `+`, `-`, `@`, a tab or a carriage return is a formula to Excel,
LibreOffice and Google Sheets: a bot reply or a profile name such as `=HYPERLINK(...)` would run
when a QA engineer opens the export. Following OWASP's CSV-injection advice such text cells get a
leading `'` (spreadsheets show the text as written; any other reader sees one extra character),
and so does a `=`, `+` or `@` after a line break inside a cell (a reader that splits lines
before cells would see it start one; a `-` there is a bullet, left as it is). A cell holding a
line break, a carriage return included, is quoted (`csv_line`: rows end in `\n`, and Python's
writer quotes only the characters of its line terminator, so a lone `\r` broke one conversation
into four rows). Numbers are written as numbers: a negative number is data, not a formula. NUL characters never
reach a file (most CSV readers stop at them); they are written as U+FFFD.

JSON and JUnit XML are read on terminals too (`parley report --format ndjson | less`, a CI
log): JSON already escapes C0 controls (ESC included), but DEL, the C1 controls (U+009B acts
as ESC [ on some terminals) and the bidirectional overrides pass through raw. `inert_json` and
`inert_xml` write each as an escape of the format itself (`\u009b`, `&#x9b;`): the same
document to any parser, nothing that acts on a terminal.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable
from typing import Any

TERMINAL_ACTING = "\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069"
"""DEL, the C1 controls and the bidirectional overrides and isolates, as a regular expression
character range: what acts on a terminal besides the C0 controls."""
_TERMINAL_ACTING = re.compile(f"[{TERMINAL_ACTING}]")
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
NUL_STAND_IN = "\ufffd"


def without_nul(text: str) -> str:
    """`text` with every NUL character replaced (U+FFFD)."""
    return text.replace("\x00", NUL_STAND_IN) if "\x00" in text else text


_FORMULA_AFTER_BREAK = re.compile(r"([\r\n])([=+@])")


def spreadsheet_cell(value: Any) -> Any:
    """A CSV cell value that no spreadsheet runs as a formula; non-text values as they are."""
    if not isinstance(value, str):
        return value
    value = _FORMULA_AFTER_BREAK.sub(r"\1'\2", without_nul(value))
    return "'" + value if value.startswith(FORMULA_STARTS) else value


def csv_line(cells: Iterable[Any]) -> str:
    """One CSV row ending in `\n`, each cell through spreadsheet_cell; a cell holding a line break
    (`\n` or `\r`), a comma or a quote is quoted."""
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\r\n").writerow([spreadsheet_cell(cell) for cell in cells])
    return buffer.getvalue()[:-2] + "\n"


def inert_json(text: str) -> str:
    """JSON text with DEL, C1 controls and bidi overrides written as `\\uXXXX` escapes (they
    occur only inside strings, where the escape means the same character)."""
    return _TERMINAL_ACTING.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def inert_xml(text: str) -> str:
    """XML text with DEL, C1 controls and bidi overrides written as character references."""
    return _TERMINAL_ACTING.sub(lambda m: f"&#x{ord(m.group()):x};", text)
