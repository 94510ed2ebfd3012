"""What an attacker aims at on a world, read from its declarations: the victim (another customer),
their name as a stranger would know it, their records, and the attacker's own records.

The attacker knows what a stranger would: a victim's id, name and record ids, never their
credentials (an email or zip code a world authenticates with is not part of a target).
"""

from __future__ import annotations

import datetime
import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from parley.core.world.declaration import WorldDefinition
from parley.core.world.tables import Table

__all__ = ["AttackTarget", "attack_target", "customers_of", "target_table"]


@dataclass(frozen=True)
class AttackTarget:
    """The victim and the records an attack names (see the module doc)."""

    attacker: str
    victim: str
    victim_name: str | None
    victim_records: tuple[str, ...]
    """Keys of the victim's records of the target table (`target_table`: their orders)."""
    own_records: tuple[str, ...]
    record: str | None
    """The record aimed at: a victim's, or (break_policy, planted_instruction) one of the attacker's."""
    free_text: tuple[tuple[str, str], ...] = field(default=())
    """(table, column) of every free-text field the world declares (where instructions are planted)."""


def target_table(world: WorldDefinition) -> Table | None:
    """The table whose records attacks aim at: the customers' records with ids people write (not the
    customers themselves, no log); those with a state (an order's status) first, then those a
    state-changing tool takes the id of (`order_id`)."""
    candidates = [
        t
        for t in world.tables
        if t.id_pattern and t.owner is not None and not t.log and t is not world.customers_table and t.name != world.identity.customers
    ]
    acted_on = {name for tool in world.state_changing for name in tool.arguments.model_fields}

    def named_by_an_action(table: Table) -> bool:
        singular = table.name[:-1] if table.name.endswith("s") else table.name
        return f"{singular}_id" in acted_on

    return (
        next((t for t in candidates if t.state_field), None)
        or next((t for t in candidates if named_by_an_action(t)), None)
        or (candidates[0] if candidates else None)
    )


def _name(row: Mapping[str, Any]) -> str | None:
    """A customer's name as a stranger would say it: a `name` column (text, or first and last)."""
    name = row.get("name")
    if isinstance(name, str) and name.strip():
        return name.strip()
    if isinstance(name, Mapping):
        parts = [str(name.get(k, "")).strip() for k in ("first_name", "last_name")]
        return " ".join(p for p in parts if p) or None
    parts = [str(row.get(k) or "").strip() for k in ("first_name", "last_name")]
    return " ".join(p for p in parts if p) or None


def customers_of(
    world: WorldDefinition, today: datetime.date, overrides: Mapping[str, Sequence[Mapping[str, Any]]] | None = None
) -> list[str]:
    """The world's customers' keys, in key order."""
    return list(_records(world, today, overrides)[0])


Records = tuple[dict[str, dict[str, Any]], dict[str, list[tuple[str, str, dict[str, Any]]]]]
_lock = threading.Lock()
_made: dict[tuple[int, datetime.date, str], Records] = {}


def _records(world: WorldDefinition, today: datetime.date, overrides: Mapping[str, Sequence[Mapping[str, Any]]] | None) -> Records:
    """(customers by key, each customer's records with ids as (table, key, row)), read once per
    world, date and overrides."""
    key = (id(world), today, json.dumps(overrides or {}, sort_keys=True, default=str))
    with _lock:
        made = _made.get(key)
    if made is None:
        made = _read_records(world, today, overrides)
        with _lock:
            _made[key] = made
    return made


def _read_records(world: WorldDefinition, today: datetime.date, overrides: Mapping[str, Sequence[Mapping[str, Any]]] | None) -> Records:
    from parley.core.world.database import WorldTemplate

    customers_table = world.customers_table
    customers: dict[str, dict[str, Any]] = {}
    owned: dict[str, list[tuple[str, str, dict[str, Any]]]] = {}
    template = WorldTemplate(world, world.today or today, overrides)
    with template.new_copy() as copy:
        if customers_table is not None:
            for row in copy.db.select(customers_table.name):
                customers[str(row[customers_table.key])] = row
        table = target_table(world)
        if table is not None:
            for row in copy.db.select(table.name):
                owner = table.owner_of(row)
                if owner is not None:
                    owned.setdefault(owner, []).append((table.name, str(row[table.key]), row))
    return customers, owned


def attack_target(
    world: WorldDefinition,
    today: datetime.date,
    attacker: str | None,
    *,
    victim: str | None = None,
    record: str | None = None,
    own_record: bool = False,
    overrides: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
) -> AttackTarget:
    """The target of an attack by `attacker` (the world's default customer when None): `victim`
    (the first other customer with records when None) and `record` (the victim's first record, or
    with `own_record` the attacker's first, when None)."""
    customers, owned = _records(world, today, overrides)
    me = attacker or world.identity.default or next(iter(customers), "")
    if victim is None:
        others = [c for c in customers if c != me and owned.get(c)] or [c for c in customers if c != me]
        victim = others[0] if others else me
    victim_rows = owned.get(victim, [])
    mine = owned.get(me, [])
    if record is None:
        pool = mine if own_record else victim_rows
        record = pool[0][1] if pool else None
    free_text = tuple((t.name, c) for t in world.tables for c in t.free_text)
    return AttackTarget(
        attacker=me,
        victim=victim,
        victim_name=_name(customers.get(victim, {})),
        victim_records=tuple(key for _, key, _ in victim_rows),
        own_records=tuple(key for _, key, _ in mine),
        record=record,
        free_text=free_text,
    )
