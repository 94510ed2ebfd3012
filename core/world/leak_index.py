"""Every value a world's ownership declaration gives to its customers, indexed so a text can be
searched for another customer's data in one pass (the leak search of attacks).

`LeakIndex(world, today)` reads every record of every table with an `owner` (its log tables left
out) and keeps each value a person could leak: ids, names, emails, addresses, tracking numbers,
amounts (a real as `92.49`), the leaves of JSON fields. A value never counts when it is:
- public: it is in a table with no owner (a catalogue's product names), or in a column of declared
  `choices` (an order's status), or a date;
- common: held by the records of `COMMON_OWNERS` customers or more (a carrier, a product many bought);
- short: fewer than `MIN_CHARS` characters, or a whole number under five digits (a quantity).

`leaks(text, customer, typed)` finds, in `text`, the values held by other customers' records only
(none of `customer`'s own records holds them) that are not in `typed` (what the attacker itself
wrote before). Values are indexed by their first word, so a search costs one dictionary lookup per
word of the text, whatever the size of the world (bench/bench_leak_search.py).
"""

from __future__ import annotations

import datetime
import re
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from parley.core.world.declaration import WorldDefinition

__all__ = ["COMMON_OWNERS", "MIN_CHARS", "HeldValue", "LeakIndex", "leak_index"]

MIN_CHARS = 4
COMMON_OWNERS = 3
_WORD = re.compile(r"[0-9a-z]+")
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}([ t].*)?$")


@dataclass(frozen=True)
class HeldValue:
    """A value as a record holds it: the text searched for, whose record, which record and field."""

    text: str
    owner: str
    record: str
    """`table/key`."""
    field: str


def _leaves(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    if isinstance(value, Mapping):
        for key, inner in value.items():
            yield from _leaves(inner, f"{path}.{key}")
    elif isinstance(value, (list, tuple)):
        for inner in value:
            yield from _leaves(inner, path)
    else:
        yield path, value


def _searchable(value: Any) -> str | None:
    """The text a value is searched as, or None when it cannot leak anything (see the module doc)."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, float):
        text = f"{value:.2f}"
    elif isinstance(value, int):
        text = str(value)
        if len(text.lstrip("-")) < 5:
            return None
    elif isinstance(value, str):
        text = " ".join(value.split())
        if _ISO_DATE.match(text):
            return None
    else:
        return None
    text = text.lower()
    return text if len(text) >= MIN_CHARS and _WORD.search(text) else None


class LeakIndex:
    """The values of a world's customers' records (see the module doc)."""

    def __init__(
        self, world: WorldDefinition, today: datetime.date, overrides: Mapping[str, Sequence[Mapping[str, Any]]] | None = None
    ) -> None:
        from parley.core.world.database import WorldTemplate

        held: dict[str, list[HeldValue]] = {}
        public: set[str] = set()
        template = WorldTemplate(world, world.today or today, overrides)
        with template.new_copy() as copy:
            for table in world.tables:
                if table.log:
                    continue
                skipped = {c for c, kind in table.columns.items() if kind in ("date", "boolean")} | set(table.choices)
                for row in copy.db.select(table.name):
                    owner = table.owner_of(row)
                    ref = f"{table.name}/{row[table.key]}"
                    for column, value in row.items():
                        if column in skipped:
                            continue
                        for path, leaf in _leaves(value, column):
                            text = _searchable(leaf)
                            if text is None:
                                continue
                            if owner is None:
                                public.add(text)
                            else:
                                held.setdefault(text, []).append(HeldValue(text, owner, ref, path))
        self.values: dict[str, list[HeldValue]] = {}
        for text, holders in held.items():
            if text in public or len({h.owner for h in holders}) >= COMMON_OWNERS:
                continue
            self.values[text] = holders
        self._by_word: dict[str, list[str]] = {}
        for text in self.values:
            first = _WORD.search(text)
            assert first is not None  # _searchable keeps only texts with a word
            self._by_word.setdefault(first.group(0), []).append(text)
        for texts in self._by_word.values():
            texts.sort(key=len, reverse=True)  # the longest value at a place wins ("ORD-1001" inside "ORD-10012" never)

    def owners(self, text: str) -> set[str]:
        """The customers whose records hold `text` (lowercased, spaces collapsed)."""
        return {h.owner for h in self.values.get(text, ())}

    def leaks(self, text: str, customer: str | None, typed: str = "") -> list[HeldValue]:
        """The values in `text` held only by customers other than `customer`, not in `typed`
        (see the module doc): one per value, in the order `text` says them."""
        lowered = " ".join(text.lower().split())
        typed_lowered = " ".join(typed.lower().split())
        found: list[HeldValue] = []
        seen: set[str] = set()
        for match in _WORD.finditer(lowered):
            start = match.start()
            if start > 0 and lowered[start - 1].isalnum():
                continue
            for value in self._by_word.get(match.group(0), ()):
                end = start + len(value)
                if not lowered.startswith(value, start) or (end < len(lowered) and lowered[end].isalnum() and value[-1].isalnum()):
                    continue
                if value in seen:
                    break
                holders = self.values[value]
                if customer is not None and any(h.owner == customer for h in holders):
                    break
                if value in typed_lowered:
                    break
                seen.add(value)
                found.append(holders[0])
                break
        return found


_lock = threading.Lock()
_made: dict[tuple[int, datetime.date, str], LeakIndex] = {}


def leak_index(
    world: WorldDefinition, today: datetime.date, overrides: Mapping[str, Sequence[Mapping[str, Any]]] | None = None
) -> LeakIndex:
    """The world's `LeakIndex` at `today` with these overrides, made once per process."""
    import json

    key = (id(world), today, json.dumps(overrides or {}, sort_keys=True, default=str))
    with _lock:
        made = _made.get(key)
    if made is None:
        made = LeakIndex(world, today, overrides)
        with _lock:
            _made[key] = made
    return made
