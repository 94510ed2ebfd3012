"""A file's per-table `rows:` overrides, checked against the world's schema and merged onto its
fixture: a row whose key the table holds changes the fields it names; a row with a new key adds a
record.

    world:
      name: returns
      rows:
        orders: [{id: R-2001, status: delivered}]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from parley.core.records import did_you_mean
from parley.core.world.tables import Table, TableError

__all__ = ["OverrideProblem", "merge_overrides", "override_problems"]

OverrideProblem = tuple[tuple[Any, ...], str]
"""(the path inside `rows:` — table, index, column —, what is wrong there)."""


def override_problems(tables: Mapping[str, Table], overrides: Mapping[str, Any]) -> list[OverrideProblem]:
    """Every way `overrides` breaks the world's schema, each at its place in `rows:`."""
    found: list[OverrideProblem] = []
    for name, rows in overrides.items():
        table = tables.get(name)
        if table is None:
            found.append(((name,), f"no table {name!r} in this world{did_you_mean(name, tables)} (its tables: {', '.join(tables)})"))
            continue
        if not isinstance(rows, list):
            found.append(((name,), f"expected a list of rows for table {name}, each with its {table.key}"))
            continue
        seen: set[Any] = set()
        for i, row in enumerate(rows):
            if not isinstance(row, Mapping):
                found.append(((name, i), f"expected a row (a mapping of column to value) with its {table.key}"))
                continue
            key = row.get(table.key)
            if key in seen:
                found.append(((name, i, table.key), f"{table.name} record {key} is overridden twice"))
            seen.add(key)
            for column, why in table.row_problems(row):
                found.append(((name, i, column) if column is not None else (name, i), why))
    return found


def merge_overrides(table: Table, rows: Sequence[Mapping[str, Any]], overrides: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """`rows` with `overrides` applied by key (see the module doc); TableError for a broken row."""
    merged = {row.get(table.key): dict(row) for row in rows}
    for override in overrides:
        problems = table.check_row(override, f"rows.{table.name}")
        if problems:
            raise TableError(problems[0])
        key = override[table.key]
        if key in merged:
            merged[key].update(override)
        else:
            merged[key] = dict(override)
    return list(merged.values())
