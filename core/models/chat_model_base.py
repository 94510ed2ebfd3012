"""`ChatModelBase`: the ChatModel interface written once for the chat models parley implements.

`generate` and `stream` take the interface's three arguments (messages, tools, config) and hand
them on as one `ModelRequest`; a model implements `reply_to(request)` and, if it streams, also
`stream_reply(request)`. A model that does not stream inherits `WholeReplyStream`: its whole
text as one delta.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

from parley.core.models.api import ReplyStream
from parley.core.records import ChatMessage, GenerateConfig, ModelReply, ModelRequest, ToolSpec


class ChatModelBase(ABC):
    """A ChatModel (parley.core.models.api) whose calls arrive as one ModelRequest."""

    name: str

    async def generate(
        self,
        messages: Sequence[ChatMessage],
        tools: Sequence[ToolSpec] | None = None,
        config: GenerateConfig | None = None,
    ) -> ModelReply:
        """One reply to `messages`, with `tools` offered and `config`'s options."""
        return await self.reply_to(ModelRequest.of(messages, tools, config))

    def stream(
        self,
        messages: Sequence[ChatMessage],
        tools: Sequence[ToolSpec] | None = None,
        config: GenerateConfig | None = None,
    ) -> ReplyStream:
        """The reply's text deltas as they come; the stream's `reply` once it is exhausted."""
        return self.stream_reply(ModelRequest.of(messages, tools, config))

    @abstractmethod
    async def reply_to(self, request: ModelRequest) -> ModelReply:
        """The reply to one request."""

    def stream_reply(self, request: ModelRequest) -> ReplyStream:
        """The reply to one request as a stream: here, the whole text once it is there."""
        return WholeReplyStream(lambda: self.reply_to(request))


class WholeReplyStream:
    """A ReplyStream for a model that does not stream: iterating it waits for the whole reply
    (from `reply`, called once) and yields its text as one delta."""

    def __init__(self, reply: Callable[[], Awaitable[ModelReply]]) -> None:
        self._get_reply = reply
        self.reply: ModelReply | None = None

    async def __aiter__(self) -> AsyncIterator[str]:
        self.reply = await self._get_reply()
        if self.reply.text:
            yield self.reply.text
