"""The built-in bot: any ChatModel plus the tools of the conversation's world, in a capped tool loop.

The same loop drives a world's offline rule-based model (the order world has one) and an LLM.
Each turn: call the model with the system prompt (the world's, parley.core.bots.bot_prompt), the
transcript and the world's tools; run the tool calls it asks for (never raising, see
parley.core.world.WorldTools); repeat until it answers in text, or say a fixed sentence once it has
asked for tools `max_tool_rounds` times.

Named `offline`, the bot runs on the offline model its world offers (the world's `offline_model`
hook): a world without one cannot have an offline bot, and a batch asking for it there stops before
launch (parley.core.engine).

An LLM's prompt is fitted to its context (`context_tokens`, less room for the answer and the
tools' schemas): old tool results are shortened, repeats point back, and the middle of a long
conversation is left out (parley.core.prompts), the turn being answered always whole.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any

from parley.core.bots.api import BotContext, BotEvent, BotTurn, TextDelta, ToolCallFinished, ToolCallStarted, TurnCompleted
from parley.core.bots.bot_prompt import EMPTY_REPLY_TEXT, END_MARKER, ROUND_CAP_TEXT, build_system_prompt
from parley.core.errors import ConfigError
from parley.core.models import OFFLINE, ChatModel
from parley.core.prompts import DEFAULT_CONTEXT_TOKENS, estimate_messages, fit_messages, prompt_budget
from parley.core.records import (
    ChatMessage,
    GenerateConfig,
    ModelReply,
    ToolCall,
    ToolCallRecord,
    ToolSpec,
    Usage,
)
from parley.core.world import WorldDefinition

DEFAULT_MAX_TOOL_ROUNDS = 6
_NOT_RUN = "ERROR [round_limit] Not run: too many tool rounds in one turn. Answer the customer now."


def strip_end_marker(text: str) -> tuple[str, bool]:
    """The text without the end-of-conversation marker, and whether it had one."""
    if END_MARKER not in text:
        return text, False
    return text.replace(END_MARKER, "").strip(), True


class _MarkerFilter:
    """Holds back streamed text that might be the start of the end marker, drops the marker."""

    def __init__(self) -> None:
        self._pending = ""

    def feed(self, delta: str) -> str:
        buf = (self._pending + delta).replace(END_MARKER, "")
        keep = 0
        for size in range(min(len(END_MARKER) - 1, len(buf)), 0, -1):
            if END_MARKER.startswith(buf[-size:]):
                keep = size
                break
        self._pending = buf[len(buf) - keep :] if keep else ""
        return buf[: len(buf) - keep] if keep else buf

    def flush(self) -> str:
        out, self._pending = self._pending, ""
        return out


class WorldBot:
    """The built-in bot over any ChatModel (`model=None`: the offline model of each conversation's
    world). One instance serves many conversations: all per-conversation state lives in the
    transcript and the `BotContext`."""

    def __init__(
        self,
        model: ChatModel | None,
        *,
        max_tool_rounds: int = DEFAULT_MAX_TOOL_ROUNDS,
        config: GenerateConfig | None = None,
        context_tokens: int = DEFAULT_CONTEXT_TOKENS,
    ) -> None:
        self._model = model
        self.name = model.name if model is not None else OFFLINE
        self.max_tool_rounds = max_tool_rounds
        self.config = config
        self.fallback: str | None = getattr(model, "fallback", None) if model is not None else _offline_fallback()
        """The model's declared fallback sentence (the offline model's; an LLM declares none)."""
        # The offline model has no context to fit, and reads the whole transcript to decide:
        # condensing it would change its deterministic answers.
        self.context_tokens: int | None = None if self.name == OFFLINE else context_tokens
        self._prompts: dict[tuple[Any, ...], str] = {}
        self._offline: dict[str, ChatModel] = {}

    @property
    def model(self) -> ChatModel:
        """The model (an LLM's; for the offline bot, the order world's offline model)."""
        if self._model is not None:
            return self._model
        from parley.core.world import load_world

        return self.model_for(load_world())

    def model_for(self, world: WorldDefinition | None) -> ChatModel:
        """The model answering on `world`: the given one, or the world's own offline model."""
        if self._model is not None:
            return self._model
        if world is None:
            raise ConfigError("the offline bot acts on a world's tools, and this conversation has none")
        model = self._offline.get(world.name)
        if model is None:
            make = world.hooks.get("offline_model")
            if not callable(make):
                raise ConfigError(offline_elsewhere(world))
            model = self._offline[world.name] = make()
        return model

    def system_prompt(self, ctx: BotContext) -> str:
        world = ctx.tools.world if ctx.tools is not None else None
        key = (world.name if world is not None else None, ctx.today, ctx.customer_id)
        prompt = self._prompts.get(key)
        if prompt is None:
            if world is None:
                from parley.core.world import load_world

                world = load_world()
            prompt = self._prompts[key] = build_system_prompt(world, ctx.today, ctx.customer_id)
        return prompt

    async def fit(self, messages: list[ChatMessage], tools: Sequence[ToolSpec] | None) -> list[ChatMessage]:
        """`messages` fitted to the model's context (see the module doc)."""
        if self.context_tokens is None:
            return messages
        max_tokens = self.config.max_tokens if self.config is not None else None
        budget = prompt_budget(self.context_tokens, max_tokens=max_tokens, tools=tools)
        if estimate_messages(messages) <= budget:
            return messages
        return await asyncio.to_thread(fit_messages, messages, budget)  # some milliseconds of CPU: off the event loop

    async def respond(self, transcript: list[ChatMessage], ctx: BotContext) -> BotTurn:
        """Answer the last user message; appends this turn's messages to `transcript` as they happen."""
        turn: BotTurn | None = None
        async for event in self._turn(transcript, ctx, stream=False):
            if isinstance(event, TurnCompleted):
                turn = event.turn
        assert turn is not None
        return turn

    def respond_stream(self, transcript: list[ChatMessage], ctx: BotContext) -> AsyncIterator[BotEvent]:
        """As `respond`, yielding text deltas (via the model's `stream` when it has one), tool
        calls as they start and finish, and finally `TurnCompleted`."""
        return self._turn(transcript, ctx, stream=True)

    async def _turn(self, transcript: list[ChatMessage], ctx: BotContext, *, stream: bool) -> AsyncIterator[BotEvent]:
        started = time.perf_counter()
        tools = ctx.tools
        specs = tools.specs if tools is not None else None
        model = self.model_for(tools.world if tools is not None else None)
        records: list[ToolCallRecord] = []
        usage = Usage()
        rounds = 0
        system = ChatMessage(role="system", content=self.system_prompt(ctx))

        def completed(text: str, *, ends: bool = False, capped: bool = False) -> TurnCompleted:
            """The turn as it ends with `text`: its tool calls, usage and model calls so far."""
            turn = BotTurn(
                text=text,
                tool_calls=records,
                usage=usage,
                latency_s=time.perf_counter() - started,
                rounds=rounds,
                ends_conversation=ends,
                hit_round_cap=capped,
            )
            return TurnCompleted(turn=turn)

        while True:
            messages = await self.fit([system, *transcript], specs)
            rounds += 1
            reply: ModelReply | None = None
            marker = _MarkerFilter()
            if stream and callable(getattr(model, "stream", None)):
                reply_stream = model.stream(messages, specs, self.config)
                async for delta in reply_stream:
                    shown = marker.feed(delta)
                    if shown:
                        yield TextDelta(text=shown)
                reply = reply_stream.reply
                if reply is None:  # a provider that forgot to set it: treat as what it streamed
                    reply = ModelReply(model=self.name, text="")
            else:
                reply = await model.generate(messages, specs, self.config)
            usage = usage + reply.usage
            ctx.usage = ctx.usage + reply.usage
            calls = _with_ids(reply.tool_calls, len(transcript)) if tools is not None else []

            if not calls:
                text, ends = strip_end_marker(reply.text or "")
                if stream:
                    rest = marker.flush()  # an unfinished "[EN" that was not the marker
                    if rest:
                        yield TextDelta(text=rest)
                if not text.strip() and not ends:
                    # A model that answers nothing at all would leave the customer staring at an
                    # empty message; say so in words instead.
                    text = EMPTY_REPLY_TEXT
                    if stream:
                        yield TextDelta(text=text)
                elif stream and not callable(getattr(model, "stream", None)) and text:
                    yield TextDelta(text=text)
                transcript.append(ChatMessage(role="assistant", content=text))
                yield completed(text, ends=ends)
                return

            assert tools is not None
            said = strip_end_marker(reply.text)[0] if reply.text else None
            transcript.append(ChatMessage(role="assistant", content=said or None, tool_calls=calls))
            if stream and said and not callable(getattr(model, "stream", None)):
                yield TextDelta(text=said)  # "let me check..." before the tools run
            if rounds > self.max_tool_rounds:
                # Answer every call (an OpenAI transcript must) without running any, then stop.
                for call in calls:
                    transcript.append(ChatMessage(role="tool", content=_NOT_RUN, tool_call_id=call.id, name=call.name))
                transcript.append(ChatMessage(role="assistant", content=ROUND_CAP_TEXT))
                if stream:
                    yield TextDelta(text=ROUND_CAP_TEXT)
                yield completed(ROUND_CAP_TEXT, capped=True)
                return
            for call in calls:
                if stream:
                    yield ToolCallStarted(call_id=call.id, name=call.name, arguments=call.arguments)
                record = await tools.execute(call)
                records.append(record)
                transcript.append(ChatMessage(role="tool", content=record.result, tool_call_id=call.id, name=call.name))
                if stream:
                    yield ToolCallFinished(record=record)


def _with_ids(calls: Sequence[ToolCall], salt: int) -> list[ToolCall]:
    """The calls as given; models that omit call ids get stable ones so results can be matched."""
    out = []
    for i, call in enumerate(calls):
        out.append(call if call.id else call.model_copy(update={"id": f"call_{salt}_{i}"}))
    return out


def offline_elsewhere(world: WorldDefinition) -> str:
    """Why the offline bot cannot run on `world`, and what to use instead (the world's own reference
    bot, when it declares one: its `reference_bot` hook)."""
    reference = world.hooks.get("reference_bot")
    instead = f"--bot {reference} (the world's reference bot), " if isinstance(reference, str) else ""
    return (
        f"the offline bot knows the order world only, and world {world.name} offers no offline model of its own: "
        f"use {instead}a model (--bot openai/MODEL, ollama/MODEL, ...), a python: bot, or a deployed bot on the served world"
    )


def _offline_fallback() -> str | None:
    """The order world's offline model's fallback sentence (what fallback detection keys on)."""
    from parley.core.world import load_world

    make = load_world().hooks.get("offline_model")
    fallback = getattr(make, "fallback", None)
    return fallback if isinstance(fallback, str) else None
