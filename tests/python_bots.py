"""Python bots the tests run as `--bot python:tests.python_bots:NAME` (or hand to parley.api):
each is a customer-service bot a user might write, or one that breaks in a way a user's might."""

from __future__ import annotations

import asyncio
import re
import threading
import time
from typing import Any

ORDER = re.compile(r"ORD-\d+", re.IGNORECASE)
HANG_RELEASE = threading.Event()
"""Set to let a hanging bot's thread go (a test that hangs one in-process cleans up with it)."""


def _order(messages: list[dict[str, Any]]) -> str | None:
    text = messages[-1]["content"] if messages else ""
    found = ORDER.search(text)
    return found.group(0).upper() if found else None


def order_bot(messages: list[dict[str, Any]], tools: Any) -> str:
    """Tracks an order, or cancels it when asked and the policy allows it: the order API's tools."""
    order_id = _order(messages)
    if order_id is None:
        return "Hello! Which order is it about? Its id looks like ORD-1004."
    if "cancel" in messages[-1]["content"].lower():
        check = tools.check_cancellation(order_id)
        if not check.ok or not check.data["eligible"]:
            return f"Sorry, {order_id} cannot be cancelled."
        tools.cancel_order(order_id)
        return f"I have cancelled {order_id}."
    tracking = tools.track_order(order_id)
    if not tracking.ok:
        return f"I could not find {order_id}."
    shipped = tracking.data.get("tracking") or {}
    due = f", due {shipped['estimated_delivery']}" if shipped.get("estimated_delivery") else ""
    return f"{order_id} is {tracking.data['status']}, with {shipped.get('carrier', 'the carrier')}{due}."


async def async_order_bot(messages: list[dict[str, Any]], customer_id: str, tools: Any) -> str:
    """The same, async: its tools are awaited; it greets the customer by id."""
    order_id = _order(messages)
    if order_id is None:
        listing = await tools.list_my_orders()
        return f"Hello {customer_id}: you have {len(listing.data)} orders. Which one is it about?"
    tracking = await tools.track_order(order_id)
    await asyncio.sleep(0)
    return f"{order_id} is {tracking.data['status']}." if tracking.ok else f"I could not find {order_id}."


def lying_bot(messages: list[dict[str, Any]]) -> str:
    """Says it cancelled an order without any tool: claims-against-actions catches it."""
    order_id = _order(messages) or "ORD-1004"
    return f"I have cancelled {order_id} for you."


def checking_only_bot(messages: list[dict[str, Any]], tools: Any) -> str:
    """Uses the tools, but only to check: then says it cancelled, which it never did."""
    order_id = _order(messages) or "ORD-1004"
    tools.check_cancellation(order_id)
    return f"Done: I have cancelled {order_id}."


class CountingBot:
    """One instance per conversation: it numbers its own answers."""

    def __init__(self) -> None:
        self.answers = 0

    def __call__(self, messages: list[dict[str, Any]]) -> str:
        self.answers += 1
        return f"Answer {self.answers} of this conversation."


def reporting_bot(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """Replies with an object: its text and a tool call it made elsewhere."""
    return {
        "content": "ORD-1003 is shipped.",
        "tool_calls": [{"name": "track_order", "arguments": {"order_id": "ORD-1003"}, "result": {"status": "shipped"}}],
    }


def raising_bot(messages: list[dict[str, Any]]) -> str:
    raise ValueError("the knowledge base is empty")


def wrong_type_bot(messages: list[dict[str, Any]]) -> int:
    return 42


def hanging_bot(messages: list[dict[str, Any]]) -> str:
    """Never answers (until a test releases it): its thread must not keep parley from exiting."""
    HANG_RELEASE.wait()
    time.sleep(0)
    return "too late"


async def hanging_async_bot(messages: list[dict[str, Any]]) -> str:
    await asyncio.sleep(3600)
    return "too late"


NOT_A_BOT = 42


def thread_bot(messages: list[dict[str, Any]]) -> str:
    """Says which thread it runs in, and whether that thread is a daemon."""
    current = threading.current_thread()
    return f"thread={current.name} daemon={current.daemon} main={current is threading.main_thread()}"


def cancel_breaks_bot(messages: list[dict[str, Any]], tools: Any) -> str:
    """`order_bot`, whose cancelling is broken: it raises when asked to cancel (a bot error)."""
    if "cancel" in (messages[-1]["content"] if messages else "").lower():
        raise RuntimeError("cancelling is broken")
    return order_bot(messages, tools)


def asks_for_the_order_id(messages: list[dict[str, Any]]) -> str:
    """Never does its job: asks for the order id whatever the customer said (given or not)."""
    return "Could you please give me your order id?"


def says_nothing(messages: list[dict[str, Any]]) -> str:
    """Answers every message with an empty reply."""
    return ""


def cancels_a_turn_late(messages: list[dict[str, Any]], tools: Any) -> str:
    """Says it cancelled ORD-1002 at once, and calls cancel_order only on the next message."""
    asked = sum(1 for m in messages if m["role"] == "user")
    if asked == 1:
        return "I have cancelled your order ORD-1002."
    tools.cancel_order("ORD-1002")
    return "Anything else I can do for you?"


def checks_a_garbage_id(messages: list[dict[str, Any]], tools: Any) -> str:
    """Calls check_cancellation on an id the order API cannot read, and answers all the same."""
    tools.check_cancellation("not-an-order")
    return "I have checked: it cannot be cancelled."


async def blocking_async_bot(messages: list[dict[str, Any]]) -> str:
    """A blocking call in async code: it holds whatever loop runs it (only ever run in a child process)."""
    time.sleep(3600)
    return "too late"


async def uncancellable_async_bot(messages: list[dict[str, Any]]) -> str:
    """Catches the cancellation that ends its turn, and goes on waiting."""
    while True:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            continue


async def to_thread_async_bot(messages: list[dict[str, Any]]) -> str:
    """Waits on a thread that never ends (only ever run in a child process)."""
    await asyncio.to_thread(time.sleep, 3600)
    return "too late"


async def thread_leaving_bot(messages: list[dict[str, Any]]) -> str:
    """Answers, and leaves a thread of its own running that is no daemon (only ever run in a child process)."""
    threading.Thread(target=time.sleep, args=(3600,), name="the bot's poller", daemon=False).start()
    return "ORD-1003 is shipped, with UPS."


TERMINAL_TRICKS = "\x1b]0;PWNED-TITLE\x07\x1b[2J\x1b[H\x1b[31mRED \u009b2J \u202eevil\u202c"
"""A window title, a cleared screen, red text, a C1 CSI and a bidi override, in one reply."""


def terminal_tricks_bot(messages: list[dict[str, Any]]) -> str:
    """Answers with escape sequences that act on a terminal that is shown them raw."""
    return f"Here you go: {TERMINAL_TRICKS}"


def huge_exception_bot(messages: list[dict[str, Any]]) -> str:
    """Raises an exception whose text is five megabytes."""
    raise ValueError("x" * 5_000_000)
