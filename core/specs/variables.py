"""Goal variables: parsing `function:` and turning `data:` into concrete values.

Data comes in five forms, read the way Sensei's code reads them:
- a plain list, whose items may include `any(prompt)` for a model to generate later; kept as
  written (an item listed twice counts twice); a string variable takes text only;
- an int range `{min, max, step}`: min, min+step, ... below max, then max itself (numpy's
  `arange(min, max, step)` plus max, so 1..6 step 2 is 1, 3, 5, 6); without step, min up to
  max - 1 (max left out);
- a float range `{min, max, step}` (the same: arange plus max) or `{min, max, linspace: N}`;
- a list function `{file, function_name, args}`: a Python file run once at load; `args` is a
  list of positional arguments (mappings among them are keyword arguments) or one value;
- a date generator `{date: {...}}` (see `parley.core.specs.date_data`).
Files are found as `parley.core.specs.paths` says (the working directory first, as Sensei).
"""

from __future__ import annotations

import datetime
import hashlib
import importlib.util
import inspect
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from parley.core.records import Scalar, VariableFunction
from parley.core.specs.date_data import date_values
from parley.core.specs.paths import ProfilePaths
from parley.core.specs.profile_validation import Checker, Node, describe, did_you_mean, is_int, is_number, plain_value

FUNCTIONS = ("default()", "random()", "another()", "forward()")
MAX_VALUES = 10_000
_FUNCTION_RE = re.compile(r"^\s*([A-Za-z_][\w ]*?)\s*\(\s*(.*?)\s*\)\s*$", re.S)
_ANY_RE = re.compile(r"^\s*any\s*\((.*)\)\s*$", re.S)
VARIABLE_NAME_RE = re.compile(r"^[^\W\d][\w-]*$")
_FLOAT_DIGITS = 10  # 0.1 + 0.2 is written 0.3


@dataclass(frozen=True)
class DataContext:
    """What reading a variable's data needs besides the YAML: where files are, the date that
    `>today` counts from, and the variable's name (it seeds the date generator)."""

    paths: ProfilePaths
    today: datetime.date
    name: str


def parse_function(checker: Checker, node: Node) -> VariableFunction | None:
    """Parse `default()`, `random()`, `random(N)`, `random(rand)`, `another()`, `forward()` or
    `forward(var)`; report anything else with a suggestion."""
    text = checker.string(node, what="a function such as forward()")
    if text is None:
        return None
    text = text.strip()
    match = _FUNCTION_RE.match(text)
    name = match.group(1).strip() if match else text
    if not match or f"{name}()" not in FUNCTIONS:
        guess = f"{name}()" if match else text
        hint = did_you_mean(guess, FUNCTIONS) or f"; use one of {', '.join(FUNCTIONS)}"
        checker.error(node, f"unknown function '{text}'{hint}")
        return None
    arg = match.group(2).strip()
    if name in ("default", "another"):
        if arg:
            checker.error(node, f"{name}() takes no argument, got '{arg}'")
            return None
        return VariableFunction(kind=name, text=text)
    if name == "random":
        if not arg:
            return VariableFunction(kind="random", text=text, count=1)
        if arg == "rand":
            return VariableFunction(kind="random", text=text, rand=True)
        if re.fullmatch(r"[+-]?\d+", arg):
            count = int(arg)
            if count < 1:
                checker.error(node, f"random({count}) must pick at least 1 item")
                return None
            return VariableFunction(kind="random", text=text, count=count)
        checker.error(node, f"random() takes a number or 'rand', got '{arg}'{did_you_mean(arg, ['rand'])}")
        return None
    # forward
    if not arg:
        return VariableFunction(kind="forward", text=text)
    if not VARIABLE_NAME_RE.match(arg):
        checker.error(node, f"forward() takes the name of another variable, got '{arg}'")
        return None
    return VariableFunction(kind="forward", text=text, nests=arg)


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


def _type_phrase(var_type: str) -> str:
    return {"int": "an integer", "float": "a number", "string": "text"}[var_type]


def parse_data(checker: Checker, node: Node, var_type: str, context: DataContext) -> tuple[list[Scalar], list[str], str] | None:
    """(values, any() prompts, form) for a variable's `data:`; None after reporting errors."""
    if node.is_seq:
        return _list_data(checker, node, var_type)
    if node.is_map and node.has("file"):
        values = _list_function_data(checker, node, var_type, context.paths)
        return None if values is None else (values, [], "list_function")
    if node.is_map and node.has("date"):
        if var_type != "string":
            checker.error(node.child("date"), f"the date generator makes text: give the variable type string, not {var_type}", at_key=True)
            return None
        if len(node.value) > 1:
            others = ", ".join(str(k) for k in node.value if k != "date")
            checker.warn(node, f"{others} beside date: is ignored, as Sensei ignores it", at_key=True)
        dates = date_values(checker, node.child("date"), today=context.today, seed=context.name)
        return None if dates is None else (list(dates), [], "date")
    if node.is_map and (node.has("min") or node.has("max")):
        values = _range_data(checker, node, var_type)
        return None if values is None else (values, [], "range")
    if node.is_map:
        keys = ", ".join(str(k) for k in node.value) or "none"
        checker.error(
            node,
            f"data must be a list, a min/max range, a list function (file:) or a date generator (date:), got a mapping with keys {keys}",
            at_key=True,
        )
        return None
    checker.error(
        node,
        f"data must be a list, a min/max range, a list function (file:) or a date generator (date:), got {describe(node.value)}",
        at_key=node.value is None,
    )
    return None


def _list_data(checker: Checker, node: Node, var_type: str) -> tuple[list[Scalar], list[str], str] | None:
    if not node.value:
        checker.error(node, "data must not be empty", at_key=True)
        return None
    values: list[Scalar] = []
    prompts: list[str] = []
    ok = True
    for item in node.items():
        prompt = any_prompt(item.value)
        if prompt is not None:
            if not prompt:
                checker.error(item, "any() needs a description of the items to generate, e.g. any(3 soda drinks)")
                ok = False
            else:
                prompts.append(prompt)
            continue
        value = coerce(item.value, var_type) if var_type != "string" or isinstance(item.value, str) else None
        if value is None:
            quote = " (quote it: Sensei's code takes text only in a string list)" if is_number(item.value) else ""
            checker.error(item, f"expected {_type_phrase(var_type)} for type {var_type}, got {describe(item.value)}{quote}")
            ok = False
            continue
        if value in values:
            checker.warn(item, f"{describe(value)} is listed twice: it counts twice, as in Sensei")
        values.append(value)
    return (values, prompts, "list") if ok else None


def _range_data(checker: Checker, node: Node, var_type: str) -> list[Scalar] | None:
    if var_type == "string":
        checker.error(node, "a min/max range needs type int or float, not string", at_key=True)
        return None
    allowed = ("min", "max", "step", "linspace")
    if not checker.mapping(node, allowed, required=("min", "max")):
        return None
    if "min" not in node.value or "max" not in node.value:
        return None
    if "step" in node.value and "linspace" in node.value:
        checker.error(node, "give only one of step and linspace", at_key=True)
        return None
    if var_type == "int":
        if "linspace" in node.value:
            checker.error(node.child("linspace"), "linspace is for float ranges; use step with type int", at_key=True)
            return None
        first, last = checker.integer(node.child("min")), checker.integer(node.child("max"))
        by_node = node.child("step") if "step" in node.value else None
        by = checker.integer(by_node) if by_node is not None else 1
        if first is None or last is None or by is None:
            return None
        if not _range_ok(checker, node, by_node, first, last, by):
            return None
        values: list[Scalar] = list(range(first, last, by))
        if by_node is not None:
            values.append(last)  # Sensei: arange(min, max, step), then max
        if len(values) > MAX_VALUES:
            checker.error(node, f"the range has {len(values)} values; at most {MAX_VALUES}", at_key=True)
            return None
        if not values:
            checker.error(node, f"min {first} to max {last} without a step leaves no value: max is left out", at_key=True)
        return values or None
    low, high = checker.number(node.child("min")), checker.number(node.child("max"))
    if "step" not in node.value and "linspace" not in node.value:
        checker.error(node, "a float range needs step or linspace", at_key=True)
        return None
    if "linspace" in node.value:
        step_node = node.child("linspace")
        points = checker.integer(step_node)
        if low is None or high is None or points is None:
            return None
        if points < 1:
            checker.error(step_node, f"linspace needs at least 1 point, got {points}")
            return None
        if low > high:
            checker.error(node.child("min"), f"min ({_num(low)}) is greater than max ({_num(high)})")
            return None
        if points > MAX_VALUES:
            checker.error(step_node, f"linspace gives {points} values; at most {MAX_VALUES}")
            return None
        if points == 1:
            return [low]
        return [round(low + (high - low) * i / (points - 1), _FLOAT_DIGITS) for i in range(points)]
    step_node = node.child("step")
    step = checker.number(step_node)
    if low is None or high is None or step is None:
        return None
    if not _range_ok(checker, node, step_node, low, high, step):
        return None
    count = max(0, math.ceil((high - low) / step))  # numpy's arange length
    if count + 1 > MAX_VALUES:
        checker.error(node, f"the range has {count + 1} values; at most {MAX_VALUES}", at_key=True)
        return None
    stepped: list[Scalar] = [round(low + i * step, _FLOAT_DIGITS) for i in range(count)]
    return [*stepped, high]


def _range_ok(checker: Checker, node: Node, step_node: Node | None, low: Any, high: Any, step: Any) -> bool:
    if low > high:
        checker.error(node.child("min"), f"min ({_num(low)}) is greater than max ({_num(high)})")
        return False
    if step <= 0:
        checker.error(step_node or node, f"step must be greater than 0, got {_num(step)}")
        return False
    return True


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


# -- list functions ----------------------------------------------------------------------------


def _list_function_data(checker: Checker, node: Node, var_type: str, paths: ProfilePaths) -> list[Scalar] | None:
    if not checker.mapping(node, ("file", "function_name", "args"), required=("file",)):
        return None
    file_node = node.child("file")
    file_text = checker.string(file_node, what="the path of a .py file")
    if file_text is None:
        return None
    found = paths.find(file_text)
    if found is None:
        places = ", ".join(paths.places()) or "nowhere"
        checker.error(file_node, f"list function file '{file_text}' not found (looked in {places})")
        return None
    path = found.path
    checker.note(file_node, f"list function file '{file_text}' read from {path} ({found.where})")
    try:
        module = _import_file(path)
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - any failure of user code becomes a located error
        checker.error(file_node, f"cannot import list function file '{file_text}': {type(exc).__name__}: {exc}")
        return None

    name_node = node.child("function_name") if node.has("function_name") else node
    function = _pick_function(checker, module, name_node, node.has("function_name"), file_text, path)
    if function is None:
        return None

    args, kwargs = _call_args(node.child("args").value if node.has("args") else None, paths)
    label = f"{function.__name__}()"
    try:
        result = function(*args, **kwargs)
    except (Exception, SystemExit) as exc:  # noqa: BLE001
        checker.error(name_node, f"list function {label} failed: {type(exc).__name__}: {exc}")
        return None
    if isinstance(result, (str, bytes)) or not _iterable(result):
        checker.error(name_node, f"list function {label} must return a list, returned {type(result).__name__}")
        return None
    values: list[Scalar] = []
    for position, item in enumerate(result):
        value = coerce(plain_value(item), var_type, lenient=True)
        if value is None:
            checker.error(
                name_node,
                f"list function {label} returned {describe(plain_value(item))} at position {position}, "
                f"not {_type_phrase(var_type)} for type {var_type}",
            )
            return None
        if value not in values:
            values.append(value)
        if len(values) > MAX_VALUES:
            checker.error(name_node, f"list function {label} returned more than {MAX_VALUES} values")
            return None
    if not values:
        checker.error(name_node, f"list function {label} returned an empty list")
        return None
    return values


def _import_file(path: Path) -> Any:
    # A fresh module each load, never registered in sys.modules: two profiles may each bring a
    # number_list.py, and an edited file must be re-read.
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(f"parley_list_function_{digest}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"not a Python file: {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _public_functions(module: Any) -> list[str]:
    return sorted(
        name
        for name, obj in vars(module).items()
        if inspect.isfunction(obj) and not name.startswith("_") and obj.__module__ == module.__name__
    )


def _pick_function(checker: Checker, module: Any, name_node: Node, named: bool, file_text: str, path: Path) -> Any | None:
    """The function to call. A blank `function_name` (as in Sensei's own example) means the
    function named like the file (number_list.py -> number_list), else the file's only public
    function."""
    public = _public_functions(module)
    name = name_node.value if named else None
    if name is not None and not isinstance(name, str):
        checker.error(name_node, f"expected a function name, got {describe(name)}")
        return None
    name = (name or "").strip()
    if not name:
        if path.stem in public:
            name = path.stem
        elif len(public) == 1:
            name = public[0]
        else:
            found = ", ".join(public) or "none"
            checker.error(
                name_node,
                f"function_name is blank and '{file_text}' has no single function to call (public functions: {found})",
                at_key=not named or name_node.value is None,
            )
            return None
    function = getattr(module, name, None)
    if not callable(function):
        hint = did_you_mean(name, public) or f"; it defines {', '.join(public) or 'no public function'}"
        checker.error(name_node, f"'{file_text}' has no function '{name}'{hint}")
        return None
    return function


def _call_args(raw: Any, paths: ProfilePaths) -> tuple[list[Any], dict[str, Any]]:
    """Arguments from `args:`, as Sensei passes them: a list is spread (its mappings become
    keyword arguments), one value is passed alone.

    A text argument naming a file (Sensei's `args: list_functions/data/things.yml`) is passed as
    the full path of the file the search finds, so the function reads the file the profile
    names whatever the working directory.
    """
    if raw is None:
        items: list[Any] = []
    elif isinstance(raw, list):
        items = [plain_value(a) for a in raw]
    else:
        items = [plain_value(raw)]
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for arg in items:
        if isinstance(arg, dict):
            kwargs.update(arg)
            continue
        found = paths.find(arg) if isinstance(arg, str) and arg.strip() and "\n" not in arg else None
        args.append(str(found.path) if found is not None else arg)
    return args, kwargs


def _iterable(value: Any) -> bool:
    try:
        iter(value)
    except TypeError:
        return False
    return True
