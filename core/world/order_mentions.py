"""Order ids as people write them in free text: the one reading of "ORD-1003", "ord 1003",
"ORD1003", "0RD-1003", "order 1003", "#1003" that the offline bot, the simulated customers and
the checks share.

It lives with the order world, below every bot and every simulator, so that the code that
judges a bot shares nothing with one bot it judges: the offline bot reads ids with it as any
other part of parley does.
"""

from __future__ import annotations

import re

__all__ = ["extract_order_ids"]

# Compiled once: the offline bot and goal tracking call it on every message.
_ORDER_ID = re.compile(
    r"(?<![a-z0-9])(?:[o0]rd(?:er)?s?\s*(?:number|num|no\.?|nr\.?|id)?\s*[-_#:.\u2010-\u2015]*\s*|#\s*)"
    r"([0-9]{3,10})(?![0-9])",
    re.IGNORECASE,
)


def extract_order_ids(text: str) -> list[str]:
    """Order ids mentioned in free text, normalised to ORD-<digits>, in order, without repeats."""
    seen: dict[str, None] = {}
    for match in _ORDER_ID.finditer(text):
        seen.setdefault(f"ORD-{match.group(1)}", None)
    return list(seen)
