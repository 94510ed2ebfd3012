"""The rule expression whitelist: Python expressions parsed with `ast`, checked node by node, and
compiled into closures that evaluate them. Nothing is ever passed to `eval` or `exec`.

What an expression may hold: names, literals (f-strings included), comparisons, `and`/`or`/`not`,
arithmetic (bounded: `parley.core.rules.evaluation_limits`), `x if c else y`, subscripts and
slices, comprehensions and generator expressions (each item a step of the budget), attributes of
the conversations of `conv` (and of dates and numbers: `parley.core.rules.safe_methods`), calls
to the functions the caller names (the rule helpers and Python's builtins that only compute),
the methods of text, numbers, lists, mappings, sets and dates that only compute, and `lambda` as
the `key=` of `sorted`, `min` or `max` or the function of `map` or `filter`. Anything else is an
`ExpressionRefused` at its line and column before anything runs: a builtin that reads or writes
files or the terminal, runs code or reads Python's internals (`open`, `print`, `exec`, `eval`,
`getattr`, `vars`, ...: REFUSED_CALLS, each with why), a method that changes a value in place,
dunder names or attributes, lambdas elsewhere, `:=`, `*args`, calls of anything that is not one
of the listed functions. The conditions `exists()` and `num_exist()` take as strings are
compiled the same way, when the rule is loaded: they must be string literals.

Comparing, hashing and showing a value is charged by what it visits before Python does it
(`parley.core.rules.value_costs`), so one comparison of a value built of shared parts cannot
run past the bounds inside a single call of Python's own.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from typing import Any, Protocol

from parley.core.rules.conversation_view import ConversationView
from parley.core.rules.evaluation_limits import BINARY_OPERATORS, EvaluationBudget, LimitExceeded, bounded_format, check_size
from parley.core.rules.safe_methods import CHANGING_METHODS, METHOD_NAMES, call_method, methods_of, read_attribute
from parley.core.rules.value_costs import charge_comparison, charge_membership, charge_text, charge_walk

MAX_EXPRESSION_CHARS = 10_000
"""Characters of one expression; Sensei's own rules are a line or two."""
MAX_NESTING = 60
"""Nested sub-expressions; deeper ones are refused rather than risking the interpreter's stack."""

CONDITION_FUNCTIONS = frozenset({"exists", "num_exist"})
"""Helpers whose first argument is itself an expression, evaluated over other conversations."""
KEY_FUNCTIONS = frozenset({"sorted", "min", "max"})
"""Builtins whose `key=` may be a lambda."""

FUNCTION_ARGUMENTS = frozenset({"map", "filter"})
"""Builtins whose first argument is a function, which may be a lambda."""

REFUSED_CALLS = {
    "open": "reads and writes files",
    "input": "reads the terminal",
    "print": "writes to the terminal",
    "breakpoint": "starts a debugger",
    "help": "starts Python's help",
    "exit": "ends the program",
    "quit": "ends the program",
    "exec": "runs code",
    "eval": "runs code",
    "compile": "compiles code",
    "getattr": "reads any attribute, Python's internals included",
    "setattr": "changes a value",
    "delattr": "changes a value",
    "globals": "reads Python's internals",
    "locals": "reads Python's internals",
    "vars": "reads Python's internals",
    "dir": "reads Python's internals",
    "id": "reads Python's internals",
    "object": "reads Python's internals",
    "super": "reads Python's internals",
    "property": "defines classes",
    "classmethod": "defines classes",
    "staticmethod": "defines classes",
    "memoryview": "reads memory",
    "bytearray": "makes a value that can be changed",
    "aiter": "needs asynchronous code",
    "anext": "needs asynchronous code",
}
"""Python builtins a rule may never call, and why: each is an ExpressionRefused where it is named."""

_CONVERSIONS = {-1: None, 115: str, 114: repr, 97: ascii}


class ExpressionRefused(Exception):
    """An expression outside the whitelist (or not Python); `line` and `column` are 1-based
    positions in the expression's text."""

    def __init__(self, reason: str, line: int = 1, column: int = 1) -> None:
        super().__init__(reason)
        self.reason = reason
        self.line = line
        self.column = column


class Scope(Protocol):
    """What names resolve to when an expression runs (helpers, a conversation's values, builtins)."""

    def lookup(self, name: str) -> Any:
        """The value of `name`; NameError when there is none."""
        ...


class Frame:
    """One evaluation's state: the scope, the names comprehensions and lambdas bind, the budget."""

    __slots__ = ("scope", "budget", "names", "parent")

    def __init__(self, scope: Scope, budget: EvaluationBudget, names: dict[str, Any] | None = None, parent: Frame | None = None) -> None:
        self.scope = scope
        self.budget = budget
        self.names = names
        self.parent = parent

    def child(self) -> Frame:
        return Frame(self.scope, self.budget, {}, self)

    def lookup(self, name: str) -> Any:
        frame: Frame | None = self
        while frame is not None:
            if frame.names is not None and name in frame.names:
                return frame.names[name]
            frame = frame.parent
        return self.scope.lookup(name)


class RuleFunction:
    """A function a rule may call: a helper or a safe builtin. Subclasses implement `call`;
    a builtin that is a kind of value (`str`, `int`...) names it as `python_type`."""

    name = "function"
    python_type: type | None = None

    def call(self, frame: Frame, args: list[Any], kwargs: dict[str, Any]) -> Any:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<rule function {self.name}>"


class RuleLambda:
    """A `lambda` given as a `key=`: callable by the builtin it was given to, nothing else."""

    __slots__ = ("params", "body", "frame")

    def __init__(self, params: tuple[str, ...], body: Evaluator, frame: Frame) -> None:
        self.params = params
        self.body = body
        self.frame = frame

    def __call__(self, *args: Any) -> Any:
        if len(args) != len(self.params):
            raise TypeError(f"<lambda>() takes {len(self.params)} positional arguments but {len(args)} were given")
        self.frame.budget.tick()
        self.frame.budget.check_time()
        inner = self.frame.child()
        assert inner.names is not None
        inner.names.update(zip(self.params, args, strict=True))
        return self.body(inner)


Evaluator = Callable[[Frame], Any]


class CompiledExpression:
    """A checked expression, ready to evaluate against any scope. It pickles as its text and the
    names it may call, compiled again when unpickled (the app runs a batch in a child process)."""

    __slots__ = ("text", "functions", "_run", "_allowed")

    def __init__(self, text: str, run: Evaluator, functions: frozenset[str], allowed: frozenset[str] = frozenset()) -> None:
        self.text = text
        self.functions = functions
        self._run = run
        self._allowed = allowed

    def __reduce__(self) -> tuple[Any, tuple[str, frozenset[str]]]:
        return compile_expression, (self.text, self._allowed)

    def evaluate(self, scope: Scope, budget: EvaluationBudget | None = None) -> Any:
        """The expression's value in `scope`. Raises what the expression raises (NameError,
        TypeError, ...) and LimitExceeded past the budget (a fresh one unless given)."""
        frame = Frame(scope, budget or EvaluationBudget())
        try:
            return self._run(frame)
        except RecursionError:  # nesting is bounded when compiling; this is a last guard
            raise LimitExceeded("nested too deeply") from None
        except MemoryError:
            raise LimitExceeded("out of memory") from None


def compile_expression(text: str, functions: frozenset[str]) -> CompiledExpression:
    """`text` checked against the whitelist and compiled; `functions` are the names a rule may
    call. ExpressionRefused (with a position in `text`) when it is not an allowed expression."""
    if not isinstance(text, str):
        raise ExpressionRefused("must be text (a Python expression)")
    if len(text) > MAX_EXPRESSION_CHARS:
        raise ExpressionRefused(f"longer than {MAX_EXPRESSION_CHARS:,} characters")
    source = text.strip()
    if not source:
        raise ExpressionRefused("is empty")
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError as exc:
        raise ExpressionRefused(f"not a Python expression: {exc.msg}", exc.lineno or 1, exc.offset or 1) from None
    except (ValueError, MemoryError, RecursionError) as exc:  # a 5,000-digit literal, a parser stack overflow
        raise ExpressionRefused(f"not a Python expression: {str(exc) or type(exc).__name__}") from None
    compiler = _Compiler(functions)
    run = compiler.compile(tree.body, 0)
    return CompiledExpression(text, run, frozenset(compiler.called), frozenset(functions))


def _refuse(node: ast.AST, reason: str) -> ExpressionRefused:
    return ExpressionRefused(reason, getattr(node, "lineno", 1), getattr(node, "col_offset", 0) + 1)


_NODE_WORDS = {
    "Lambda": "lambda (allowed only as the key= of sorted, min or max, or the function of map or filter)",
    "NamedExpr": "':=' assignment",
    "Starred": "'*' unpacking",
    "Await": "await",
    "Yield": "yield",
    "YieldFrom": "yield from",
}


class _Compiler:
    def __init__(self, functions: frozenset[str]) -> None:
        self.functions = functions
        self.called: set[str] = set()

    def compile(self, node: ast.expr, depth: int) -> Evaluator:
        if depth > MAX_NESTING:
            raise _refuse(node, f"nested more than {MAX_NESTING} levels deep")
        method = getattr(self, f"_{type(node).__name__}", None)
        if method is None:
            kind = type(node).__name__
            raise _refuse(node, f"{_NODE_WORDS.get(kind, kind)} is not allowed in a rule")
        result: Evaluator = method(node, depth + 1)
        return result

    # -- names and literals ---------------------------------------------------------------------

    def _Constant(self, node: ast.Constant, depth: int) -> Evaluator:
        value = node.value
        return lambda frame: value

    def _Name(self, node: ast.Name, depth: int) -> Evaluator:
        name = _checked_name(node, node.id)
        return lambda frame: frame.lookup(name)

    def _List(self, node: ast.List, depth: int) -> Evaluator:
        items = [self.compile(item, depth) for item in node.elts]
        return lambda frame: [item(frame) for item in items]

    def _Tuple(self, node: ast.Tuple, depth: int) -> Evaluator:
        items = [self.compile(item, depth) for item in node.elts]
        return lambda frame: tuple(item(frame) for item in items)

    def _Set(self, node: ast.Set, depth: int) -> Evaluator:
        items = [self.compile(item, depth) for item in node.elts]
        return lambda frame: {_hashed(frame, item(frame)) for item in items}

    def _Dict(self, node: ast.Dict, depth: int) -> Evaluator:
        if any(key is None for key in node.keys):
            raise _refuse(node, "'**' unpacking is not allowed in a rule")
        pairs = [(self.compile(key, depth), self.compile(value, depth)) for key, value in zip(node.keys, node.values, strict=True) if key]
        return lambda frame: {_hashed(frame, key(frame)): value(frame) for key, value in pairs}

    def _JoinedStr(self, node: ast.JoinedStr, depth: int) -> Evaluator:
        parts = [self.compile(part, depth) for part in node.values]
        return lambda frame: frame.budget.charge(check_size("".join(part(frame) for part in parts)))

    def _FormattedValue(self, node: ast.FormattedValue, depth: int) -> Evaluator:
        value = self.compile(node.value, depth)
        convert = _CONVERSIONS.get(node.conversion)
        spec = self.compile(node.format_spec, depth) if node.format_spec is not None else None

        def run(frame: Frame) -> str:
            item = value(frame)
            charge_text(frame.budget, item)
            if convert is not None:
                item = convert(item)
            return frame.budget.charge(bounded_format(item, spec(frame) if spec is not None else ""))

        return run

    # -- operators --------------------------------------------------------------------------------

    def _BoolOp(self, node: ast.BoolOp, depth: int) -> Evaluator:
        values = [self.compile(value, depth) for value in node.values]
        if isinstance(node.op, ast.And):

            def run_and(frame: Frame) -> Any:
                result = None
                for value in values:
                    result = value(frame)
                    if not result:
                        return result
                return result

            return run_and

        def run_or(frame: Frame) -> Any:
            result = None
            for value in values:
                result = value(frame)
                if result:
                    return result
            return result

        return run_or

    def _UnaryOp(self, node: ast.UnaryOp, depth: int) -> Evaluator:
        operand = self.compile(node.operand, depth)
        if isinstance(node.op, ast.Not):
            return lambda frame: not operand(frame)
        if isinstance(node.op, ast.USub):
            return lambda frame: -operand(frame)
        if isinstance(node.op, ast.UAdd):
            return lambda frame: +operand(frame)
        return lambda frame: ~operand(frame)

    def _BinOp(self, node: ast.BinOp, depth: int) -> Evaluator:
        operation = BINARY_OPERATORS.get(type(node.op).__name__)
        if operation is None:
            raise _refuse(node, f"the operator {type(node.op).__name__} is not allowed in a rule")
        left, right = self.compile(node.left, depth), self.compile(node.right, depth)
        return lambda frame: frame.budget.charge(operation(left(frame), right(frame)))

    def _Compare(self, node: ast.Compare, depth: int) -> Evaluator:
        first = self.compile(node.left, depth)
        steps = [
            (type(op).__name__, _COMPARISONS[type(op).__name__], self.compile(right, depth))
            for op, right in zip(node.ops, node.comparators, strict=True)
        ]

        def run(frame: Frame) -> Any:
            left = first(frame)
            result: Any = True
            for kind, compare, right_of in steps:
                right = right_of(frame)
                if kind in ("In", "NotIn"):
                    charge_membership(frame.budget, left, right)
                elif kind not in ("Is", "IsNot"):
                    charge_comparison(frame.budget, left, right)
                result = compare(left, right)
                if not result:
                    return result
                left = right
            return result

        return run

    def _IfExp(self, node: ast.IfExp, depth: int) -> Evaluator:
        test, body, orelse = self.compile(node.test, depth), self.compile(node.body, depth), self.compile(node.orelse, depth)
        return lambda frame: body(frame) if test(frame) else orelse(frame)

    def _Subscript(self, node: ast.Subscript, depth: int) -> Evaluator:
        value, index = self.compile(node.value, depth), self.compile(node.slice, depth)

        def run(frame: Frame) -> Any:
            owner, key = value(frame), index(frame)
            if isinstance(owner, dict):
                charge_walk(frame.budget, key, "hashing")
            result = owner[key]
            return frame.budget.charge(result) if isinstance(key, slice) else result  # a slice is a copy

        return run

    def _Slice(self, node: ast.Slice, depth: int) -> Evaluator:
        parts = [self.compile(part, depth) if part is not None else None for part in (node.lower, node.upper, node.step)]
        return lambda frame: slice(*(part(frame) if part is not None else None for part in parts))

    def _Attribute(self, node: ast.Attribute, depth: int) -> Evaluator:
        value = self.compile(node.value, depth)  # first, so the innermost problem is the one named
        attribute = _checked_attribute(node)

        def run(frame: Frame) -> Any:
            owner = value(frame)
            if isinstance(owner, ConversationView):
                return owner.attribute(attribute)
            if isinstance(owner, RuleFunction) and owner.python_type is not None and attribute in methods_of(owner.python_type):
                return MethodOfKind(owner.python_type, attribute)  # str.lower, as a key= or map's function
            return read_attribute(owner, attribute)

        return run

    # -- calls ------------------------------------------------------------------------------------

    def _Call(self, node: ast.Call, depth: int) -> Evaluator:
        for argument in node.args:
            if isinstance(argument, ast.Starred):
                raise _refuse(argument, "'*' unpacking is not allowed in a rule")
        for keyword in node.keywords:
            if keyword.arg is None:
                raise _refuse(keyword.value, "'**' unpacking is not allowed in a rule")
        if isinstance(node.func, ast.Attribute):
            return self._method_call(node, node.func, depth)
        if not isinstance(node.func, ast.Name):
            raise _refuse(node, "a rule may call only the rule helpers and the safe builtins by name")
        name = _checked_name(node.func, node.func.id)
        if name in REFUSED_CALLS:
            raise _refuse(node.func, f"{name}() is not a function rules may call: it {REFUSED_CALLS[name]} (a rule only computes)")
        if name not in self.functions:
            raise _refuse(node.func, f"{name}() is not a function rules may call ({_function_list(self.functions)})")
        self.called.add(name)
        if name in CONDITION_FUNCTIONS:
            args = self._condition_args(node, name)
        else:
            args = [
                self._function_argument(argument, depth)
                if index == 0 and name in FUNCTION_ARGUMENTS and isinstance(argument, ast.Lambda)
                else self.compile(argument, depth)
                for index, argument in enumerate(node.args)
            ]
        kwargs = [(k.arg, self._keyword(name, k, depth)) for k in node.keywords if k.arg]

        def run(frame: Frame) -> Any:
            function = frame.lookup(name)
            if not isinstance(function, RuleFunction):  # a value of the conversation shadows it
                raise TypeError(f"'{type(function).__name__}' object is not callable")
            frame.budget.check_time()
            return function.call(frame, [arg(frame) for arg in args], {key: value(frame) for key, value in kwargs})

        return run

    def _keyword(self, function: str, keyword: ast.keyword, depth: int) -> Evaluator:
        if isinstance(keyword.value, ast.Lambda) and keyword.arg == "key" and function in KEY_FUNCTIONS:
            return self._function_argument(keyword.value, depth)
        return self.compile(keyword.value, depth)

    def _function_argument(self, node: ast.Lambda, depth: int) -> Evaluator:
        arguments = node.args
        if arguments.posonlyargs or arguments.vararg or arguments.kwonlyargs or arguments.kwarg or arguments.defaults:
            raise _refuse(node, "a lambda in a rule takes plain parameters only (lambda x: ...)")
        params = tuple(_checked_name(node, arg.arg) for arg in arguments.args)
        body = self.compile(node.body, depth)
        return lambda frame: RuleLambda(params, body, frame)

    def _condition_args(self, node: ast.Call, name: str) -> list[Evaluator]:
        if len(node.args) != 1 or node.keywords or not isinstance(node.args[0], ast.Constant) or not isinstance(node.args[0].value, str):
            raise _refuse(node, f"{name}() takes one condition, written as a string literal: {name}('price > 10')")
        literal = node.args[0]
        text = str(literal.value)
        try:
            condition = compile_expression(text, self.functions)
        except ExpressionRefused as exc:
            # Where the problem is inside the string: the string's own position, then the offset
            # in its first line (the quote and the indentation the expression had stripped).
            line = literal.lineno + exc.line - 1
            column = literal.col_offset + 1 + (exc.column + _leading(text) if exc.line == 1 else exc.column)
            raise ExpressionRefused(f"in the condition of {name}(): {exc.reason}", line, column) from None
        self.called.update(condition.functions)
        return [lambda frame: condition]

    def _method_call(self, node: ast.Call, func: ast.Attribute, depth: int) -> Evaluator:
        owner_of = self.compile(func.value, depth)  # first, so a problem in it is the one named
        method = _checked_attribute(func)
        if method in CHANGING_METHODS:
            raise _refuse(func, f".{method}() changes a value in place: a rule only computes (build a new value: xs + [x], sorted(xs))")
        if method not in METHOD_NAMES:
            raise _refuse(
                func,
                f".{method}() is not a method rules may call (the methods of text, numbers, lists, mappings, sets and dates that only compute)",
            )
        args = [self.compile(argument, depth) for argument in node.args]
        kwargs = [(k.arg, self.compile(k.value, depth)) for k in node.keywords if k.arg]

        def run(frame: Frame) -> Any:
            owner = owner_of(frame)
            if isinstance(owner, RuleFunction) and owner.python_type is not None:  # str.lower(x): the method of the kind
                bound: RuleFunction = MethodOfKind(owner.python_type, method)
                return bound.call(frame, [arg(frame) for arg in args], {key: value(frame) for key, value in kwargs})
            return call_method(frame.budget, owner, method, [arg(frame) for arg in args], {key: value(frame) for key, value in kwargs})

        return run

    # -- comprehensions ---------------------------------------------------------------------------

    def _generators(
        self, node: ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp, depth: int
    ) -> Callable[[Frame], Iterator[Frame]]:
        compiled = []
        for generator in node.generators:
            if generator.is_async:
                raise _refuse(node, "async comprehensions are not allowed in a rule")
            compiled.append(
                (_assigner(generator.target), self.compile(generator.iter, depth), [self.compile(test, depth) for test in generator.ifs])
            )

        def frames(frame: Frame) -> Iterator[Frame]:
            inner = frame.child()
            first = iter(compiled[0][1](frame))  # evaluated at once, in the enclosing scope, as Python does

            def level(index: int, iterable: Any) -> Iterator[Frame]:
                assign, _, tests = compiled[index]
                for item in iterable:
                    frame.budget.tick()
                    assign(inner, item)
                    if all(test(inner) for test in tests):
                        if index + 1 == len(compiled):
                            yield inner
                        else:
                            yield from level(index + 1, compiled[index + 1][1](inner))

            return level(0, first)

        return frames

    def _ListComp(self, node: ast.ListComp, depth: int) -> Evaluator:
        frames, element = self._generators(node, depth), self.compile(node.elt, depth)
        return lambda frame: check_size([element(inner) for inner in frames(frame)])

    def _SetComp(self, node: ast.SetComp, depth: int) -> Evaluator:
        frames, element = self._generators(node, depth), self.compile(node.elt, depth)
        return lambda frame: {_hashed(frame, element(inner)) for inner in frames(frame)}

    def _DictComp(self, node: ast.DictComp, depth: int) -> Evaluator:
        frames = self._generators(node, depth)
        key, value = self.compile(node.key, depth), self.compile(node.value, depth)
        return lambda frame: {_hashed(frame, key(inner)): value(inner) for inner in frames(frame)}

    def _GeneratorExp(self, node: ast.GeneratorExp, depth: int) -> Evaluator:
        frames, element = self._generators(node, depth), self.compile(node.elt, depth)
        return lambda frame: (element(inner) for inner in frames(frame))


def _compare_in(a: Any, b: Any) -> bool:
    return a in b


def _compare_not_in(a: Any, b: Any) -> bool:
    return a not in b


_COMPARISONS: dict[str, Callable[[Any, Any], Any]] = {
    "Eq": lambda a, b: a == b,
    "NotEq": lambda a, b: a != b,
    "Lt": lambda a, b: a < b,
    "LtE": lambda a, b: a <= b,
    "Gt": lambda a, b: a > b,
    "GtE": lambda a, b: a >= b,
    "Is": lambda a, b: a is b,
    "IsNot": lambda a, b: a is not b,
    "In": _compare_in,
    "NotIn": _compare_not_in,
}


def _checked_name(node: ast.AST, name: str) -> str:
    if name.startswith("__"):
        raise _refuse(node, f"the name {name} is not allowed in a rule (names starting with '__' are Python's internals)")
    return name


def _checked_attribute(node: ast.Attribute) -> str:
    if node.attr.startswith("_"):
        raise _refuse(node, f"the attribute .{node.attr} is not allowed in a rule (attributes starting with '_' are internals)")
    return node.attr


def _assigner(target: ast.expr) -> Callable[[Frame, Any], None]:
    """How a comprehension's `for TARGET in ...` binds one item: a name, or names unpacked."""
    if isinstance(target, ast.Name):
        name = _checked_name(target, target.id)

        def bind(frame: Frame, value: Any) -> None:
            assert frame.names is not None
            frame.names[name] = value

        return bind
    if isinstance(target, ast.Tuple | ast.List):
        parts = [_assigner(element) for element in target.elts]
        if any(isinstance(element, ast.Starred) for element in target.elts):
            raise _refuse(target, "'*' unpacking is not allowed in a rule")

        def unpack(frame: Frame, value: Any) -> None:
            items = []
            for item in value:
                items.append(item)
                if len(items) > len(parts):
                    raise ValueError(f"too many values to unpack (expected {len(parts)})")
            if len(items) < len(parts):
                raise ValueError(f"not enough values to unpack (expected {len(parts)}, got {len(items)})")
            for part, item in zip(parts, items, strict=True):
                part(frame, item)

        return unpack
    raise _refuse(target, "a comprehension binds names only (for x in ..., for k, v in ...)")


def _hashed(frame: Frame, value: Any) -> Any:
    """`value`, its hash charged first (a set's item, a mapping's key)."""
    charge_walk(frame.budget, value, "hashing")
    return value


class MethodOfKind(RuleFunction):
    """`str.lower` and the like: the method of a kind of value, called with the value first."""

    def __init__(self, kind: type, method: str) -> None:
        self.kind = kind
        self.method = method
        self.name = f"{kind.__name__}.{method}"

    def call(self, frame: Frame, args: list[Any], kwargs: dict[str, Any]) -> Any:
        if not args or not isinstance(args[0], self.kind):
            raise TypeError(f"{self.name}() needs a {self.kind.__name__} first")
        return call_method(frame.budget, args[0], self.method, args[1:], kwargs)


def _function_list(functions: frozenset[str]) -> str:
    return "the functions are " + ", ".join(sorted(functions))


def _leading(text: str) -> int:
    """Characters `strip()` takes off the start of an expression's first line."""
    return len(text) - len(text.lstrip())
