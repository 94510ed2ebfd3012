"""Where parley's log records go: `parley.log` beside the database (sessions/parley.log by
default), never the terminal, where they would break the app's screen or a command's output.
Every face sends them there: the command line and the app (`configure_logging`), and parley's
Python API and pytest plugin (`keep_log_beside`, which leaves a logging set-up of the caller's
own alone). Every record is redacted on its way in (parley.core.redaction.RedactingFilter)."""

from __future__ import annotations

import logging
from io import TextIOWrapper
from pathlib import Path

from parley.core.redaction import RedactingFilter

LOG_NAME = "parley.log"
_FORMAT = "%(asctime)s %(levelname)s %(name)s [%(process)d]: %(message)s"


class _FolderMakingFileHandler(logging.FileHandler):
    """A file handler that opens its file (and makes its folder) at the first record, so a
    command that logs nothing leaves nothing behind. Beside a database in a folder that cannot be
    written (a read-only file system: the commands that only read still work there), the log
    cannot be kept: its records are dropped, never raised into the command or printed on its
    terminal."""

    unwritable = False

    def _open(self) -> TextIOWrapper:
        Path(self.baseFilename).parent.mkdir(parents=True, exist_ok=True)
        return super()._open()

    def emit(self, record: logging.LogRecord) -> None:
        if self.unwritable:
            return
        if self.stream is None:
            try:
                self.stream = self._open()
            except OSError:
                self.unwritable = True  # nowhere to write it, and the terminal is not the place
                return
        super().emit(record)


def configure_logging(db_path: Path) -> Path:
    """Send every `parley.*` logger to parley.log beside `db_path` (replacing an earlier choice),
    at PARLEY_LOG_LEVEL (default INFO). Returns the log file's path."""
    from parley.core.settings import settings

    path = db_path.expanduser().resolve().parent / LOG_NAME
    logger = logging.getLogger("parley")
    for handler in [h for h in logger.handlers if isinstance(h, _FolderMakingFileHandler)]:
        logger.removeHandler(handler)
        handler.close()
    handler = _FolderMakingFileHandler(path, encoding="utf-8", delay=True)
    handler.setFormatter(logging.Formatter(_FORMAT))
    handler.addFilter(RedactingFilter())  # no secret the process resolved reaches the file
    logger.addHandler(handler)
    logger.setLevel(settings().log_level)
    logger.propagate = False  # and so no record reaches logging's last-resort handler on stderr
    return path


def keep_log_beside(db_path: Path) -> Path | None:
    """As `configure_logging`, unless the program that calls parley has given the `parley` logger
    a handler of its own (then its choice stands: None)."""
    logger = logging.getLogger("parley")
    if any(not isinstance(h, _FolderMakingFileHandler) for h in logger.handlers):
        return None
    return configure_logging(db_path)
