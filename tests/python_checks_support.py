"""Checks written in Python the tests name in `expect.python` (`tests.python_checks_support:NAME`),
each as a user might write one, or break one; and Python bots that misbehave in the ways the
shipped checks and the limits look for."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from parley.api import CheckedConversation, failed, not_applicable, passed

CALLS: list[str] = []
"""Every call of `counted`, by conversation stop reason (a re-score runs it again)."""


def says_shipped(conversation: CheckedConversation):
    """Passes on a reply that says the order shipped, quoting it."""
    for reply in conversation.bot_replies:
        if "shipped" in reply.text.lower():
            return passed("the bot said the order shipped", turn=reply.turn, quote="shipped")
    return failed("the bot never said the order shipped")


def says_refunded(conversation: CheckedConversation):
    """Fails unless the bot spoke of a refund (it never does in these conversations)."""
    for reply in conversation.bot_replies:
        if "refund" in reply.text.lower():
            return passed("the bot spoke of the refund", turn=reply.turn)
    last = conversation.bot_replies[-1]
    return failed("the bot never spoke of a refund", turn=last.turn, quote=" ".join(last.text.split()[:3]))


def only_for_refunds(conversation: CheckedConversation):
    """Applies only to a conversation where something was cancelled."""
    if not any(call.name == "cancel_order" and call.ok for call in conversation.tool_calls):
        return not_applicable("nothing was cancelled")
    return passed("something was cancelled")


def breaks(conversation: CheckedConversation):
    """A check with a bug in it."""
    replies = {reply.text: reply for reply in conversation.bot_replies}
    return replies["the reply nobody gave"]


def fabricates(conversation: CheckedConversation):
    """Quotes what the bot never said, as a careless check (or a judge) might."""
    return passed("the bot promised a refund", turn=1, quote="your refund of 500 dollars is on its way")


def answers_nothing(conversation: CheckedConversation):
    """Returns a bare bool, which is not an answer."""
    return True


def order_is(conversation: CheckedConversation, order: str, status: str):
    """The world's final state through the read-only view: the order ends in the status."""
    if conversation.final is None:
        return not_applicable("parley saw no world for this bot")
    row = conversation.final.final_row("orders", order)
    if row is None:
        return failed(f"{order} is not in the world")
    changed = [c.key for c in conversation.final.changes]
    verdict = passed if row["status"] == status else failed
    return verdict(f"{order} is {row['status']} (changed: {', '.join(changed) or 'none'})")


async def async_says_shipped(conversation: CheckedConversation):
    await asyncio.sleep(0)
    return says_shipped(conversation)


def counted(conversation: CheckedConversation):
    CALLS.append(conversation.stop_reason)
    return passed(f"called {len(CALLS)} times")


def slow(conversation: CheckedConversation):
    time.sleep(5)
    return passed("late")


# -- bots ---------------------------------------------------------------------------------------


def repeating_bot(messages: list[dict[str, Any]]) -> str:
    """Says the same thing every time."""
    return "Thank you for your message. An agent will get back to you."


def asking_bot(messages: list[dict[str, Any]]) -> str:
    """Asks for the order id however often the customer gave it."""
    return "I can help with that. What is your order number?"


def delayed_bot(messages: list[dict[str, Any]]) -> str:
    """Answers after the number of tenths of a second its customer's last message names ("wait 3")."""
    words = messages[-1]["content"].split()
    tenths = int(words[-1]) if words and words[-1].isdigit() else 0
    time.sleep(tenths / 10)
    return f"Answered after {tenths / 10:.1f} s."
