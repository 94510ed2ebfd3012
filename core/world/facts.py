"""A world as a reader of files sees it (parley.core.records.WorldFacts): its tables with their
keys, columns and state fields, its tools and its customers, made once per world."""

from __future__ import annotations

import datetime
import threading

from parley.core.records import TableFacts, WorldFacts
from parley.core.world.declaration import WorldDefinition

__all__ = ["world_facts"]

_lock = threading.Lock()
_made: dict[int, WorldFacts] = {}


def world_facts(world: WorldDefinition, today: datetime.date | None = None) -> WorldFacts:
    """The facts of `world` (its template's keys read once, at the world's own date or `today`)."""
    with _lock:
        if id(world) in _made:
            return _made[id(world)]
    from parley.core.world.database import WorldTemplate

    template = WorldTemplate(world, world.today or today or datetime.date.today())
    tables: dict[str, TableFacts] = {}
    with template.new_copy() as copy:
        for table in world.tables:
            keys = tuple(str(row[table.key]) for row in copy.db.select(table.name))
            tables[table.name] = TableFacts(
                name=table.name,
                key=table.key,
                columns=tuple(table.columns),
                state_field=table.state_field,
                choices={k: tuple(str(v) for v in values) for k, values in table.choices.items()},
                keys=keys,
                id_pattern=table.id_pattern,
                fixed_keys=table.fixed_keys,
                inputs=tuple(table.inputs),
            )
    facts = WorldFacts(
        name=world.name,
        tables=tables,
        tools=tuple(world.tool_names),
        customers=world.identity.customers,
        default_customer=world.identity.default,
    )
    with _lock:
        _made[id(world)] = facts
    return facts
