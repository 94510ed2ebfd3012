"""Whether the database file is whole, and still the file parley opened.

Results are never lost in silence:
- a damaged file (pages overwritten with zeros or garbage) is one line naming it and what is
  wrong, for every command: the store checks the file when it opens it (SQLite's `PRAGMA
  quick_check`, about 2 ms per MB of database) and never writes to a damaged one; an empty file
  (0 bytes) is one line for a command that reads, and a new database for one that writes (as
  SQLite makes it: several processes may open one new file at once, and see it empty a moment); and when what a command reads fails anyway (damage the check cannot see: a value's text
  overwritten), `damage_line` checks again the files this process opened, so the command line
  can say so in one line instead of a traceback;
- a file deleted or replaced while a writer has it open (its rows would go to a file nobody can
  open again) is noticed at the next commit: the writer compares the path's inode with the one it
  opened (`FileIdentity`) and stops with DatabaseGone.
"""

from __future__ import annotations

import logging
import os
import pathlib
import sqlite3
import threading

from parley.core.errors import ParleyError

__all__ = ["DamagedDatabase", "DatabaseGone", "FileIdentity", "damage_line", "empty_file", "opened_count", "quick_check", "remember_opened"]

log = logging.getLogger("parley.store")

_OPENED: list[pathlib.Path] = []
_OPENED_LOCK = threading.Lock()


class DamagedDatabase(ParleyError):
    """The database file is damaged (or empty): nothing is written to it; what it holds may not be read."""

    def __init__(self, path: pathlib.Path, what: str) -> None:
        self.path = path
        super().__init__(
            f"the database {path} is {what}: parley does not write to it, and what it reads from it cannot be trusted. "
            f"Restore it from a copy (`sqlite3 {path.name} .recover` may save what is left), or give --db (or PARLEY_DB) another file"
        )


class DatabaseGone(ParleyError):
    """The database file was deleted or replaced while this process wrote to it."""


def empty_file(path: pathlib.Path) -> DamagedDatabase | None:
    """DamagedDatabase for an existing file of 0 bytes (a database cut short, or never one)."""
    try:
        size = path.stat().st_size
    except OSError:
        return None
    return DamagedDatabase(path, "empty (0 bytes: no parley database is left in it)") if size == 0 else None


def quick_check(conn: sqlite3.Connection, path: pathlib.Path) -> None:
    """DamagedDatabase unless SQLite's quick check of the open file finds it whole."""
    try:
        rows = conn.execute("PRAGMA quick_check").fetchall()
    except sqlite3.DatabaseError as exc:
        name = getattr(exc, "sqlite_errorname", "") or ""
        if name.startswith("SQLITE_NOTADB"):
            return  # no database at all: the store says so itself ("is not a parley database")
        if isinstance(exc, sqlite3.OperationalError) and not name.startswith("SQLITE_CORRUPT"):
            log.debug("%s: the quick check could not run (%s)", path, exc)  # busy, a read-only folder: not damage
            return
        raise DamagedDatabase(path, f"damaged ({exc})") from None
    found = [str(row[0]) for row in rows]
    if found != ["ok"]:
        problem = "; ".join(line for line in found[:2] if not line.startswith("***"))[:200]
        raise DamagedDatabase(path, f"damaged ({problem or 'SQLite finds it malformed'})")


def remember_opened(path: pathlib.Path) -> None:
    """A database file this process opened (which `damage_line` checks when something fails)."""
    with _OPENED_LOCK:
        _OPENED.append(path)


def opened_count() -> int:
    """How many times this process opened a database so far (what `damage_line` starts after)."""
    with _OPENED_LOCK:
        return len(_OPENED)


def damage_line(*, since: int = 0, check: bool = True) -> str | None:
    """Why a database file this process opened (after its first `since` openings: those of one
    command) is damaged, in one line; None when each is whole (or is not there any more). Each
    is checked afresh, read-only (see the module)."""
    with _OPENED_LOCK:
        paths = list(dict.fromkeys(_OPENED[since:]))
    for path in paths:
        empty = empty_file(path)
        if empty is not None:
            return str(empty)
        if not check or not path.is_file():
            continue
        try:
            conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=5.0)
        except sqlite3.Error as exc:
            log.debug("%s: not checked for damage (%s)", path, exc)
            continue
        try:
            quick_check(conn, path)
        except DamagedDatabase as exc:
            return str(exc)
        except sqlite3.Error as exc:  # busy, or unreadable for another reason: not what this answers
            log.debug("%s: not checked for damage (%s)", path, exc)
            continue
        finally:
            conn.close()
    return None


class FileIdentity:
    """The file at a path as it was opened (device and inode), to notice it deleted or replaced."""

    def __init__(self, path: pathlib.Path) -> None:
        self.path = path
        stat = path.stat()
        self._key = (stat.st_dev, stat.st_ino)

    def check(self) -> None:
        """DatabaseGone when the path no longer leads to the file that was opened."""
        try:
            stat = os.stat(self.path)
        except FileNotFoundError:
            raise DatabaseGone(self._gone("deleted")) from None
        except OSError as exc:  # cannot tell (a file system gone away): the write itself will say
            log.debug("%s: cannot tell whether it is still the file opened (%s)", self.path, exc)
            return
        if (stat.st_dev, stat.st_ino) != self._key:
            raise DatabaseGone(self._gone("replaced by another file"))

    def _gone(self, what: str) -> str:
        return (
            f"the database {self.path} was {what} while parley wrote to it: what it held and what was written "
            "since went with the file it opened, so parley stops here rather than write to it in vain"
        )
