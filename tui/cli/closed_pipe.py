"""When a command's output pipe closes (`parley run profiles/ | head -3`): stop quietly, as other
Unix tools do, with exit status 141 (128 + SIGPIPE), and no traceback or "Exception ignored".

`PipeConsole` is the rich Console the commands print with: rich's own answer to a closed pipe is
SystemExit(1) from inside whatever was printing, which in `parley run` is a conversation's task
("Task exception was never retrieved"). Here a console may be given `on_closed` instead (the run
command stops its batch, as Ctrl-C would); without one it exits with EXIT_CLOSED_PIPE.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable
from typing import Any

from rich.console import Console

EXIT_CLOSED_PIPE = 141


def silence_terminal() -> None:
    """Point stdout and stderr at /dev/null where they are a terminal (not a file or a pipe): once
    the terminal hung up (SIGHUP: its window closed, its ssh session ended), writing to it fails
    or blocks, and nobody could read it."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        for fd in (1, 2):
            try:
                if stat.S_ISCHR(os.fstat(fd).st_mode):
                    os.dup2(devnull, fd)
            except OSError:  # closed already
                continue
    finally:
        os.close(devnull)


def silence_stdout() -> None:
    """Point stdout at /dev/null, so what is still written (and the flush at exit) goes nowhere."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    finally:
        os.close(devnull)


class PipeConsole(Console):
    """A Console that handles its pipe closing (see the module doc)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.on_closed: Callable[[], None] | None = None
        self.closed = False

    def on_broken_pipe(self) -> None:
        silence_stdout()
        self.closed = True
        self.quiet = True
        if self.on_closed is None:
            raise SystemExit(EXIT_CLOSED_PIPE)
        self.on_closed()
