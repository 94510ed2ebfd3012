"""The Python builtins a rule may call, each bounded by the evaluation's budget.

Every builtin Python gives Sensei's rules that only computes: abs, all, any, ascii, bin, bool,
bytes, callable, chr, complex, dict, divmod, enumerate, filter, float, format, frozenset,
hasattr, hash, hex, int, isinstance, issubclass, iter, len, list, map, max, min, next, oct, ord,
pow, range, repr, reversed, round, set, slice, sorted, str, sum, tuple, type and zip. Those that
read files or the terminal, run code or read Python's internals are refused when the rule is
loaded (`parley.core.rules.expression_compiler.REFUSED_CALLS`).

What they build is charged to the budget and bounded in size; what they compare, hash or show
is charged by what it visits first (`parley.core.rules.value_costs`): `sorted`, `min`, `max`,
`set` and `dict` take their items in full before Python compares or hashes them; `sum` adds item
by item with the bounded `+`; `range`, `bytes`, `pow` and `round` refuse what would be too large.
A rule function given as a function (`map(len, xs)`, `sorted(xs, key=str.lower)`, a lambda) is
called through the evaluation, a step per call. `type(x)` is the builtin of x's kind (so
`type(x) == str` holds for text), and `hasattr(conv[0], 'charge')` asks whether a conversation
has that value, as on Sensei's SimpleNamespace.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable, Iterable
from typing import Any

from parley.core.rules.conversation_view import ConversationView
from parley.core.rules.evaluation_limits import BINARY_OPERATORS, MAX_INT_BITS, MAX_LENGTH, LimitExceeded, bounded_format, check_size
from parley.core.rules.expression_compiler import Frame, RuleFunction, RuleLambda
from parley.core.rules.value_costs import charge_items, charge_text, charge_walk


class SafeBuiltin(RuleFunction):
    """A builtin whose result is size-checked and charged to the budget."""

    def __init__(self, name: str, function: Callable[..., Any], kind: type | None = None) -> None:
        self.name = name
        self.function = function
        self.python_type = kind if kind is not None else function if isinstance(function, type) else None

    def call(self, frame: Frame, args: list[Any], kwargs: dict[str, Any]) -> Any:
        return frame.budget.charge(check_size(self.function(*args, **kwargs)))


class _Guarded(SafeBuiltin):
    """A builtin whose arguments are checked (and charged) first: `guard(frame, args, kwargs)`
    gives the arguments the builtin is then called with."""

    def __init__(self, name: str, function: Callable[..., Any], guard: Callable[[Frame, list[Any], dict[str, Any]], list[Any]]) -> None:
        super().__init__(name, function)
        self.guard = guard

    def call(self, frame: Frame, args: list[Any], kwargs: dict[str, Any]) -> Any:
        return super().call(frame, self.guard(frame, args, kwargs), kwargs)


class RuleType:
    """What `type(x)` gives for a kind of value that is no builtin's (a date): it compares, and
    `isinstance` takes it, as the class would."""

    __slots__ = ("python_type",)

    def __init__(self, python_type: type) -> None:
        self.python_type = python_type

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RuleType) and other.python_type is self.python_type

    def __hash__(self) -> int:
        return hash(self.python_type)

    def __repr__(self) -> str:
        return f"<class '{self.python_type.__module__}.{self.python_type.__qualname__}'>"


def as_callable(frame: Frame, function: Any) -> Any:
    """A rule function as something Python can call (each call a step of the budget)."""
    if isinstance(function, RuleFunction):

        def call(*args: Any) -> Any:
            frame.budget.tick()
            return function.call(frame, list(args), {})

        return call
    return function  # a lambda calls through its frame already; anything else Python refuses itself


def _python_type(frame: Frame, kind: Any) -> Any:
    if isinstance(kind, tuple):
        return tuple(_python_type(frame, part) for part in kind)
    if isinstance(kind, RuleFunction) and kind.python_type is not None:
        return kind.python_type
    if isinstance(kind, RuleType):
        return kind.python_type
    raise TypeError(f"isinstance() arg 2 must be a type or a tuple of types, not {type(kind).__name__}")


# -- guards --------------------------------------------------------------------------------------


def _shown(frame: Frame, args: list[Any], kwargs: dict[str, Any]) -> list[Any]:
    if args:
        charge_text(frame.budget, args[0])
    return args


def _str(frame: Frame, args: list[Any], kwargs: dict[str, Any]) -> list[Any]:
    if len(args) == 1 and not kwargs:
        charge_text(frame.budget, args[0])
    return args


def _hashed(frame: Frame, args: list[Any], kwargs: dict[str, Any]) -> list[Any]:
    if args:
        charge_walk(frame.budget, args[0], "hashing")
    return args


def _hashed_items(frame: Frame, args: list[Any], kwargs: dict[str, Any]) -> list[Any]:
    if not args:
        return args
    items = list(args[0])
    frame.budget.tick(len(items))
    charge_items(frame.budget, items, "hashing")
    return [items, *args[1:]]


def _dict_pairs(frame: Frame, args: list[Any], kwargs: dict[str, Any]) -> list[Any]:
    if not args or isinstance(args[0], dict):
        return args  # a mapping's keys were hashed when it was built
    pairs = list(args[0])
    frame.budget.tick(len(pairs))
    charge_items(frame.budget, (pair[0] for pair in pairs if isinstance(pair, list | tuple) and len(pair) == 2), "hashing")
    return [pairs, *args[1:]]


def _first_is_function(frame: Frame, args: list[Any], kwargs: dict[str, Any]) -> list[Any]:
    return [as_callable(frame, args[0]), *args[1:]] if args else args


def _iter(frame: Frame, args: list[Any], kwargs: dict[str, Any]) -> list[Any]:
    return [as_callable(frame, args[0]), *args[1:]] if len(args) == 2 else args


def _bytes(frame: Frame, args: list[Any], kwargs: dict[str, Any]) -> list[Any]:
    if args and isinstance(args[0], int) and args[0] > MAX_LENGTH:
        raise LimitExceeded(f"a value of more than {MAX_LENGTH:,} items or characters")
    return args


def _round(frame: Frame, args: list[Any], kwargs: dict[str, Any]) -> list[Any]:
    digits = args[1] if len(args) > 1 else kwargs.get("ndigits")
    if isinstance(digits, int) and abs(digits) > 10_000:
        raise LimitExceeded("a round() to more than 10,000 digits")
    return args


def _pow(frame: Frame, args: list[Any], kwargs: dict[str, Any]) -> list[Any]:
    if len(args) == 3 and all(isinstance(arg, int) for arg in args):
        base, exponent, modulus = args
        if exponent.bit_length() * max(modulus.bit_length(), 1) > 10_000_000 or base.bit_length() > MAX_INT_BITS:
            raise LimitExceeded("a pow() whose exponent and modulus are too large together")
    return args


def _bounded_range(*args: int) -> range:
    numbers = range(*args)
    if len(numbers) > MAX_LENGTH:
        raise LimitExceeded(f"a range of more than {MAX_LENGTH:,} numbers")
    return numbers


def _pow2(*args: Any) -> Any:
    return BINARY_OPERATORS["Pow"](args[0], args[1]) if len(args) == 2 else builtins.pow(*args)


# -- builtins with bodies of their own ---------------------------------------------------------------


class _Ordering(RuleFunction):
    """sorted, min, max: the items taken in full and charged (each compared a few times), the
    keys computed first through the frame, then Python compares."""

    def __init__(self, name: str, function: Callable[..., Any]) -> None:
        self.name = name
        self.function = function

    def call(self, frame: Frame, args: list[Any], kwargs: dict[str, Any]) -> Any:
        budget = frame.budget
        kwargs = dict(kwargs)
        key = kwargs.pop("key", None)
        several = self.name != "sorted" and len(args) > 1
        items = list(args if several else args[0]) if args else []
        rest = [] if several else args[1:]
        budget.tick(len(items))
        keys = items if key is None else [as_callable(frame, key)(item) for item in items]
        rounds = max(1, math.ceil(math.log2(len(keys)))) if self.name == "sorted" and len(keys) > 1 else 1
        for _ in range(rounds):
            charge_items(budget, keys, "comparing")
        if key is None:
            result = self.function(items, *rest, **kwargs)
        elif self.name == "sorted":
            order = sorted(range(len(items)), key=keys.__getitem__, **kwargs)
            result = [items[index] for index in order]
        else:
            if not items and "default" in kwargs:
                return kwargs["default"]
            index = self.function(range(len(items)), key=keys.__getitem__, **kwargs)
            result = items[index]
        return budget.charge(check_size(result))


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


class _Type(RuleFunction):
    name = "type"

    def call(self, frame: Frame, args: list[Any], kwargs: dict[str, Any]) -> Any:
        if len(args) != 1 or kwargs:
            raise TypeError("type() takes one value in a rule")
        kind = type(args[0])
        for builtin in SAFE_BUILTINS.values():
            if builtin.python_type is kind:
                return builtin
        return RuleType(kind)


class _IsInstance(RuleFunction):
    def __init__(self, name: str, function: Callable[[Any, Any], bool]) -> None:
        self.name = name
        self.function = function

    def call(self, frame: Frame, args: list[Any], kwargs: dict[str, Any]) -> Any:
        if len(args) != 2 or kwargs:
            raise TypeError(f"{self.name}() takes 2 arguments")
        first = _python_type(frame, args[0]) if self.name == "issubclass" else args[0]
        return self.function(first, _python_type(frame, args[1]))


class _HasAttr(RuleFunction):
    name = "hasattr"

    def call(self, frame: Frame, args: list[Any], kwargs: dict[str, Any]) -> Any:
        if len(args) != 2 or kwargs:
            raise TypeError("hasattr expected 2 arguments")
        owner, name = args
        if not isinstance(name, str):
            raise TypeError("hasattr(): attribute name must be string")
        if isinstance(owner, ConversationView):
            return owner.has(name)
        return builtins.hasattr(owner, name)


class _Callable(RuleFunction):
    name = "callable"

    def call(self, frame: Frame, args: list[Any], kwargs: dict[str, Any]) -> Any:
        if len(args) != 1 or kwargs:
            raise TypeError("callable() takes exactly one argument")
        return isinstance(args[0], RuleFunction | RuleLambda) or builtins.callable(args[0])


class _Format(RuleFunction):
    name = "format"

    def call(self, frame: Frame, args: list[Any], kwargs: dict[str, Any]) -> Any:
        if not 1 <= len(args) <= 2 or kwargs:
            raise TypeError("format() takes a value and an optional format spec")
        charge_text(frame.budget, args[0])
        return frame.budget.charge(bounded_format(args[0], args[1] if len(args) == 2 else ""))


_PLAIN: dict[str, Callable[..., Any]] = {
    "abs": abs,
    "all": all,
    "any": any,
    "bin": bin,
    "bool": bool,
    "chr": chr,
    "complex": complex,
    "divmod": divmod,
    "enumerate": enumerate,
    "float": float,
    "hex": hex,
    "int": int,
    "len": len,
    "list": list,
    "next": next,
    "oct": oct,
    "ord": ord,
    "range": _bounded_range,
    "reversed": reversed,
    "slice": slice,
    "tuple": tuple,
    "zip": zip,
}
_GUARDED: dict[str, tuple[Callable[..., Any], Callable[[Frame, list[Any], dict[str, Any]], list[Any]]]] = {
    "ascii": (ascii, _shown),
    "repr": (repr, _shown),
    "str": (str, _str),
    "hash": (hash, _hashed),
    "set": (set, _hashed_items),
    "frozenset": (frozenset, _hashed_items),
    "dict": (dict, _dict_pairs),
    "map": (map, _first_is_function),
    "filter": (filter, _first_is_function),
    "iter": (iter, _iter),
    "bytes": (bytes, _bytes),
    "round": (round, _round),
    "pow": (_pow2, _pow),
}

SAFE_BUILTINS: dict[str, RuleFunction] = {
    **{name: SafeBuiltin(name, function, range if function is _bounded_range else None) for name, function in _PLAIN.items()},
    **{name: _Guarded(name, function, guard) for name, (function, guard) in _GUARDED.items()},
    **{name: _Ordering(name, function) for name, function in (("min", min), ("max", max), ("sorted", sorted))},
    "sum": _Sum(),
    "type": _Type(),
    "isinstance": _IsInstance("isinstance", isinstance),
    "issubclass": _IsInstance("issubclass", issubclass),
    "hasattr": _HasAttr(),
    "callable": _Callable(),
    "format": _Format(),
}
"""The builtins by name."""
