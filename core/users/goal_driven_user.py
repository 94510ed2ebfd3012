"""`GoalDrivenUser`: what the two simulated customers that pursue a profile's goals share (the
LLM user, parley.core.users.llm_user, and the offline user, parley.core.users.offline_user).

Both follow the goals with a GoalTracker fed by the bot's answers, detect the bot's fallback
sentence, keep the note of every move, stop at the turn limit the goal style sets, and give the
per-goal table (kept in `goal_table` when the all_answered goal style exports it). Each reads
the bot's answer its own way (`_observe`) and decides its next message its own way (`_move`).

Both know the world the conversation runs on (its ids, the kinds of goal its tools answer, the
actions a bot asks to confirm) and what the customer knows of itself (parley.core.users.
customer_facts: its credentials, on a world where it authenticates in the conversation).
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Literal

from parley.core.reading import reading_world
from parley.core.records import DEFAULT_ALL_ANSWERED_LIMIT, ChatMessage, ConversationSpec
from parley.core.users.customer_facts import CustomerFacts
from parley.core.users.fallback_detection import FallbackAction, FallbackCounter, FallbackDetector
from parley.core.users.goal_tracker import GoalRow, GoalTracker
from parley.core.users.simulator import UserTurn
from parley.core.users.styles import StyleSet
from parley.core.world import WorldDefinition, WorldError, world_of

log = logging.getLogger("parley.users")


def simulated_world(spec: ConversationSpec, world: WorldDefinition | None = None) -> WorldDefinition | None:
    """The world a simulated customer of `spec` talks about: `world` when the engine gives it, else
    the one the spec names (the default world when it names none, or when it cannot be loaded)."""
    if world is not None:
        return world
    if spec.world.names_world:
        try:
            return world_of(spec)
        except WorldError as exc:
            log.warning("%s: its world cannot be loaded (%s): the customer reads its goals on the default world", spec.spec_id, exc)
    return reading_world(None)


class GoalDrivenUser(ABC):
    """A simulated customer pursuing `spec`'s goals (see the module doc). Implements
    UserSimulator. One instance per conversation (a transcript without user messages starts over)."""

    tracker: GoalTracker
    fallbacks: FallbackCounter
    turns: int
    """User messages sent so far."""
    notes: list[str]
    """The note of every move, in order (a UserTurn's note, kept for inspection)."""
    goal_table: list[GoalRow] | None
    _steps: int | None
    """The goal style's number of steps (steps / random steps), else None."""
    _done: bool
    """It stopped: every later move says the conversation is over."""

    def __init__(
        self,
        spec: ConversationSpec,
        bot_fallback: str | None,
        *,
        world: WorldDefinition | None = None,
        customer: CustomerFacts | None = None,
    ) -> None:
        """`bot_fallback`: the fallback sentence the bot under test declares, if any (the
        profile's `chatbot.fallback` wins over it); `world`: the conversation's world (else the
        one the spec names); `customer`: what the customer knows of itself (none: nothing to give)."""
        self.spec = spec
        self.world = simulated_world(spec, world)
        self.customer = customer or CustomerFacts(customer_id=spec.world.customer_id)
        self.styles = StyleSet.of(spec.interaction_styles)
        self.detector = FallbackDetector.for_spec(spec, bot_fallback)
        self.export = spec.goal_style.kind == "all_answered" and spec.goal_style.export

    @abstractmethod
    def reset(self) -> None:
        """Forget the conversation: the next message is the opening again."""

    @abstractmethod
    def _observe(self, transcript: Sequence[ChatMessage]) -> FallbackAction:
        """Judge the bot's answer to the last user message against the goals (once per message)."""

    @abstractmethod
    async def _respond(self, transcript: Sequence[ChatMessage], action: FallbackAction, answered: str) -> UserTurn:
        """The next message (or a stop of its own) once no limit stopped the conversation:
        `action` is what the bot's fallbacks call for, `answered` says how many goals are."""

    @property
    def limit(self) -> int:
        """The most user turns this conversation may take."""
        if self._steps is not None:
            return self._steps
        return self.spec.goal_style.limit or DEFAULT_ALL_ANSWERED_LIMIT

    def goal_report(self, transcript: Sequence[ChatMessage] | None = None) -> list[GoalRow]:
        """The per-goal table (goal, asked, answered, data...), judged from the messages. Pass the
        finished transcript to have the bot's last answer judged too (a conversation the bot or a
        limit ended)."""
        if transcript is not None:
            self._observe(transcript)
        rows = self.tracker.report()
        if self.export:
            self.goal_table = rows
        return rows

    async def _move(self, transcript: Sequence[ChatMessage]) -> UserTurn:
        """The next message; the stop when the bot answered with its fallback too many times in
        a row or the goal style's turn limit is reached."""
        if self._done:
            return UserTurn.stopped("the conversation is over for this user")
        action = self._observe(transcript)
        answered = f"{self.tracker.answered_count()}/{len(self.tracker.goals)} goals answered"
        if action == "give_up":
            return self._stop(
                f"gave up: the bot answered with its fallback {self.fallbacks.in_a_row} times in a row ({answered})",
                reason="fallback_loop",
            )
        if self.turns >= self.limit:
            what = f"steps: {self._steps}" if self._steps is not None else f"limit of {self.limit} turns"
            return self._stop(f"{what} reached ({answered})")
        return await self._respond(transcript, action, answered)

    def _stop(self, note: str, reason: Literal["user_stop", "fallback_loop"] = "user_stop") -> UserTurn:
        self._done = True
        return UserTurn.stopped(note, stop_reason=reason)

    async def next_message(self, transcript: Sequence[ChatMessage]) -> UserTurn:
        if self.turns and not any(m.role == "user" for m in transcript):
            self.reset()  # a new conversation on the same instance
        turn = await self._move(transcript)
        if turn.note:
            self.notes.append(turn.note)
        if self.export:
            self.goal_table = self.tracker.report()
        return turn
