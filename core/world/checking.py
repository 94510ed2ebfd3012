"""Every mistake in a world a user wrote, each with its place: what `parley worlds check` prints and
what makes a world refused when it is loaded for a run.

Checked: each tool's declaration (a parameter without a type hint, no docstring), each table's
(a key or an owner naming a missing column, an unknown column type, an id pattern that is no
regular expression), each fixture row against its table's schema (at its file and row), the
identity (the customers table, the authentication tools, the credentials' columns), the actions
and rules, and that the database can be built.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from parley.core.records import did_you_mean
from parley.core.world.declaration import ACTIONS, ConversationIdentity, WorldDefinition
from parley.core.world.tables import Table, TableError

__all__ = ["world_problems"]


def world_problems(world: WorldDefinition, *, today: datetime.date | None = None, build: bool = True) -> list[str]:
    """Every mistake in `world`, each one line starting with its place (see the module doc)."""
    where = world.source or f"world {world.name}"
    found: list[str] = []
    if not world.name or not world.name.replace("-", "").replace("_", "").isalnum():
        found.append(f"{where}: the world's name {world.name!r} is letters, digits, - and _")
    found += _tool_problems(world, where)
    tables: dict[str, Table] = {}
    for table in world.tables:
        at = table.declared_at or where
        if table.name in tables:
            found.append(f"{at}: table {table.name} is declared twice")
        tables[table.name] = table
        found += [f"{at}: {problem}" for problem in table.problems()]
        if world.build is None:
            found += _row_problems(table, today or world.today or datetime.date.today())
    found += _identity_problems(world, tables, where)
    for tool_name, action in world.actions.items():
        declared = world.tool(tool_name)
        if declared is None:
            found.append(f"{where}: actions: no tool {tool_name!r}{did_you_mean(tool_name, world.tool_names)}")
        elif not declared.changes_state:
            found.append(f"{where}: actions: {tool_name} is not declared @tool(changes_state=True)")
        if action not in ACTIONS:
            found.append(f"{where}: actions: {tool_name}: {action!r} is not one of {', '.join(ACTIONS)}{did_you_mean(action, ACTIONS)}")
    for rule in world.rules:
        if not callable(rule.check):
            found.append(f"{where}: rule {rule.name}: its check is not a function")
    if build and not found:
        from parley.core.world.database import WorldTemplate

        try:
            WorldTemplate(world, today or world.today or datetime.date.today())
        except (TableError, ValueError) as exc:
            found.append(f"{where}: the database cannot be built: {exc}")
        except Exception as exc:  # noqa: BLE001 - any failure of a user's build is a finding, with its kind
            found.append(f"{where}: the database cannot be built: {type(exc).__name__}: {exc}")
    return found


def _tool_problems(world: WorldDefinition, where: str) -> list[str]:
    found: list[str] = []
    seen: set[str] = set()
    for declared in world.declared_tools:
        found += list(declared.problems)
        if declared.name in seen:
            found.append(f"{declared.source or where}: tool {declared.name} is declared twice")
        seen.add(declared.name)
    if not world.declared_tools:
        found.append(f"{where}: the world declares no tools")
    return found


def _identity_problems(world: WorldDefinition, tables: dict[str, Table], where: str) -> list[str]:
    identity = world.identity
    customers = tables.get(identity.customers)
    found: list[str] = []
    if customers is None:
        found.append(f"{where}: identity: no customers table {identity.customers!r}{did_you_mean(identity.customers, tables)}")
    if isinstance(identity, ConversationIdentity):
        for name in identity.authenticate:
            if world.tool(name) is None:
                found.append(f"{where}: identity: no authentication tool {name!r}{did_you_mean(name, world.tool_names)}")
        if not identity.authenticate:
            found.append(f"{where}: identity: a customer who authenticates in the conversation needs at least one authenticate tool")
        if customers is not None and customers.columns:
            for column in identity.credentials:
                if column not in customers.columns:
                    found.append(
                        f"{where}: identity: credential {column!r} is no column of {customers.name}{did_you_mean(column, customers.columns)}"
                    )
    return found


def _row_problems(table: Table, today: datetime.date) -> list[str]:
    try:
        rows = table.fixture_rows(today)
    except TableError as exc:
        return [str(exc)]
    places = _row_places(table)
    found: list[str] = []
    for i, row in enumerate(rows):
        at = places[i] if i < len(places) else f"{table.declared_at or table.name}: row {i + 1}"
        found += [f"{at}: {column}: {why}" if column else f"{at}: {why}" for column, why in table.row_problems(row)]
    return found


def _row_places(table: Table) -> Sequence[str]:
    """`file:line` of each row of a table read from a YAML or CSV file (row numbers otherwise)."""
    source = table.rows
    if not isinstance(source, (str, Path)):
        return []
    path = Path(source) if Path(source).is_absolute() or table.base_dir is None else table.base_dir / source
    if path.suffix.lower() == ".csv":
        return [f"{path}:{line}" for line in range(2, 2 + sum(1 for _ in path.open(encoding="utf-8")))]
    if path.suffix.lower() in (".yaml", ".yml"):
        from ruamel.yaml import YAML

        try:
            data: Any = YAML(typ="rt").load(path.read_text(encoding="utf-8"))
        except Exception:  # noqa: BLE001 - unreadable files are reported by fixture_rows
            return []
        if isinstance(data, dict) and table.name in data:
            data = data[table.name]
        if isinstance(data, list):
            return [f"{path}:{item.lc.line + 1}" if hasattr(item, "lc") else f"{path}: row {i + 1}" for i, item in enumerate(data)]
    return [f"{path}: row {i + 1}" for i in range(10_000)]
