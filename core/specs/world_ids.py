"""Ids a file names, checked against the world it will run in, where the file's own records cannot
see them: a playbook's `expect_tool` arguments, a scenario file's variables.

A file's `world:` (its customer, its rows) and its `expect:` records are checked as they are read
(parley.core.specs.file_world, parley.core.records.Expectations). What is left is an id written in
a tool's arguments or a variable: an id of a table whose records a file cannot add (the order
world's orders and customers) that the world does not hold makes a check that can never hold, and
the bot would be blamed for the setup's typo, so each one is an error at its place, with did-you-mean:
- a playbook: each `expect_tool` step's argument whose value has the shape of such an id (the
  table's id pattern), unless a `user` step names that record (a bot may be expected to look up a
  record the customer asks about that does not exist);
- a scenario file: `CUSTOMER_ID`, and any variable whose whole value has the shape of such an id.
What a customer only says (a goal, a `user` step) is not checked: asking about a record that does
not exist is a test of its own.

`world_id_errors(data, source, kind)` reads the file's parsed data (ruamel's round-trip data or
parley.core.specs.json_positions', which carry each value's line and column) once its own
checks passed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from parley.core.errors import ProfileError
from parley.core.records import TableFacts, WorldFacts, did_you_mean
from parley.core.specs.yaml_validation import Node
from parley.core.world import WorldError, load_world, world_facts

__all__ = ["world_id_errors"]

IdFileKind = Literal["profile", "playbook", "scenario"]


class _World:
    """The tables of a world whose records a file cannot add, and the error for an id it does not hold."""

    def __init__(self, facts: WorldFacts) -> None:
        self.facts = facts
        self.fixed = [t for t in facts.tables.values() if t.fixed_keys and t.id_pattern and t.keys]

    def table_of(self, value: Any) -> TableFacts | None:
        """The table whose ids have the shape of `value` (None: not text, or no such table)."""
        if not isinstance(value, str):
            return None
        return next((t for t in self.fixed if re.fullmatch(t.id_pattern or "", value.strip(), re.IGNORECASE)), None)

    def unknown(self, table: TableFacts, value: str, *, note: str = "") -> str | None:
        text = value.strip()
        if text in table.keys or text.upper() in table.keys:
            return None
        hint = did_you_mean(text, table.keys) or f"; its {table.name} are {', '.join(table.keys)}"
        return f"{table.singular} '{text}' is not in world {self.facts.name}{note}{hint}"

    def unknown_customer(self, value: Any) -> str | None:
        customers = self.facts.table(self.facts.customers or "")
        if not isinstance(value, str) or customers is None:
            return None
        text = value.strip()
        if text in customers.keys:
            return None
        hint = did_you_mean(text, customers.keys) or f"; its customers are {', '.join(customers.keys)}"
        return f"customer '{text}' is not in world {self.facts.name}{hint}"


def _world_of(data: Any, source: str, kind: IdFileKind) -> _World:
    """The world a file's data names (its `world:` mapping; the default world otherwise)."""
    spec = data.get("world") if isinstance(data, Mapping) else None
    name = spec.get("name") if isinstance(spec, Mapping) else None
    path = spec.get("path") if isinstance(spec, Mapping) else None
    try:
        world = load_world(
            name if isinstance(name, str) else None, path=path if isinstance(path, str) else None, base_dir=Path(source).parent
        )
    except WorldError:
        world = load_world()  # the file's reading reported it at its place
    return _World(world_facts(world))


def world_id_errors(data: Any, source: str, kind: IdFileKind) -> list[ProfileError]:
    """Every id the file names that its world does not hold (see the module doc), in file order.
    `data` is the file's parsed, already valid, content."""
    world = _world_of(data, source, kind)
    found = _Found(source)
    root = Node.root(data)
    if kind == "playbook":
        _playbook(root, world, found)
    elif kind == "scenario":
        _scenarios(root, world, found)
    return sorted(found.errors, key=lambda e: (e.line or 0, e.column or 0))


class _Found:
    def __init__(self, source: str) -> None:
        self.source = source
        self.errors: list[ProfileError] = []

    def add(self, node: Node, reason: str | None, *, at_key: bool = False) -> None:
        if reason is None:
            return
        line, column = (node.key_line, node.key_column) if at_key else (node.line, node.column)
        self.errors.append(ProfileError(reason, file=self.source, line=line, column=column, field_path=node.path or None))


def _mapping(node: Node | None, key: str) -> Node | None:
    if node is None or not node.is_map or not node.has(key) or node.value[key] is None:
        return None
    return node.child(key)


def _playbook(root: Node, world: _World, found: _Found) -> None:
    steps = _mapping(root, "steps")
    items = steps.items() if steps is not None else []
    said = [str(item.value["user"]) for item in items if item.is_map and isinstance(item.value.get("user"), str)]
    for item in items:
        expected = _mapping(item, "expect_tool") if item.is_map else None
        arguments = _mapping(expected, "arguments")
        for _name, child in arguments.entries() if arguments is not None and arguments.is_map else []:
            table = world.table_of(child.value)
            if table is None or any(_names(text, child.value) for text in said):
                continue  # not an id of a fixed table, or the customer asks about it: that may be the test
            found.add(child, world.unknown(table, child.value, note=" and no user step names it"))


def _names(text: str, record_id: str) -> bool:
    """Does `text` name the record (its number, however written: "ORD-1004", "order 1004")?"""
    digits = re.sub(r"^[^0-9]*", "", record_id.strip()).lstrip("0") or "0"
    return re.search(rf"(?<![0-9])0*{re.escape(digits)}(?![0-9])", text) is not None


def _scenarios(root: Node, world: _World, found: _Found) -> None:
    listing = _mapping(root, "scenarios") if root.is_map else root
    for item in listing.items() if listing is not None else []:
        variables = _mapping(item, "variables") if item.is_map else None
        if variables is None or not variables.is_map:
            continue
        for name, child in variables.entries():
            if name == "CUSTOMER_ID":
                found.add(child, world.unknown_customer(child.value))
            elif (table := world.table_of(child.value)) is not None:
                found.add(child, world.unknown(table, child.value))
