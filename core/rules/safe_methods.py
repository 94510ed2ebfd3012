"""The methods and attributes a rule may use, by the kind of value, each bounded like the builtins.

Every method of text, numbers, lists, tuples, mappings, sets and dates that only computes (what
Python gives Sensei's rules, less what changes a value in place: `append`, `sort`, `update`...,
refused when the rule is loaded). Where a method's result can be much larger than what it was
given (`'x'.center(10**9)`, `replace` into a long text, `join`, `format`), its size is worked out
first and past MAX_LENGTH the evaluation stops; where it compares or hashes values (`count`,
`index`, `get`, a set's `union`), it is charged by `parley.core.rules.value_costs` first.
Attributes are read only of dates and numbers (`d.year`, `n.real`); `str.lower` names the
method of the kind (`sorted(xs, key=str.lower)`).
"""

from __future__ import annotations

import datetime as dt
import string
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from parley.core.rules.evaluation_limits import MAX_LENGTH, EvaluationBudget, LimitExceeded, bounded_format, check_size
from parley.core.rules.value_costs import charge_items, charge_text, charge_walk

_TEXT_READING = frozenset(
    {
        "count",
        "endswith",
        "find",
        "index",
        "isalnum",
        "isalpha",
        "isascii",
        "isdecimal",
        "isdigit",
        "isidentifier",
        "islower",
        "isnumeric",
        "isprintable",
        "isspace",
        "istitle",
        "isupper",
        "rfind",
        "rindex",
        "startswith",
    }
)
_TEXT_MAKING = frozenset(
    {
        "capitalize",
        "casefold",
        "lower",
        "lstrip",
        "partition",
        "removeprefix",
        "removesuffix",
        "rpartition",
        "rsplit",
        "rstrip",
        "split",
        "splitlines",
        "strip",
        "swapcase",
        "title",
        "upper",
    }
)
TEXT_METHODS = (
    _TEXT_READING
    | _TEXT_MAKING
    | {"center", "ljust", "rjust", "zfill", "expandtabs", "replace", "join", "translate", "format", "format_map", "encode"}
)
BYTES_METHODS = _TEXT_READING - {"isdecimal", "isidentifier", "isnumeric", "isprintable"} | _TEXT_MAKING - {"casefold"} | {"decode", "hex"}
LIST_METHODS = frozenset({"count", "index", "copy"})
TUPLE_METHODS = frozenset({"count", "index"})
MAPPING_METHODS = frozenset({"get", "keys", "values", "items", "copy"})
SET_METHODS = frozenset({"union", "intersection", "difference", "symmetric_difference", "issubset", "issuperset", "isdisjoint", "copy"})
INT_METHODS = frozenset({"bit_length", "bit_count", "conjugate", "as_integer_ratio"})
FLOAT_METHODS = frozenset({"is_integer", "as_integer_ratio", "conjugate", "hex"})
DATE_METHODS = frozenset({"isoformat", "weekday", "isoweekday", "isocalendar", "toordinal"})

_METHODS: tuple[tuple[type | tuple[type, ...], frozenset[str]], ...] = (
    (str, TEXT_METHODS),
    (bytes, BYTES_METHODS),
    (list, LIST_METHODS),
    (tuple, TUPLE_METHODS),
    (dict, MAPPING_METHODS),
    ((set, frozenset), SET_METHODS),
    (bool, INT_METHODS),
    (int, INT_METHODS),
    (float, FLOAT_METHODS),
    ((dt.date, dt.time), DATE_METHODS),
)
_ATTRIBUTES: tuple[tuple[type | tuple[type, ...], frozenset[str]], ...] = (
    (dt.datetime, frozenset({"year", "month", "day", "hour", "minute", "second", "microsecond"})),
    (dt.date, frozenset({"year", "month", "day"})),
    (dt.time, frozenset({"hour", "minute", "second", "microsecond"})),
    (int, frozenset({"real", "imag", "numerator", "denominator"})),
    ((float, complex), frozenset({"real", "imag"})),
)

METHOD_NAMES = frozenset().union(*(names for _, names in _METHODS))
"""Every method name a rule may call on some kind of value."""
ATTRIBUTE_NAMES = frozenset().union(*(names for _, names in _ATTRIBUTES))
"""Every attribute a rule may read of a value that is not a conversation."""
CHANGING_METHODS = frozenset(
    {
        "append",
        "extend",
        "insert",
        "pop",
        "remove",
        "clear",
        "sort",
        "reverse",
        "update",
        "setdefault",
        "popitem",
        "add",
        "discard",
        "difference_update",
        "intersection_update",
        "symmetric_difference_update",
    }
)
"""Methods that change a value in place: refused (a rule computes; it never changes what it reads)."""


def methods_of(kind: type) -> frozenset[str]:
    """The methods a rule may call on values of `kind`."""
    for kinds, names in _METHODS:
        if issubclass(kind, kinds):
            return names
    return frozenset()


def read_attribute(owner: Any, name: str) -> Any:
    """`owner.name` when it is a date's or a number's attribute rules may read."""
    for kinds, names in _ATTRIBUTES:
        if isinstance(owner, kinds):
            if name in names:
                return getattr(owner, name)
            break
    raise AttributeError(
        f"rules read attributes only of the conversations in conv, of dates and of numbers ({', '.join(sorted(ATTRIBUTE_NAMES))}), "
        f"not .{name} of {type(owner).__name__}"
    )


def call_method(budget: EvaluationBudget, owner: Any, name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`owner.name(*args, **kwargs)`, bounded (see the module); AttributeError when `owner`'s
    kind has no such method rules may call."""
    if name not in methods_of(type(owner)):
        raise AttributeError(f"'{type(owner).__name__}' object has no method .{name}() rules may call")
    budget.check_time()
    guard = _TEXT_GUARDS.get(name) if isinstance(owner, str) else _GUARDS.get(name)
    if guard is not None:
        args = guard(budget, owner, args, kwargs)
    if isinstance(owner, str) and name in ("format", "format_map"):
        result: Any = _BoundedFormatter(budget).vformat(owner, args if name == "format" else (), kwargs if name == "format" else args[0])
    else:
        result = getattr(type(owner), name)(owner, *args, **kwargs)
    if isinstance(owner, dict) and name in ("keys", "values", "items"):
        result = list(result)  # a live view of the mapping would be a new kind of object to guard
    return budget.charge(check_size(result))


# -- guards: what a call would build or visit, before it runs --------------------------------------

Guard = Callable[[EvaluationBudget, Any, list[Any], dict[str, Any]], list[Any]]


def _too_long(length: int) -> None:
    if length > MAX_LENGTH:
        raise LimitExceeded(f"a value of more than {MAX_LENGTH:,} items or characters")


def _width(budget: EvaluationBudget, owner: Any, args: list[Any], kwargs: dict[str, Any]) -> list[Any]:
    if args and isinstance(args[0], int):
        _too_long(args[0])
    return args


def _tabs(budget: EvaluationBudget, owner: str, args: list[Any], kwargs: dict[str, Any]) -> list[Any]:
    size = args[0] if args else kwargs.get("tabsize", 8)
    if isinstance(size, int):
        _too_long(len(owner) + owner.count("\t") * max(size, 0))
    return args


def _replace(budget: EvaluationBudget, owner: str, args: list[Any], kwargs: dict[str, Any]) -> list[Any]:
    if len(args) >= 2 and isinstance(args[0], str) and isinstance(args[1], str):
        old, new = args[0], args[1]
        times = len(owner) + 1 if old == "" else owner.count(old)
        limit = args[2] if len(args) > 2 else kwargs.get("count", -1)
        if isinstance(limit, int) and limit >= 0:
            times = min(times, limit)
        _too_long(len(owner) + times * (len(new) - len(old)))
    return args


def _join(budget: EvaluationBudget, owner: str, args: list[Any], kwargs: dict[str, Any]) -> list[Any]:
    if not args:
        return args
    parts = list(args[0])
    budget.tick(len(parts))
    _too_long(sum(len(part) for part in parts if isinstance(part, str)) + len(owner) * max(len(parts) - 1, 0))
    return [parts, *args[1:]]


def _translate(budget: EvaluationBudget, owner: str, args: list[Any], kwargs: dict[str, Any]) -> list[Any]:
    if args and isinstance(args[0], Mapping):
        longest = max((len(value) for value in args[0].values() if isinstance(value, str)), default=1)
        _too_long(len(owner) * max(longest, 1))
    return args


def _compares_each(budget: EvaluationBudget, owner: Any, args: list[Any], kwargs: dict[str, Any]) -> list[Any]:
    charge_walk(budget, owner)
    return args


def _hashes_key(budget: EvaluationBudget, owner: Any, args: list[Any], kwargs: dict[str, Any]) -> list[Any]:
    if args:
        charge_walk(budget, args[0], "hashing")
    return args


def _hashes_others(budget: EvaluationBudget, owner: Any, args: list[Any], kwargs: dict[str, Any]) -> list[Any]:
    others = []
    for other in args:
        items = list(other)
        budget.tick(len(items))
        charge_items(budget, items, "hashing")
        others.append(items)
    return others


_TEXT_GUARDS: dict[str, Guard] = {
    "center": _width,
    "ljust": _width,
    "rjust": _width,
    "zfill": _width,
    "expandtabs": _tabs,
    "replace": _replace,
    "join": _join,
    "translate": _translate,
}
_GUARDS: dict[str, Guard] = {
    "count": _compares_each,
    "index": _compares_each,
    "get": _hashes_key,
    **dict.fromkeys(
        ("union", "intersection", "difference", "symmetric_difference", "issubset", "issuperset", "isdisjoint"), _hashes_others
    ),
}


class _BoundedFormatter(string.Formatter):
    """`str.format` with the f-string's bounds: each value charged as it is shown, widths and
    precisions bounded, and no attribute read through a field (`'{0.__class__}'`)."""

    def __init__(self, budget: EvaluationBudget) -> None:
        self.budget = budget

    def get_field(self, field_name: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Any:
        if "." in field_name:
            raise TypeError(f"format field {{{field_name}}}: rules do not read attributes through a format field")
        return super().get_field(field_name, args, kwargs)

    def convert_field(self, value: Any, conversion: str | None) -> Any:
        charge_text(self.budget, value)
        return super().convert_field(value, conversion)

    def format_field(self, value: Any, format_spec: str) -> Any:
        charge_text(self.budget, value)
        return self.budget.charge(bounded_format(value, format_spec))
