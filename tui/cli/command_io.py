"""What every command reads from and writes to: the `--db` option and the store it opens (with
parley's log file beside it), the rich console a command prints with, and files written whole."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from parley.tui.cli.run_option_help import RUN_OPTION_HELP

if TYPE_CHECKING:  # the store and rich load when a command runs, not when `parley --help` starts
    from parley.core.store import Store
    from parley.tui.cli.closed_pipe import PipeConsole

F = TypeVar("F", bound=Callable[..., Any])

DB_OPTION_HELP = RUN_OPTION_HELP["db"]


def db_option(command: F) -> F:
    """--db PATH: the SQLite database a command reads or writes."""
    return click.option(
        "--db",
        "db_path",
        type=click.Path(dir_okay=False, path_type=Path),
        metavar="PATH",
        help=DB_OPTION_HELP,
    )(command)


def open_store(db_path: Path | None, *, read_only: bool = False) -> Store:
    """The store at `db_path` (default as Store.open), with parley's log file beside it; `read_only`
    for commands that only read, which then work on a read-only file or file system too."""
    from parley.core.log_file import configure_logging
    from parley.core.settings import settings
    from parley.core.store import Store

    configure_logging(db_path or settings().db_path)  # in a folder that cannot be written, the log is dropped
    return Store.open(db_path, read_only=read_only)


def console(err: bool = False) -> PipeConsole:
    """The rich console a command prints with (stdout, or stderr with `err`); a closed stdout
    ends the command quietly (parley.tui.cli.closed_pipe)."""
    from parley.tui.cli.closed_pipe import PipeConsole

    # emoji=False: a `:warning:` in a bot's reply or a file's name is text, not an emoji code
    out = PipeConsole(stderr=err, highlight=False, soft_wrap=True, emoji=False)
    if not out.is_terminal:  # piped or captured: do not squeeze tables into 80 columns
        out = PipeConsole(stderr=err, highlight=False, soft_wrap=True, emoji=False, width=max(out.width, 140))
    return out


def write_atomically(path: Path, data: str | bytes) -> None:
    """Write `data` to `path` through a temporary file, so a reader never sees half of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    if isinstance(data, bytes):
        partial.write_bytes(data)
    else:
        partial.write_text(data, encoding="utf-8")
    partial.replace(path)
