"""What the order world says about an order changed that nobody expected (its `change_note` hook,
parley.core.world.hooks): how old the order was, against the 10-day cancellation window, as the
bot's own tool results told it, and the reason the audit trail gives for the change."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from parley.core.records import RecordChange, ToolCallRecord, WorldDiff
from parley.worlds.orders.prompt import CANCELLATION_WINDOW_DAYS

__all__ = ["change_note", "order_ages"]


def order_ages(tool_calls: Iterable[ToolCallRecord]) -> dict[str, int]:
    """Order ages (days) the bot was told by successful tool calls (get_order, list_my_orders,
    check_cancellation...): used only to say in a reason how old a changed order was."""
    ages: dict[str, int] = {}

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            order_id = value.get("id") or value.get("order_id")
            age = value.get("age_days")
            if isinstance(order_id, str) and isinstance(age, int) and not isinstance(age, bool):
                ages.setdefault(order_id, age)
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for record in tool_calls:
        if record.ok:
            try:
                walk(json.loads(record.result))
            except ValueError:
                continue
    return ages


def change_note(change: RecordChange, diff: WorldDiff, tool_calls: Sequence[ToolCallRecord]) -> str:
    """ "; it was 11 days old, past the 10-day cancellation limit (reason given: 'customer asked')"
    for a changed order whose age the bot was told and whose audit row gives a reason; the parts
    it knows, or ""."""
    if change.table != "orders":
        return ""
    note = ""
    age = order_ages(tool_calls).get(change.key)
    if age is not None and age > CANCELLATION_WINDOW_DAYS:
        note += f"; it was {age} days old, past the {CANCELLATION_WINDOW_DAYS}-day cancellation limit"
    elif age is not None:
        note += f"; it was {age} days old"
    reasons = [
        str(row["reason"])
        for audit in diff.changes
        if audit.log and (row := audit.after or {}).get("order_id") == change.key and row.get("reason")
    ]
    if reasons:
        note += f" (reason given: {reasons[-1]!r})"
    return note
