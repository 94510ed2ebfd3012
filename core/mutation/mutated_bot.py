"""The bot under test wrapped in a mutant (parley.core.mutation.catalogue): to the harness, the
runner and the live chat it is a bot like any other, under the same name; to the simulated
customer it declares the same fallback. It installs its mutant at the world's tool boundary
(`WorldTools.boundary`: a served world's calls go through it too) or around each turn, and notes
what the mutant did in the conversation's record (parley.core.mutation.notes)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from parley.core.bots import Bot, BotContext, BotEvent, BotTurn, TextDelta, TurnCompleted, declared_fallback
from parley.core.mutation.catalogue import Mutant
from parley.core.mutation.notes import MUTANT_KEY, Act, MutantNotes
from parley.core.records import ChatMessage, ToolCall, ToolCallRecord
from parley.core.world import WorldTools

__all__ = ["MutatedBot"]


class MutatedBot:
    """`inner` misbehaving in the one way `mutant` says (see the module doc)."""

    def __init__(self, inner: Bot, mutant: Mutant) -> None:
        self.inner = inner
        self.mutant = mutant
        self.name = inner.name

    @property
    def fallback(self) -> str | None:
        return declared_fallback(self.inner)

    def system_prompt(self, ctx: BotContext) -> str | None:
        getter = getattr(self.inner, "system_prompt", None)
        return getter(ctx) if callable(getter) else None

    def _notes(self, ctx: BotContext) -> dict[str, Any]:
        notes: dict[str, Any] = ctx.notes.setdefault(MUTANT_KEY, MutantNotes(name=self.mutant.name).model_dump())
        return notes

    async def respond(self, transcript: list[ChatMessage], ctx: BotContext) -> BotTurn:
        notes = self._notes(ctx)
        tools = ctx.tools if isinstance(ctx.tools, WorldTools) else None
        if tools is not None:
            why = self.mutant.not_exercisable(tools.world)
            if why is not None:
                notes["not_exercisable"] = why
                return await self.inner.respond(transcript, ctx)
        turn_number = sum(1 for m in transcript if m.role == "user") or 1

        def note(what: str, visible: bool) -> None:
            notes["acted"].append(Act(turn=turn_number, what=what, visible=visible).model_dump())

        on_call = self.mutant.on_call
        installed = tools is not None and on_call is not None and tools.boundary is None
        if installed and tools is not None and on_call is not None:

            async def boundary(world_tools: WorldTools, call: ToolCall) -> ToolCallRecord:
                return await on_call(world_tools, call, note)

            tools.boundary = boundary
        try:
            if self.mutant.on_turn is not None:
                return await self.mutant.on_turn(self.inner, transcript, ctx, note)
            return await self.inner.respond(transcript, ctx)
        finally:
            if installed and tools is not None:
                tools.boundary = None

    async def respond_stream(self, transcript: list[ChatMessage], ctx: BotContext) -> AsyncIterator[BotEvent]:
        """As `respond`, as events: the mutated turn's text at once, then the turn."""
        turn = await self.respond(transcript, ctx)
        if turn.text:
            yield TextDelta(text=turn.text)
        yield TurnCompleted(turn=turn)
