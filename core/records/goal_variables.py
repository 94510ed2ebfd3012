"""Goal variables: `name: {function, type, data}` written among a profile's goals.

A variable's `function:` says how conversations walk its values (parley.core.specs.expansion);
its `data:` comes in five forms, read the way Sensei's code reads them:
- a plain list, whose items may include `any(prompt)` for a model to generate later; kept as
  written (an item listed twice counts twice); a string variable takes text only;
- an int range `{min, max, step}`: min, min+step, ... below max, then max itself (numpy's
  `arange(min, max, step)` plus max, so 1..6 step 2 is 1, 3, 5, 6); without step, min up to
  max - 1 (max left out);
- a float range `{min, max, step}` (the same: arange plus max) or `{min, max, linspace: N}`;
- a list function `{file, function_name, args}` and a date generator `{date: {...}}`, which only
  the reader of the file can run (`VariableReading`: parley.core.specs.variables, .date_data).
The goals list itself is read here too (`read_goals`): texts, variables, and the checks across
them (`{{name}}` placeholders, forward() chains).
"""

# No `from __future__ import annotations` here: annotations evaluated as each class is made spare
# pydantic evaluating every annotation string again (a sixth of this module's import).

import datetime
import math
import re
from abc import abstractmethod
from typing import Annotated, Any, Literal, cast, get_args

from pydantic import BeforeValidator, Field

from parley.core.records.yaml_fields import (
    Keyed,
    Problems,
    Reading,
    SourceLocation,
    YamlRecord,
    below,
    check_keys,
    derived,
    describe,
    did_you_mean,
    expect_mapping,
    fail,
    integer,
    is_int,
    is_number,
    read_integer,
    read_number,
    read_text,
)

VariableType = Literal["int", "float", "string"]
FunctionKind = Literal["default", "random", "another", "forward"]
DataForm = Literal["list", "range", "list_function", "date"]
VARIABLE_TYPES: tuple[str, ...] = get_args(VariableType)
FUNCTIONS = ("default()", "random()", "another()", "forward()")
Scalar = int | float | str
MAX_VALUES = 10_000
"""Values of one variable."""

VARIABLE_NAME_RE = re.compile(r"^[^\W\d][\w-]*$")
PLACEHOLDER_RE = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")
_FUNCTION_RE = re.compile(r"^\s*([A-Za-z_][\w ]*?)\s*\(\s*(.*?)\s*\)\s*$", re.S)
_ANY_RE = re.compile(r"^\s*any\s*\((.*)\)\s*$", re.S)
_FLOAT_DIGITS = 10  # 0.1 + 0.2 is written 0.3
_DATA_FORMS = "data must be a list, a min/max range, a list function (file:) or a date generator (date:)"


class VariableReading(Reading):
    """What goal variables ask of the reader of a profile file (parley.core.specs.profile_validation)."""

    today: datetime.date
    """The date `>today` counts from: the profile's `world.today` when it pins one."""

    @abstractmethod
    def list_function(self, data: dict[Any, Any], var_type: VariableType) -> list[Scalar]:
        """The values of the list function `data` (`{file, function_name, args}`) names."""
        raise NotImplementedError

    @abstractmethod
    def dates(self, data: Any, *, seed: str) -> list[str]:
        """The dates the generator `data` (what `date:` holds) makes; `seed` makes them repeatable."""
        raise NotImplementedError


class VariableFunction(YamlRecord):
    """A parsed `function:` of a goal variable, read from text such as `forward(drink)`.

    `count` is N of `random(N)`; `rand` is set for `random(rand)`; `nests` names the variable
    a `forward(x)` nests (x turns fastest, like the last wheel of an odometer).
    """

    kind: FunctionKind
    text: str
    """The function as written (`default()` when the profile left it blank)."""
    count: Annotated[int | None, integer(1, optional=True)] = None
    rand: bool = False
    nests: str | None = None

    @classmethod
    def read_yaml(cls, data: Any, handler: Any, reading: Reading) -> Any:
        return parse_function(data)


def parse_function(value: Any) -> VariableFunction:
    """`default()`, `random()`, `random(N)`, `random(rand)`, `another()`, `forward()` or
    `forward(var)`; blank means default(), as in Sensei. Anything else gets a suggestion."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return VariableFunction(kind="default", text="default()")
    written = read_text(value, "a function such as forward()").strip()
    match = _FUNCTION_RE.match(written)
    name = match.group(1).strip() if match else written
    if not match or f"{name}()" not in FUNCTIONS:
        guess = f"{name}()" if match else written
        fail(f"unknown function '{written}'{did_you_mean(guess, FUNCTIONS) or '; use one of ' + ', '.join(FUNCTIONS)}")
    arg = match.group(2).strip()
    if name in ("default", "another"):
        if arg:
            fail(f"{name}() takes no argument, got '{arg}'")
        return VariableFunction(kind="default" if name == "default" else "another", text=written)
    if name == "random":
        if not arg:
            return VariableFunction(kind="random", text=written, count=1)
        if arg == "rand":
            return VariableFunction(kind="random", text=written, rand=True)
        if re.fullmatch(r"[+-]?\d+", arg):
            if int(arg) < 1:
                fail(f"random({int(arg)}) must pick at least 1 item")
            return VariableFunction(kind="random", text=written, count=int(arg))
        fail(f"random() takes a number or 'rand', got '{arg}'{did_you_mean(arg, ['rand'])}")
    if not arg:
        return VariableFunction(kind="forward", text=written)
    if not VARIABLE_NAME_RE.match(arg):
        fail(f"forward() takes the name of another variable, got '{arg}'")
    return VariableFunction(kind="forward", text=written, nests=arg)


def _variable_type(value: Any) -> VariableType:
    written = read_text(value, "a type (int, float or string)")
    word = written.strip().lower()
    if word == "str":
        fail("unknown type 'str'; write string (Sensei's code takes int, float and string only)")
    if word not in VARIABLE_TYPES:
        fail(f"unknown type '{written}'{did_you_mean(word, VARIABLE_TYPES) or '; use int, float or string'}")
    return cast(VariableType, word)


def any_prompt(item: Any) -> str | None:
    """The prompt of an `any(...)` data item, or None for an ordinary item."""
    if isinstance(item, str):
        match = _ANY_RE.match(item)
        if match:
            return match.group(1).strip()
    return None


def coerce(value: Any, var_type: str, *, lenient: bool = False) -> Scalar | None:
    """`value` as a value of `var_type`, or None if it is not one.

    YAML items are checked strictly (an int variable takes ints only). Values from list
    functions and generated any() items are `lenient`: numeric text like "3" is parsed.
    """
    if isinstance(value, bool) or value is None:
        return None
    if var_type == "int":
        if is_int(value):
            return int(value)
        if lenient and isinstance(value, float) and value.is_integer():
            return int(value)
        if lenient and isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d+\s*", value):
            return int(value)
        return None
    if var_type == "float":
        if is_number(value):
            return float(value)
        if lenient and isinstance(value, str):
            try:
                number = float(value)
            except ValueError:
                return None
            return number if math.isfinite(number) else None
        return None
    if isinstance(value, str):
        return str(value)
    if is_number(value):  # `- 10` under a string variable reads as the text "10"
        return str(value)
    return None


def type_phrase(var_type: str) -> str:
    return {"int": "an integer", "float": "a number", "string": "text"}[var_type]


def _variable_data(value: Any, var_type: VariableType, name: str, reading: VariableReading) -> tuple[list[Scalar], list[str], DataForm]:
    """(values, any() prompts, form) of a variable's `data:` (see the module doc)."""
    if isinstance(value, list):
        return _list_data(value, var_type, reading)
    if isinstance(value, dict) and "file" in value:
        return reading.list_function(value, var_type), [], "list_function"
    if isinstance(value, dict) and "date" in value:
        if var_type != "string":
            fail(f"the date generator makes text: give the variable type string, not {var_type}", at=("date",), at_key=True)
        if len(value) > 1:
            others = ", ".join(str(k) for k in value if k != "date")
            reading.warn(value, (), f"{others} beside date: is ignored, as Sensei ignores it", at_key=True)
        return below(("date",), reading.dates, value["date"], seed=name), [], "date"
    if isinstance(value, dict) and ("min" in value or "max" in value):
        return _range_data(value, var_type, reading), [], "range"
    if isinstance(value, dict):
        fail(f"{_DATA_FORMS}, got a mapping with keys {', '.join(str(k) for k in value) or 'none'}", at_key=True)
    fail(f"{_DATA_FORMS}, got {describe(value)}", at_key=value is None)


def _list_data(items: list[Any], var_type: str, reading: Reading) -> tuple[list[Scalar], list[str], DataForm]:
    if not items:
        fail("data must not be empty", at_key=True)
    values: list[Scalar] = []
    prompts: list[str] = []
    problems = Problems()
    for i, item in enumerate(items):
        prompt = any_prompt(item)
        if prompt is not None:
            if not prompt:
                problems.add("any() needs a description of the items to generate, e.g. any(3 soda drinks)", at=(i,))
            else:
                prompts.append(prompt)
            continue
        value = coerce(item, var_type) if var_type != "string" or isinstance(item, str) else None
        if value is None:
            quote = " (quote it: Sensei's code takes text only in a string list)" if is_number(item) else ""
            problems.add(f"expected {type_phrase(var_type)} for type {var_type}, got {describe(item)}{quote}", at=(i,))
            continue
        if value in values:
            reading.warn(items, (i,), f"{describe(value)} is listed twice: it counts twice, as in Sensei")
        values.append(value)
    problems.raise_if_any()
    return values, prompts, "list"


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _check_stepped(problems: Problems, low: float | None, high: float | None, step: float | None) -> None:
    """The bounds and the step of a stepped range as read (None: unreadable, its problem
    already taken): raises the problems found so far, or min above max, or a step not above 0."""
    if low is None or high is None or step is None:
        problems.raise_if_any()
        return
    if low > high:
        problems.stop(f"min ({_num(low)}) is greater than max ({_num(high)})", at=("min",))
    if step <= 0:
        problems.stop(f"step must be greater than 0, got {_num(step)}", at=("step",))


def _range_data(data: dict[Any, Any], var_type: str, reading: Reading) -> list[Scalar]:
    if var_type == "string":
        fail("a min/max range needs type int or float, not string", at_key=True)
    problems = Problems()
    if not check_keys(data, ("min", "max", "step", "linspace"), reading, problems, required=("min", "max")):
        problems.raise_if_any()
    if "step" in data and "linspace" in data:
        problems.stop("give only one of step and linspace", at_key=True)
    if var_type == "int":
        if "linspace" in data:
            problems.stop("linspace is for float ranges; use step with type int", at=("linspace",), at_key=True)
        first = problems.check(read_integer, data["min"], at=("min",))
        last = problems.check(read_integer, data["max"], at=("max",))
        by = problems.check(read_integer, data["step"], at=("step",)) if "step" in data else 1
        _check_stepped(problems, first, last, by)
        values: list[Scalar] = list(range(first, last, by))
        if "step" in data:
            values.append(last)  # Sensei: arange(min, max, step), then max
        if len(values) > MAX_VALUES:
            problems.stop(f"the range has {len(values)} values; at most {MAX_VALUES}", at_key=True)
        if not values:
            problems.stop(f"min {first} to max {last} without a step leaves no value: max is left out", at_key=True)
        problems.raise_if_any()
        return values
    low = problems.check(read_number, data["min"], at=("min",))
    high = problems.check(read_number, data["max"], at=("max",))
    if "step" not in data and "linspace" not in data:
        problems.stop("a float range needs step or linspace", at_key=True)
    if "linspace" in data:
        points = problems.check(read_integer, data["linspace"], at=("linspace",))
        if low is None or high is None or points is None:
            problems.raise_if_any()
        if points < 1:
            problems.stop(f"linspace needs at least 1 point, got {points}", at=("linspace",))
        if low > high:
            problems.stop(f"min ({_num(low)}) is greater than max ({_num(high)})", at=("min",))
        if points > MAX_VALUES:
            problems.stop(f"linspace gives {points} values; at most {MAX_VALUES}", at=("linspace",))
        problems.raise_if_any()
        if points == 1:
            return [low]
        return [round(low + (high - low) * i / (points - 1), _FLOAT_DIGITS) for i in range(points)]
    step = problems.check(read_number, data["step"], at=("step",))
    _check_stepped(problems, low, high, step)
    count = max(0, math.ceil((high - low) / step))  # numpy's arange length
    if count + 1 > MAX_VALUES:
        problems.stop(f"the range has {count + 1} values; at most {MAX_VALUES}", at_key=True)
    problems.raise_if_any()
    stepped: list[Scalar] = [round(low + i * step, _FLOAT_DIGITS) for i in range(count)]
    return [*stepped, high]


class Variable(YamlRecord):
    """A goal variable with its data resolved to concrete values, read from
    `name: {function, type, data}` among the goals.

    `values` come from a plain list, a min/max range, a list function or the date generator.
    `any_prompts` are the `any(...)` items still waiting for a model to generate them (see
    `parley.core.specs.expansion.resolve_any_items`); an empty list means nothing is pending.
    """

    yaml_what = "a variable definition with function, type and data"
    yaml_sensei = True
    yaml_entry = True

    name: str = derived()
    """The variable's key in the goals list."""
    function: VariableFunction
    type: Annotated[VariableType, BeforeValidator(_variable_type)]
    values: list[Scalar] = Field(validation_alias="data")
    any_prompts: list[str] = derived(default_factory=list)
    data_form: DataForm = derived("list")
    location: SourceLocation = derived()
    function_location: SourceLocation = derived()
    data_location: SourceLocation = derived()

    @classmethod
    def read_yaml(cls, data: Any, handler: Any, reading: Reading) -> Any:
        assert isinstance(data, Keyed)  # read among the goals (see UserSection)
        name, body = data.name, data.body
        reading = VariableReading.of(reading, "a goal variable")
        mapping = expect_mapping(body, cls.yaml_what)
        problems = Problems()
        if not check_keys(mapping, cls.yaml_keys(), reading, problems, sensei=True, required=cls.yaml_keys()):
            problems.raise_if_any()
        var_type = problems.check(_variable_type, mapping["type"], at=("type",))
        function = problems.check(parse_function, mapping["function"], at=("function",))
        resolved = problems.check(_variable_data, mapping["data"], var_type, name, reading, at=("data",)) if var_type else None
        problems.raise_if_any()
        assert resolved is not None and function is not None  # else a problem was raised
        values, prompts, form = resolved
        if function.kind == "random" and function.count and not prompts and function.count > len(values):
            reading.warn(
                mapping,
                ("function",),
                f"{function.text} picks {function.count} items but '{name}' has only {len(values)}: "
                f"every conversation gets all {len(values)}, in a random order, as in Sensei",
            )
        return handler(
            {
                "name": name,
                "type": var_type,
                "function": function,
                "values": values,
                "any_prompts": prompts,
                "data_form": form,
                "location": reading.location(mapping, at_key=True),
                "function_location": reading.location(mapping, ("function",)),
                "data_location": reading.location(mapping, ("data",), at_key=True),
            }
        )


# -- the goals list -------------------------------------------------------------------------------------


def read_goals(value: Any, reading: Reading) -> tuple[list[str], list[Variable]]:
    """The goal texts and the variables defined among them; problems are raised below `value`."""
    if not isinstance(value, list):
        fail(f"expected a list of goals and variable definitions, got {describe(value)}", at_key=value is None)
    if not value:
        fail("must not be empty", at_key=True)
    problems = Problems()
    texts: list[tuple[int, str]] = []
    variables: list[Variable] = []
    declared: dict[str, dict[Any, Any]] = {}  # name -> the goal item that defines it
    functions: dict[str, tuple[VariableFunction, tuple[Any, ...]]] = {}
    for i, item in enumerate(value):
        if isinstance(item, str):
            goal = problems.check(read_text, item, "a goal", at=(i,))
            if goal is not None:
                texts.append((i, goal))
        elif isinstance(item, dict) and item:
            for name, body in item.items():
                if not isinstance(name, str) or not VARIABLE_NAME_RE.match(name):
                    reason = f"variable name {describe(name)} must start with a letter and hold only letters, digits, _ and -"
                    problems.add(reason, at=(i, name), at_key=True)
                    continue
                if name in declared:
                    first = reading.location(declared[name], (name,), at_key=True).line
                    problems.add(f"variable '{name}' is defined twice (first at line {first})", at=(i, name), at_key=True)
                    continue
                declared[name] = item
                function = _function_alone(body)
                if function is not None:
                    functions[name] = (function, (i, name, "function"))
                variable = problems.check(Variable.model_validate, Keyed(name, body), context=reading, at=(i, name))
                if variable is not None:
                    variables.append(variable)
        else:
            reason = f"a goal must be text or a variable definition (name: function/type/data), got {describe(item)}"
            problems.add(reason, at=(i,))
    if not texts and not problems:
        problems.add("needs at least one goal text besides variable definitions", at_key=True)
    _check_placeholders(value, texts, declared, reading)
    _check_forward(functions, declared, problems)
    problems.raise_if_any()
    return [goal for _, goal in texts], variables


def _function_alone(body: Any) -> VariableFunction | None:
    """A variable's function read on its own, for the forward() checks: a variable whose data
    is wrong is still checked (one missing a key is not)."""
    if not isinstance(body, dict) or any(key not in body for key in ("function", "type", "data")):
        return None
    try:
        return parse_function(body["function"])
    except ValueError:  # reported where the variable is read
        return None


def _check_placeholders(goals: list[Any], texts: list[tuple[int, str]], declared: dict[str, dict[Any, Any]], reading: Reading) -> None:
    """Warnings: Sensei leaves a {{name}} with no variable as it is written, and a variable no
    goal uses still takes part in the forward() combinations."""
    used: set[str] = set()
    for i, goal in texts:
        for match in PLACEHOLDER_RE.finditer(goal):
            name = match.group(1)
            used.add(name)
            if name not in declared:
                hint = did_you_mean(name, declared) or (
                    f"; defined: {', '.join(declared)}" if declared else "; define it in the goals list"
                )
                reading.warn(
                    goals, (i,), f"goal uses {{{{{name}}}}} but no variable '{name}' is defined{hint}; it stays as written, as in Sensei"
                )
    for name, item in declared.items():
        if name not in used:
            reading.warn(item, (name,), f"variable '{name}' is defined but no goal uses {{{{{name}}}}}", at_key=True)


def _check_forward(functions: dict[str, tuple[VariableFunction, tuple[Any, ...]]], declared: dict[str, Any], problems: Problems) -> None:
    """forward(x) must name a defined forward() variable, and nesting must not loop."""
    for function, at in functions.values():
        target = function.nests
        if target is None:
            continue
        if target not in declared:
            problems.add(f"{function.text} names unknown variable '{target}'{did_you_mean(target, declared)}", at=at)
        elif target in functions and functions[target][0].kind != "forward":
            problems.add(
                f"{function.text} nests '{target}', whose function is {functions[target][0].text}; only forward() variables can be nested",
                at=at,
            )
    reported: set[frozenset[str]] = set()
    for name in functions:
        chain = [name]
        current = functions[name][0].nests
        while current is not None and current in functions and current not in chain:
            chain.append(current)
            current = functions[current][0].nests
        if current is None or current not in chain:
            continue
        cycle = chain[chain.index(current) :]
        if frozenset(cycle) in reported:
            continue
        reported.add(frozenset(cycle))
        first = next(n for n in functions if n in cycle)  # report at the first one defined
        start = cycle.index(first)
        ordered = cycle[start:] + cycle[:start] + [first]
        problems.add(f"forward() cycle: {' -> '.join(ordered)}; a nesting chain must end in a plain forward()", at=functions[first][1])
