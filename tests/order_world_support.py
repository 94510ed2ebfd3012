"""The order world as the engine runs it, for tests: a conversation's copy of its database, and
the order world's tools bound to a customer on such a copy."""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from parley.core.records import WorldDiff
from parley.core.world import WorldCopy, WorldDefinition, WorldTemplate, WorldTools, load_world


@lru_cache(maxsize=1)
def orders_world() -> WorldDefinition:
    """The shipped order world's declaration."""
    return load_world("orders")


@lru_cache(maxsize=8)
def _template(today: datetime.date) -> WorldTemplate:
    return WorldTemplate(orders_world(), today)


def order_copy(today: datetime.date | None = None, rows: Mapping[str, Sequence[Mapping[str, Any]]] | None = None) -> WorldCopy:
    """A fresh copy of the order world's database at `today` (None: the real date), with `rows`
    (table -> rows, merged by key) written over the shipped data."""
    day = today or datetime.date.today()
    template = _template(day) if not rows else WorldTemplate(orders_world(), day, rows)
    return template.new_copy()


def order_tools(copy: WorldCopy, customer_id: str = "C-100") -> WorldTools:
    """The order world's tools on `copy`, acting for `customer_id`."""
    return WorldTools(orders_world(), copy, customer_id)


def status(state: WorldDiff | None, order_id: str) -> str | None:
    """An order's status at the end of a conversation, from its change or its watched row (None:
    the conversation neither changed nor watched it)."""
    assert state is not None, "the conversation has no final state"
    row = state.final_row("orders", order_id)
    return None if row is None else row.get("status")


def audit(state: WorldDiff | None) -> list[dict[str, Any]]:
    """The audit trail's rows the conversation wrote, oldest first."""
    assert state is not None, "the conversation has no final state"
    return [dict(c.after or {}) for c in state.changes if c.table == "audit"]


def every_order(copy: WorldCopy) -> list[str]:
    """Every order of `copy` as a watched record (`orders/ORD-1001`...): a conversation run with
    these watched ends with each order's final row, changed or not."""
    return [f"orders/{row['id']}" for row in copy.db.select("orders")]
