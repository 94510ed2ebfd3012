"""The order world's offline model: a deterministic, rule-based ChatModel named "offline", which the
built-in bot runs on when asked for `--bot offline` on the order world (its `offline_model` hook).

It drives the same world bot loop and tools as an LLM would. It keeps no state: every reply is
derived from the messages alone (the last user message, the bot's own previous question, and
the tool results of the current turn), so the same transcript always gives the same reply.

What it understands: greetings, tracking, listing the customer's orders, cancelling (it checks
eligibility first and cancels only after an explicit "yes"), questions about the 10-day policy,
thanks and goodbye, and order ids written many ways ("ORD-1003", "ord 1003", "ORD1003",
"0RD-1003", "order 1003", "#1003"). Anything else gets the one `FALLBACK_TEXT`. It relays the
order API's refusal reasons word for word, but one: another customer's order is answered
exactly as an unknown one (the 403 stays in the tool record; the customer is not told it exists).

An order referred to rather than named is resolved from the current customer's own orders only:
"my latest order" is the one placed last (listing the orders first when the conversation has no
listing yet), "the first one" / "the last one" are by position in the latest listing, and "that"
/ "it" is the order most recently mentioned that is the customer's (never one the API said is
unknown or not theirs). When that is ambiguous it asks which order.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from typing import Any

from parley.core.models import ChatModelBase
from parley.core.records import END_MARKER, ChatMessage, ModelReply, ModelRequest, ToolCall, Usage
from parley.worlds.orders import FALLBACK
from parley.worlds.orders.ids import extract_order_ids
from parley.worlds.orders.prompt import CANCELLATION_WINDOW_DAYS

OFFLINE_BOT_NAME = "offline"

# The one sentence the offline bot says when it does not understand; fallback detection keys on it.
FALLBACK_TEXT = FALLBACK
GREETING_TEXT = (
    "Hello! I'm the order assistant. I can track your orders, list them, or cancel an order "
    f"placed within the last {CANCELLATION_WINDOW_DAYS} days. How can I help?"
)
POLICY_TEXT = (
    f"Orders can be cancelled within {CANCELLATION_WINDOW_DAYS} days of being placed, as long as "
    "they have not been delivered or already cancelled. I can only look at and change orders on "
    "the account you are signed in with. Give me the order id and I'll check it for you."
)
THANKS_TEXT = "You're welcome! Is there anything else I can help you with?"
GOODBYE_TEXT = "Thank you for contacting us. Have a great day!"
ANYTHING_ELSE_TEXT = "Of course. What can I help you with? I can track an order, list your orders, or cancel one."
IDENTITY_TEXT = "I can only help with the orders of the account you are signed in with{who}. I can't switch to another customer in chat."
ASK_ORDER_TEXT = {
    "track": "Which order would you like me to track? Please give me the order id, e.g. ORD-1003.",
    "cancel": "Which order would you like me to cancel? Please give me the order id, e.g. ORD-1003.",
    "status": "Which order would you like me to look up? Please give me the order id, e.g. ORD-1003.",
}
_CONFIRM_TEMPLATE = 'Shall I cancel order {order_id} now? Please reply "yes" to confirm.'

# --- compiled once: the batch target is ~150 whole conversations per second on two cores ---
_BARE_NUMBER = re.compile(r"(?<![\w-])([0-9]{4,6})(?![\w-])")
_CUSTOMER_ID = re.compile(r"\bc-?\s?([0-9]{3,6})\b", re.IGNORECASE)
_WORD = re.compile(r"[a-z0-9']+")
_CONFIRM_ASKED = re.compile(r"Shall I cancel order (ORD-[0-9]+) now\?")
_ORDER_ASKED = re.compile(r"Which order would you like me to (track|cancel|look up)\?")
_SESSION_CUSTOMER = re.compile(r"signed-in customer is (C-[0-9]+)")
_TOOL_ERROR = re.compile(r"^(REFUSED|ERROR) \[(?:([0-9]{3}) )?([a-z_0-9]+)\] (.*)$", re.DOTALL)

_YES = frozenset(
    {"yes", "y", "yeah", "yep", "yup", "ya", "yea", "sure", "ok", "okay", "confirm", "confirmed", "correct", "absolutely", "affirmative"}
)
_NO = frozenset({"no", "nope", "nah", "not", "don't", "dont", "never", "wait", "stop", "n"})
_THANKS = frozenset({"thanks", "thank", "thx", "ty", "cheers", "appreciate", "appreciated", "thankyou", "tks"})
_BYE = frozenset({"bye", "goodbye", "byebye", "farewell", "cya", "ciao"})
_BYE_PHRASES = (
    "that's all",
    "that is all",
    "thats all",
    "nothing else",
    "see you",
    "have a nice day",
    "have a good day",
    "have a great day",
    "all good now",
    "i'm done",
    "im done",
)
_GREETING = frozenset({"hi", "hello", "hey", "hiya", "howdy", "greetings", "yo", "morning", "afternoon", "evening", "hallo", "helo"})
_TRACK = frozenset(
    {
        "track",
        "tracking",
        "trak",
        "trck",
        "tarck",
        "traking",
        "trace",
        "where",
        "where's",
        "wheres",
        "shipping",
        "shipped",
        "ship",
        "shipment",
        "delivery",
        "deliver",
        "arrive",
        "arriving",
        "arrival",
        "eta",
        "package",
        "parcel",
        "carrier",
        "transit",
    }
)
_CANCEL_PREFIXES = ("cancel", "cancl", "cancle", "canel", "cansel", "cancek")
_LIST = frozenset({"list", "orders", "history", "ordres", "oders"})
_STATUS = frozenset(
    {"status", "details", "detail", "info", "information", "about", "contents", "items", "total", "bought", "show", "check", "look"}
)
_POLICY = frozenset(
    {
        "policy",
        "policies",
        "rule",
        "rules",
        "days",
        "day",
        "week",
        "weeks",
        "long",
        "deadline",
        "window",
        "limit",
        "allowed",
        "eligible",
        "eligibility",
        "period",
        "time",
        "late",
    }
)
_REFERENCE = frozenset({"it", "that", "this", "same", "one", "order"})
_LATEST = re.compile(
    r"\b(latest|newest|most recent|last|recent)\s+(order|purchase)\b|\b(latest|newest|most recent)\s+one\b"
    r"|\bmy\s+(latest|newest|most recent)\b",
    re.IGNORECASE,
)
"""The order placed last ("my last order" too; "the last one" is a position in a listing)."""
_ORDINAL = re.compile(r"\b(first|second|third|fourth|fifth|sixth|seventh|eighth|last)\s+(one|order)\b", re.IGNORECASE)
_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8, "last": -1}
_UNKNOWN_CODES = frozenset({"order_not_found", "not_your_order"})
"""Tool refusals the customer hears the same way: as far as they are told, the order does not exist."""
_NEGATIVE_CLOSERS = frozenset({"no", "nope", "nah", "no thanks", "no thank you", "no, thanks", "no, thank you"})


def _tokens(lowered: str) -> set[str]:
    return set(_WORD.findall(lowered))


def _has_cancel(tokens: set[str]) -> bool:
    return any(t.startswith(_CANCEL_PREFIXES) for t in tokens)


def _parse_tool_result(content: str | None) -> tuple[bool, Any, str | None, str]:
    """(ok, JSON body, error code, message) from a tool result text (see parley.core.bots.order_tools)."""
    text = content or ""
    match = _TOOL_ERROR.match(text)
    if match:
        return False, None, match.group(3), match.group(4).strip()
    try:
        return True, json.loads(text), None, ""
    except ValueError:
        return True, text, None, ""


class OfflineOrderModel(ChatModelBase):
    """The rule-based order assistant as a ChatModel. Stateless and deterministic; it does not
    stream (its whole text comes as one delta)."""

    name = OFFLINE_BOT_NAME
    fallback = FALLBACK_TEXT
    """What it says when it does not understand, declared so simulated customers can tell."""

    async def reply_to(self, request: ModelRequest) -> ModelReply:
        return self.reply(request.messages)

    def reply(self, messages: Sequence[ChatMessage]) -> ModelReply:
        """The reply for a transcript; pure (same messages, same reply)."""
        started = time.perf_counter()
        text, calls = self._decide(messages)
        return ModelReply(
            model=self.name,
            text=text,
            tool_calls=calls,
            usage=Usage(calls=1, cost_usd=0.0),
            latency_s=time.perf_counter() - started,
            finish_reason="tool_calls" if calls else "stop",
        )

    # --------------------------------------------------------------------------------------------
    # deciding

    def _decide(self, messages: Sequence[ChatMessage]) -> tuple[str | None, list[ToolCall]]:
        """What to say and which tools to call (a world built on this assistant decides otherwise)."""
        return _decide(messages)


def _decide(messages: Sequence[ChatMessage]) -> tuple[str | None, list[ToolCall]]:
    last_user = -1
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].role == "user":
            last_user = i
            break
    if last_user < 0:
        return GREETING_TEXT, []
    tail = messages[last_user + 1 :]
    if tail and any(m.role == "tool" for m in tail):
        follow_up = _after_listing(messages, last_user, tail)
        if follow_up is not None:
            return follow_up
        return _answer_from_results(tail), []
    return _answer_user(messages, last_user)


def _after_listing(
    messages: Sequence[ChatMessage], last_user: int, tail: Sequence[ChatMessage]
) -> tuple[str | None, list[ToolCall]] | None:
    """When this turn listed the orders only to resolve "my latest order" / "the first one":
    the call the customer asked for on the resolved order (or the question when it is
    ambiguous). None otherwise."""
    called = [call.name for m in tail for call in m.tool_calls]
    if called != ["list_my_orders"]:
        return None
    raw = messages[last_user].content or ""
    lowered = raw.lower().replace("\u2019", "'").strip()
    if not (_LATEST.search(lowered) or _ORDINAL.search(lowered)):
        return None
    tokens = _tokens(lowered)
    order_id, question, _ = _resolve(messages, last_user, lowered, tokens)
    if question is not None:
        return question, []
    if order_id is None:
        return None
    if _has_cancel(tokens):
        return None, [_call(messages, "check_cancellation", {"order_id": order_id})]
    if tokens & _TRACK:
        return None, [_call(messages, "track_order", {"order_id": order_id})]
    return None, [_call(messages, "get_order", {"order_id": order_id})]


def _call(messages: Sequence[ChatMessage], name: str, args: dict[str, Any], index: int = 0) -> ToolCall:
    # Ids derive from the transcript length: unique within a conversation and deterministic.
    return ToolCall(id=f"call_{len(messages)}_{index}", name=name, arguments=json.dumps(args))


def _previous_bot_text(messages: Sequence[ChatMessage], before: int) -> str:
    for i in range(before - 1, -1, -1):
        m = messages[i]
        if m.role == "assistant" and m.content:
            return m.content
        if m.role == "user":
            return ""
    return ""


def _listing(messages: Sequence[ChatMessage], end: int | None = None) -> list[dict[str, Any]] | None:
    """The customer's own orders as the latest list_my_orders result before `end` gave them, in
    the order listed; None when the conversation has no listing."""
    names = _tool_names(messages)
    for i in range((len(messages) if end is None else end) - 1, -1, -1):
        m = messages[i]
        if m.role == "tool" and (m.name or names.get(m.tool_call_id or "")) == "list_my_orders":
            ok, body, _, _ = _parse_tool_result(m.content)
            orders = body.get("orders") if isinstance(body, dict) else body
            if ok and isinstance(orders, list):
                return [o for o in orders if isinstance(o, dict) and o.get("id")]
    return None


def _tool_names(messages: Sequence[ChatMessage]) -> dict[str, str]:
    return {call.id: call.name for m in messages for call in m.tool_calls}


def _unknown_ids(messages: Sequence[ChatMessage], before: int) -> set[str]:
    """Ids the order API answered as unknown or not the customer's: never resolved to."""
    calls = {call.id: call for m in messages[:before] for call in m.tool_calls}
    unknown = set()
    for m in messages[:before]:
        if m.role != "tool":
            continue
        _, _, code, _ = _parse_tool_result(m.content)
        call = calls.get(m.tool_call_id or "")
        if code in _UNKNOWN_CODES and call is not None:
            unknown.add(_call_order_id(call) or "")
    return unknown - {""}


def _call_order_id(call: ToolCall) -> str | None:
    try:
        args = json.loads(call.arguments or "{}")
    except ValueError:
        return None
    value = args.get("order_id") if isinstance(args, dict) else None
    return str(value) if value else None


def _recent_own_order(messages: Sequence[ChatMessage], before: int) -> tuple[str | None, list[str]]:
    """("that" / "it") the order most recently mentioned in what the customer and the bot said
    that the API did not call unknown: (the id, []), or (None, the candidates) when the latest
    mention names several, or (None, []) when there is none."""
    unknown = _unknown_ids(messages, before)
    seen = 0
    for i in range(before - 1, -1, -1):
        m = messages[i]
        if m.role not in ("user", "assistant") or not m.content:
            continue
        seen += 1
        if seen > 12:
            break
        candidates = [oid for oid in extract_order_ids(m.content) if oid not in unknown]
        if len(candidates) == 1:
            return candidates[0], []
        if candidates:
            return None, candidates
    return None, []


def _latest_of(orders: Sequence[dict[str, Any]]) -> list[str]:
    """The order(s) placed last: one id, or several when they tie."""
    dated = [(str(o.get("placed_date") or ""), str(o["id"])) for o in orders]
    newest = max(d for d, _ in dated)
    return [oid for d, oid in dated if d == newest]


def _resolve(messages: Sequence[ChatMessage], index: int, lowered: str, tokens: set[str]) -> tuple[str | None, str | None, bool]:
    """An order the customer refers to without naming it: (order id, None, False) when resolved;
    (None, a question, False) when it is ambiguous; (None, None, True) when the orders must be
    listed first; (None, None, False) when the message refers to no order."""
    action = "cancel" if _has_cancel(tokens) else ("track" if tokens & _TRACK else "status")
    latest = _LATEST.search(lowered)
    ordinal = _ORDINAL.search(lowered)
    if latest or ordinal:
        orders = _listing(messages)
        if orders is None:
            return None, None, True
        if not orders:
            return None, "I couldn't find any orders on your account.", False
        if latest:
            newest = _latest_of(orders)
            if len(newest) == 1:
                return newest[0], None, False
            return None, f"{ASK_ORDER_TEXT[action]} Your most recent orders, {_either(newest)}, were placed the same day.", False
        assert ordinal is not None
        position = _ORDINALS[ordinal.group(1).lower()]
        if position > len(orders):
            return None, f"{ASK_ORDER_TEXT[action]} Your list has {len(orders)} order{'s' if len(orders) != 1 else ''}.", False
        return str(orders[position - 1 if position > 0 else -1]["id"]), None, False
    if tokens & _REFERENCE:
        found, candidates = _recent_own_order(messages, index)
        if found:
            return found, None, False
        if candidates:
            return None, f"{ASK_ORDER_TEXT[action]} Do you mean {_either(candidates)}?", False
    return None, None, False


def _either(ids: Sequence[str]) -> str:
    return ids[0] if len(ids) == 1 else ", ".join(ids[:-1]) + f" or {ids[-1]}"


def _session_customer(messages: Sequence[ChatMessage]) -> str | None:
    for m in messages:
        if m.role == "system" and m.content:
            match = _SESSION_CUSTOMER.search(m.content)
            return match.group(1) if match else None
    return None


def _answer_user(messages: Sequence[ChatMessage], index: int) -> tuple[str | None, list[ToolCall]]:
    raw = messages[index].content or ""
    lowered = raw.lower().replace("\u2019", "'").strip()
    tokens = _tokens(lowered)
    ids = extract_order_ids(raw)
    before = _previous_bot_text(messages, index)

    # A pending confirmation: our previous message asked "Shall I cancel order X now?"
    asked = _CONFIRM_ASKED.search(before) if before else None
    if asked:
        pending = asked.group(1)
        saying_no = bool(tokens & _NO)
        if not saying_no and tokens & _YES and (not ids or ids == [pending]):
            return None, [_call(messages, "cancel_order", {"order_id": pending})]
        if saying_no and (not ids or ids == [pending]):  # "no", or "no, don't cancel ORD-1004"
            return f"Alright, I won't cancel order {pending}. Is there anything else I can help you with?", []

    # An answer to our "Which order would you like me to ...?" may be a bare number.
    which = _ORDER_ASKED.search(before) if before else None
    cancel = _has_cancel(tokens)
    track = bool(tokens & _TRACK)
    wants_list = bool(tokens & _LIST) or "my orders" in lowered
    status = bool(tokens & _STATUS)
    if not ids and (cancel or track or which):
        bare = _BARE_NUMBER.findall(raw)
        if bare:
            ids = [f"ORD-{n}" for n in dict.fromkeys(bare)]

    if ids:
        if cancel:
            return None, [_call(messages, "check_cancellation", {"order_id": ids[0]})]
        if track:
            return None, [_call(messages, "track_order", {"order_id": oid}, i) for i, oid in enumerate(ids)]
        if which and not status:
            action = which.group(1)
            if action == "cancel":
                return None, [_call(messages, "check_cancellation", {"order_id": ids[0]})]
            if action == "track":
                return None, [_call(messages, "track_order", {"order_id": oid}, i) for i, oid in enumerate(ids)]
        return None, [_call(messages, "get_order", {"order_id": oid}, i) for i, oid in enumerate(ids)]

    asks_policy = bool(tokens & _POLICY) or "policy" in lowered
    referred, question, needs_listing = (None, None, False)
    if (cancel or track or status) and not asks_policy:
        referred, question, needs_listing = _resolve(messages, index, lowered, tokens)
    if needs_listing:
        return None, [_call(messages, "list_my_orders", {})]  # then resolved from the listing (see _answer_from_results)
    if question:
        return question, []
    if cancel:
        if tokens & _POLICY or "policy" in lowered:
            return POLICY_TEXT, []
        if referred:
            return None, [_call(messages, "check_cancellation", {"order_id": referred})]
        return ASK_ORDER_TEXT["cancel"], []
    if wants_list and "order" not in tokens:
        return None, [_call(messages, "list_my_orders", {})]
    if track:
        if referred:
            return None, [_call(messages, "track_order", {"order_id": referred})]
        return ASK_ORDER_TEXT["track"], []
    if tokens & {"policy", "policies", "rule", "rules"}:
        return POLICY_TEXT, []
    if status and referred:  # "details of the first one", "what's in that order"
        return None, [_call(messages, "get_order", {"order_id": referred})]
    if status and "order" in tokens:
        if referred:
            return None, [_call(messages, "get_order", {"order_id": referred})]
        return ASK_ORDER_TEXT["status"], []
    if wants_list:
        return None, [_call(messages, "list_my_orders", {})]

    if tokens & _BYE or any(p in lowered for p in _BYE_PHRASES) or lowered.rstrip(".!") in _NEGATIVE_CLOSERS:
        return f"{GOODBYE_TEXT} {END_MARKER}", []
    claimed = _CUSTOMER_ID.search(raw)
    if claimed:
        who = _session_customer(messages)
        if who != f"C-{claimed.group(1)}":  # claiming to be someone else
            return IDENTITY_TEXT.format(who=f" ({who})" if who else ""), []
    if tokens & _THANKS:
        return THANKS_TEXT, []
    if tokens & _GREETING or "good morning" in lowered:
        return GREETING_TEXT, []
    if tokens & _YES and before.endswith("anything else I can help you with?"):
        return ANYTHING_ELSE_TEXT, []
    return FALLBACK_TEXT, []


# --------------------------------------------------------------------------------------------
# answering from tool results


def _answer_from_results(tail: Sequence[ChatMessage]) -> str:
    calls: dict[str, ToolCall] = {}
    for m in tail:
        for call in m.tool_calls:
            calls[call.id] = call
    results = [m for m in tail if m.role == "tool"]
    names = [(calls[m.tool_call_id].name if m.tool_call_id in calls else (m.name or "")) for m in results]
    parts: list[str] = []
    for m, name in zip(results, names, strict=True):
        if name == "list_my_orders" and len(set(names)) > 1:
            continue  # listed only to find the order the customer meant: answer about that order
        answered = calls.get(m.tool_call_id or "")
        ok, body, code, message = _parse_tool_result(m.content)
        parts.append(_describe(name, ok, body, code, message, _call_order_id(answered) if answered else None))
    return "\n".join(p for p in parts if p) or FALLBACK_TEXT


def _describe(name: str, ok: bool, body: Any, code: str | None, message: str, order_id: str | None = None) -> str:
    if not ok:
        if code in ("too_old", "delivered", "already_cancelled"):
            return f"I'm sorry, I can't cancel that order. {message}"
        if code in _UNKNOWN_CODES:
            # Another customer's order sounds exactly like one that does not exist.
            return f"I couldn't find that order. There is no order {order_id or 'with that id'}. Please check the order id."
        return f"I'm sorry, something went wrong: {message}"
    if not isinstance(body, (dict, list)):
        return str(body)
    if name == "list_my_orders":
        return _describe_orders(body)
    if not isinstance(body, dict):  # every other tool answers with one object
        return json.dumps(body)
    if name == "track_order":
        return _describe_tracking(body)
    if name == "get_order":
        return _describe_order(body)
    if name == "check_cancellation":
        return _describe_check(body)
    if name == "cancel_order":
        return _describe_cancel(body)
    return json.dumps(body)


def _describe_tracking(body: dict[str, Any]) -> str:
    order_id = body.get("order_id", "Your order")
    message = str(body.get("message") or f"Order {order_id} is {body.get('status', 'in progress')}.")
    parts = [message]
    tracking = body.get("tracking")
    if isinstance(tracking, dict):
        number = tracking.get("tracking_number")
        if number and str(number) not in message:
            parts.append(f"Carrier: {tracking.get('carrier', 'unknown')}, tracking number {number}.")
        event = tracking.get("last_event")
        if event and str(event) not in message:
            parts.append(f"Latest update: {event}.")
        eta = tracking.get("estimated_delivery")
        if eta and str(eta) not in message and body.get("status") != "delivered":
            parts.append(f"Estimated delivery: {eta}.")
    return " ".join(parts)


def _items(order: dict[str, Any]) -> str:
    items = order.get("items") or []
    names = [f"{i.get('qty', 1)} x {i.get('name', 'item')}" for i in items if isinstance(i, dict)]
    return ", ".join(names)


def _age(order: dict[str, Any]) -> str:
    age = order.get("age_days")
    if age is None:
        return f"placed {order.get('placed_date', 'on an unknown date')}"
    when = "today" if age == 0 else ("1 day ago" if age == 1 else f"{age} days ago")
    return f"placed {when} ({order.get('placed_date')})"


def _describe_order(order: dict[str, Any]) -> str:
    text = f"Order {order.get('id')} was {_age(order)} and is {order.get('status')}."
    items = _items(order)
    if items:
        text += f" Items: {items}."
    if order.get("total") is not None:
        text += f" Total: {order['total']:.2f} {order.get('currency', '')}".rstrip() + "."
    return text


def _describe_orders(body: Any) -> str:
    orders = body.get("orders") if isinstance(body, dict) else body
    if not isinstance(orders, list) or not orders:
        return "I couldn't find any orders on your account."
    lines = [f"You have {len(orders)} order{'s' if len(orders) != 1 else ''}:"]
    for order in orders:
        if isinstance(order, dict):
            lines.append(f"- {order.get('id')}: {order.get('status')}, {_age(order)}")
    return "\n".join(lines)


def _describe_check(body: dict[str, Any]) -> str:
    order_id = body.get("order_id")
    message = str(body.get("message") or "")
    if body.get("eligible"):
        return f"{message} {_CONFIRM_TEMPLATE.format(order_id=order_id)}".strip()
    return f"I'm sorry, I can't cancel that order. {message}".strip()


def _describe_cancel(body: dict[str, Any]) -> str:
    message = str(body.get("message") or f"Order {body.get('order_id')} has been cancelled.")
    return f"Done! {message}"
