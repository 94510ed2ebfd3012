"""Simulated customers: the UserSimulator protocol and the simplest one, ScriptedUser.

A simulator is asked for the next user message given the transcript so far and answers with a
`UserTurn`: a message, a stop, or a last message and a stop. The profile-driven offline user
and an LLM user fit the same shape (an LLM user reports its token usage in `usage`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from parley.core.records import ChatMessage, Usage
from parley.core.users.goal_tracker import GoalRow


class UserTurn(BaseModel):
    """The simulator's move. `text` None with `stop` True: the user has nothing more to say.
    `text` with `stop` True: a last message, and no answer awaited."""

    text: str | None = None
    stop: bool = False
    note: str | None = None  # why it stopped, or what it was doing (goal reached, script done...)
    stop_reason: Literal["user_stop", "fallback_loop", "user_error", "replay_exhausted"] = "user_stop"
    """The record's reason on stop; user_error: the simulator has nothing usable to say (`note` says why)."""
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0

    @classmethod
    def say(cls, text: str, **kw: Any) -> UserTurn:
        return cls(text=text, **kw)

    @classmethod
    def stopped(cls, note: str | None = None, **kw: Any) -> UserTurn:
        return cls(text=None, stop=True, note=note, **kw)


@runtime_checkable
class UserSimulator(Protocol):
    """A simulated customer. `name` says what it is (`scripted`, `offline`, `openai/...`)."""

    name: str

    async def next_message(self, transcript: Sequence[ChatMessage]) -> UserTurn:
        """The next user move given the whole transcript so far (system and tool messages
        included; `visible_transcript` keeps only what a customer sees)."""
        ...


def visible_transcript(transcript: Sequence[ChatMessage]) -> list[ChatMessage]:
    """The messages a customer sees: their own and the bot's texts, without tool traffic."""
    return [m for m in transcript if m.role == "user" or (m.role == "assistant" and m.content)]


class ScriptedUser:
    """Says its lines in order, one per turn, then stops (the runner's user_stop).

    Stateless: the next line is chosen by how many user messages the transcript already has,
    so one instance may serve many conversations.
    """

    name = "scripted"

    def __init__(self, lines: Sequence[str]) -> None:
        self.lines: tuple[str, ...] = tuple(lines)

    async def next_message(self, transcript: Sequence[ChatMessage]) -> UserTurn:
        said = sum(1 for m in transcript if m.role == "user")
        if said >= len(self.lines):
            return UserTurn.stopped("script done")
        return UserTurn.say(self.lines[said])


@runtime_checkable
class GoalReporter(Protocol):
    """A simulator that tracks its goals (the offline and LLM users): after a conversation,
    `goal_report(conversation.messages)` gives one row per goal (goal, asked, answered, data...;
    see parley.core.users.goal_tracker.GoalRow), judging the bot's last answer too."""

    def goal_report(self, transcript: Sequence[ChatMessage] | None = None) -> list[GoalRow]: ...


@runtime_checkable
class StatesGoals(Protocol):
    """A simulator that can say which of its goals it only states and does not act out (the
    offline user; see parley.core.users.acted_goals): the conversation carries them as a note."""

    def goals_only_stated(self) -> list[str]: ...
