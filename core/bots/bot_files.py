"""Reading a file that describes a bot under test (an http: connector file, a prompt bot's
prompt): what keeps it from being read is a ConfigError naming the file."""

from __future__ import annotations

from pathlib import Path

from parley.core.errors import ConfigError

__all__ = ["read_bot_file"]


def read_bot_file(path: str | Path, what: str, *, option: str = "") -> str:
    """The UTF-8 text of `path`, the bot's `what` (e.g. "connector file"); ConfigError
    `PATH: no such WHAT (OPTION)` when it is not there, `PATH: cannot read the WHAT: why` when
    it cannot be read."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such {what}{f' ({option})' if option else ''}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the {what}: {exc}") from None
