"""The Python builtins a rule may call, each bounded by the evaluation's budget.

len, any, all, min, max, sum, abs, round, int, float, str, bool, set, list, tuple, sorted and
range. What they build is charged to the budget and bounded in size; `sum` adds item by item
with the bounded `+`; `range` refuses more than MAX_LENGTH numbers; a helper given as `key=`
(`sorted(xs, key=len)`) works as it does in Python.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from parley.core.rules.evaluation_limits import BINARY_OPERATORS, MAX_LENGTH, LimitExceeded, check_size
from parley.core.rules.expression_compiler import Frame, RuleFunction


class SafeBuiltin(RuleFunction):
    """A builtin whose result is size-checked and charged to the budget."""

    def __init__(self, name: str, function: Callable[..., Any]) -> None:
        self.name = name
        self.function = function

    def call(self, frame: Frame, args: list[Any], kwargs: dict[str, Any]) -> Any:
        return frame.budget.charge(check_size(self.function(*args, **kwargs)))


class _KeyedBuiltin(SafeBuiltin):
    """sorted, min, max: a rule function given as `key=` is called through the frame."""

    def call(self, frame: Frame, args: list[Any], kwargs: dict[str, Any]) -> Any:
        key = kwargs.get("key")
        if isinstance(key, RuleFunction):
            kwargs = {**kwargs, "key": lambda value: key.call(frame, [value], {})}
        return super().call(frame, args, kwargs)


class _Sum(RuleFunction):
    name = "sum"

    def call(self, frame: Frame, args: list[Any], kwargs: dict[str, Any]) -> Any:
        return _bounded_sum(frame, *args, **kwargs)


def _bounded_sum(frame: Frame, iterable: Iterable[Any], /, start: Any = 0) -> Any:
    if isinstance(start, str):
        raise TypeError("sum() can't sum strings [use ''.join(seq) instead]")
    add = BINARY_OPERATORS["Add"]
    total = start
    for item in iterable:
        frame.budget.tick()
        total = frame.budget.charge(add(total, item))
    return total


def _bounded_range(*args: int) -> range:
    numbers = range(*args)
    if len(numbers) > MAX_LENGTH:
        raise LimitExceeded(f"a range of more than {MAX_LENGTH:,} numbers")
    return numbers


_PLAIN: dict[str, Callable[..., Any]] = {
    "len": len,
    "any": any,
    "all": all,
    "abs": abs,
    "round": round,
    "int": int,
    "float": float,
    "str": str,
    "bool": bool,
    "set": set,
    "list": list,
    "tuple": tuple,
    "range": _bounded_range,
}
_KEYED: dict[str, Callable[..., Any]] = {"min": min, "max": max, "sorted": sorted}

SAFE_BUILTINS: dict[str, RuleFunction] = {
    **{name: SafeBuiltin(name, function) for name, function in _PLAIN.items()},
    **{name: _KeyedBuiltin(name, function) for name, function in _KEYED.items()},
    "sum": _Sum(),
}
"""The builtins by name."""
