"""A re-score's traffic with the store, in bulk: the stored conversations it judges read a page
at a time ahead of the runs that need them (`ReadAhead`), and the copies it makes written
together as they come (`CopyWriter`).

One at a time, a re-score is mostly waiting on the store: a page of conversations reads in a
few queries where one conversation takes as many, and a commit costs more than the copy it
commits. Both run on the store's worker thread, one call at a time, never on the event loop.
What each run sees is what it saw one by one: its own conversation, or its own error (a page or
a write that fails is retried one conversation at a time, so one bad row fails its run alone).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import Any

from parley.core.records import ConversationCopy, StoredConversation
from parley.core.store import Store

log = logging.getLogger("parley.engine.stored_copies")

__all__ = ["CopyWriter", "ReadAhead"]

PAGE_SIZE = 64
PAGES_AHEAD = 2
WRITE_MOST = 256
QUEUED_MOST = 512


class _ReadAlone(Exception):
    """Reading ahead stopped (a bug, logged): the run reads its conversation alone."""


class ReadAhead:
    """The stored conversations of `ids` (in the order the runs will ask for them), read a page
    at a time, at most `pages_ahead` pages beyond what was taken. `take(id)` gives one (an id
    not among `ids` is read alone). Call `close()` once no run will take any more."""

    def __init__(self, store: Store, ids: Iterable[str], *, page_size: int | None = None, pages_ahead: int = PAGES_AHEAD) -> None:
        self.store = store
        self._ids = list(dict.fromkeys(ids))
        self._planned = set(self._ids)
        self.page_size = page_size or PAGE_SIZE
        self.most_unclaimed = self.page_size * pages_ahead
        self._next = 0
        self._read: dict[str, asyncio.Future[StoredConversation]] = {}
        self._unclaimed = 0
        self._room = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def take(self, conversation_id: str) -> StoredConversation:
        """The stored conversation `conversation_id` (ParleyError and the store's errors as
        `Store.load_conversations` raises them for it alone)."""
        if conversation_id in self._planned:
            if self._task is None:
                self._task = asyncio.create_task(self._reading(), name="parley-read-ahead")
            self._planned.discard(conversation_id)  # taken once: a second take reads it alone
            future = self._future(conversation_id)
            try:
                return await asyncio.shield(future)
            except _ReadAlone:
                pass
            finally:
                del self._read[conversation_id]
                if future.done():
                    self._unclaimed -= 1
                    self._room.set()
        return (await asyncio.to_thread(self.store.load_conversations, [conversation_id]))[0]

    def close(self) -> None:
        """Stop reading ahead."""
        if self._task is not None:
            self._task.cancel()

    def _future(self, conversation_id: str) -> asyncio.Future[StoredConversation]:
        future = self._read.get(conversation_id)
        if future is None:
            future = self._read[conversation_id] = asyncio.get_running_loop().create_future()
        return future

    async def _reading(self) -> None:
        try:
            await self._read_pages()
        except Exception:  # a bug here must not leave a run waiting for ever: each reads its own
            log.exception("reading stored conversations ahead failed; each is read alone")
            self._planned.clear()
            for future in self._read.values():
                if not future.done():
                    future.set_exception(_ReadAlone())

    async def _read_pages(self) -> None:
        while self._next < len(self._ids):
            while self._unclaimed >= self.most_unclaimed:
                self._room.clear()
                await self._room.wait()
            page = [i for i in self._ids[self._next : self._next + self.page_size] if i in self._planned or i in self._read]
            self._next += self.page_size
            for conversation_id, outcome in zip(page, await self._load(page), strict=True):
                if conversation_id not in self._planned and conversation_id not in self._read:
                    continue  # taken meanwhile by a run that no longer waits for it (it was cancelled)
                future = self._future(conversation_id)
                if future.done():
                    continue
                if isinstance(outcome, BaseException):
                    future.set_exception(outcome)
                else:
                    future.set_result(outcome)
                self._unclaimed += 1

    async def _load(self, page: list[str]) -> list[StoredConversation | BaseException]:
        """The page's conversations; when the page cannot be read whole, each read alone, so a
        conversation that cannot be read fails alone (as it would have one by one)."""
        if not page:
            return []
        try:
            return list(await asyncio.to_thread(self.store.load_conversations, page))
        except Exception as exc:  # noqa: BLE001 - read again one by one: each run gets its own outcome
            if len(page) == 1:
                return [exc]  # the run that takes it raises it
            log.warning("a page of %d stored conversations could not be read at once; reading them one by one", len(page), exc_info=True)
        out: list[StoredConversation | BaseException] = []
        for conversation_id in page:
            try:
                out.append((await asyncio.to_thread(self.store.load_conversations, [conversation_id]))[0])
            except Exception as exc:  # noqa: BLE001 - the run that takes it raises it
                out.append(exc)
        return out


class CopyWriter:
    """The copies of a re-score's batch, stored as they come: those that arrive while a write
    is under way are stored together by the next one (one transaction, each copy in a savepoint
    of its own: `Store.save_copies`), so a commit is shared by as many copies as were ready.

    `hand_over` queues a copy (waiting while `most_queued` already wait, so memory stays bounded
    when judging outruns the store) and gives the future of its write: done once the copy is
    committed, or with what `Store.save_copy` would have raised for it. Call `close()` once
    every write was awaited."""

    def __init__(self, store: Store, batch_id: str, *, most: int = WRITE_MOST, most_queued: int = QUEUED_MOST) -> None:
        self.store = store
        self.batch_id = batch_id
        self.most = most
        self.most_queued = most_queued
        self._queue: list[tuple[ConversationCopy, asyncio.Future[None]]] = []
        self._group: list[tuple[ConversationCopy, asyncio.Future[None]]] = []
        """The copies being written now."""
        self._arrived = asyncio.Event()
        self._room = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def hand_over(self, copy: ConversationCopy) -> asyncio.Future[None]:
        """Queue `copy` for the next write; the future of its write (await it shielded: a copy
        handed over is written, whoever stops waiting for it)."""
        while len(self._queue) >= self.most_queued:
            self._room.clear()
            await self._room.wait()
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queue.append((copy, future))
        self._arrived.set()
        if self._task is None:
            self._task = asyncio.create_task(self._writing(), name=f"parley-copies-{self.batch_id}")
        return future

    def close(self) -> None:
        if self._task is not None:
            self._task.cancel()

    async def _writing(self) -> None:
        try:
            await self._write_groups()
        except Exception as exc:  # a bug here must not leave a run waiting for ever: each fails
            log.exception("storing a re-score's copies failed")
            for _, future in self._group + self._queue:
                if not future.done():
                    future.set_exception(exc)
            self._group, self._queue = [], []
            self._task = None  # the next copy starts a writer again

    async def _write_groups(self) -> None:
        while True:
            if not self._queue:
                self._arrived.clear()
                await self._arrived.wait()
                continue
            self._group, self._queue = self._queue[: self.most], self._queue[self.most :]
            self._room.set()
            errors = await self._write([copy for copy, _ in self._group])
            for (_, future), error in zip(self._group, errors, strict=True):
                if future.done():
                    continue
                if error is None:
                    future.set_result(None)
                else:
                    future.set_exception(error)

    async def _write(self, copies: list[ConversationCopy]) -> list[Any]:
        """Each copy's error (None: stored). When the write as a whole fails, the copies are
        written one by one, so each gets its own outcome."""
        try:
            return await asyncio.to_thread(self.store.save_copies, self.batch_id, copies)
        except Exception as exc:  # noqa: BLE001 - written again one by one: each run gets its own outcome
            if len(copies) == 1:
                return [exc]  # the run that saved it raises it
            log.warning("%d copies could not be stored together; storing them one by one", len(copies), exc_info=True)
        out: list[Any] = []
        for copy in copies:
            try:
                out.extend(await asyncio.to_thread(self.store.save_copies, self.batch_id, [copy]))
            except Exception as exc:  # noqa: BLE001 - the run that saved it raises it
                out.append(exc)
        return out
