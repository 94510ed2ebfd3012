"""The engine knows no world: no module of parley's engine or faces names what the order world
declares (its tools, its tables, the shape of its ids), so every world is read from its declarations.

The scan is built from the order world's declarations, not from English words: a string literal or a
name in code (docstrings and comments are prose, and are not read) that is one of its tool names, a
string that is one of its table names, or a string holding one of its ids (by its id pattern, or the
pattern's literal prefix followed by a digit or a character class: `ORD-1003`, `r"ORD-[0-9]+"`).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from parley.core.world import load_world

ROOT = Path(__file__).resolve().parent.parent
SCANNED = ("core", "tui")

# Where a name the order world declares may appear, and why.
ALLOWED: dict[str, str] = {
    # The registry names the shipped worlds, and the default world is called "orders" (a world's
    # name, not its table's).
    "core/world/registry.py": "the names of the shipped worlds",
    # Conversations stored before worlds were declared could only come from the order world:
    # reading their final state back names its tables.
    "core/records/world_state.py": "reading final states stored before worlds were declared",
}


def _prose(tree: ast.AST) -> set[int]:
    """The ids of string constants that are docstrings (of modules, classes, functions, attributes)."""
    found: set[int] = set()
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            body = getattr(node, field, None)
            if isinstance(body, list):
                for statement in body:
                    if (
                        isinstance(statement, ast.Expr)
                        and isinstance(statement.value, ast.Constant)
                        and isinstance(statement.value.value, str)
                    ):
                        found.add(id(statement.value))
    return found


def _order_world_names() -> tuple[set[str], set[str], list[re.Pattern[str]]]:
    world = load_world("orders")
    tools = set(world.tool_names)
    tables = set(world.table_names)
    patterns: list[re.Pattern[str]] = []
    for table in world.tables_with_ids():
        pattern = table.id_pattern or ""
        patterns.append(re.compile(pattern, re.IGNORECASE))
        prefix = re.match(r"[A-Za-z]+-", pattern)
        if prefix:
            patterns.append(re.compile(re.escape(prefix.group(0)) + r"(?:\[|\\d|[0-9]|\?)", re.IGNORECASE))
    return tools, tables, patterns


def scan(root: Path = ROOT) -> list[str]:
    """Every place of the engine that names what the order world declares, as `file:line: what`."""
    tools, tables, patterns = _order_world_names()
    tool_words = re.compile(r"\b(" + "|".join(map(re.escape, sorted(tools))) + r")\b")
    found: list[tuple[str, int, str]] = []
    for folder in SCANNED:
        for path in sorted((root / folder).rglob("*.py")):
            relative = path.relative_to(root).as_posix()
            if relative in ALLOWED:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            prose = _prose(tree)
            for node in ast.walk(tree):
                what = None
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose:
                    text = node.value
                    if match := tool_words.search(text):
                        what = f"the tool {match.group(1)}"
                    elif text in tables:
                        what = f"the table {text}"
                    elif any(p.search(text) for p in patterns):
                        what = f"an id in {text[:40]!r}"
                elif isinstance(node, ast.Name) and node.id in tools:
                    what = f"the tool {node.id}"
                elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in tools:
                    what = f"the tool {node.name}"
                elif isinstance(node, ast.Attribute) and node.attr in tools:
                    what = f"the tool {node.attr}"
                if what:
                    found.append((relative, getattr(node, "lineno", 0), what))
    return [f"{file}:{line}: {what}" for file, line, what in sorted(found, key=lambda hit: hit[:2])]


def test_no_module_of_the_engine_names_what_the_order_world_declares():
    assert scan() == []


def test_the_scan_finds_a_planted_name(tmp_path: Path):
    planted = tmp_path / "core" / "planted.py"
    planted.parent.mkdir()
    planted.write_text(
        '"""A docstring may say cancel_order and ORD-1003."""\n'
        "def f(x):\n"
        '    """So may this one: orders."""\n'
        '    if x == "orders":\n'
        '        return x.cancel_order("ORD-1004")\n'
        '    return "track_order", r"ORD-[0-9]+"\n',
        encoding="utf-8",
    )
    (tmp_path / "tui").mkdir()
    assert scan(tmp_path) == [
        "core/planted.py:4: the table orders",
        "core/planted.py:5: the tool cancel_order",
        "core/planted.py:5: an id in 'ORD-1004'",
        "core/planted.py:6: the tool track_order",
        "core/planted.py:6: an id in 'ORD-[0-9]+'",
    ]
