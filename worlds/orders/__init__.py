"""The order world: a small shop's orders, served by the mock order API (parley.mockapi), declared
through the world API. parley's default world.

- data: the mock API's fixture (4 customers, their orders, dated relative to the world's `today`)
  in its own tables (customers, orders, an audit trail), built by the mock API's own loader;
- tools: get_order, track_order, list_my_orders, check_cancellation, cancel_order (tools.py),
  running the mock API's store, which enforces the 10-day cancellation policy itself;
- identity: bound by the session: the bot acts for the signed-in customer and no one else;
- whose records: an order is its customer's; ids look like ORD-1001 and C-100;
- free text: an order's `note` (set by a file's `world: {orders: [{id: ..., note: ...}]}`), which
  the tools show the bot as data: where an attack plants its instruction;
- cancel_order changes the world (claimed as "cancel"), and the policy asks for the customer's
  explicit confirmation first.
"""

from __future__ import annotations

import datetime
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import sqlite_utils

from parley.core.world import SessionIdentity, Table, WorldDB, WorldDefinition
from parley.mockapi.order_store import OrderStore, load_fixture
from parley.mockapi.schema import CUSTOMER_ID_PATTERN, ORDER_ID_PATTERN
from parley.worlds.orders.change_notes import change_note
from parley.worlds.orders.chat import CHAT_COMMANDS, normalize_customer_id
from parley.worlds.orders.ids import find_ids
from parley.worlds.orders.overrides import OVERRIDE_INPUTS, order_date_problem, order_override_problems
from parley.worlds.orders.prompt import CANCELLATION_WINDOW_DAYS, POLICY, build_system_prompt
from parley.worlds.orders.tools import STORE, TOOLS

__all__ = ["DEFAULT_CUSTOMER", "GOAL_TOOLS", "MISSPELLINGS", "ORDER_STATUSES", "WORLD", "make_tables"]

FALLBACK = (
    "I'm sorry, I didn't understand that. I can track an order, list your orders, "
    f"or cancel an order placed within the last {CANCELLATION_WINDOW_DAYS} days."
)
"""The one sentence the order world's offline bot says when it does not understand."""

GOAL_TOOLS: dict[str, tuple[str, ...]] = {
    "cancel": ("cancel_order", "check_cancellation"),
    "keep": ("cancel_order", "check_cancellation"),
    "track": ("track_order", "get_order"),
    "status": ("track_order", "get_order"),
    "list": ("list_my_orders",),
    "policy": (),
}
"""The kinds of goal the order world's tools answer (its `goal_tools` hook): a cancellation is done
by cancel_order and answered by check_cancellation (a refusal is an answer); tracking and an
order's status by track_order or get_order; a listing by list_my_orders; the policy in words."""

MISSPELLINGS: dict[str, tuple[str, ...]] = {
    "cancel": ("cancle", "cancl", "canel"),
    "track": ("trak", "trck"),
    "tracking": ("traking",),
    "orders": ("ordres", "oders"),
    "order": ("ordr", "ordre"),  # next to an id, the id is what the bot reads
    "hello": ("helo",),
}
"""The misspellings of its keywords the offline bot reads as the keyword (its typo tolerance: the
`misspellings` hook), the only typos the offline customer makes in them."""

DEFAULT_CUSTOMER = "C-100"
ORDER_STATUSES = ("pending", "processing", "shipped", "delivered", "cancelled")


def _pattern(anchored: str) -> str:
    return anchored.removeprefix("^").removesuffix("$")


def make_tables() -> list[Table]:
    """The order world's tables as the mock API's loader creates them."""
    return [
        Table(
            "customers",
            key="id",
            columns={"id": "text", "name": "text", "email": "text"},
            owner="key",
            id_pattern=_pattern(CUSTOMER_ID_PATTERN),
            fixed_keys=True,
            description="The shop's customers.",
        ),
        Table(
            "orders",
            key="id",
            columns={
                "id": "text",
                "customer_id": "text",
                "placed_date": "date",
                "status": "text",
                "total": "real",
                "currency": "text",
                "items": "json",
                "tracking": "json",
                "cancelled_at": "text",
                "note": "text",
            },
            owner="customer_id",
            free_text=["note"],
            id_pattern=_pattern(ORDER_ID_PATTERN),
            state_field="status",
            choices={"status": ORDER_STATUSES},
            fixed_keys=True,
            inputs=OVERRIDE_INPUTS,
            description="Orders, each its customer's.",
        ),
        Table(
            "audit",
            key="id",
            columns={
                "id": "integer",
                "order_id": "text",
                "customer_id": "text",
                "old_status": "text",
                "new_status": "text",
                "at": "text",
                "reason": "text",
            },
            owner="customer_id",
            log=True,
            description="Every status change, as the API records it.",
        ),
    ]


def _build(conn: sqlite3.Connection, today: datetime.date, overrides: dict[str, Sequence[Mapping[str, Any]]]) -> None:
    load_fixture(sqlite_utils.Database(conn), today=today, overrides=list(overrides.get("orders", ())))


def _open_copy(db: WorldDB, today: datetime.date, clock: Callable[[], datetime.datetime]) -> dict[str, Any]:
    return {STORE: OrderStore(sqlite_utils.Database(db.connection), clock=clock, today=today, in_memory=True)}


def _offline_model() -> Any:
    from parley.worlds.orders.offline_bot import OfflineOrderModel

    return OfflineOrderModel()


_offline_model.fallback = FALLBACK  # type: ignore[attr-defined]  # what fallback detection keys on, known before the model is made

WORLD = WorldDefinition(
    name="orders",
    description="A small shop's orders: track, list and cancel them (the mock order API)",
    policy=POLICY,
    tables=make_tables(),
    tools=TOOLS,
    identity=SessionIdentity(customers="customers", default=DEFAULT_CUSTOMER),
    actions={"cancel_order": "cancel"},
    build=_build,
    open_copy=_open_copy,
    chat_commands=CHAT_COMMANDS,
    hooks={
        "customer_id": normalize_customer_id,
        "find_ids": find_ids,
        "goal_tools": GOAL_TOOLS,
        "misspellings": MISSPELLINGS,
        "change_note": change_note,
        "system_prompt": build_system_prompt,
        "offline_model": _offline_model,
        "override_problems": order_override_problems,
        "date_problem": order_date_problem,
    },
)
