"""A live chat as a record: its metrics (what /metrics shows) and the JSON file /export writes."""

from __future__ import annotations

import datetime

from pydantic import BaseModel, Field

from parley.core.records.chat import ChatMessage, Usage
from parley.core.records.tools import ToolCallRecord
from parley.core.records.world_state import WorldDiff


class SessionMetrics(BaseModel):
    """What /metrics shows: this session's tokens, tool calls and bot latency."""

    customer_id: str
    bot_model: str
    turns: int = 0
    usage: Usage = Field(default_factory=Usage)
    tool_calls: int = 0
    tool_calls_by_name: dict[str, int] = Field(default_factory=dict)
    tool_errors: int = 0
    refused: int = 0
    bot_latency_last_s: float = 0.0
    bot_latency_mean_s: float = 0.0
    bot_latency_total_s: float = 0.0


class ChatExport(BaseModel):
    """The JSON file /export writes."""

    session_id: str
    exported_at: datetime.datetime
    customer_id: str
    bot_model: str
    today: datetime.date
    world: str | None = None
    """The world the chat ran on (its name, or the path of its file; None in chats exported before
    worlds were declared: the order world)."""
    system_prompt: str | None
    messages: list[ChatMessage]
    tool_calls: list[ToolCallRecord]
    metrics: SessionMetrics
    world_state: WorldDiff
    """What the chat changed in its world."""
