"""Reading an input file's text (a profile, a scenario file, a prompt template): what keeps it
from being read is a ProfileError on the file, in the operating system's words."""

from __future__ import annotations

from pathlib import Path

from parley.core.errors import ProfileError

__all__ = ["read_input"]


def read_input(path: str | Path, what: str) -> tuple[str | None, list[ProfileError]]:
    """The UTF-8 text of `path` and no error; or None and the one error, `cannot read WHAT: why`."""
    try:
        return Path(path).read_text(encoding="utf-8"), []
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return None, [ProfileError(f"cannot read {what}: {reason}", file=str(path))]
