"""Running a batch apart from the app, and what the Batches pane reads of it.

The batch runs in a child process (`run`, called from a worker thread that waits for it), on
an event loop and an interpreter of its own: a 10,000-conversation batch competes neither with
drawing the screen for the UI loop nor with it for the GIL, so it runs as fast as `parley run`.
The child writes each conversation to the same SQLite database as it ends (the store's WAL lets
the app read meanwhile) and sends its events back through a queue; they are gathered here under
a lock, and the pane drains them (`BatchFeed.drain`) about ten times a second, one draw however
many conversations ended in between. stop() and cancel() are sent to the child the same way.
The child outlives no app: closed by kill -9 or a crash, the app leaves the child's lifeline
(a pipe only the app writes) at end-of-file, and the child cancels what is in flight, stores it,
and exits (see run_child).
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
import os
import queue
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
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
        self._lifeline: Connection | None = None  # our end of the child's lifeline while it runs
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
            # The lifeline: only the child holds its reading end and only this process its
            # writing end, which the system closes however this process ends (kill -9 too), so
            # the child reads end-of-file the moment the app is gone (see run_child).
            lifeline, self._lifeline = context.Pipe(duplex=False)
            # Not a daemon: an app closing mid-batch cancels it and waits while it saves what
            # was in flight (as cancelled), so nothing that ran is lost.
            child = context.Process(
                target=run_child,
                args=(str(store.path) if store.path else ":memory:", prepared, events, control, self.placement, lifeline, os.getpid()),
            )
            with self._lock:
                self._control = control
                asked, self._asked = self._asked, []
            child.start()
            lifeline.close()  # the child's end: kept here, it would hide this process's death from the child
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
        if self._lifeline is not None:
            self._lifeline.close()
            self._lifeline = None
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
    db_path: str,
    prepared: PreparedBatch,
    events: Queue[BatchEvent | None],
    control: Queue[str | None],
    placement: Placement | None = None,
    lifeline: Connection | None = None,
    parent_pid: int | None = None,
) -> None:
    """The batch's process: open the store, run the batch (over workers with a `placement`),
    send every event back (redacted: the app shows them); "stop" and "cancel" arrive on
    `control`. Ends by sending None.

    The app decides when the batch stops: a hang-up or Ctrl-C that reaches this process too (it
    shares the app's terminal) is left to the app, which cancels through `control` as it quits.
    If the app is gone without a word (kill -9, a crash: `lifeline` reads end-of-file, or the
    parent pid changes), nobody will read the events again: the batch stops launching, what is
    in flight is stored as `cancelled` (the batch ends `cancelled`, resumable), and the process
    exits without waiting on a pipe nobody drains."""
    from parley.core.log_file import configure_logging

    for sig in (signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, signal.SIG_IGN)
    if db_path != ":memory:":
        configure_logging(Path(db_path))
    orphaned = threading.Event()

    async def main() -> None:
        from parley.core.engine import BatchRunner
        from parley.core.errors import ParleyError
        from parley.core.models import aclose_clients
        from parley.core.records import BatchFinished
        from parley.core.redaction import REDACTOR
        from parley.core.store import Store

        def send(event: BatchEvent) -> None:
            if not orphaned.is_set():
                events.put(REDACTOR.redact_record(event))

        loop = asyncio.get_running_loop()
        store = await asyncio.to_thread(Store.open, db_path)
        pool: WorkerPool | None = None
        runner: BatchRunner
        # The reply cache lives in this process's database; a re-score calls no bot or customer.
        if placement is None or prepared.batch.options.cache or prepared.rescores:
            runner = BatchRunner(store, prepared, on_event=send)
        else:
            from parley.core.engine.distributed import ShardedRunner, WorkerPool

            pool = WorkerPool(placement)
            runner = ShardedRunner(store, prepared, pool=pool, on_event=send)

        def listen() -> None:  # a thread: each command is run on the batch's loop
            while True:
                method = control.get()
                if method is None:
                    return
                try:
                    loop.call_soon_threadsafe(getattr(runner, method))
                except RuntimeError:  # the loop has closed: the batch is over
                    return

        def abandoned() -> None:  # on the batch's loop
            log.warning("batch %s: the app is gone; what is in flight is stored as cancelled", prepared.id)
            events.cancel_join_thread()  # what is still queued for the app is dropped at exit
            runner.cancel()

        def watch() -> None:  # a thread: the app's end of the lifeline closes when it dies
            while not orphaned.is_set():
                try:
                    gone = _parent_gone(lifeline, parent_pid)
                except OSError:
                    gone = True
                if gone:
                    orphaned.set()
                    try:
                        loop.call_soon_threadsafe(abandoned)
                    except RuntimeError:  # the batch is over already
                        pass
                    return

        threading.Thread(target=listen, daemon=True).start()
        if lifeline is not None or parent_pid is not None:
            threading.Thread(target=watch, daemon=True).start()
        try:
            await runner.run()
        except ParleyError as exc:  # the workers did not start: the batch is recorded failed, and why
            log.warning("batch %s: %s", prepared.id, exc)
            send(
                BatchFinished(
                    batch_id=prepared.id,
                    status="failed",
                    total=prepared.total,
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
        if orphaned.is_set():
            events.cancel_join_thread()
            control.cancel_join_thread()
        else:
            events.put(None)
        events.close()
        events.join_thread()
        orphaned.set()  # the watcher's loop ends


def _parent_gone(lifeline: Connection | None, parent_pid: int | None) -> bool:
    """Whether the app that started this process is gone; waits up to a second to see."""
    if lifeline is not None:
        if lifeline.poll(1.0):  # the app never writes: readable means end-of-file
            try:
                lifeline.recv_bytes()
            except EOFError:
                return True
    elif parent_pid is not None:
        time.sleep(1.0)
    return parent_pid is not None and os.getppid() != parent_pid
