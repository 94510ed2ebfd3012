"""What a bot under test looks like to the runner and the live chat.

A bot answers one user message per turn. It is handed the transcript (a list it appends its own
messages to as they happen, so a turn cut short by a timeout leaves what it did so far) and a
`BotContext` binding it to a customer, a date and the tools of the conversation's world. The
built-in bot uses all of it; a `python:` bot gets the tools; a deployed bot reaches them over HTTP
(its `world_url`), or ignores them.
"""

from __future__ import annotations

import datetime
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from parley.core.records import ChatMessage, ToolCallRecord, Usage
from parley.core.world import ServedWorldTools, WorldTools


@dataclass
class BotContext:
    """What a bot is bound to for one conversation. `usage` accumulates every model call,
    including those of a turn that never finished. `variables` are the spec's variables (a
    prompt bot fills its prompt template with them); `session` is a connector's own state for
    this conversation (a Rasa sender id, a Taskyto conversation id), so one connector instance
    serves many conversations at once without mixing them."""

    customer_id: str
    today: datetime.date
    tools: WorldTools | ServedWorldTools | None = None
    """The conversation's world and its tools (None: the bot acts on no world parley runs;
    ServedWorldTools: a world served elsewhere, reached over HTTP)."""
    world_url: str | None = None
    """Where the conversation's world is served to a deployed bot (parley.core.world.serving)."""
    usage: Usage = field(default_factory=Usage)
    variables: dict[str, str] = field(default_factory=dict)
    session: dict[str, Any] = field(default_factory=dict)
    notes: dict[str, Any] = field(default_factory=dict)
    """What is kept with the conversation's record (its metadata) from the bot's side: a mutant
    of the bot's behaviour notes there where it acted (parley.core.mutation)."""


class BotTurn(BaseModel):
    """One bot answer to one user message (or the bot's opening)."""

    text: str
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0
    rounds: int = 0  # model calls this turn
    hit_round_cap: bool = False
    ends_conversation: bool = False  # the bot closed the conversation (-> bot_stop)


class TextDelta(BaseModel):
    kind: Literal["text"] = "text"
    text: str


class ToolCallStarted(BaseModel):
    kind: Literal["tool_started"] = "tool_started"
    call_id: str
    name: str
    arguments: str


class ToolCallFinished(BaseModel):
    kind: Literal["tool_finished"] = "tool_finished"
    record: ToolCallRecord


class TurnCompleted(BaseModel):
    kind: Literal["turn"] = "turn"
    turn: BotTurn


BotEvent = TextDelta | ToolCallStarted | ToolCallFinished | TurnCompleted


@runtime_checkable
class Bot(Protocol):
    """A bot under test. `name` names its model (`offline`, `openai/gpt-4o-mini`, ...)."""

    name: str

    async def respond(self, transcript: list[ChatMessage], ctx: BotContext) -> BotTurn:
        """Answer the transcript's last user message (or open the conversation when it has none).

        Appends the messages it produces (tool-call rounds, tool results, the final answer) to
        `transcript` as they happen.
        """
        ...

    def respond_stream(self, transcript: list[ChatMessage], ctx: BotContext) -> AsyncIterator[BotEvent]:
        """As `respond`, as events: text deltas, tool calls, and last a `TurnCompleted`."""
        ...

    def system_prompt(self, ctx: BotContext) -> str | None:
        """The system prompt the bot runs under for this context, for the record (None: none)."""
        ...


def declared_fallback(bot: object) -> str | None:
    """The sentence `bot` says when it does not understand, when it declares one (its optional
    `fallback` attribute: the offline order bot's own; deployed and LLM bots declare none)."""
    text = getattr(bot, "fallback", None)
    return text if isinstance(text, str) and text.strip() else None
