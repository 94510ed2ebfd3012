"""Order ids as people write them in free text: the order world's one reading of "ORD-1003",
"ord 1003", "ORD1003", "0RD-1003", "order 1003", "#1003", which its offline bot uses and parley
reads through the world's `find_ids` hook (parley.core.world.id_reading) wherever it looks for
orders in text: the claims check, the customer's requests, the simulated customer."""

from __future__ import annotations

import re

__all__ = ["extract_order_ids", "find_ids", "ids_in", "mentions_id", "order_digits"]

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


def order_digits(order_id: str) -> str:
    """`ORD-1003` -> `1003`: ids are compared on their digits, whatever way they are written."""
    return "".join(c for c in order_id if "0" <= c <= "9")


def ids_in(text: str | None) -> list[str]:
    """Order ids in a text, normalised to ORD-<digits>; none for no text."""
    return extract_order_ids(text or "")


def mentions_id(text: str | None, order_id: str) -> bool:
    """Does the text name the order, as an id in any of its forms or as its bare digits?"""
    digits = order_digits(order_id)
    if not digits:
        return False
    if any(order_digits(i) == digits for i in ids_in(text)):
        return True
    return re.search(rf"(?<!\d){re.escape(digits)}(?!\d)", text or "") is not None


def find_ids(text: str) -> list[tuple[str, str]]:
    """The orders a text names, as (table, key) for parley.core.world.id_reading."""
    return [("orders", order_id) for order_id in extract_order_ids(text)]
