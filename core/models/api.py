"""The one interface every chat model in parley implements, offline or behind an endpoint."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Protocol, runtime_checkable

from parley.core.records import ChatMessage, GenerateConfig, ModelReply, ToolSpec


@runtime_checkable
class ChatModel(Protocol):
    """Messages (and optional tools) in, one reply out.

    `name` is the model's full parley name (`offline`, `openai/gpt-4o-mini`, ...).
    `stream` returns a ReplyStream: iterating it yields text deltas as they arrive; once it is
    exhausted its `reply` holds what `generate` would have returned (usage, tool calls).
    Providers that do not stream yield the whole text once.
    """

    name: str

    async def generate(
        self,
        messages: Sequence[ChatMessage],
        tools: Sequence[ToolSpec] | None = None,
        config: GenerateConfig | None = None,
    ) -> ModelReply: ...

    def stream(
        self,
        messages: Sequence[ChatMessage],
        tools: Sequence[ToolSpec] | None = None,
        config: GenerateConfig | None = None,
    ) -> ReplyStream: ...


class ReplyStream(Protocol):
    """An async iterator of text deltas whose `reply` is set once it is exhausted."""

    reply: ModelReply | None

    def __aiter__(self) -> AsyncIterator[str]: ...
