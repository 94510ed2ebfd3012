"""Two states of one world compared record by record, whatever the order.

`compare_states(expected, actual)` names every record that differs (missing from the actual state,
there but not expected, or changed) and, inside it, every field that differs, down into its JSON:
a mapping is compared key by key (`payment_methods.gift_card_7.balance`), a list as a multiset
(the same elements in another order are equal; the elements only one side has are named). Neither
the order of records nor the order of a list's elements matters: only what the state holds.

Two copies of the same template are compared by the records either one changed (cheap: the
change logs say which); copies of different templates by every record. A log table (an audit
trail) is left out: it says what happened, not what the state is.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, Literal

from pydantic import BaseModel, Field

from parley.core.world.database import WorldCopy

__all__ = ["FieldDifference", "RecordDifference", "StateComparison", "compare_states", "compare_values"]


class FieldDifference(BaseModel):
    """One difference inside a record: `path` into it (`status`, `address.zip`, `payment_history[]`
    for a list's elements), what the expected state holds there and what the actual one does. For a
    list, `expected` holds the elements only the expected state has and `actual` those only the
    actual one has."""

    path: str
    expected: Any = None
    actual: Any = None

    def describe(self) -> str:
        if self.path.endswith("[]"):
            parts = []
            if self.expected:
                parts.append(f"missing {_short(self.expected)}")
            if self.actual:
                parts.append(f"unexpected {_short(self.actual)}")
            return f"{self.path}: {'; '.join(parts)}"
        return f"{self.path}: expected {_short(self.expected)}, found {_short(self.actual)}"


class RecordDifference(BaseModel):
    """A record that differs between the two states."""

    table: str
    key: str
    owner: str | None = None
    kind: Literal["missing", "unexpected", "changed"]
    """missing: only the expected state has it; unexpected: only the actual state has it."""
    fields: list[FieldDifference] = Field(default_factory=list)

    @property
    def ref(self) -> str:
        return f"{self.table}/{self.key}"

    def describe(self) -> str:
        """One line: `orders/#W123: status: expected 'cancelled', found 'pending'`."""
        if self.kind != "changed":
            return f"{self.ref}: {self.kind}"
        return f"{self.ref}: " + "; ".join(f.describe() for f in self.fields)


class StateComparison(BaseModel):
    """Every record that differs, in table order then key order; empty when the states are equal."""

    differences: list[RecordDifference] = Field(default_factory=list)

    @property
    def equal(self) -> bool:
        return not self.differences

    def record(self, table: str, key: str) -> RecordDifference | None:
        for difference in self.differences:
            if difference.table == table and difference.key == key:
                return difference
        return None

    def describe(self) -> list[str]:
        return [d.describe() for d in self.differences]


def compare_states(expected: WorldCopy, actual: WorldCopy) -> StateComparison:
    """`expected` against `actual` (see the module doc). Both are copies of one world."""
    tables = [t for t in expected.tables.values() if not t.log]
    if expected.template is actual.template:
        touched: set[tuple[str, str]] = {(c.table, c.key) for copy in (expected, actual) for c in copy.changes_since(0) if not c.log}
        candidates = sorted(touched)
    else:
        candidates = sorted({(t.name, str(row[t.key])) for copy in (expected, actual) for t in tables for row in copy.db.select(t.name)})
    found: list[RecordDifference] = []
    for table_name, key in candidates:
        table = expected.tables[table_name]
        want, have = expected.db.get(table_name, key), actual.db.get(table_name, key)
        if want is None and have is None:
            continue
        owner = table.owner_of(want or have or {})
        if want is None:
            found.append(RecordDifference(table=table_name, key=key, owner=owner, kind="unexpected"))
        elif have is None:
            found.append(RecordDifference(table=table_name, key=key, owner=owner, kind="missing"))
        else:
            fields = compare_values(want, have)
            if fields:
                found.append(RecordDifference(table=table_name, key=key, owner=owner, kind="changed", fields=fields))
    order = {t.name: i for i, t in enumerate(tables)}
    found.sort(key=lambda d: (order.get(d.table, len(order)), d.key))
    return StateComparison(differences=found)


def compare_values(expected: Any, actual: Any, path: str = "") -> list[FieldDifference]:
    """The differences between two JSON-shaped values (see the module doc), each at its path."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        found: list[FieldDifference] = []
        for name in list(expected) + [k for k in actual if k not in expected]:
            where = f"{path}.{name}" if path else str(name)
            if name not in actual:
                found.append(FieldDifference(path=where, expected=expected[name], actual=None))
            elif name not in expected:
                found.append(FieldDifference(path=where, expected=None, actual=actual[name]))
            else:
                found.extend(compare_values(expected[name], actual[name], where))
        return found
    if isinstance(expected, list) and isinstance(actual, list):
        want, have = Counter(_canonical(v) for v in expected), Counter(_canonical(v) for v in actual)
        if want == have:
            return []
        only_expected = [json.loads(v) for v in (want - have).elements()]
        only_actual = [json.loads(v) for v in (have - want).elements()]
        return [FieldDifference(path=f"{path}[]", expected=only_expected, actual=only_actual)]
    if _same(expected, actual):
        return []
    return [FieldDifference(path=path or "(value)", expected=expected, actual=actual)]


def _canonical(value: Any) -> str:
    """A value as JSON independent of mapping order and of list order (each list sorted by its elements' JSON)."""
    return json.dumps(_sorted(value), sort_keys=True, separators=(",", ":"), default=str)


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _sorted(v) for k, v in value.items()}
    if isinstance(value, list):
        return sorted((_sorted(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True, default=str))
    return value


def _same(a: Any, b: Any) -> bool:
    """Equal values; a whole float equals the same integer (JSON does not tell 1.0 from 1)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return bool(a == b)


def _short(value: Any) -> str:
    text = json.dumps(value, default=str, ensure_ascii=False) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
