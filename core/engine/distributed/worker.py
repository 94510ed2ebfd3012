"""One worker process of a sharded batch: it runs the conversations the coordinator hands it.

A `ConversationWorker` lives in its own process (a Ray actor: parley.core.engine.distributed.pool)
and serves the batches of its coordinator, each opened with its options. For each conversation
it is handed it runs the batch's one per-conversation path, `run_planned` (world, bot, user,
limits, evaluation), exactly as a single-process batch does, and replies with the finished
record and verdict; it stores nothing (the coordinator alone writes SQLite).

Its model calls report to the batch's one adaptive limit, which lives in the coordinator: the
worker counts the calls that went through and keeps the 429s it heard, and the coordinator
collects them a few times a second (`signals`) and with every reply.

`interrupt` is the coordinator's stop reaching a conversation: one that is running is
interrupted as a single-process batch interrupts it (saved as cancelled with what it had); one
not started yet is not run at all (`WorkerReply.started` False).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import logging
import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict

from parley.core.engine.batch_conversation import ConversationControl, run_planned
from parley.core.engine.batch_models import BatchModels
from parley.core.engine.batch_plan import PlannedRun
from parley.core.engine.gc_threshold import fewer_collections
from parley.core.engine.harness import Limits, describe_error
from parley.core.engine.spec_worlds import WorldTemplates
from parley.core.errors import ParleyError
from parley.core.models import RetryEvent
from parley.core.records import BatchOptions, Conversation, Verdict

log = logging.getLogger("parley.engine.distributed.worker")


class LimitSignals(BaseModel):
    """How a worker's model calls for one batch went since it was last asked."""

    successes: int = 0
    rate_limits: list[RetryEvent] = []
    """The 429s heard (each with the server's Retry-After)."""


class WorkerReply(BaseModel):
    """What a worker sends back for one conversation: its record and verdict, or why it has none."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    conversation: Conversation | None = None
    verdict: Verdict | None = None
    error: str | None = None
    """The conversation broke outside its stages (`run_planned` raised), in the words one process
    records it with (the coordinator stores it as an infrastructure_error, as one process does)."""
    started: bool = True
    """False: the batch stopped it before it began; nothing ran."""
    signals: LimitSignals | None = None
    """The batch's model-call signals on this worker not yet collected: with every reply, so the
    batch's limit has heard every 429 of a conversation by the time it is stored."""


@dataclass
class _Batch:
    models: BatchModels
    limits: Limits
    today: datetime.date
    worlds: WorldTemplates = field(default_factory=WorldTemplates)
    successes: int = 0
    rate_limits: list[RetryEvent] = field(default_factory=list)
    not_to_start: set[str] = field(default_factory=set)


def _take_signals(batch: _Batch) -> LimitSignals:
    """The batch's signals since they were last taken (then forgotten here)."""
    signals = LimitSignals(successes=batch.successes, rate_limits=batch.rate_limits)
    batch.successes, batch.rate_limits = 0, []
    return signals


class ConversationWorker:
    """The work of one worker process (see the module doc). Every method is a coroutine: Ray
    runs them on the process's one event loop, the conversations side by side."""

    def __init__(self) -> None:
        self._batches: dict[str, _Batch] = {}
        self._running: dict[str, ConversationControl] = {}
        self._gc = contextlib.ExitStack()
        self._gc.enter_context(fewer_collections())  # this process only runs conversations

    async def where(self) -> tuple[int, str]:
        """This process's pid and host name."""
        return os.getpid(), socket.gethostname()

    async def open_batch(self, batch_id: str, options: BatchOptions, today: datetime.date, env: Mapping[str, str] | None = None) -> None:
        """Get ready to run `batch_id`'s conversations: its models (with `env` for their
        endpoints; None: this process's environment), limits and date."""
        if batch_id in self._batches:
            return
        models = BatchModels.for_batch(options, env=dict(env) if env is not None else None)
        batch = _Batch(models=models, limits=Limits(max_turns=options.max_turns, timeout_s=options.timeout_s), today=today)

        def on_retry(event: RetryEvent) -> None:
            if event.rate_limited:
                batch.rate_limits.append(event)

        def on_success() -> None:
            batch.successes += 1

        models.attach(on_retry=on_retry, on_success=on_success)
        self._batches[batch_id] = batch

    async def close_batch(self, batch_id: str) -> None:
        batch = self._batches.pop(batch_id, None)
        if batch is not None:
            await batch.models.aclose()

    async def signals(self, batch_id: str) -> LimitSignals:
        """The batch's successful calls and 429s since the last time (then forgotten here)."""
        batch = self._batches.get(batch_id)
        if batch is None:
            return LimitSignals()
        return _take_signals(batch)

    async def run(self, batch_id: str, run: PlannedRun, conversation_id: str) -> WorkerReply:
        """Run and evaluate one conversation of an opened batch."""
        batch = self._batches.get(batch_id)
        if batch is None:
            raise ParleyError(f"batch {batch_id} is not open on this worker")
        if conversation_id in batch.not_to_start:
            batch.not_to_start.discard(conversation_id)
            return WorkerReply(started=False, signals=_take_signals(batch))
        control = ConversationControl(run=run, conversation_id=conversation_id)
        control.task = asyncio.current_task()
        self._running[conversation_id] = control
        try:
            conversation, verdict = await run_planned(
                control, models=batch.models, worlds=batch.worlds, limits=batch.limits, today=batch.today
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - reported to the coordinator, which records it as one process does
            log.warning("conversation %s (%s trial %d) broke: %s", conversation_id, run.spec.spec_id, run.trial, exc)
            return WorkerReply(error=describe_error(exc), signals=_take_signals(batch))
        finally:
            self._running.pop(conversation_id, None)
        return WorkerReply(conversation=conversation, verdict=verdict, signals=_take_signals(batch))

    async def interrupt(self, batch_id: str, conversation_id: str) -> bool:
        """Stop a conversation of the batch: True if it was running and is now interrupted (its
        reply is the cancelled record); one not started yet will not run."""
        control = self._running.get(conversation_id)
        if control is not None:
            return control.interrupt()
        batch = self._batches.get(batch_id)
        if batch is not None:
            batch.not_to_start.add(conversation_id)
        return False
