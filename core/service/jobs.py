"""The batch service's jobs: the batches it runs, on an event loop and thread of their own.

- `launch` plans a batch and runs it in the background (several side by side, each with its own
  adaptive concurrency limit); `cancel` stops one now (in-flight conversations are saved as
  cancelled; the batch ends `cancelled`); `resume` re-plans a stopped batch and runs what it
  has not completed.
- `start` (the service starting): batches left `pending`/`running` by a process that is gone
  (a service killed with kill -9, a crashed `parley run`) are marked `interrupted`; a batch a
  live process runs is left alone (parley.core.store.batch_owner says how that is told).
- `shutdown` (the service stopping): no new launches; conversations in flight get `grace_s` to
  finish, the rest are saved as cancelled; the batch is then `interrupted`, not `cancelled`:
  nobody asked for it to stop, and `POST /batches/{id}/resume` continues it.
- with a placement (`parley serve --workers N` / `--ray ADDRESS`), batches run sharded over one
  pool of worker processes that every batch shares (parley.core.engine.distributed), started at
  the first batch and stopped at shutdown; a batch that caches replies runs in this process.

Running and cancelling batches live on the BatchLoop (parley.core.service.batch_loop), never on
the loop serving HTTP: a status call stays fast however many conversations run. Planning a batch
(reading its files, in a worker thread) is done by the request that asks for it, so a launch is
not queued behind the running batches either. The methods below are called from the HTTP loop;
the `_here` ones run on the batch loop. `progress`, `running` and `is_running` only read. The
worker pool, like the runners, lives on the batch loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from parley.core.errors import ParleyError
from parley.core.service.batch_loop import BatchLoop

if TYPE_CHECKING:
    from parley.core.engine import BatchRunner, PreparedBatch
    from parley.core.engine.distributed import Placement, WorkerPool
    from parley.core.records import BatchRecord, Progress
    from parley.core.store import Store

log = logging.getLogger("parley.service")

RESUMABLE = ("interrupted", "cancelled", "failed")


class JobConflict(ParleyError):
    """The batch is not in a state that allows this (409)."""


@dataclass
class Job:
    batch_id: str
    runner: BatchRunner
    task: asyncio.Task[None] | None = None
    cancel_requested: bool = False


class BatchManager:
    """Runs batches for the service; see the module doc."""

    def __init__(self, store: Store, *, grace_s: float = 2.0, placement: Placement | None = None) -> None:
        self.store = store
        self.grace_s = grace_s
        self.placement = placement
        self._pool: WorkerPool | None = None
        self._jobs: dict[str, Job] = {}
        self._claimed: set[str] = set()
        self._closing = False
        self._batches: BatchLoop | None = None

    @property
    def batches(self) -> BatchLoop:
        if self._batches is None:
            raise JobConflict("the service is not started")
        return self._batches

    # -- looking -------------------------------------------------------------------------------

    def is_running(self, batch_id: str) -> bool:
        return batch_id in self._jobs

    @property
    def running(self) -> int:
        return len(self._jobs)

    def progress(self, batch_id: str) -> Progress | None:
        job = self._jobs.get(batch_id)
        return job.runner.progress() if job is not None else None

    async def settle(self, batch_id: str) -> None:
        """If the batch looks pending/running but no live process runs it, mark it interrupted
        now (its process died while this service was up)."""
        if batch_id not in self._jobs:
            await asyncio.to_thread(self.store.interrupt_orphans)

    # -- lifecycle -----------------------------------------------------------------------------

    async def start(self) -> list[str]:
        """Start the batch loop and reconcile the database with reality; returns the batches
        marked interrupted."""
        self._batches = BatchLoop()
        interrupted = await asyncio.to_thread(self.store.interrupt_orphans)
        for batch_id in interrupted:
            log.warning("batch %s was left unfinished by a process that is gone: now interrupted", batch_id)
        return interrupted

    async def shutdown(self, grace_s: float | None = None) -> None:
        """Stop every batch (see the module doc), close the shared model clients and the loop."""
        self._closing = True
        if self._batches is None or self._batches.closed:
            return
        try:
            await self._batches.run(self._shutdown_here(self.grace_s if grace_s is None else grace_s))
        finally:
            self._batches.close()
            from parley.core.models import aclose_clients

            await aclose_clients()  # those that planning batches opened on this loop

    async def _shutdown_here(self, grace: float) -> None:
        from parley.core.bots.connectors import aclose_connectors
        from parley.core.models import aclose_clients

        jobs = list(self._jobs.values())
        for job in jobs:
            job.runner.stop(grace_s=grace)
        tasks = [job.task for job in jobs if job.task is not None]
        if tasks:
            done, pending = await asyncio.wait(tasks, timeout=grace + 30.0)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending, timeout=10.0)
        if self._pool is not None:
            await self._pool.stop()
        await aclose_clients()
        await aclose_connectors()

    # -- acting --------------------------------------------------------------------------------

    async def launch(self, prepared: PreparedBatch) -> None:
        """Run a planned batch (parley.core.engine.batch_runner.prepare_batch) in the background;
        returns once the batch is recorded `running`, so a status call right after sees it so."""
        if self._closing:
            raise JobConflict("the service is shutting down; no new batches")
        await self.batches.run(self._launch_here(prepared))

    async def _launch_here(self, prepared: PreparedBatch, started_within_s: float = 30.0) -> None:
        from parley.core.records import BatchStarted

        if self._closing:
            raise JobConflict("the service is shutting down; no new batches")
        started = asyncio.Event()
        runner = self._runner(prepared)
        runner.subscribe(lambda event: started.set() if isinstance(event, BatchStarted) else None)
        job = Job(batch_id=prepared.id, runner=runner)
        self._jobs[prepared.id] = job
        job.task = asyncio.create_task(self._drive(job), name=f"parley-batch-{prepared.id}")
        job.task.add_done_callback(lambda _: started.set())  # it may end (or break) before it starts
        with contextlib.suppress(TimeoutError):  # a very busy loop: the batch still starts, a little later
            await asyncio.wait_for(started.wait(), started_within_s)

    def _runner(self, prepared: PreparedBatch) -> BatchRunner:
        from parley.core.engine import BatchRunner

        if self.placement is None or prepared.batch.options.cache:
            return BatchRunner(self.store, prepared, grace_s=self.grace_s)
        from parley.core.engine.distributed import ShardedRunner, WorkerPool

        if self._pool is None:
            self._pool = WorkerPool(self.placement)
        return ShardedRunner(self.store, prepared, pool=self._pool, grace_s=self.grace_s)

    async def _drive(self, job: Job) -> None:
        status: str | None = None
        try:
            result = await job.runner.run()
            status = result.status
            log.info("batch %s %s: %d of %d done", job.batch_id, status, result.done, result.total)
        except asyncio.CancelledError:
            status = "cancelled"  # the runner recorded it before letting the cancellation through
            raise
        except Exception as exc:  # noqa: BLE001 - a runner bug must still leave a true status
            log.exception("batch %s broke", job.batch_id)
            status = "failed"
            await asyncio.to_thread(self.store.update_batch, job.batch_id, status="failed", error=f"{type(exc).__name__}: {exc}")
        finally:
            try:
                if self._closing and not job.cancel_requested and status == "cancelled":
                    await asyncio.to_thread(
                        self.store.update_batch,
                        job.batch_id,
                        status="interrupted",
                        error="the service stopped before the batch finished; resume it to continue",
                    )
            finally:
                self._jobs.pop(job.batch_id, None)
                await job.runner.models.aclose()

    async def cancel(self, batch_id: str, *, wait_s: float = 10.0) -> None:
        """Cancel a batch this service runs (JobConflict otherwise); waits (bounded) until its
        in-flight conversations are saved and it is recorded `cancelled`."""
        if batch_id not in self._jobs:
            batch = await asyncio.to_thread(self.store.get_batch, batch_id)
            if batch.status in ("pending", "running"):
                owner = await asyncio.to_thread(self.store.batch_owner, batch_id)
                where = f" ({owner.describe()})" if owner else ""
                raise JobConflict(f"batch {batch_id} is run by another process{where}; stop it there")
            raise JobConflict(f"batch {batch_id} is {batch.status}: nothing to cancel")
        await self.batches.run(self._cancel_here(batch_id, wait_s))

    async def _cancel_here(self, batch_id: str, wait_s: float) -> None:
        job = self._jobs.get(batch_id)
        if job is None:
            return  # it ended meanwhile
        job.cancel_requested = True
        job.runner.cancel()
        if job.task is not None:
            await asyncio.wait({job.task}, timeout=wait_s)

    async def resume(
        self, batch_id: str, check: Callable[[BatchRecord], None] | None = None, *, python_refusal: Callable[[str], str] | None = None
    ) -> PreparedBatch:
        """Re-plan a stopped batch (interrupted, cancelled or failed) and run what it has not
        completed. JobConflict if it is completed or running; `check(batch)` may refuse it
        too (it is called once the state allows a resume); `python_refusal`: why a check written
        in Python may not be imported (PythonCodeRefused), None when it may."""
        from parley.core.engine import prepare_resume

        if self._closing:
            raise JobConflict("the service is shutting down; no new batches")
        if batch_id in self._jobs or batch_id in self._claimed:
            raise JobConflict(f"batch {batch_id} is already running in this service")
        self._claimed.add(batch_id)
        try:
            await asyncio.to_thread(self.store.interrupt_orphans)
            batch = await asyncio.to_thread(self.store.get_batch, batch_id)
            if batch.status == "completed":
                raise JobConflict(f"batch {batch_id} is completed: nothing to resume")
            if batch.status not in RESUMABLE:
                owner = await asyncio.to_thread(self.store.batch_owner, batch_id)
                where = f" by {owner.describe()}" if owner else ""
                raise JobConflict(f"batch {batch_id} is {batch.status}{where}: it cannot be resumed while it runs")
            if check is not None:
                check(batch)
            prepared = await prepare_resume(self.store, batch_id, python_refusal=python_refusal)
            await self.launch(prepared)
            return prepared
        finally:
            self._claimed.discard(batch_id)
