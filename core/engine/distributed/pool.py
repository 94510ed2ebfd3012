"""The worker processes of sharded batches: Ray actors running `ConversationWorker`.

One `WorkerPool` per coordinating process (a `parley run`, the batch service) holds its workers
and lends them to every batch it runs: `open_batch` readies a batch on each worker (and on any
worker started later), `pick` hands out the least busy one, `lost` replaces one that died (a
kill -9, a node gone), at most as many times as the pool has workers: past that, batches go on
with the survivors, and with none left `pick` raises NoWorkers.

Blocking Ray calls (starting Ray, shutting it down) run in a thread; everything else is awaited
on the coordinator's loop.
"""

from __future__ import annotations

import asyncio
import datetime
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from parley.core.engine.distributed.placement import Placement, import_ray, start_ray, stop_ray
from parley.core.engine.distributed.worker import ConversationWorker, LimitSignals
from parley.core.errors import ParleyError
from parley.core.records import BatchOptions

log = logging.getLogger("parley.engine.distributed.pool")

MAX_CALLS_PER_WORKER = 100_000
"""Calls a worker runs side by side: far above any concurrency, so only the batch's limit counts."""
WORKER_START_S = 120.0
"""How long a new worker may take to come up (a cluster may have to find it a node)."""


class NoWorkers(ParleyError):
    """Every worker of the pool died and none can be started in their place."""


@dataclass(eq=False)
class PooledWorker:
    """One worker process: its actor handle, pid and host, and how many conversations it runs now."""

    handle: Any
    pid: int
    host: str
    number: int
    in_flight: int = 0
    alive: bool = True

    def describe(self) -> str:
        return f"worker {self.number} (pid {self.pid} on {self.host})"


@dataclass
class _OpenBatch:
    options: BatchOptions
    today: datetime.date
    env: Mapping[str, str] | None
    users: int = 1


class WorkerPool:
    """See the module doc. `start()` before use, `stop()` at the end."""

    def __init__(self, placement: Placement) -> None:
        self.placement = placement
        self.workers: list[PooledWorker] = []
        self.replacements_left = 0
        self._actor_class: Any = None
        self._owns_ray = False
        self._numbers = 0
        self._batches: dict[str, _OpenBatch] = {}
        self._starting = 0
        self._changed = asyncio.Event()
        self._starting_lock = asyncio.Lock()

    # -- starting and stopping -----------------------------------------------------------------

    @property
    def started(self) -> bool:
        return bool(self.workers)

    async def start(self) -> None:
        """Start or join Ray and start the workers (ConfigError: Ray missing or unreachable).
        Once: later calls (a second batch of the service) wait for the first and return."""
        async with self._starting_lock:
            if not self.workers:
                await self._start()

    async def _start(self) -> None:
        ray = import_ray()
        self._owns_ray = await asyncio.to_thread(start_ray, self.placement)
        count = self.placement.workers
        if count is None:
            count = max(1, int(ray.cluster_resources().get("CPU", 1)))
        # On a cluster each worker takes one CPU, so Ray spreads them over its nodes; on this
        # machine they take none, so pools of several services or tests can share one instance.
        cpus = 0 if self.placement.local else 1
        self._actor_class = ray.remote(num_cpus=cpus, max_restarts=0, max_concurrency=MAX_CALLS_PER_WORKER)(ConversationWorker)
        self.replacements_left = count
        try:
            started = await asyncio.gather(*(self._new_worker() for _ in range(count)))
        except BaseException:
            await self.stop()
            raise
        self.workers.extend(started)
        log.info("started %s", ", ".join(w.describe() for w in started))

    async def _new_worker(self) -> PooledWorker:
        handle = self._actor_class.remote()
        try:
            pid, host = await asyncio.wait_for(handle.where.remote(), WORKER_START_S)
            for batch_id, batch in self._batches.items():
                await handle.open_batch.remote(batch_id, batch.options, batch.today, batch.env)
        except BaseException:
            import_ray().kill(handle)
            raise
        self._numbers += 1
        return PooledWorker(handle=handle, pid=pid, host=host, number=self._numbers)

    async def stop(self) -> None:
        """End the workers (and the local Ray instance this pool started)."""
        ray = import_ray()
        for worker in self.workers:
            if worker.alive:
                worker.alive = False
                try:
                    ray.kill(worker.handle)
                except Exception as exc:  # noqa: BLE001 - it is gone already
                    log.info("%s was already gone: %s", worker.describe(), exc)
        if self._owns_ray:
            self._owns_ray = False
            await asyncio.to_thread(stop_ray)

    # -- batches -------------------------------------------------------------------------------

    async def open_batch(self, batch_id: str, options: BatchOptions, today: datetime.date, env: Mapping[str, str] | None) -> None:
        """Ready every worker for `batch_id` (and remember it for workers started later)."""
        known = self._batches.get(batch_id)
        if known is not None:
            known.users += 1
            return
        self._batches[batch_id] = _OpenBatch(options=options, today=today, env=env)
        await asyncio.gather(*(w.handle.open_batch.remote(batch_id, options, today, env) for w in self.live))

    async def close_batch(self, batch_id: str) -> None:
        known = self._batches.get(batch_id)
        if known is None:
            return
        known.users -= 1
        if known.users > 0:
            return
        del self._batches[batch_id]
        results = await asyncio.gather(*(w.handle.close_batch.remote(batch_id) for w in self.live), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                log.warning("a worker could not close batch %s: %s", batch_id, result)

    async def signals(self, batch_id: str) -> list[LimitSignals]:
        """Every live worker's model-call signals for the batch since the last time."""
        results = await asyncio.gather(*(w.handle.signals.remote(batch_id) for w in self.live), return_exceptions=True)
        return [r for r in results if isinstance(r, LimitSignals)]

    # -- handing out workers -------------------------------------------------------------------

    @property
    def live(self) -> list[PooledWorker]:
        return [w for w in self.workers if w.alive]

    def pids(self) -> list[int]:
        """The live workers' pids (all on this machine for a local instance)."""
        return [w.pid for w in self.live]

    async def pick(self) -> PooledWorker:
        """The live worker with the fewest conversations in flight (waiting for one being
        started when none is live); NoWorkers when none is left."""
        while True:
            live = self.live
            if live:
                return min(live, key=lambda w: w.in_flight)
            if self._starting == 0:
                raise NoWorkers("every worker died and no more can be started in their place")
            self._changed.clear()
            await self._changed.wait()

    async def lost(self, worker: PooledWorker, reason: str) -> None:
        """`worker` died: hand it out no more, and start another in its place (if any left)."""
        if not worker.alive:
            return
        worker.alive = False
        log.warning("%s died (%s); its unfinished conversations run again on another worker", worker.describe(), reason)
        if self.replacements_left <= 0:
            self._changed.set()
            return
        self.replacements_left -= 1
        self._starting += 1
        try:
            replacement = await self._new_worker()
        except Exception as exc:  # noqa: BLE001 - the survivors go on
            log.warning("could not start a worker in place of %s: %s", worker.describe(), exc)
        else:
            self.workers.append(replacement)
            log.info("started %s in place of %s", replacement.describe(), worker.describe())
        finally:
            self._starting -= 1
            self._changed.set()
