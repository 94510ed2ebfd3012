"""Rule helpers over one value: `extract_float`, `currency`, `length`.

Each behaves as Sensei's helper of the same name does, quirks included, because rule files
written for Sensei rely on them: `extract_float` takes the first number in a text (thousands
commas dropped) and None when there is none; `currency` the first currency named by symbol,
code or word (a capitalised word such as "Dollars" is found but raises, as in Sensei, so the
rule is not applicable); `length(item, kind)` for kind 'average' is Sensei's running value
(previous + next length) / count, not the arithmetic mean.
"""

from __future__ import annotations

import re
from typing import Any

_THOUSANDS_COMMA = re.compile(r"(?<=\d),(?=\d)")
_NUMBER = re.compile(r"[-+]?\d*\.\d+|\d+")
_SYMBOLS = re.compile(r"[$€£¥₹]")
_SYMBOL_CODES = {"$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY", "₹": "INR"}
_CODES = re.compile(r"\b(USD|EUR|GBP|JPY|INR)\b")
_NAMES = re.compile(r"\b(dollars|euros|pounds|yen|rupees)\b", re.IGNORECASE)
_NAME_CODES = {"dollars": "USD", "euros": "EUR", "pounds": "GBP", "yen": "JPY", "rupees": "INR"}
_LENGTH_KINDS = ("min", "max", "average")


def extract_float(text: Any) -> float | None:
    """The first number in `text` as a float ("1,250.50 USD" -> 1250.5), or None.

    A value that is not text raises TypeError, as in Sensei (the rule is then not applicable)."""
    match = _NUMBER.search(_THOUSANDS_COMMA.sub("", text))
    return float(match.group()) if match else None


def currency(text: Any) -> str | None:
    """The ISO code of the first currency in `text`: a symbol first ($ € £ ¥ ₹), else a code
    (USD EUR GBP JPY INR), else a word (dollars euros pounds yen rupees); None when none."""
    symbol = _SYMBOLS.search(text)
    if symbol:
        return _SYMBOL_CODES[symbol.group()]
    code = _CODES.search(text)
    if code:
        return code.group()
    name = _NAMES.search(text)
    if name:
        return _NAME_CODES[name.group()]  # KeyError for "Dollars": Sensei's lookup is case-sensitive
    return None


def length(item: Any, kind: Any = "min") -> float | int:
    """The min, max or 'average' length of a text or of each text in a list (see the module)."""
    if isinstance(item, str):
        item = [item]
    if not isinstance(item, list):
        raise ValueError(f"Expecting a list of strings, or a string, but got {item}")
    kind = kind.lower()
    if kind not in _LENGTH_KINDS:
        raise ValueError(f"Expecting one of min, max or average, but got {kind}")
    current: float | int = {"min": 100_000_000, "max": 0, "average": 0}[kind]
    for count, element in enumerate(item, start=1):
        size = len(element)
        if kind == "min":
            current = size if size < current else current
        elif kind == "max":
            current = size if size > current else current
        else:
            current = (current + size) / count
    return current
