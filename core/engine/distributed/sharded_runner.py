"""The coordinating process of a sharded batch: a BatchRunner whose conversations run on workers.

    pool = WorkerPool(Placement(workers=2))
    await pool.start()
    runner = ShardedRunner(store, prepared, pool=pool)    # then as a BatchRunner
    result = await runner.run()
    await pool.stop()

Everything a batch does besides running a conversation stays in this one process, as
parley.core.engine.batch_runner does it: conversations are launched in plan order under the
batch's one adaptive limit (so the concurrency asked for is the total over all workers, and the
429s any worker hears shrink it for all of them), each finished one is stored here in one
transaction (this process alone writes SQLite), and progress, events, the budget, stop, cancel
and resume are the runner's own. What changes is where a conversation runs: each is handed to
the least busy worker, which runs it with the same per-conversation path and the same seed
(parley.core.engine.distributed.worker), so the stored results are the single-process ones.

Faults: a worker that dies (kill -9, a node lost) takes no finished conversation with it (those
are stored here already); each conversation it was running is run again from the start on
another worker (a replacement is started in its place), and stored once. With no worker left,
the batch ends `failed` and `--resume` continues it. Stopping reaches into the workers: a
conversation running there is interrupted and saved as cancelled with what it had, as in one
process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from parley.core.engine.batch_conversation import ConversationControl
from parley.core.engine.batch_models import BatchModels
from parley.core.engine.batch_plan import PreparedBatch
from parley.core.engine.batch_runner import BatchResult, BatchRunner
from parley.core.engine.distributed.placement import import_ray
from parley.core.engine.distributed.pool import NoWorkers, PooledWorker, WorkerPool
from parley.core.engine.distributed.worker import LimitSignals, WorkerReply
from parley.core.errors import ConfigError, ParleyError
from parley.core.models import OFFLINE, parse_model_name
from parley.core.records import Conversation, ConversationSpec, Verdict
from parley.core.store import Store

log = logging.getLogger("parley.engine.distributed.sharded_runner")

SIGNALS_EVERY_S = 0.25
"""How often the workers' model-call signals (successes, 429s) reach the batch's limit."""

CACHE_REFUSED = (
    "--cache runs in one process: the reply cache lives in the database, which only the coordinating "
    "process writes; run without --cache or without --workers/--ray"
)


class WorkerError(ParleyError):
    """A conversation broke with a bug on its worker (the worker's error, as one process words it)."""


def endpoint_env(models: BatchModels, specs: Iterable[ConversationSpec], env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment variables the batch's model endpoints are resolved from (base URLs, API
    keys): what a worker on another machine needs of this one's environment, and nothing else."""
    env = os.environ if env is None else env
    names: set[str] = set()
    for _role, name in models.endpoints(specs):
        if name == OFFLINE:
            continue
        spec = parse_model_name(name)
        names.update(n for n in (spec.base_url_env, spec.api_key_env) if n)
        if spec.provider == "openai":
            names.update(("OPENAI_ORG_ID", "OPENAI_PROJECT_ID"))
    return {n: env[n] for n in sorted(names) if n in env}


class ShardedRunner(BatchRunner):
    """A BatchRunner whose conversations run on `pool`'s workers (see the module doc)."""

    def __init__(self, store: Store, prepared: PreparedBatch, *, pool: WorkerPool, **kwargs: Any) -> None:
        if prepared.batch.options.cache:
            raise ConfigError(CACHE_REFUSED)
        super().__init__(store, prepared, stream_transcripts=False, **kwargs)
        self.pool = pool
        self.reruns = 0
        """Conversations run again because their worker died."""
        self.by_worker: Counter[int] = Counter()
        """Conversations each worker ran to the end, by worker number."""

    def workers_line(self) -> str:
        """Where the conversations ran, for the end of `parley run`."""
        counts = ", ".join(str(self.by_worker[n]) for n in sorted(self.by_worker)) or "none"
        line = f"Workers: {len(self.by_worker)} ran conversations ({counts})"
        if self.reruns:
            line += f"; {self.reruns} ran again after their worker died"
        return line

    def _worker_env(self) -> dict[str, str]:
        if self.pool.placement.local:
            return dict(os.environ)  # same machine, same user: as a child process would inherit it
        return endpoint_env(self.models, self.prepared.specs)

    async def run(self) -> BatchResult:
        """Start the pool's workers if they are not yet, then run the batch as BatchRunner does.
        A pool that cannot start (Ray missing, a cluster unreachable) ends the batch `failed`
        with the reason (ConfigError raised); `--resume` continues it."""
        try:
            await self.pool.start()
            await self.pool.open_batch(self.batch_id, self.options, self.prepared.today, self._worker_env())
        except Exception as exc:
            await asyncio.to_thread(self.store.update_batch, self.batch_id, status="failed", error=f"the workers did not start: {exc}")
            raise
        signals = asyncio.create_task(self._collect_signals(), name=f"parley-signals-{self.batch_id}")
        try:
            return await super().run()
        finally:
            signals.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await signals
            await self.pool.close_batch(self.batch_id)

    async def _collect_signals(self) -> None:
        """Feed the workers' successes and 429s to the batch's one limit, a few times a second."""
        while True:
            await asyncio.sleep(SIGNALS_EVERY_S)
            try:
                batches = await self.pool.signals(self.batch_id)
            except Exception as exc:  # noqa: BLE001 - a worker gone is handled where its conversations are
                log.info("could not collect the workers' signals: %s", exc)
                continue
            for signals in batches:
                self._heard(signals)

    def _heard(self, signals: LimitSignals | None) -> None:
        """A worker's successes and 429s, told to the batch's one limit."""
        if signals is None:
            return
        for event in signals.rate_limits:
            self.limiter.on_retry(event)
        for _ in range(signals.successes):
            self.limiter.call_succeeded()

    async def _conversation(self, control: ConversationControl) -> tuple[Conversation, Verdict]:
        ray = import_ray()
        control.phase = "running"
        while True:
            try:
                worker = await self.pool.pick()
            except NoWorkers as exc:
                self._fatal = self._fatal or str(exc)
                if not self.stopping:
                    self.stop(grace_s=0)
                raise asyncio.CancelledError from exc  # not run: `--resume` runs it
            worker.in_flight += 1
            try:
                reply = await self._run_on(worker, control)
            except ray.exceptions.RayActorError as exc:
                await self.pool.lost(worker, str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__)
                if control.interrupted:
                    raise asyncio.CancelledError from exc  # stopped meanwhile: not run again now
                self.reruns += 1
                continue
            finally:
                worker.in_flight -= 1
            self._heard(reply.signals)
            if not reply.started:
                raise asyncio.CancelledError  # stopped before its worker began it: nothing to save
            self.by_worker[worker.number] += 1
            if reply.error is not None or reply.conversation is None or reply.verdict is None:
                raise WorkerError(reply.error or "the worker sent back no conversation")
            return reply.conversation, reply.verdict

    async def _run_on(self, worker: PooledWorker, control: ConversationControl) -> WorkerReply:
        """One conversation on `worker`; the runner's interrupt is passed on to it, and what the
        worker then saves of the conversation (cancelled, with what it had) is the reply."""
        ref = worker.handle.run.remote(self.batch_id, control.run, control.conversation_id)
        reply = asyncio.wrap_future(ref.future())
        while True:
            try:
                return await asyncio.shield(reply)
            except asyncio.CancelledError:
                if not reply.done():
                    worker.handle.interrupt.remote(self.batch_id, control.conversation_id)
                control.absorb()  # the runner's own interrupt is taken off; anything else goes on
