"""The time and size bounds of one rule evaluation, and arithmetic that respects them.

Rule files are shared like code but must never act like it: an expression may only compute, and
only so much. One `EvaluationBudget` bounds one evaluation of one expression (its `exists()`
conditions and helpers included): a number of steps (comprehension items, lambda calls, helper
loops) and a wall-clock time that does not count the time spent waiting for a model. Values an
expression builds are bounded too: strings and collections by length, integers by bits, so a
step cannot allocate gigabytes (`'x' * 10**10`, `2 ** 10**9`, `f'{x:>999999999}'`).
"""

from __future__ import annotations

import operator
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

T = TypeVar("T")

MAX_STEPS = 1_000_000
"""Comprehension items, lambda calls and helper iterations in one evaluation."""
MAX_SECONDS = 5.0
"""Wall-clock time of one evaluation, model calls not counted."""
MAX_LENGTH = 1_000_000
"""Characters of a string, items of a list, set, tuple, dict or range an expression builds."""
MAX_INT_BITS = 100_000
"""Bits of an integer an expression builds (about 30,000 decimal digits)."""
MAX_FORMAT_NUMBER = 1_000
"""The largest width or precision an f-string's format spec may ask for."""
MAX_BUILT = 10_000_000
"""Characters and items all the values one evaluation builds add up to (a comprehension of
copies of a long text counts each copy)."""

_CHECK_EVERY = 1024  # steps between two looks at the clock


class NotDecided(Exception):
    """An evaluation stopped without a value: the rule is `not_run` (never passed, never failed)."""


class LimitExceeded(NotDecided):
    """An evaluation went past one of this module's bounds."""

    def __init__(self, what: str) -> None:
        super().__init__(f"stopped: the evaluation built or took {what}")


class EvaluationBudget:
    """Steps and seconds left to one evaluation."""

    def __init__(self, *, max_steps: int = MAX_STEPS, max_seconds: float = MAX_SECONDS) -> None:
        self.max_steps = max_steps
        self.max_seconds = max_seconds
        self.steps = 0
        self.built = 0
        self._started = time.monotonic()
        self._paused_for = 0.0

    def tick(self, steps: int = 1) -> None:
        """Count `steps`; LimitExceeded past the step or time bound."""
        self.steps += steps
        if self.steps > self.max_steps:
            raise LimitExceeded(f"more than {self.max_steps:,} steps")
        if self.steps % _CHECK_EVERY < steps:
            self.check_time()

    def charge(self, value: T) -> T:
        """Count what building `value` cost (its length, an integer's size); `value` itself."""
        size = _size(value)
        if size:
            self.built += size
            if self.built > MAX_BUILT:
                raise LimitExceeded(f"more than {MAX_BUILT:,} characters and items built")
            if size >= 10_000:
                self.check_time()
        return value

    def check_time(self) -> None:
        """LimitExceeded past the time bound (called on every call a rule makes: one call of a
        builtin over a long list can take long, and steps alone would not see it)."""
        if time.monotonic() - self._started - self._paused_for > self.max_seconds:
            raise LimitExceeded(f"more than {self.max_seconds:g} s")

    @contextmanager
    def paused(self) -> Iterator[None]:
        """The clock stopped while a model answers: a slow endpoint is not a runaway rule."""
        start = time.monotonic()
        try:
            yield
        finally:
            self._paused_for += time.monotonic() - start


def check_size(value: T) -> T:
    """`value` itself, or LimitExceeded when it is longer or larger than the bounds allow."""
    if isinstance(value, int) and not isinstance(value, bool):
        if value.bit_length() > MAX_INT_BITS:
            raise LimitExceeded(f"an integer of more than {MAX_INT_BITS:,} bits")
    elif isinstance(value, str | bytes | list | tuple | set | frozenset | dict | range):
        if len(value) > MAX_LENGTH:
            raise LimitExceeded(f"a value of more than {MAX_LENGTH:,} items or characters")
    return value


def _size(value: Any) -> int:
    if isinstance(value, str | bytes | list | tuple | set | frozenset | dict):
        return len(value)
    if isinstance(value, int) and value > 2**64:
        return value.bit_length() // 64
    return 0


def _sized(value: Any) -> int | None:
    return len(value) if isinstance(value, str | bytes | list | tuple) else None


def _add(a: Any, b: Any) -> Any:
    la, lb = _sized(a), _sized(b)
    if la is not None and lb is not None and la + lb > MAX_LENGTH:
        raise LimitExceeded(f"a value of more than {MAX_LENGTH:,} items or characters")
    return check_size(a + b)


def _repeat_count(a: Any, b: Any) -> tuple[int, int] | None:
    """(length, times) when `a * b` repeats a sequence."""
    if _sized(a) is not None and isinstance(b, int):
        return len(a), b
    if _sized(b) is not None and isinstance(a, int):
        return len(b), a
    return None


def _mul(a: Any, b: Any) -> Any:
    repeat = _repeat_count(a, b)
    if repeat is not None:
        length, times = repeat
        if times > 0 and length * times > MAX_LENGTH:
            raise LimitExceeded(f"a value of more than {MAX_LENGTH:,} items or characters")
    elif _is_int(a) and _is_int(b) and a.bit_length() + b.bit_length() > MAX_INT_BITS:
        raise LimitExceeded(f"an integer of more than {MAX_INT_BITS:,} bits")
    return a * b


def _pow(a: Any, b: Any) -> Any:
    if _is_int(a) and _is_int(b) and b > 0 and abs(a) > 1 and b * (abs(a).bit_length() - 1) > MAX_INT_BITS:
        raise LimitExceeded(f"an integer of more than {MAX_INT_BITS:,} bits")
    return check_size(a**b)


def _lshift(a: Any, b: Any) -> Any:
    if _is_int(a) and _is_int(b) and a and b > 0 and a.bit_length() + b > MAX_INT_BITS:
        raise LimitExceeded(f"an integer of more than {MAX_INT_BITS:,} bits")
    return a << b


def _mod(a: Any, b: Any) -> Any:
    if isinstance(a, str | bytes):  # printf-style formatting: widths it does not bound
        raise TypeError("'%' formatting of text is not available in rules; use an f-string")
    return a % b


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


BINARY_OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "Add": _add,
    "Sub": operator.sub,
    "Mult": _mul,
    "Div": operator.truediv,
    "FloorDiv": operator.floordiv,
    "Mod": _mod,
    "Pow": _pow,
    "LShift": _lshift,
    "RShift": operator.rshift,
    "BitOr": operator.or_,
    "BitXor": operator.xor,
    "BitAnd": operator.and_,
}
"""Python's binary operators by ast name, bounded where one can build a huge value."""

_FORMAT_NUMBERS = re.compile(r"\d+")


def bounded_format(value: Any, spec: str) -> str:
    """`format(value, spec)` with widths and precisions of at most MAX_FORMAT_NUMBER."""
    for number in _FORMAT_NUMBERS.findall(spec):
        if len(number) > 4 or int(number) > MAX_FORMAT_NUMBER:
            raise LimitExceeded(f"a format width or precision over {MAX_FORMAT_NUMBER}")
    return check_size(format(value, spec))
