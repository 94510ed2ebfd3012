"""The record of one simulated conversation, as the evaluation, the store and reports read it."""

from __future__ import annotations

import datetime
from typing import Any, Literal, get_args

from pydantic import BaseModel, Field

from parley.core.records.chat import ChatMessage, Usage
from parley.core.records.tools import ToolCallRecord
from parley.core.records.world_state import WorldDiff

# fallback_loop: the user simulator gave up after the bot kept answering with its fallback.
# bot_error: the bot under test failed (a connector's HTTP error, timeout or bad reply; its
#   model endpoint failing after retries; an exception while it answered): the bot's failure.
# user_error: the user simulator failed or produced nothing usable.
# infrastructure_error: parley's own side failed (the user simulator's provider after retries,
#   the World, planning, evaluating or storing the conversation, a bug outside the two roles).
# cancelled: the batch was stopped (Ctrl-C) while the conversation was in flight.
# replay_exhausted: a replayed customer (`parley run --replay`) had no stored words left for what
# the new bot did (it ended earlier, or asked something the stored customer never answered).
# error: only in rows stored before parley told these apart (schema v4) and not attributable.
StopReason = Literal[
    "user_stop",
    "bot_stop",
    "max_turns",
    "timeout",
    "fallback_loop",
    "bot_error",
    "user_error",
    "infrastructure_error",
    "cancelled",
    "replay_exhausted",
    "error",
]
STOP_REASONS: tuple[StopReason, ...] = get_args(StopReason)
BROKEN_STOPS: frozenset[str] = frozenset({"bot_error", "user_error", "infrastructure_error", "cancelled", "error"})
"""The run itself broke: the conversation did not reach an end of its own."""
RERUN_STOPS: frozenset[str] = BROKEN_STOPS - {"bot_error"}
"""Stops that say nothing about the bot: `--resume` runs these again (a bot_error is a result)."""
UNFINISHED_STOPS: frozenset[str] = BROKEN_STOPS | {"timeout"}
"""Conversations cut short: checks that need the end are not run."""


class TurnTiming(BaseModel):
    """One bot turn: how long the bot took, how long the user before it, what the bot did."""

    index: int  # 1-based bot turn number
    bot_latency_s: float
    user_latency_s: float = 0.0
    rounds: int = 0  # model calls in the turn
    tool_calls: int = 0
    hit_round_cap: bool = False


class Conversation(BaseModel):
    """One conversation between a bot and a simulated user over a private World.

    `messages` is the transcript without the bot's system prompt (kept in `system_prompt`).
    On timeout or error it holds everything that happened before, including a turn's tool
    calls that ran before it was cut short.
    """

    id: str
    customer_id: str
    bot_model: str
    user_simulator: str
    bot_starts: bool = False
    system_prompt: str | None = None
    messages: list[ChatMessage] = Field(default_factory=list)
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    usage: dict[str, Usage] = Field(default_factory=dict)  # role ("bot", "user") -> usage
    turns: list[TurnTiming] = Field(default_factory=list)
    started_at: datetime.datetime
    ended_at: datetime.datetime
    duration_s: float
    stop_reason: StopReason
    error: str | None = None
    final_state: WorldDiff | None = None
    """What the conversation changed in its world, and the final rows of the records its checks
    name (None: the bot acted on no world parley sees)."""
    metadata: dict[str, Any] = Field(default_factory=dict)  # spec id, seed, repeat... (set by the batch)

    @property
    def bot_turns(self) -> int:
        return len(self.turns)

    @property
    def bot_texts(self) -> list[str]:
        """Every text the bot said, in order."""
        return [m.content for m in self.messages if m.role == "assistant" and m.content]

    @property
    def user_texts(self) -> list[str]:
        return [m.content for m in self.messages if m.role == "user" and m.content]

    @property
    def total_usage(self) -> Usage:
        total = Usage()
        for usage in self.usage.values():
            total = total + usage
        return total
