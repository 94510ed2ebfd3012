"""The `calculate` tool's arithmetic, without `eval`.

tau2's `calculate` accepts an expression of digits, `+ - * / ( ) .` and spaces, evaluates it as
Python would, and answers `str(round(float(result), 2))`. parley parses the expression into
Python's syntax tree (parsing runs nothing) and evaluates the tree itself, allowing only numbers,
parentheses, unary + and -, and + - * / // and **: the same results and the same error messages as
tau2's for every expression tau2 answers with a number, and never more work than a bounded
expression needs (an integer power beyond `MAX_RESULT_BITS`, an expression longer than
`MAX_LENGTH`, are refused).
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable

__all__ = ["ALLOWED_CHARACTERS", "CalculationError", "MAX_LENGTH", "MAX_RESULT_BITS", "calculate"]

ALLOWED_CHARACTERS = frozenset("0123456789+-*/(). ")
MAX_LENGTH = 1_000
MAX_RESULT_BITS = 100_000
"""An integer power whose result would need more bits than this is refused (tau2's `eval` would
compute it however long it took)."""

Number = int | float

_BINARY: dict[type[ast.operator], Callable[[Number, Number], Number]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Number], Number]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}


class CalculationError(ValueError):
    """The expression cannot be calculated; the message is tau2's for the same expression."""


def calculate(expression: str) -> str:
    """The value of `expression` rounded to two decimals, as tau2's `calculate` writes it."""
    if not all(char in ALLOWED_CHARACTERS for char in expression):
        raise CalculationError("Invalid characters in expression")
    if len(expression) > MAX_LENGTH:
        raise CalculationError(f"Expression too long (at most {MAX_LENGTH} characters)")
    try:
        tree = ast.parse(expression.lstrip(" "), filename="<string>", mode="eval")
    except SyntaxError as exc:
        raise CalculationError(str(exc)) from None
    try:
        return str(round(float(_value(tree.body)), 2))
    except (ArithmeticError, ValueError) as exc:
        raise CalculationError(str(exc)) from None


def _value(node: ast.expr) -> Number:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_value(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _value(node.left), _value(node.right)
        if isinstance(node.op, ast.Pow) and isinstance(left, int) and isinstance(right, int) and abs(left) > 1:
            if right > 0 and left.bit_length() * right > MAX_RESULT_BITS:
                raise ValueError(f"The result is too large (more than {MAX_RESULT_BITS} bits)")
        return _BINARY[type(node.op)](left, right)
    raise ValueError("Invalid expression: only numbers, parentheses and + - * / are allowed")
