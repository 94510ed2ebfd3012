"""Goal variables' list functions: `data: {file, function_name, args}` names a Python file
that is run once, at load, and whose function returns the variable's values.

The other forms of `data:` are read by the records (parley.core.records.goal_variables);
`coerce` and the names below are theirs, still importable from here. Files are found as
`parley.core.specs.paths` says (the working directory first, as Sensei). Problems about the
function are located at `function_name` (at `data` when the profile leaves it out).
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
from pathlib import Path
from typing import Any

from parley.core.records import (
    FUNCTIONS,
    MAX_VALUES,
    VARIABLE_NAME_RE,
    Problems,
    Reading,
    Scalar,
    any_prompt,
    check_keys,
    coerce,
    describe,
    did_you_mean,
    plain_value,
    read_text,
    type_phrase,
)
from parley.core.specs.paths import ProfilePaths

__all__ = ["FUNCTIONS", "MAX_VALUES", "VARIABLE_NAME_RE", "any_prompt", "coerce", "list_function_values"]


def list_function_values(reading: Reading, data: dict[Any, Any], var_type: str, paths: ProfilePaths) -> list[Scalar]:
    """The values of the list function `data` names, run now; problems are raised below `data`
    (at its `file` or `function_name`)."""
    problems = Problems()
    check_keys(data, ("file", "function_name", "args"), reading, problems)  # `file` is what made this a list function
    file_text = problems.check(read_text, data["file"], "the path of a .py file", at=("file",))
    if file_text is None:
        problems.raise_if_any()
    found = paths.find(file_text)
    if found is None:
        places = ", ".join(paths.places()) or "nowhere"
        problems.stop(f"list function file '{file_text}' not found (looked in {places})", at=("file",))
    path = found.path
    reading.note(data, ("file",), f"list function file '{file_text}' read from {path} ({found.where})")
    try:
        module = _import_file(path)
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - any failure of user code becomes a located error
        problems.stop(f"cannot import list function file '{file_text}': {type(exc).__name__}: {exc}", at=("file",))

    name_at: tuple[Any, ...] = ("function_name",) if "function_name" in data else ()
    function = _pick_function(problems, module, data.get("function_name"), name_at, file_text, path)

    args, kwargs = _call_args(data.get("args"), paths)
    label = f"{function.__name__}()"
    try:
        result = function(*args, **kwargs)
    except (Exception, SystemExit) as exc:  # noqa: BLE001
        problems.stop(f"list function {label} failed: {type(exc).__name__}: {exc}", at=name_at)
    if isinstance(result, (str, bytes)) or not _iterable(result):
        problems.stop(f"list function {label} must return a list, returned {type(result).__name__}", at=name_at)
    values: list[Scalar] = []
    for position, item in enumerate(result):
        value = coerce(plain_value(item), var_type, lenient=True)
        if value is None:
            problems.stop(
                f"list function {label} returned {describe(plain_value(item))} at position {position}, "
                f"not {type_phrase(var_type)} for type {var_type}",
                at=name_at,
            )
        if value not in values:
            values.append(value)
        if len(values) > MAX_VALUES:
            problems.stop(f"list function {label} returned more than {MAX_VALUES} values", at=name_at)
    if not values:
        problems.stop(f"list function {label} returned an empty list", at=name_at)
    problems.raise_if_any()
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


def _pick_function(problems: Problems, module: Any, name: Any, at: tuple[Any, ...], file_text: str, path: Path) -> Any:
    """The function to call. A blank `function_name` (as in Sensei's own example) means the
    function named like the file (number_list.py -> number_list), else the file's only public
    function."""
    public = _public_functions(module)
    if name is not None and not isinstance(name, str):
        problems.stop(f"expected a function name, got {describe(name)}", at=at)
    name = (name or "").strip()
    if not name:
        if path.stem in public:
            name = path.stem
        elif len(public) == 1:
            name = public[0]
        else:
            found = ", ".join(public) or "none"
            problems.stop(
                f"function_name is blank and '{file_text}' has no single function to call (public functions: {found})",
                at=at,
            )
    function = getattr(module, name, None)
    if not callable(function):
        hint = did_you_mean(name, public) or f"; it defines {', '.join(public) or 'no public function'}"
        problems.stop(f"'{file_text}' has no function '{name}'{hint}", at=at)
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
