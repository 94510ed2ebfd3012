"""The order world's slash commands in the live chat: `/database` (every order with whether it can
be cancelled now, and why not), `/orders [customer]` (a customer's orders) and `/order <id>` (one
order), read through the mock API's own store, as its admin view reads them."""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterable, Mapping
from typing import Any

import sqlite_utils

from parley.core.world import ChatCommand, ChatView, Refused, WorldDB
from parley.mockapi.order_store import OrderStore, OrderStoreError

__all__ = ["CHAT_COMMANDS", "ORDER_COLUMNS"]

ORDER_COLUMNS = ["Order", "Customer", "Placed", "Age (days)", "Status", "Total", "Cancellable", "Why"]
_CUSTOMER_ARG = re.compile(r"^(?:c(?:ustomer)?)?\s*[-_]?\s*([0-9]{1,10})$", re.IGNORECASE)
_ORDER_ARG = re.compile(r"^(?:[o0]rd(?:er)?)?\s*[-_#]?\s*([0-9]{1,10})$", re.IGNORECASE)


def normalize_order_id(text: str) -> str | None:
    """ORD-1003 from "ORD-1003", "ord 1003", "1003", "#1003"; None when it is no order id."""
    match = _ORDER_ARG.match(text.strip())
    return f"ORD-{match.group(1)}" if match else None


def normalize_customer_id(text: str) -> str | None:
    """C-200 from "C-200", "c200", "200"; None when it is no customer id."""
    match = _CUSTOMER_ARG.match(text.strip())
    return f"C-{match.group(1)}" if match else None


def _store(db: WorldDB, today: datetime.date) -> OrderStore:
    return OrderStore(sqlite_utils.Database(db.connection), today=today, in_memory=True)


def _admin_orders(db: WorldDB, today: datetime.date) -> list[dict[str, Any]]:
    return [order.model_dump(mode="json") for order in _store(db, today).admin_orders()]


def _row(order: Mapping[str, Any]) -> list[str]:
    check = order.get("cancellation") or {}
    return [
        str(order.get("id")),
        str(order.get("customer_id")),
        str(order.get("placed_date")),
        str(order.get("age_days")),
        str(order.get("status")),
        f"{float(order.get('total', 0)):.2f} {order.get('currency', '')}".strip(),
        ("yes" if check.get("eligible") else "no") if check else "?",
        str(check.get("reason") or ""),
    ]


def _table(title: str, orders: Iterable[Mapping[str, Any]]) -> ChatView:
    data = list(orders)
    return ChatView(kind="table", title=title, columns=list(ORDER_COLUMNS), rows=[_row(o) for o in data], data=data)


def _known_customers(orders: Iterable[Mapping[str, Any]]) -> list[str]:
    return sorted({str(o.get("customer_id")) for o in orders})


def _database(db: WorldDB, today: datetime.date, customer: str, arg: str | None) -> ChatView:
    return _table(f"All orders (today {today.isoformat()})", _admin_orders(db, today))


def _orders(db: WorldDB, today: datetime.date, customer: str, arg: str | None) -> ChatView:
    who = normalize_customer_id(arg) if arg else customer
    if who is None:
        raise Refused(f"{arg!r} is not a customer id; customer ids look like C-200.", reason="invalid_customer_id", kind="request")
    orders = _admin_orders(db, today)
    try:
        _store(db, today).customer_orders(who, acting_customer_id=who)
    except OrderStoreError as exc:
        known = _known_customers(orders)
        raise Refused(
            f"{exc.message} The customers are: {', '.join(known)} (e.g. /orders {known[0] if known else 'C-200'}).",
            reason=exc.reason,
            kind="request",
        ) from None
    mine = [o for o in orders if o.get("customer_id") == who]
    name = mine[0].get("customer_name") if mine else None
    return _table(f"Orders of {who}" + (f" ({name})" if name else ""), mine)


def _order(db: WorldDB, today: datetime.date, customer: str, arg: str | None) -> ChatView:
    order_id = normalize_order_id(arg or "")
    if order_id is None:
        raise Refused(f"{arg!r} is not an order id; order ids look like ORD-1003.", reason="invalid_order_id", kind="request")
    order = next((o for o in _admin_orders(db, today) if o.get("id") == order_id), None)
    if order is None:
        raise Refused(f"There is no order {order_id}. /database lists them all.", reason="order_not_found", kind="request")
    check = order.get("cancellation") or {}
    summary = (
        f"{order_id} of {order.get('customer_id')}: {order.get('status')}, placed {order.get('placed_date')} "
        f"({order.get('age_days')} days ago); {check.get('message', '')}"
    ).strip()
    return ChatView(kind="json", title=f"Order {order_id}", text=summary, data=order)


CHAT_COMMANDS = [
    ChatCommand(name="database", usage="/database", summary="All orders with cancellation eligibility", show=_database),
    ChatCommand(name="orders", usage="/orders [customer_id]", summary="A customer's orders (default: the current one)", show=_orders),
    ChatCommand(
        name="order",
        usage="/order <order_id>",
        summary="Details of one order",
        show=_order,
        argument="an order id",
        example="/order ORD-1003",
    ),
]
