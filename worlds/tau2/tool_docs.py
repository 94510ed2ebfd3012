"""tau2's own tool descriptions, read from SOURCE's tools.py as text (parsed, never imported).

An agent on tau2 is offered each tool with the description tau2 makes from its docstring: the
first line, then (after a blank line) the rest of the text before its `Args:` section, and each
parameter's description from `Args:`. parley's tau2 worlds offer the same words, read where they
lie, so a bot sees what it would see on tau2; and the tools SOURCE declares are listed, so a newer
checkout's tools that parley's worlds lack are named, never dropped silently.
"""

from __future__ import annotations

import ast
import inspect
import re
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["ToolDoc", "read_constant_calls", "read_tool_docs"]

_SECTION = re.compile(
    r"^(Args|Arguments|Parameters|Params|Returns|Return|Yields|Raises|Exceptions|Example|Examples|Attributes)\s*:\s*$", re.M
)
_ARGS = re.compile(r"^(Args|Arguments|Parameters|Params)\s*:\s*$", re.M)


@dataclass(frozen=True)
class ToolDoc:
    """One tool as SOURCE's tools.py declares it."""

    name: str
    description: str
    parameters: dict[str, str] = field(default_factory=dict)
    """Each parameter's description."""


def read_tool_docs(path: Path) -> dict[str, ToolDoc]:
    """Every method of tools.py decorated `@is_tool(...)`, by name; {} when the file cannot be parsed."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, UnicodeDecodeError, SyntaxError):
        return {}
    found: dict[str, ToolDoc] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and any(_is_tool(d) for d in node.decorator_list):
            doc = ast.get_docstring(node, clean=False) or ""
            description, parameters = _parts(doc)
            found[node.name] = ToolDoc(name=node.name, description=description or node.name, parameters=parameters)
    return found


def _is_tool(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return (isinstance(target, ast.Name) and target.id == "is_tool") or (isinstance(target, ast.Attribute) and target.attr == "is_tool")


def _parts(doc: str) -> tuple[str, dict[str, str]]:
    """(the description as tau2 gives it, each parameter's description) of a Google-style docstring."""
    text = inspect.cleandoc(doc)
    section = _SECTION.search(text)
    head = text[: section.start()] if section else text
    short, _, rest = head.partition("\n")
    description = short + (f"\n\n{rest.strip()}" if rest.strip() else "")
    return description, _arguments(text)


def _arguments(text: str) -> dict[str, str]:
    match = _ARGS.search(text)
    if match is None:
        return {}
    body = text[match.end() :]
    following = _SECTION.search(body)
    if following is not None:
        body = body[: following.start()]
    body = body.strip("\n")
    if not body:
        return {}
    indent = re.match(r"^\s*", body)
    prefix = indent.group() if indent else ""
    starts = [m.start() for m in re.finditer("^" + re.escape(prefix) + r"(?=\S)", body, re.M)]
    parameters: dict[str, str] = {}
    for i, start in enumerate(starts):
        chunk = body[start : starts[i + 1] if i + 1 < len(starts) else len(body)].strip("\n")
        name, _, description = chunk.strip().partition(":")
        name = name.split("(")[0].strip()
        if "\n" in description:
            first, rest = description.split("\n", 1)
            description = first + "\n" + inspect.cleandoc(rest)
        parameters[name] = description.strip()
    return parameters


def read_constant_calls(path: Path, function: str, callee: str) -> list[dict[str, object]]:
    """The keyword arguments of each `callee(...)` call with constant arguments in `function`'s body
    in tools.py, in order (how the airline's fixed list of airports is read where it lies)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, UnicodeDecodeError, SyntaxError):
        return []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == function:
            calls: list[dict[str, object]] = []
            for call in ast.walk(node):
                if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == callee:
                    values: dict[str, object] = {k.arg: k.value.value for k in call.keywords if k.arg and isinstance(k.value, ast.Constant)}
                    calls.append(values)
            return calls
    return []
