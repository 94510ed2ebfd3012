"""The regular expressions a suite's author writes (`bot_says`, `bot_never_says`, a playbook's
`expect_bot_regex`), matched in bounded time whatever text a bot sends.

Python's `re` backtracks: a pattern such as `ORD-1003\\b[^.]*\\b(was|has been) cancelled` takes
about a second on 10,000 characters without a full stop and hours on 30 MB, and a check run on
the event loop would hold the whole batch (and its Ctrl-C / SIGTERM) that long. So:
- a text up to `BACKTRACKING_MAX_CHARS` is matched with `re`, exactly as the profile format
  documents (Python's syntax; `\\w` and `\\b` know Unicode letters);
- a longer text is matched with RE2 (google-re2), whose time is linear in the text, for every
  pattern RE2 can express (all but lookarounds and backreferences). RE2's `\\w` knows ASCII
  letters only, a difference that only such long texts can meet;
- a longer text and a pattern only `re` can run cannot be matched in bounded time: `search`
  says so (`TooLongToMatch`), and the check is reported as not decided, never as held.

parley's own heuristics over a bot's words are bounded apart (parley.core.reading.heuristic_view).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import re2

BACKTRACKING_MAX_CHARS = 4096
"""The longest text a pattern is matched on with Python's backtracking engine."""


class TooLongToMatch(ValueError):
    """The text is too long for this pattern's engine: the match was not tried."""


@dataclass(frozen=True)
class TextMatch:
    """Where a pattern matched: `start`/`end` in characters, and the matched text."""

    start: int
    end: int
    text: str


class TextPattern:
    """A compiled author's pattern (see the module doc). `re.error` from the constructor when
    it is not a valid Python regular expression."""

    def __init__(self, pattern: str, *, ignore_case: bool = True) -> None:
        self.pattern = pattern
        self._re = re.compile(pattern, re.IGNORECASE if ignore_case else 0)
        self._re2 = _linear(pattern, ignore_case)

    @property
    def linear(self) -> bool:
        """Whether texts of any length can be matched (RE2 can express the pattern)."""
        return self._re2 is not None

    def search(self, text: str) -> TextMatch | None:
        """The first match in `text`, None when there is none; TooLongToMatch when `text` is
        longer than `BACKTRACKING_MAX_CHARS` and only the backtracking engine can run the pattern."""
        engine: Any = self._re if len(text) <= BACKTRACKING_MAX_CHARS else self._re2
        if engine is None:
            raise TooLongToMatch(
                f"the message is {len(text):,} characters long and /{self.pattern}/ uses what only a backtracking regex can "
                f"(a lookaround or a backreference), which is run on {BACKTRACKING_MAX_CHARS:,} characters at most"
            )
        found = engine.search(text)
        return None if found is None else TextMatch(start=found.start(), end=found.end(), text=found.group(0))


@lru_cache(maxsize=512)
def _linear(pattern: str, ignore_case: bool) -> Any:
    options = re2.Options()
    options.case_sensitive = not ignore_case
    options.log_errors = False  # RE2 would print its parse errors on stderr
    try:
        return re2.compile(pattern, options=options)
    except re2.error:
        return None


@lru_cache(maxsize=512)
def compile_pattern(pattern: str, *, ignore_case: bool = True) -> TextPattern:
    """The TextPattern of `pattern` (cached: a batch checks the same patterns many times)."""
    return TextPattern(pattern, ignore_case=ignore_case)
