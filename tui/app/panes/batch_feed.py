"""Running a batch apart from the app, and what the Batches pane reads of it.

The batch runs in a child process (`run`, called from a worker thread that waits for it), on
an event loop and an interpreter of its own: a 10,000-conversation batch competes neither with
drawing the screen for the UI loop nor with it for the GIL, so it runs as fast as `parley run`.
The child writes each conversation to the same SQLite database as it ends (the store's WAL lets
the app read meanwhile) and sends its events back through a queue; they are gathered here under
a lock, and the pane drains them (`BatchFeed.drain`) about ten times a second, one draw however
many conversations ended in between. stop() and cancel() are sent to the child the same way.
With a placement (`parley --workers N` / `--ray ADDRESS`) the child is the coordinator of a
sharded batch (parley.core.engine.distributed): it starts the workers, runs the batch over them
and stores what they send back, and stops them when the batch ends. Each batch starts its own
workers (a local Ray instance takes a few seconds to come up), so the app itself never loads Ray.
No Textual here.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import queue
import sys
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from multiprocessing.queues import Queue

    from parley.core.engine import PreparedBatch
    from parley.core.engine.distributed import Placement, WorkerPool
    from parley.core.records import BatchEvent, BatchFinished, BatchStarted, ConversationRow, Progress
    from parley.core.store import Store

log = logging.getLogger("parley.tui.batch_feed")


@dataclass
class FeedUpdate:
    """What happened since the last drain."""

    rows: list[ConversationRow] = field(default_factory=list)  # of finished conversations
    progress: Progress | None = None  # the latest, if any came
    started: BatchStarted | None = None
    finished: BatchFinished | None = None
    concurrency: list[tuple[int, str]] = field(default_factory=list)
    last_error: str | None = None

    @property
    def empty(self) -> bool:
        return not (self.rows or self.progress or self.started or self.finished or self.concurrency or self.last_error)


class BatchFeed:
    """Events from a running batch, gathered on its loop's thread, drained on the UI's."""

    def __init__(self, batch_id: str, placement: Placement | None = None) -> None:
        self.batch_id = batch_id
        self.placement = placement
        self._lock = threading.Lock()
        self._pending = FeedUpdate()
        self._control: Queue[str | None] | None = None  # the child's control queue while it runs
        self._asked: list[str] = []  # stop/cancel asked before the child existed
        self.result: BatchFinished | None = None

    # ---- the batch's side ----------------------------------------------------------------------

    def on_event(self, event: BatchEvent) -> None:
        """The runner's callback (on the batch loop's thread): remember, never draw."""
        with self._lock:
            pending = self._pending
            if event.kind == "progress":
                pending.progress = event
            elif event.kind == "conversation_finished":
                pending.rows.append(event.row)
            elif event.kind == "conversation_failed":
                if event.row is not None:
                    pending.rows.append(event.row)
                pending.last_error = event.error
            elif event.kind == "concurrency_changed":
                pending.concurrency.append((event.limit, event.reason))
            elif event.kind == "batch_started":
                pending.started = event
            elif event.kind == "batch_finished":
                pending.finished = event

    def run(self, store: Store, prepared: PreparedBatch) -> BatchFinished:
        """Run `prepared` to its end in a child process on `store`'s database; returns the
        BatchFinished event (None if the child died without one). Blocks: call it from a
        worker thread. stop() and cancel() may be called from any thread meanwhile."""
        context = multiprocessing.get_context("spawn")  # never fork a process with threads
        # The app captures sys.stdout/stderr with objects that have no real file descriptor,
        # which starting a child process (and multiprocessing's resource tracker) must pass on:
        # the real streams are put back for that moment.
        captured = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = sys.__stdout__ or sys.stdout, sys.__stderr__ or sys.stderr
        try:
            events: Queue[BatchEvent | None] = context.Queue()
            control: Queue[str | None] = context.Queue()
            # Not a daemon: an app closing mid-batch cancels it and waits while it saves what
            # was in flight (as cancelled), so nothing that ran is lost.
            child = context.Process(
                target=run_child, args=(str(store.path) if store.path else ":memory:", prepared, events, control, self.placement)
            )
            with self._lock:
                self._control = control
                asked, self._asked = self._asked, []
            child.start()
        finally:
            sys.stdout, sys.stderr = captured
        for method in asked:
            control.put(method)
        finished = None
        while True:
            try:
                event = events.get(timeout=0.5)
            except queue.Empty:
                if not child.is_alive():
                    break
                continue
            if event is None:  # the child's last word
                break
            self.on_event(event)
            if event.kind == "batch_finished":
                finished = event
        child.join(timeout=10)
        with self._lock:
            self._control = None
        self.result = finished
        if finished is None:
            raise RuntimeError(f"the batch's process ended without finishing (exit code {child.exitcode})")
        return finished

    # ---- the UI's side -------------------------------------------------------------------------

    def drain(self) -> FeedUpdate:
        """Everything since the last drain (an empty update when nothing happened)."""
        with self._lock:
            update, self._pending = self._pending, FeedUpdate()
        return update

    def _call(self, method: str) -> bool:
        with self._lock:
            control = self._control
            if control is None:
                if self.result is not None:
                    return False  # it has ended
                self._asked.append(method)  # the child is starting: it is told at once
                return True
        control.put(method)
        return True

    def stop(self) -> bool:
        """No more launches; in-flight conversations get a moment to end. False once ended."""
        return self._call("stop")

    def cancel(self) -> bool:
        """Cancel the conversations in flight now (each is saved as cancelled)."""
        return self._call("cancel")


def run_child(
    db_path: str, prepared: PreparedBatch, events: Queue[BatchEvent | None], control: Queue[str | None], placement: Placement | None = None
) -> None:
    """The batch's process: open the store, run the batch (over workers with a `placement`),
    send every event back; "stop" and "cancel" arrive on `control`. Ends by sending None."""
    from parley.core.store import Store

    async def main() -> None:
        from parley.core.engine import BatchRunner
        from parley.core.errors import ParleyError
        from parley.core.models import aclose_clients
        from parley.core.records import BatchFinished

        loop = asyncio.get_running_loop()
        store = await asyncio.to_thread(Store.open, db_path)
        pool: WorkerPool | None = None
        runner: BatchRunner
        # The reply cache lives in this process's database; a re-score calls no bot or customer.
        if placement is None or prepared.batch.options.cache or prepared.rescores:
            runner = BatchRunner(store, prepared, on_event=events.put)
        else:
            from parley.core.engine.distributed import ShardedRunner, WorkerPool

            pool = WorkerPool(placement)
            runner = ShardedRunner(store, prepared, pool=pool, on_event=events.put)

        def listen() -> None:  # a thread: each command is run on the batch's loop
            while True:
                method = control.get()
                if method is None:
                    return
                try:
                    loop.call_soon_threadsafe(getattr(runner, method))
                except RuntimeError:  # the loop has closed: the batch is over
                    return

        threading.Thread(target=listen, daemon=True).start()
        try:
            await runner.run()
        except ParleyError as exc:  # the workers did not start: the batch is recorded failed, and why
            log.warning("batch %s: %s", prepared.id, exc)
            events.put(
                BatchFinished(
                    batch_id=prepared.id,
                    status="failed",
                    done=0,
                    total=prepared.total,
                    passed=0,
                    failed=0,
                    errors=0,
                    elapsed_s=0.0,
                    error=str(exc),
                )
            )
        finally:
            control.put(None)
            if pool is not None:
                await pool.stop()
            await aclose_clients()
            store.close()

    try:
        asyncio.run(main())
    finally:
        events.put(None)
        events.close()
        events.join_thread()
