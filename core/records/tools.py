"""The record of one executed tool call, as the evaluation, the store and the live chat see it. The
tools themselves are declared by each world (parley.core.world)."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, Field

from parley.core.records.world_state import RecordChange, RecordRef, RuleViolation


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
    def named(self) -> list[str]:
        """The text values of the call's arguments (the ids it names, among them), in order."""
        return [value for value in (self.arguments or {}).values() if isinstance(value, str)]

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
