"""A long tool result cut down to what a reader checks: its first line and its key fields.

A JSON result keeps only the fields that checks and criteria name (ids, statuses, dates, the
policy's verdict and the sentence explaining it, tracking numbers), at whatever depth they sit,
so a list of orders stays a list of orders with their ids and statuses. Other text keeps its
first lines, then the order ids, dates and status words found further on.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import Any

LONG_TOOL_RESULT_CHARS = 300
"""A tool result longer than this is shortened when a prompt must be condensed."""

KEY_FIELDS: frozenset[str] = frozenset(
    {
        "id",
        "order_id",
        "status",
        "previous_status",
        "new_status",
        "old_status",
        "placed_date",
        "age_days",
        "eligible",
        "reason",
        "message",
        "carrier",
        "tracking_number",
        "estimated_delivery",
        "delivered_date",
        "cancelled_at",
        "error",
        "detail",
    }
)
"""Fields a shortened JSON result keeps (empty values left out); any field whose name ends in
`_date`, `_at` or `status` is kept too. The customer's id is not: it is the session's, the same
in every result."""

_FIRST_LINES = 2
_LINE_CHARS = 160
_ORDER_ID = re.compile(r"\b[A-Z]{2,5}-\d{2,}\b")
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_STATUS = re.compile(r"\b(pending|processing|shipped|delivered|cancell?ed|refused|eligible|not eligible|too_old)\b", re.IGNORECASE)


def _kept(key: str, fields: Collection[str]) -> bool:
    name = key.lower()
    return name in fields or name.endswith(("_date", "_at", "status"))


def _project(value: Any, fields: Collection[str]) -> Any:
    """`value` with only the kept fields of every object in it; None when nothing is kept."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if _kept(str(key), fields) and not isinstance(item, (dict, list)):
                if item is not None and item != "":
                    out[key] = item
            else:
                inner = _project(item, fields)
                if inner is not None:
                    out[key] = inner
        return out or None
    if isinstance(value, list):
        items = [p for p in (_project(item, fields) for item in value) if p is not None]
        return items or None
    return None


def _shorten_text(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    shown = lines[:_FIRST_LINES]
    head = [line if len(line) <= _LINE_CHARS else line[: _LINE_CHARS - 1] + "…" for line in shown]
    # what the reader does not see: the cut ends of the lines shown, and every later line
    unseen = "\n".join([line[_LINE_CHARS - 1 :] for line in shown if len(line) > _LINE_CHARS] + lines[_FIRST_LINES:])
    found = list(dict.fromkeys(m.group(0) for pattern in (_ORDER_ID, _DATE, _STATUS) for m in pattern.finditer(unseen)))
    body = "\n".join(head)
    return f"{body} … (further on: {', '.join(found)})" if found else f"{body} …"


def shorten_tool_result(text: str, fields: Collection[str] = KEY_FIELDS) -> str:
    """`text` cut down to its first line and key fields, marked as shortened; `text` itself
    when it is not long or the cut would not be shorter."""
    if len(text) <= LONG_TOOL_RESULT_CHARS:
        return text
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    short = None
    if isinstance(data, (dict, list)):
        projected = _project(data, {f.lower() for f in fields})
        if projected is not None:
            short = json.dumps(projected, ensure_ascii=False, separators=(",", ":"))
    if short is None:
        short = _shorten_text(text)
    marked = f"[shortened from {len(text)} characters to its key fields] {short}"
    return marked if len(marked) < len(text) else text
