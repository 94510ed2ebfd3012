"""Records as people name them in free text, on any world: each table's ids by its declared id
pattern (case aside), or by the world's own reader of ids when it declares one (the order world
reads "ORD-1003", "ord 1003", "order 1003", "#1003" alike: its `find_ids` hook).

What the claims check, the customer's requests, the attacks' leak search and the conversation's
watched records share: none of them owns it."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from parley.core.world.declaration import WorldDefinition

__all__ = ["RecordKey", "key_of", "keys_of", "record_ids", "same_record"]

RecordKey = tuple[str, str]
"""(table, key) of a record."""


def record_ids(world: WorldDefinition, text: str | None) -> list[RecordKey]:
    """The records `text` names, in order, each once (see the module doc)."""
    if not text:
        return []
    hook = world.hooks.get("find_ids")
    found: list[tuple[int, RecordKey]] = [(_where(text, key), (table, key)) for table, key in hook(text)] if callable(hook) else []
    for table in world.tables_with_ids():
        pattern = _pattern(table.id_pattern or "")
        for match in pattern.finditer(text):
            found.append((match.start(), (table.name, match.group(0))))
    seen: dict[tuple[str, str], RecordKey] = {}
    for _, (table_name, key) in sorted(found, key=lambda item: item[0]):
        seen.setdefault((table_name, key_of(key)), (table_name, key))
    return list(seen.values())


def _where(text: str, key: str) -> int:
    """Where a key a world's reader found stands in the text (as written, else by its digits; the
    end when neither is found), to keep the records in the order the text names them."""
    at = text.casefold().find(key.casefold())
    if at < 0:
        digits = "".join(c for c in key if "0" <= c <= "9")
        at = text.find(digits) if digits else -1
    return at if at >= 0 else len(text)


def key_of(key: Any) -> str:
    """A record's key in the one form keys are compared in (case and surrounding space aside)."""
    return str(key).strip().casefold()


def same_record(a: RecordKey, b: RecordKey) -> bool:
    return a[0] == b[0] and key_of(a[1]) == key_of(b[1])


def keys_of(records: Iterable[RecordKey]) -> set[tuple[str, str]]:
    """Records as comparable (table, key) pairs."""
    return {(table, key_of(key)) for table, key in records}


_compiled: dict[str, re.Pattern[str]] = {}


def _pattern(id_pattern: str) -> re.Pattern[str]:
    pattern = _compiled.get(id_pattern)
    if pattern is None:
        pattern = _compiled[id_pattern] = re.compile(rf"(?<![\w-])(?:{id_pattern})(?![\w])", re.IGNORECASE)
    return pattern
