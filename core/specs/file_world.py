"""The world a file names, loaded by its reader and checked where the file writes it: `world:`'s
name or path (relative to the file), its rows against the world's tables, columns, the values a
column takes and the records a file may change, its customer, and a date the world can hold.

Records know no world (parley.core.records.Reading.read_world): a reading of a file mixes this in,
so `expect:` is then checked against the same world (`world_facts`)."""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from parley.core.records import WORLD_KEYS, Loc, WorldFacts, did_you_mean
from parley.core.world import WorldDefinition, WorldError, load_world, world_facts

__all__ = ["FileWorld", "world_problems_of"]


class FileWorld:
    """The world part of a file's reading (see the module doc)."""

    file: str
    _world: WorldDefinition | None = None

    def read_world(self, data: Mapping[Any, Any]) -> tuple[WorldFacts, list[tuple[Loc, str]]]:
        world, problems = world_problems_of(data, Path(self.file).parent)
        self._world = world
        return world_facts(world), problems

    def world_facts(self) -> WorldFacts:
        return world_facts(self.world())

    def world(self) -> WorldDefinition:
        """The file's world (the default one until its `world:` is read)."""
        if self._world is None:
            self._world = load_world()
        return self._world


def world_problems_of(data: Mapping[Any, Any], base_dir: Path | None) -> tuple[WorldDefinition, list[tuple[Loc, str]]]:
    """The world `data` (a `world:` mapping) names, and every problem of the mapping against it,
    each at its place below the mapping (see the module doc). A world that cannot be loaded is a
    problem at its name or path; the default world then stands in, so the rest is still checked."""
    problems: list[tuple[Loc, str]] = []
    name, path = data.get("name"), data.get("path")
    world: WorldDefinition | None = None
    if name is not None and path is not None:
        problems.append((("path",), "name a world or give its path, not both"))
    try:
        world = load_world(
            name.strip() if isinstance(name, str) and name.strip() else None,
            path=path.strip() if isinstance(path, str) and path.strip() else None,
            base_dir=base_dir,
        )
    except WorldError as exc:
        problems.append((("path",) if path is not None else ("name",), str(exc)))
    if world is None:
        world = load_world()
    facts = world_facts(world)
    tables = {t.name: t for t in world.tables}
    rows: dict[str, list[Mapping[str, Any]]] = {}
    for key, value in data.items():
        if key in WORLD_KEYS:
            continue
        if not isinstance(key, str) or key not in tables:
            hint = (
                did_you_mean(key, [*WORLD_KEYS, *tables])
                or f"; known keys: {', '.join(WORLD_KEYS)}, or a table of world {world.name}: {', '.join(tables)}"
            )
            problems.append(((key,), f"unknown key '{key}'{hint}"))
            continue
        problems += _rows(world, facts, key, value, at=(key,))
        rows.setdefault(key, []).extend(r for r in value if isinstance(r, Mapping)) if isinstance(value, list) else None
    written = data.get("rows")
    if isinstance(written, Mapping):
        for table, value in written.items():
            if table not in tables:
                problems.append(
                    (
                        ("rows", table),
                        f"no table '{table}' in world {world.name}{did_you_mean(table, tables)} (its tables: {', '.join(tables)})",
                    )
                )
                continue
            problems += _rows(world, facts, table, value, at=("rows", table))
            if isinstance(value, list):
                rows.setdefault(table, []).extend(r for r in value if isinstance(r, Mapping))
    customer = data.get("customer_id")
    customers = facts.table(facts.customers or "")
    if isinstance(customer, str) and customers is not None and customer.strip() not in customers.keys:
        hint = did_you_mean(customer.strip(), customers.keys) or f"; its customers are {', '.join(customers.keys)}"
        problems.append((("customer_id",), f"customer '{customer.strip()}' is not in world {world.name}{hint}"))
    date_problem = world.hooks.get("date_problem")
    if callable(date_problem) and not problems:  # the world dates the rows once they are sound
        today = data.get("today")
        day = today if isinstance(today, datetime.date) else world.today or datetime.date.today()
        problem = date_problem(day, rows)
        if problem is not None:
            problems.append((("today",) if "today" in data else (), problem))
    return world, problems


def _rows(world: WorldDefinition, facts: WorldFacts, table_name: str, value: Any, at: Loc) -> list[tuple[Loc, str]]:
    table = world.table(table_name)
    known = facts.table(table_name)
    assert table is not None and known is not None
    if not isinstance(value, list):
        return [(at, f"expected a list of {table.name} rows, each with its {table.key}")]
    found: list[tuple[Loc, str]] = []
    seen: set[str] = set()
    customers = facts.table(facts.customers or "")
    check_hook = world.hooks.get("override_problems")
    for i, row in enumerate(value):
        if not isinstance(row, Mapping):
            found.append(((*at, i), f"expected a {known.singular} (a mapping of its fields, with its {table.key})"))
            continue
        row_problems = table.row_problems(row)
        for column, why in row_problems:
            found.append(((*at, i, column) if column is not None else (*at, i), why))
        key = row.get(table.key)
        if isinstance(key, str):
            key = key.strip()
            if key in seen:
                found.append(((*at, i, table.key), f"{known.singular} {key} is overridden twice"))
            seen.add(key)
            if table.fixed_keys and key not in known.keys and key.upper() not in known.keys:
                hint = did_you_mean(key, known.keys) or f"; its {table.name} are {', '.join(known.keys)}"
                found.append(
                    (
                        (*at, i, table.key),
                        f"{known.singular} '{key}' is not in world {world.name}: a file changes its {table.name}, it cannot add one{hint}",
                    )
                )
        owner = table.owner if isinstance(table.owner, str) and table.owner != "key" else None
        if owner and customers is not None and isinstance(row.get(owner), str) and row[owner].strip() not in customers.keys:
            found.append(
                (
                    (*at, i, owner),
                    f"customer '{row[owner].strip()}' is not in world {world.name}"
                    + (did_you_mean(row[owner].strip(), customers.keys) or f"; its customers are {', '.join(customers.keys)}"),
                )
            )
        if callable(check_hook) and not row_problems:  # the world's own checks read a row whose fields are sound
            for column, why in check_hook(table.name, row):
                found.append(((*at, i, column) if column is not None else (*at, i), why))
    return found


def rows_of(data: Mapping[Any, Any]) -> dict[str, list[Mapping[str, Any]]]:
    """The rows a `world:` mapping writes, by table (its `rows:` and its table keys together)."""
    found: dict[str, list[Mapping[str, Any]]] = {}
    for key, value in data.items():
        if key not in WORLD_KEYS and isinstance(value, list):
            found.setdefault(str(key), []).extend(r for r in value if isinstance(r, Mapping))
    written = data.get("rows")
    if isinstance(written, Mapping):
        for table, value in written.items():
            if isinstance(value, list):
                found.setdefault(str(table), []).extend(r for r in value if isinstance(r, Mapping))
    return found
