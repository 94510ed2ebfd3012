"""What comparing, hashing and showing a value costs, charged before Python does it.

A rule can build, in a few cheap steps, a value whose parts are shared:
`[[[[1]*1000]*1000]*1000]*1000` is four lists of a thousand items each, but comparing, hashing or
printing it visits 10**12 items inside one call of Python's own, where neither the step counter
nor the clock is consulted (and which holds the interpreter's lock: nothing else in the process
runs meanwhile, signals included). So before such a call the evaluator walks what the call will
visit, a step of the budget per item (each appearance of a shared part counted again), and the
evaluation stops past its steps or, for text, past MAX_LENGTH characters: the call that follows
then costs about what was charged. Plain values (text, numbers) cost nothing to walk: Python
compares text as memory, and hashes it once.

`bounded_repr` shows a value in at most a given number of characters without converting it
whole (a failure's "oracle returned ..." reason), and `bounded_text` is `str(value)` for a
value whose text is within the bounds (a rule's `yields`).
"""

from __future__ import annotations

import reprlib
from collections.abc import Iterable
from typing import Any

from parley.core.rules.conversation_view import ConversationView
from parley.core.rules.evaluation_limits import MAX_LENGTH, EvaluationBudget, LimitExceeded

FLAT = (str, bytes, int, float, complex, bool, type(None), range)
"""Values with nothing inside them to walk."""

_OTHER_CHARACTERS = 80  # the text of a value of another kind (a date, a function), at most


def _inside(value: Any) -> Iterable[Any] | None:
    if isinstance(value, list | tuple | set | frozenset):
        return value
    if isinstance(value, dict):
        return [*value.keys(), *value.values()]
    if isinstance(value, ConversationView):
        return [part for pair in value.items() for part in pair]
    return None


def _items(value: Any, cap: int) -> int | None:
    """Items visited walking `value` (itself included, each appearance of a shared part counted
    again); None past `cap`."""
    if isinstance(value, FLAT):
        return 1
    count = 0
    stack = [value]
    while stack:
        item = stack.pop()
        count += 1
        if count > cap:
            return None
        inside = _inside(item)
        if inside is None:
            continue
        for part in inside:
            if isinstance(part, FLAT):
                count += 1
            else:
                stack.append(part)
        if count > cap:
            return None
    return count


def _refused(budget: EvaluationBudget, what: str) -> LimitExceeded:
    return LimitExceeded(f"more than {budget.max_steps:,} steps ({what} a value counts a step for every item inside it)")


def charge_walk(budget: EvaluationBudget, value: Any, what: str = "comparing") -> None:
    """Charge a step for every item inside `value` (a hash of it, a comparison with it)."""
    if isinstance(value, FLAT):
        return
    count = _items(value, budget.max_steps - budget.steps)
    if count is None:
        raise _refused(budget, what)
    budget.tick(count)


def charge_comparison(budget: EvaluationBudget, left: Any, right: Any) -> None:
    """Charge what `left == right` (or `<`, `<=`, ...) may cost: the smaller of the two walks."""
    if isinstance(left, FLAT) or isinstance(right, FLAT) or left is right:
        return  # different kinds compare at once; a value is equal to itself at once
    cap = budget.max_steps - budget.steps
    first = _items(left, cap)
    second = _items(right, cap if first is None else first)
    if first is None and second is None:
        raise _refused(budget, "comparing")
    budget.tick(min(count for count in (first, second) if count is not None))


def charge_membership(budget: EvaluationBudget, item: Any, container: Any) -> None:
    """Charge what `item in container` may cost: a hash of `item` for a set or a mapping, a
    comparison with every item of a list."""
    if isinstance(container, dict | set | frozenset):
        charge_walk(budget, item, "hashing")
    elif not isinstance(container, FLAT):
        charge_walk(budget, container)


def charge_items(budget: EvaluationBudget, items: Iterable[Any], what: str) -> None:
    """Charge a walk of each of `items` (a set built of them, a list sorted)."""
    for item in items:
        charge_walk(budget, item, what)


def _characters(value: Any, budget: EvaluationBudget) -> int:
    """About how many characters `str(value)` or `repr(value)` has (at least that many), a step
    charged per item walked; LimitExceeded past MAX_LENGTH characters or the steps left."""
    total = 0
    walked = 0
    cap = budget.max_steps - budget.steps
    stack = [value]
    while stack:
        item = stack.pop()
        walked += 1
        if walked > cap:
            raise _refused(budget, "showing")
        if isinstance(item, str | bytes):
            total += len(item) + 3
        elif isinstance(item, bool) or item is None:
            total += 5
        elif isinstance(item, int):
            total += item.bit_length() * 3 // 10 + 2
        elif isinstance(item, float | complex | range):
            total += 30
        elif isinstance(item, ConversationView):
            total += 11
            for key, part in item.items():
                total += len(key) + 3
                stack.append(part)
        else:
            inside = _inside(item)
            if inside is None:
                total += _OTHER_CHARACTERS
            else:
                total += 2
                for part in inside:
                    total += 2
                    stack.append(part)
        if total > MAX_LENGTH:
            raise LimitExceeded(f"text of more than {MAX_LENGTH:,} characters (showing a value shows every item inside it)")
    budget.tick(walked)
    return total


def charge_text(budget: EvaluationBudget, value: Any) -> None:
    """Charge showing `value` as text (`str`, `repr`, an f-string): a step per item inside it,
    and LimitExceeded when its text would pass MAX_LENGTH characters."""
    if isinstance(value, str):
        return
    _characters(value, budget)


def bounded_text(value: Any, limit: int) -> str:
    """`str(value)`, clipped to `limit` characters; LimitExceeded when the whole text would be
    longer than the bounds let a rule build (it is never converted then)."""
    if not isinstance(value, str):
        charge_text(EvaluationBudget(), value)
        value = str(value)
    return clip(value, limit)


def clip(text: str, limit: int) -> str:
    """`text`, or its first `limit - 1` characters and an ellipsis."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


class _BoundedRepr(reprlib.Repr):
    def __init__(self, limit: int) -> None:
        super().__init__()
        self.maxlevel = 4
        self.maxtuple = self.maxlist = self.maxarray = self.maxdict = self.maxset = self.maxfrozenset = 4
        self.maxstring = limit
        self.maxlong = 60
        self.maxother = 80

    def repr_int(self, x: int, level: int) -> str:
        if x.bit_length() > 10_000:  # Python refuses to show an integer of more than 4,300 digits
            return f"<an integer of {x.bit_length():,} bits>"
        return super().repr_int(x, level)

    def repr_ConversationView(self, x: ConversationView, level: int) -> str:  # noqa: N802 - reprlib's naming
        if level <= 0:
            return "namespace(...)"
        items = x.items()
        shown = [f"{key}={self.repr1(part, level - 1)}" for key, part in items[: self.maxdict]]
        return f"namespace({', '.join(shown)}{', ...' if len(items) > self.maxdict else ''})"


def bounded_repr(value: Any, limit: int) -> str:
    """`repr(value)` in at most `limit` characters, computed without showing the value whole
    (long texts, lists and deep values abbreviated with '...')."""
    return clip(_BoundedRepr(limit).repr(value), limit)
