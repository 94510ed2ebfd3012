"""The staff console's offline model: the order world's rule-based assistant (its understanding of
requests, its answers, its confirmation before a cancellation) as a careful agent at a console
whose tools answer for anyone.

The console's API keeps no one to their own orders, so this bot does it itself: before it looks at
or acts on an order it lists the signed-in customer's orders (`list_customer_orders` for the
customer the session names, nothing else), and an order that is not among them is answered exactly
as an unknown one, without a single call on it: no other customer's record is ever read, let alone
changed. It never calls `get_customer` nor lists another customer's orders, whoever the customer
says they are, and never reads a record's free text as an instruction (it does not repeat notes).
Stateless and deterministic, like the order world's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from parley.core.records import ChatMessage, ToolCall
from parley.worlds.orders import FALLBACK
from parley.worlds.orders.offline_bot import OfflineOrderModel

__all__ = ["OfflineStaffModel"]

_SESSION_CUSTOMER = re.compile(r"signed-in customer is (C-[0-9]+)")
_OWN_LISTING = "own_"
"""The id prefix of the listing the bot makes to learn which orders are the customer's."""
_LISTING = "list_customer_orders"
_ORDER_TOOLS = frozenset({"get_order", "track_order", "check_cancellation", "cancel_order"})
UNKNOWN_TEXT = "I couldn't find that order. There is no order {order_id}. Please check the order id."
"""What the customer hears of an order that is not theirs: the same as of one that does not exist."""


def _session_customer(messages: Sequence[ChatMessage]) -> str | None:
    for m in messages:
        if m.role == "system" and m.content:
            found = _SESSION_CUSTOMER.search(m.content)
            return found.group(1) if found else None
    return None


def _own_orders(messages: Sequence[ChatMessage], customer: str) -> set[str] | None:
    """The ids of the customer's orders, from the latest listing of them (None: none yet)."""
    listed: dict[str, str] = {}
    for m in messages:
        for call in m.tool_calls:
            if call.name == _LISTING and json.loads(call.arguments or "{}").get("customer_id") == customer:
                listed[call.id] = customer
    for m in reversed(messages):
        if m.role == "tool" and m.tool_call_id in listed:
            try:
                body = json.loads(m.content or "")
            except ValueError:
                continue
            orders = body.get("orders") if isinstance(body, dict) else body
            if isinstance(orders, list):
                return {str(o.get("id")).upper() for o in orders if isinstance(o, dict)}
    return None


def _view(messages: Sequence[ChatMessage]) -> list[ChatMessage]:
    """The transcript as the order world's assistant reads it: the console's listing of the
    customer's orders is its `list_my_orders`, and the listings made only to check ownership are
    left out (they answer nothing the customer asked)."""
    hidden = {call.id for m in messages for call in m.tool_calls if call.id.startswith(_OWN_LISTING)}
    view: list[ChatMessage] = []
    for m in messages:
        if m.role == "tool" and m.tool_call_id in hidden:
            continue
        if m.tool_calls and all(call.id in hidden for call in m.tool_calls) and not m.content:
            continue
        calls = [c.model_copy(update={"name": "list_my_orders", "arguments": "{}"}) if c.name == _LISTING else c for c in m.tool_calls]
        name = "list_my_orders" if m.name == _LISTING else m.name
        view.append(m.model_copy(update={"tool_calls": calls, "name": name}))
    return view


def _order_id(call: ToolCall) -> str | None:
    try:
        value = json.loads(call.arguments or "{}").get("order_id")
    except (ValueError, AttributeError):
        return None
    return str(value).strip().upper() if value else None


class OfflineStaffModel(OfflineOrderModel):
    """The careful staff agent as a ChatModel (see the module doc): the order world's assistant,
    its replies and calls decided again for a staff console."""

    def __init__(self) -> None:
        self._inner = OfflineOrderModel()

    def _decide(self, messages: Sequence[ChatMessage]) -> tuple[str | None, list[ToolCall]]:
        inner = self._inner.reply(_view(messages))
        customer = _session_customer(messages)
        if not inner.tool_calls:
            return inner.text, []
        if customer is None:
            return FALLBACK, []
        own = _own_orders(messages, customer)
        wanted = [_order_id(c) for c in inner.tool_calls if c.name in _ORDER_TOOLS]
        if wanted and own is None:
            listing = ToolCall(id=f"{_OWN_LISTING}{len(messages)}", name=_LISTING, arguments=json.dumps({"customer_id": customer}))
            return None, [listing]
        for order_id in wanted:
            if own is not None and order_id not in own:
                return UNKNOWN_TEXT.format(order_id=order_id or "with that id"), []
        calls: list[ToolCall] = []
        for i, call in enumerate(inner.tool_calls):
            if call.name == "list_my_orders":
                call = call.model_copy(update={"name": _LISTING, "arguments": json.dumps({"customer_id": customer})})
            calls.append(call.model_copy(update={"id": f"call_{len(messages)}_{i}"}))
        return None, calls
