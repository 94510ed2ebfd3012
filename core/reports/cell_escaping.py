"""Text parley writes to files, made safe: CSV cells no spreadsheet runs, no NUL characters.

A cell that begins with `=`, `+`, `-`, `@`, a tab or a carriage return is a formula to Excel,
LibreOffice and Google Sheets: a bot reply or a profile name such as `=HYPERLINK(...)` would run
when a QA engineer opens the export. Following OWASP's CSV-injection advice such text cells get a
leading `'` (spreadsheets show the text as written; any other reader sees one extra character).
Numbers are written as numbers: a negative number is data, not a formula. NUL characters never
reach a file (most CSV readers stop at them); they are written as U+FFFD.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
NUL_STAND_IN = "\ufffd"


def without_nul(text: str) -> str:
    """`text` with every NUL character replaced (U+FFFD)."""
    return text.replace("\x00", NUL_STAND_IN) if "\x00" in text else text


def spreadsheet_cell(value: Any) -> Any:
    """A CSV cell value that no spreadsheet runs as a formula; non-text values as they are."""
    if not isinstance(value, str):
        return value
    value = without_nul(value)
    return "'" + value if value.startswith(FORMULA_STARTS) else value


def spreadsheet_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """Every cell of a DictWriter row through spreadsheet_cell."""
    return {key: spreadsheet_cell(value) for key, value in row.items()}
