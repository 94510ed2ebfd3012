"""Which turn of a transcript a check is about: the bot message a failed regex or claim quoted,
the tool call that changed an order, the last answer before a judge's score, what the judge
quoted for a criterion in words. The app scrolls there (Enter on a check); the HTML report links
and marks it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from parley.core.records import ChatMessage, CheckResult, ToolCallRecord

Turn = tuple[Literal["bot", "user"], int] | tuple[Literal["call"], str]
"""A turn of a transcript: ("bot", n) the n-th bot message, ("user", n) the customer's n-th,
("call", call_id) a tool call."""


def check_target(check: CheckResult, messages: Sequence[ChatMessage], tool_calls: Sequence[ToolCallRecord]) -> Turn | None:
    """The turn a check refers to: ("call", call_id) for a tool call, ("bot", n) for the n-th
    (1-based) bot message with text, ("user", n) for the customer's n-th, or None when no single
    turn is to blame (a tool never called, no message that matched). A criterion in words goes
    to what the judge quoted."""
    details = check.details or {}
    call_id, user_message = details.get("call_id"), details.get("user_message")
    if isinstance(call_id, str):
        return ("call", call_id)
    if isinstance(user_message, int):
        return ("user", user_message)
    if isinstance(details.get("messages"), list) and details["messages"]:
        return ("bot", int(details["messages"][0]))
    if isinstance(details.get("message"), int):
        return ("bot", details["message"])
    record = details.get("key") or details.get("order_id")  # a record's key (order_id: checks stored before worlds)
    if isinstance(record, str) and record:
        wanted = record.casefold()
        changing = [r for r in tool_calls if r.ok and any(c.key.casefold() == wanted for c in r.changes)]
        touching = [r for r in tool_calls if any(v.casefold() == wanted for v in r.named)]
        if changing or touching:
            return ("call", (changing or touching)[-1].call_id)
        bots = [m for m in messages if m.role == "assistant" and m.content]
        for n, message in enumerate(bots, 1):
            if record in (message.content or ""):
                return ("bot", n)
        return None
    tool = details.get("tool")
    if tool and details.get("count"):
        calls = [r for r in tool_calls if r.name == tool]
        return ("call", calls[0].call_id) if calls else None
    if check.kind in ("conversation_completed", "judge_score"):
        bots = [m for m in messages if m.role == "assistant" and m.content]
        return ("bot", len(bots)) if bots else None
    return None
