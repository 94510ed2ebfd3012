"""The returns desk's reference bot: a careful, rule-based assistant written as any team would write
a `python:` bot, so the returns world's suite runs offline.

    parley run parley-suite/returns --bot python:parley.worlds.returns.reference_bot:ReturnsDeskBot

One instance per conversation (parley makes one for each). Each customer message is read for an
email, or a name and zip code (to authenticate), an order id (SO-5001), an item (its SKU or its
product's name), a size, and what the customer wants (a return, an exchange, cancelling a return).
The bot authenticates before it looks anything up, says what it will do and asks for a yes before
a return or an exchange, refunds to the order's own payment method, and keeps exchanges within 14
days of delivery itself (the API would allow 30).
"""

from __future__ import annotations

import datetime
import re
from typing import Any

EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
ORDER = re.compile(r"\bSO-?\s*(\d{4,8})\b", re.IGNORECASE)
SKU = re.compile(r"\bSKU-[A-Z]{2,8}\b", re.IGNORECASE)
RETURN_ID = re.compile(r"\bRT-?\s*(\d{4,8})\b", re.IGNORECASE)
ZIP = re.compile(r"\b(\d{5})\b")
NAME = re.compile(r"\b(?:i am|i'm|my name is|this is|name:?)\s+([A-Z][a-z]+)\s+([A-Z][a-z]+)", re.IGNORECASE)
SIZE = re.compile(r"\b(?:size\s+|an?\s+|in\s+)?(XS|S|M|L|XL|XXL|3[6-9]|4[0-7])\b(?:\s+instead)?", re.IGNORECASE)
YES = re.compile(r"^\s*(yes|yeah|yep|sure|please do|go ahead|confirm(?:ed)?|ok(?:ay)?|do it|correct)\b", re.IGNORECASE)
NO = re.compile(r"^\s*(no|nope|don't|do not|cancel that|stop|wait)\b", re.IGNORECASE)
BYE = re.compile(r"\b(bye|goodbye|that's all|that is all|nothing else|thanks,? that's it)\b", re.IGNORECASE)
EXCHANGE_DAYS = 14


def _wants(text: str) -> str | None:
    lowered = text.lower()
    if "cancel" in lowered and "return" in lowered:
        return "cancel_return"
    if any(word in lowered for word in ("exchange", "swap", "different size", "another size", "bigger", "smaller")):
        return "exchange"
    if any(word in lowered for word in ("return", "refund", "send back", "send it back", "money back")):
        return "return"
    if any(word in lowered for word in ("status", "where is", "track", "order")):
        return "status"
    return None


class ReturnsDeskBot:
    """One conversation of the returns desk (see the module doc)."""

    def __init__(self) -> None:
        self.customer: str | None = None
        self.details: dict[str, Any] = {}
        self.intent: str | None = None
        self.order: dict[str, Any] | None = None
        self.sku: str | None = None
        self.size: str | None = None
        self.reason: str | None = None
        self.pending: tuple[str, dict[str, Any]] | None = None

    def __call__(self, messages: list[dict[str, str]], tools: Any) -> str:
        text = messages[-1]["content"] if messages else ""
        if self.pending is not None:
            return self._answer_to_confirmation(text, tools)
        if BYE.search(text) and self.intent is None:
            return "You're welcome. Goodbye!"
        wanted = _wants(text)
        if wanted is not None and not (wanted == "status" and self.intent is not None):
            self.intent = wanted  # naming an order while returning something is not a new request
        if self.customer is None:
            reply = self._authenticate(text, tools)
            if reply is not None:
                return reply
        self._read(text, tools)
        return self._next_step(tools)

    # -- reading the customer -----------------------------------------------------------------------

    def _authenticate(self, text: str, tools: Any) -> str | None:
        email = EMAIL.search(text)
        if email:
            found = tools.find_customer_by_email(email=email.group(0))
        else:
            name, zip_code = NAME.search(text), ZIP.search(text)
            if not (name and zip_code):
                return (
                    "I can help with that. First, please confirm who you are: the email address on your account, "
                    "or your first name, last name and zip code."
                )
            found = tools.find_customer_by_name_zip(first_name=name.group(1), last_name=name.group(2), zip=zip_code.group(1))
        if not found.ok:
            return "I couldn't find an account with those details. Could you check them, or give me the email address on the account?"
        self.customer = found.data["customer_id"]
        self.details = tools.get_customer(customer_id=self.customer).data or {}
        return None

    def _read(self, text: str, tools: Any) -> None:
        order = ORDER.search(text)
        if order:
            order_id = f"SO-{order.group(1)}"
            if order_id not in self.details.get("orders", []):
                # not on the customer's account: never looked up, so nothing of it is shown
                self.order = {"foreign": True, "id": order_id}
            else:
                record = tools.get_order(order_id=order_id)
                self.order = record.data if record.ok else {"missing": True, "id": order_id}
                self.sku = None
        elif self.order is None and len(self.details.get("orders", [])) == 1:
            record = tools.get_order(order_id=self.details["orders"][0])
            self.order = record.data if record.ok else None
        if self.order and "items" in self.order:
            sku = SKU.search(text)
            skus = [item["sku"] for item in self.order["items"]]
            if sku and sku.group(0).upper() in skus:
                self.sku = sku.group(0).upper()
            elif self.sku is None:
                named = [s for s in skus if self._product_named(s, text, tools)]
                if len(named) == 1:
                    self.sku = named[0]
                elif len(skus) == 1:
                    self.sku = skus[0]
        size = SIZE.search(text)
        if size and self.intent == "exchange":
            self.size = size.group(1).upper()
        if "because" in text.lower():
            self.reason = text[text.lower().index("because") :].strip()[:200]

    def _product_named(self, sku: str, text: str, tools: Any) -> bool:
        product = tools.get_product(sku=sku).data or {}
        words = [w for w in re.findall(r"[a-z]+", product.get("name", "").lower()) if len(w) > 3]
        return any(w in text.lower() for w in words)

    # -- what to do next ------------------------------------------------------------------------------

    def _next_step(self, tools: Any) -> str:
        if self.intent is None:
            return "How can I help you today: a return, an exchange, or a question about an order?"
        if self.intent == "cancel_return":
            return "Which return should I cancel? Its id looks like RT-9001."
        if self.order is None:
            orders = ", ".join(self.details.get("orders", []))
            return f"Which order is it about? Your orders are: {orders}."
        if self.order.get("missing"):
            return f"I can't find an order {self.order['id']}. Could you check the order id?"
        if self.order.get("foreign"):
            return f"Order {self.order['id']} isn't on your account, so I can't look at it or act on it."
        if self.intent == "status":
            return self._status()
        if self.sku is None:
            names = ", ".join(item["sku"] for item in self.order["items"])
            return f"Which item of {self.order['id']} is it? The items are: {names}."
        delivered = self.order.get("delivered_date")
        if self.order["status"] != "delivered" or not delivered:
            return f"Order {self.order['id']} is {self.order['status']}; returns and exchanges are possible once it is delivered."
        if self.intent == "exchange":
            return self._offer_exchange(tools, delivered)
        return self._offer_return()

    def _status(self) -> str:
        order = self.order or {}
        when = f", delivered on {order['delivered_date']}" if order.get("delivered_date") else ""
        return f"Order {order.get('id')} is {order.get('status')}{when}."

    def _offer_return(self) -> str:
        assert self.order is not None
        method = self.order["payment_method_id"]
        label = next((m["label"] for m in self.details.get("payment_methods", []) if m["id"] == method), method)
        self.pending = (
            "start_return",
            {"order_id": self.order["id"], "sku": self.sku, "reason": self.reason or "customer request", "refund_method_id": method},
        )
        return f"I can start a return of {self.sku} from order {self.order['id']}, refunded to {label}, the card the order was paid with. Shall I go ahead?"

    def _offer_exchange(self, tools: Any, delivered: str) -> str:
        assert self.order is not None
        days = (_today(tools) - datetime.date.fromisoformat(delivered)).days
        if days > EXCHANGE_DAYS:
            return (
                f"Order {self.order['id']} was delivered {days} days ago; exchanges are possible within {EXCHANGE_DAYS} days of delivery, "
                "but I can start a return instead if you like."
            )
        if self.size is None:
            return f"Which size would you like instead for {self.sku}?"
        self.pending = ("exchange_item", {"order_id": self.order["id"], "sku": self.sku, "new_variant": self.size})
        return f"I can exchange {self.sku} from order {self.order['id']} for size {self.size}. Shall I go ahead?"

    def _answer_to_confirmation(self, text: str, tools: Any) -> str:
        assert self.pending is not None
        name, arguments = self.pending
        if NO.search(text):
            self.pending = None
            self.intent = None
            return "No problem, I haven't changed anything. Is there anything else I can do?"
        if not YES.search(text):
            return "Please answer yes or no: shall I go ahead?"
        self.pending = None
        self.intent = None
        record = tools.call(name, **arguments)
        if not record.ok:
            return f"I couldn't do that: {record.result.split('] ', 1)[-1]}"
        data = record.data or {}
        if name == "start_return":
            return f"Done: return {data.get('return_id')} is started; {data.get('refund')} will be refunded to {data.get('refund_to')}."
        return f"Done: exchange {data.get('exchange_id')} is started, size {data.get('to')} is on its way."


def _today(tools: Any) -> datetime.date:
    from parley.worlds.returns import TODAY

    return TODAY
