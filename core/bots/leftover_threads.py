"""Threads a bot under test left running, which would keep the process alive once its work is done.

Python waits at exit for every thread that is not a daemon: a `python:` bot that started one and
never ended it (`threading.Thread(target=serve).start()`) made `parley run` print "batch
completed" and then never exit, ignoring SIGTERM; a CI job would hang. `threads_left` names such
threads (given a moment to end on their own), and `exit_now` ends the process with its exit code
without waiting for them: the exit handlers run first (logs are flushed), stdout and stderr are
flushed, then the process ends. `exit_at_shutdown` does it at the interpreter's shutdown, for a
process parley does not end itself (pytest's).
"""

from __future__ import annotations

import atexit
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable
from typing import NoReturn

__all__ = ["exit_at_shutdown", "exit_now", "left_running_line", "threads_left"]

log = logging.getLogger("parley.bots.leftover_threads")

GRACE_S = 1.0
"""How long threads get to end on their own before they count as left running."""


def threads_left(*, grace_s: float = GRACE_S, besides: Iterable[threading.Thread] = ()) -> list[threading.Thread]:
    """The threads that would keep this process alive at exit (alive, not daemons, neither the
    main thread nor this one nor any of `besides`), once each had its share of `grace_s` to end."""
    skip = {threading.main_thread(), threading.current_thread(), *besides}
    deadline = time.monotonic() + grace_s
    left = []
    for thread in threading.enumerate():
        if thread in skip or thread.daemon:
            continue
        thread.join(max(0.0, deadline - time.monotonic()))
        if thread.is_alive():
            left.append(thread)
    return left


def left_running_line(threads: list[threading.Thread]) -> str:
    """One line naming the threads left running, and what parley does about them."""
    names = ", ".join(repr(thread.name) for thread in threads[:5]) + (f" and {len(threads) - 5} more" if len(threads) > 5 else "")
    count = f"{len(threads)} thread{'s' if len(threads) != 1 else ''}"
    return f"note: {count} left running ({names}), not parley's: exiting without waiting for {'them' if len(threads) != 1 else 'it'}"


def exit_now(code: int, threads: list[threading.Thread]) -> NoReturn:
    """End the process with `code` without waiting for `threads` (see the module)."""
    log.warning("exiting with %d threads left running: %s", len(threads), ", ".join(thread.name for thread in threads))
    try:
        atexit._run_exitfuncs()  # what Python would run at exit: logs flushed, files closed
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):  # a closed pipe or terminal: nothing more to say there
                pass
        os._exit(code)


def exit_at_shutdown(code: Callable[[], int], *, say: Callable[[str], object], besides: Iterable[threading.Thread] = ()) -> None:
    """At the interpreter's shutdown, before it waits for the threads still running: when some
    are left (see `threads_left`), `say` names them and the process ends with `code()` at once."""
    known = set(besides)

    def at_shutdown() -> None:
        left = threads_left(besides=known)
        if left:
            say(left_running_line(left))
            exit_now(code(), left)

    register = getattr(threading, "_register_atexit", None)  # run before Python joins the threads left (atexit runs after)
    if register is None:
        log.warning("this Python cannot exit past threads left running: a bot's thread may keep the process alive")
        return
    register(at_shutdown)
