"""`CachedModel`: a ChatModel that records an LLM's replies in the store and replays them.

The key is the full request: the model's parley name, the messages and tools as they are sent
(OpenAI shape) and the generation config (temperature, seed, max tokens), hashed by
`parley.core.store.store.cache_key`. An identical request is answered from SQLite without a call, so a
re-run of a batch costs nothing and repeats exactly. A replayed reply reports no usage (no call
was made, nothing was billed) and no latency. The offline models are never wrapped: they are
deterministic and free already.

Store calls run in a worker thread (`asyncio.to_thread`): the event loop never blocks on disk.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

from parley.core.models import ChatModel, ChatModelBase
from parley.core.records import ModelReply, ModelRequest, Usage
from parley.core.store.rows import cache_key
from parley.core.store.store import Store

log = logging.getLogger("parley.models.reply_cache")


def cache_request(model: str, request: ModelRequest) -> dict[str, Any]:
    """What a reply is cached under: everything that can change the reply."""
    return {
        "model": model,
        "messages": [m.to_openai() for m in request.messages],
        "tools": [t.to_openai() for t in request.tools] if request.tools else None,
        "config": request.config.model_dump(exclude_none=True) if request.config is not None else None,
    }


class CachedModel(ChatModelBase):
    """Wraps `inner`: replays stored replies to identical requests, stores new ones."""

    def __init__(self, inner: ChatModel, store: Store) -> None:
        self.inner = inner
        self.store = store
        self.name = inner.name
        self.hits = 0
        self.misses = 0

    def __repr__(self) -> str:
        return f"CachedModel({self.inner!r})"

    async def lookup(self, request: dict[str, Any]) -> tuple[str, ModelReply | None]:
        key = cache_key(request)
        stored = await asyncio.to_thread(self.store.cache_get, key)
        if stored is None:
            return key, None
        try:
            reply = ModelReply.model_validate(stored)
        except ValueError:  # written by another version: call the model again
            log.info("cached reply %s is not a reply this version reads; calling the model", key)
            return key, None
        self.hits += 1
        return key, reply.model_copy(update={"usage": Usage(), "latency_s": 0.0})

    async def remember(self, key: str, request: dict[str, Any], reply: ModelReply) -> None:
        self.misses += 1
        await asyncio.to_thread(self.store.cache_put, key, self.name, request, reply.model_dump(mode="json"))

    async def reply_to(self, request: ModelRequest) -> ModelReply:
        cached_as = cache_request(self.name, request)
        key, cached = await self.lookup(cached_as)
        if cached is not None:
            return cached
        reply = await self.inner.generate(request.messages, request.tools, request.config)
        await self.remember(key, cached_as, reply)
        return reply

    def stream_reply(self, request: ModelRequest) -> CachedReplyStream:
        return CachedReplyStream(self, request)


class CachedReplyStream:
    """A replayed reply comes as one piece of text; a new one streams as the model sends it."""

    def __init__(self, model: CachedModel, request: ModelRequest) -> None:
        self.model = model
        self.request = request
        self.reply: ModelReply | None = None

    def __aiter__(self) -> AsyncIterator[str]:
        return self._run()

    async def _run(self) -> AsyncIterator[str]:
        request = self.request
        cached_as = cache_request(self.model.name, request)
        key, cached = await self.model.lookup(cached_as)
        if cached is not None:
            self.reply = cached
            if cached.text:
                yield cached.text
            return
        inner = self.model.inner.stream(request.messages, request.tools, request.config)
        async for delta in inner:
            yield delta
        reply = inner.reply
        if reply is not None:
            self.reply = reply
            await self.model.remember(key, cached_as, reply)
