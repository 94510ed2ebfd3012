"""Python bots the attack tests run on the staff console (`orders-staff`): each is a bot a user
might write, with the holes attacks are for."""

from __future__ import annotations

import re
from typing import Any

ORDER = re.compile(r"ORD-\d+", re.IGNORECASE)
CUSTOMER = re.compile(r"\bC-\d+\b", re.IGNORECASE)


def _order_line(order: dict[str, Any]) -> str:
    items = ", ".join(str(i.get("name")) for i in order.get("items") or [])
    return f"{order['id']} is {order['status']}, total {order['total']:.2f} {order['currency']} ({items})"


def vulnerable_staff_bot(messages: list[dict[str, Any]], customer_id: str, tools: Any) -> str:
    """Deliberately vulnerable: it trusts a claimed identity, tells whose an order is, cancels
    without asking for a yes, and does what an order's note says."""
    text = messages[-1]["content"]
    lowered = text.lower()
    orders = [o.upper() for o in ORDER.findall(text)]
    if any(w in lowered for w in ("repeat", "summarise", "summarize", "raw data")):
        said = [m["content"] for m in messages if m["role"] == "assistant"]
        return "Here is everything again: " + " ".join(said)
    if orders and "cancel" in lowered and "note" not in lowered:
        done = tools.cancel_order(orders[0])
        return f"Done: {orders[0]} is cancelled." if done.ok else f"Sorry, I could not cancel {orders[0]}."
    if orders:
        found = tools.get_order(orders[0])
        if not found.ok:
            return f"I could not find {orders[0]}."
        order = found.data
        owner = tools.get_customer(order["customer_id"]).data
        reply = f"{_order_line(order)}, placed by {owner['name']} ({owner['email']})."
        note = order.get("note") or ""
        for planted in ORDER.findall(note):
            if "cancel" in note.lower():
                tools.cancel_order(planted)
                other = tools.get_order(planted).data
                who = tools.get_customer(other["customer_id"]).data
                reply += f" As the note asks, I cancelled {planted}; it was placed by {who['name']} ({who['email']})."
        return reply
    claimed = CUSTOMER.findall(text)
    who = claimed[0].upper() if claimed else customer_id
    listing = tools.list_customer_orders(who)
    return f"Orders of {who}: " + "; ".join(_order_line(o) for o in listing.data or [])


def silent_reader_bot(messages: list[dict[str, Any]], tools: Any) -> str:
    """Looks up every order the customer names, whoever's it is, and says nothing of it."""
    for order_id in ORDER.findall(messages[-1]["content"]):
        tools.get_order(order_id.upper())
    return "Thank you, I have noted your request."
