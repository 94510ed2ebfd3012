"""The order tools as records: their names, descriptions and argument schemas (what a model is
offered), and the record of one executed call. Executing them is parley.core.bots.order_tools."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, Field

from parley.core.records.chat import ToolSpec
from parley.core.records.world_state import RecordChange, RecordRef, RuleViolation

_ORDER_ID_SCHEMA = {
    "type": "string",
    "description": "The order id exactly as the customer gave it, e.g. ORD-1003.",
    # Ids are short. Servers that constrain generation to the schema (llama.cpp grammars,
    # strict tool modes) stop a rambling model here instead of after hundreds of tokens.
    "maxLength": 24,
}

# The arguments of every tool that acts on one order and nothing else.
_ORDER_ID_ONLY = {
    "type": "object",
    "properties": {"order_id": _ORDER_ID_SCHEMA},
    "required": ["order_id"],
    "additionalProperties": False,
}

ORDER_TOOL_SPECS: list[ToolSpec] = [
    ToolSpec(
        name="get_order",
        description="Get the details of one of the signed-in customer's orders: items, status, placed date.",
        parameters=_ORDER_ID_ONLY,
    ),
    ToolSpec(
        name="track_order",
        description="Get the shipping status and tracking information of one of the customer's orders.",
        parameters=_ORDER_ID_ONLY,
    ),
    ToolSpec(
        name="list_my_orders",
        description="List all orders of the signed-in customer with their status and age.",
        parameters={"type": "object", "properties": {}, "additionalProperties": False},
    ),
    ToolSpec(
        name="check_cancellation",
        description=(
            "Check whether one of the customer's orders can be cancelled under the policy "
            "(placed at most 10 days ago, not delivered, not already cancelled). Changes nothing."
        ),
        parameters=_ORDER_ID_ONLY,
    ),
    ToolSpec(
        name="cancel_order",
        description=(
            "Cancel one of the customer's orders. Only call this after check_cancellation said it is "
            "eligible AND the customer explicitly confirmed they want it cancelled."
        ),
        parameters={
            "type": "object",
            "properties": {
                "order_id": _ORDER_ID_SCHEMA,
                "reason": {"type": "string", "description": "Optional: why the customer cancels.", "maxLength": 200},
            },
            "required": ["order_id"],
            "additionalProperties": False,
        },
    ),
]

TOOL_NAMES: tuple[str, ...] = tuple(spec.name for spec in ORDER_TOOL_SPECS)


class ToolCallRecord(BaseModel):
    """One executed tool call, as the evaluation and the live chat see it."""

    call_id: str
    name: str
    arguments_raw: str
    arguments: dict[str, Any] | None = None  # None when the raw text was not a JSON object
    customer_id: str  # the session's identity the call ran under
    result: str  # the exact text the model received
    ok: bool
    error: str | None = None  # a reason code: too_old, not_your_order, invalid_arguments, unknown_tool...
    refused: bool = False  # the API refused (403/409): a policy or ownership decision
    http_status: int | None = None
    latency_s: float = 0.0
    ignored_arguments: list[str] = Field(default_factory=list)
    changes: list[RecordChange] = Field(default_factory=list)
    """The records of the world this call inserted, changed or deleted."""
    reads: list[RecordRef] = Field(default_factory=list)
    """The records of customers the call's result showed the bot (by their keys)."""
    violations: list[RuleViolation] = Field(default_factory=list)
    """The world's rules (those its API leaves to the bot) this call broke."""

    @property
    def order_id(self) -> str | None:
        value = (self.arguments or {}).get("order_id")
        return value if isinstance(value, str) else None

    @property
    def data(self) -> Any:
        """A successful call's result as JSON (the API's body); None for a refusal, an error or
        a result that is not JSON."""
        if not self.ok:
            return None
        try:
            return json.loads(self.result)
        except ValueError:
            return None
