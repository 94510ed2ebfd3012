"""How much of a message parley's own reading heuristics look at.

The heuristics here and in the users and the evaluation (is the bot asking to confirm? asking
for an order id? putting a question to the customer?) are backtracking regular expressions: on
52 KB of "are you sure" without a full stop, CONFIRMATION_QUESTION alone took 18 s, on the
event loop a batch runs on. They read `heuristic_view(text)`: the text itself, or of a long one
its beginning and its end, where a greeting, an id or a closing question are.
"""

from __future__ import annotations

HEURISTIC_MAX_CHARS = 4096
"""The most of a text the heuristics read (half from its start, half from its end)."""


def heuristic_view(text: str, limit: int = HEURISTIC_MAX_CHARS) -> str:
    """`text`, or of a text longer than `limit` its first and last `limit / 2` characters."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n…\n{text[-half:]}"
