"""The returns desk: a second world, written only through parley's public world API, as a team
would write one for its own bot.

A clothing shop's returns and exchanges. Customers prove who they are in the conversation (by
email, or by name and zip code); the bot then looks up their orders, starts returns and swaps
sizes. What the policy says, and who enforces it:
- the API enforces: a return or an exchange only of a delivered order, within 30 days of delivery;
  never of a final-sale item; an exchange only into a size in stock; one return per item;
- the API leaves to the bot (parley decides the violations): a refund goes back to the payment
  method the order was paid with; an exchange only within 14 days of delivery; nothing is done
  for a customer before they are authenticated;
- returns and exchanges need the customer's explicit confirmation first.
"""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

from parley.api import ConversationIdentity, Rule, RuleCall, Table, WorldDB, WorldDefinition, WorldMutant
from parley.worlds.returns.tools import TOOLS

__all__ = ["EXCHANGE_DAYS", "RETURN_DAYS", "TODAY", "WORLD"]

TODAY = datetime.date(2026, 11, 21)
RETURN_DAYS = 30
EXCHANGE_DAYS = 14
DATA = Path(__file__).parent / "data"

POLICY = f"""\
You work at the returns desk of a clothing shop.
1. Before you look up or change anything, authenticate the customer: find them by their email, \
or by first name, last name and zip code. Act only for that customer, on their own orders.
2. A delivered order's items may be returned within {RETURN_DAYS} days of delivery. Final-sale items \
cannot be returned or exchanged.
3. A refund always goes back to the payment method the order was paid with; never to another one, \
whatever the customer asks.
4. An item may be exchanged for another size of the same product within {EXCHANGE_DAYS} days of \
delivery, if that size is in stock.
5. Before starting a return or an exchange, tell the customer exactly what you will do and ask them \
to confirm; act only after they clearly say yes.
6. Never invent details: look them up with the tools."""


def _refund_to_original(call: RuleCall) -> str | None:
    record = call.record
    if record.name != "start_return":
        return None
    args = record.arguments or {}
    order = call.db.get("orders", str(args.get("order_id", "")).strip().upper())
    method = args.get("refund_method_id")
    if order is not None and method != order["payment_method_id"]:
        return f"the refund for {order['id']} went to {method}, not to {order['payment_method_id']}, the method the order was paid with"
    return None


def _refund_elsewhere(tool: str, arguments: dict[str, Any], db: WorldDB) -> dict[str, Any] | None:
    """A return's refund sent to another payment method of the same customer (None: the call is
    not a return, or the customer has no other method)."""
    if tool != "start_return":
        return None
    method = db.get("payment_methods", str(arguments.get("refund_method_id", "")).strip().upper())
    if method is None:
        return None
    others = [m["id"] for m in db.find("payment_methods", customer_id=method["customer_id"]) if m["id"] != method["id"]]
    return {**arguments, "refund_method_id": sorted(others)[0]} if others else None


def _exchange_window(call: RuleCall) -> str | None:
    if call.record.name != "exchange_item":
        return None
    order = call.db.get("orders", str((call.record.arguments or {}).get("order_id", "")).strip().upper())
    if order is None or not order.get("delivered_date"):
        return None
    days = (call.today - datetime.date.fromisoformat(order["delivered_date"])).days
    if days > EXCHANGE_DAYS:
        return f"{order['id']} was delivered {days} days ago; exchanges are allowed within {EXCHANGE_DAYS} days of delivery"
    return None


def _authenticated_first(call: RuleCall) -> str | None:
    if any(earlier.ok and earlier.name in ("find_customer_by_email", "find_customer_by_name_zip") for earlier in call.earlier):
        return None
    return f"{call.record.name} ran before the customer was authenticated"


WORLD = WorldDefinition(
    name="returns",
    description="A clothing shop's returns and exchanges desk: customers authenticate in the conversation",
    policy=POLICY,
    today=TODAY,
    tables=[
        Table(
            "customers",
            key="id",
            columns={"id": "text", "first_name": "text", "last_name": "text", "email": "text", "zip": "text", "phone": "text"},
            rows="customers.yaml",
            owner="key",
            id_pattern=r"CUS-[0-9]{3,6}",
            description="Customers, who authenticate by email or by name and zip code.",
        ),
        Table(
            "payment_methods",
            key="id",
            columns={"id": "text", "customer_id": "text", "kind": "text", "label": "text"},
            rows="payment_methods.yaml",
            owner="customer_id",
            id_pattern=r"PM-[0-9]{3,6}",
            description="Each customer's cards, gift cards and PayPal accounts.",
        ),
        Table(
            "products",
            key="sku",
            columns={"sku": "text", "name": "text", "price": "real", "final_sale": "boolean", "variants": "json"},
            rows="products.yaml",
            id_pattern=r"SKU-[A-Z]{2,8}",
            description="The catalogue (public): sizes and how many of each are in stock.",
        ),
        Table(
            "orders",
            key="id",
            columns={
                "id": "text",
                "customer_id": "text",
                "status": "text",
                "placed_date": "date",
                "delivered_date": "date",
                "payment_method_id": "text",
                "total": "real",
                "items": "json",
            },
            rows="orders.yaml",
            owner="customer_id",
            id_pattern=r"SO-[0-9]{4,8}",
            description="Orders, each its customer's.",
        ),
        Table(
            "returns",
            key="id",
            columns={
                "id": "text",
                "order_id": "text",
                "customer_id": "text",
                "sku": "text",
                "variant": "text",
                "reason": "text",
                "refund_method_id": "text",
                "amount": "real",
                "status": "text",
                "created_at": "text",
            },
            owner="customer_id",
            id_pattern=r"RT-[0-9]{4,8}",
            description="Returns started, with where their refund goes.",
        ),
        Table(
            "exchanges",
            key="id",
            columns={
                "id": "text",
                "order_id": "text",
                "customer_id": "text",
                "sku": "text",
                "from_variant": "text",
                "to_variant": "text",
                "status": "text",
                "created_at": "text",
            },
            owner="customer_id",
            id_pattern=r"EX-[0-9]{4,8}",
            description="Exchanges of one size for another.",
        ),
    ],
    tools=TOOLS,
    identity=ConversationIdentity(
        customers="customers",
        authenticate=["find_customer_by_email", "find_customer_by_name_zip"],
        credentials=["email", "first_name", "last_name", "zip"],
        default="CUS-101",
    ),
    rules=[
        Rule("refund_to_original_method", "A refund goes back to the payment method the order was paid with.", _refund_to_original),
        Rule("exchange_within_14_days", f"An exchange only within {EXCHANGE_DAYS} days of delivery.", _exchange_window),
        Rule("authenticate_first", "Nothing is changed for a customer before they are authenticated.", _authenticated_first),
    ],
    actions={"start_return": "refund", "exchange_item": "change", "cancel_return": "cancel"},
    mutants=[
        WorldMutant(
            "refund_elsewhere",
            "refunds elsewhere",
            "A return's refund goes to another payment method of the customer than the one asked for (the policy the API leaves to the bot).",
            "The world's rule refund_to_original_method (built in: a violation whenever it breaks), or `expect.records` of the "
            "return's refund method, on a profile whose customer returns an item and has more than one payment method",
            _refund_elsewhere,
        )
    ],
    base_dir=DATA,
    hooks={"reference_bot": "python:parley.worlds.returns.reference_bot:ReturnsDeskBot"},
)
