"""The app's writer to its terminal: it never makes the app wait on a terminal that is gone.

Textual writes the screen through a thread fed by a queue of 30 writes; a write waits while the
queue is full. When the terminal stops reading (a busy machine, a frozen window) and then goes
away (its tmux session or ssh connection closed), the writer thread's write fails, the thread
ends, and the app's next write waits for ever on the full queue: the app, its shutdown included,
stays blocked, SIGHUP and SIGTERM unanswered, for as long as the machine runs.

`TerminalWriter` takes its place (`TerminalDriver`, the app's driver on Linux and macOS): writes
go to a deque (no lock that a write can be left waiting on); the writer thread writes them in
order and, once the terminal fails a write (EIO, EPIPE) or the app is told it hung up
(`TerminalDriver.terminal_gone`), discards everything after. While the terminal is there but
slow, a write waits for the backlog to shrink as Textual's does, but at most BACKLOG_WAIT_S, and
not at all once a wait ran out, until the terminal takes a write again (past MAX_BACKLOG writes
it never took, it counts as gone); stopping waits at most STOP_WAIT_S for what is left.

Textual is pinned to one exact version (pyproject.toml): this subclasses its writer thread and
Linux driver, whose private attributes (`_writer_thread`, `_file`) it relies on.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from typing import IO

from textual.drivers._writer_thread import MAX_QUEUED_WRITES, WriterThread
from textual.drivers.linux_driver import LinuxDriver

__all__ = ["BACKLOG_WAIT_S", "STOP_WAIT_S", "TerminalDriver", "TerminalWriter"]

log = logging.getLogger("parley.tui")

BACKLOG_WAIT_S = 2.0
"""The longest one write waits for a slow terminal to take the backlog."""
STOP_WAIT_S = 2.0
"""The longest stopping waits for the last writes to reach the terminal."""
MAX_BACKLOG = 10_000
"""Writes a terminal that stopped taking them may fall behind by before it counts as gone."""


class TerminalWriter(WriterThread):
    """Textual's writer thread, that never blocks its callers for long (see the module)."""

    def __init__(self, file: IO[str]) -> None:
        super().__init__(file)
        self._pending: deque[str | None] = deque()
        self._ready = threading.Event()
        self._drained = threading.Event()
        self._drained.set()
        self._stalled = False
        self.gone = False
        """The terminal failed a write, or hung up: what is written from now on is dropped."""

    def write(self, text: str) -> None:
        """Queue `text`; with a backlog, wait (at most BACKLOG_WAIT_S) for the terminal to take it."""
        if self.gone or (self.ident is not None and not self.is_alive()):  # gone, or stopped: nobody would write it
            return
        self._pending.append(text)
        self._ready.set()
        if len(self._pending) < MAX_QUEUED_WRITES or not self.is_alive():
            return
        if self._stalled:
            if len(self._pending) > MAX_BACKLOG:
                self.gone = True
                self._pending.clear()
            return
        self._drained.clear()
        if len(self._pending) >= MAX_QUEUED_WRITES and not self._drained.wait(BACKLOG_WAIT_S):  # still behind: wait
            self._stalled = True

    def stop(self) -> None:
        """Write what is queued (at most STOP_WAIT_S), then end the thread."""
        self._pending.append(None)
        self._ready.set()
        self.join(STOP_WAIT_S)

    def run(self) -> None:
        while True:
            self._ready.wait()
            self._ready.clear()
            while self._pending:
                text = self._pending.popleft()
                if len(self._pending) < MAX_QUEUED_WRITES:
                    self._drained.set()
                if text is None:
                    self._flush()
                    return
                if not self.gone:
                    try:
                        self._file.write(text)
                    except (OSError, ValueError) as exc:  # EIO: the terminal is gone; ValueError: its file closed
                        self._lost(exc)
                    else:
                        self._stalled = False
            self._flush()
            self._drained.set()

    def _flush(self) -> None:
        if self.gone:
            return
        try:
            self._file.flush()
        except (OSError, ValueError) as exc:
            self._lost(exc)

    def _lost(self, exc: BaseException) -> None:
        self.gone = True
        log.info("the terminal is gone (%s): what the app writes from now on is dropped", exc)


class TerminalDriver(LinuxDriver):
    """Textual's Linux (and macOS) driver, writing through a TerminalWriter."""

    def start_application_mode(self) -> None:
        super().start_application_mode()
        started = self._writer_thread
        if started is None or self._file is None:
            return
        started.stop()  # what it was given while starting is written first, in order
        writer = TerminalWriter(self._file)
        writer.start()
        self._writer_thread = writer

    def terminal_gone(self) -> None:
        """The terminal hung up: nothing more is written to it (restoring it included)."""
        if isinstance(self._writer_thread, TerminalWriter):
            self._writer_thread.gone = True
