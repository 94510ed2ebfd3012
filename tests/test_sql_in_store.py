"""SQL lives in the store: no module of core outside core/store/ (the mock API keeps its own),
and none of the app or the command line, holds a SQL statement in a string."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCANNED = ("core", "tui")
OWNERS = (
    ROOT / "core" / "store",
    # a world's own database (one in-memory copy per conversation, its tables and change log): the
    # world API's, not parley's store
    ROOT / "core" / "world" / "database.py",
)

# A statement, not a word: the keyword and the clause that makes it SQL (written in capitals, as
# all of parley's SQL is, so prose such as "select the batch from the list" is not mistaken).
STATEMENT = re.compile(
    r"\bSELECT\s+(?:DISTINCT\s+)?[\w.*(]"
    r"|\bFROM\s+\w+(?:\s+\w+)?\s+(?:LEFT\s+|INNER\s+)?JOIN\b"
    r"|\bWHERE\s+\w+(?:\.\w+)?\s*(?:=|IN\b|IS\b|NOT\b|<|>)"
    r"|\bINSERT\s+(?:OR\s+\w+\s+)?INTO\b"
    r"|\bUPDATE\s+\w+\s+SET\b"
    r"|\bDELETE\s+FROM\b"
    r"|\bCREATE\s+(?:UNIQUE\s+|TEMP\s+|TEMPORARY\s+)?(?:TABLE|INDEX|VIEW|TRIGGER)\b"
    r"|\bALTER\s+TABLE\b"
    r"|\bDROP\s+(?:TABLE|INDEX|VIEW|TRIGGER)\b"
    r"|\bPRAGMA\s+\w+"
)


def _strings(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, text) of every string literal; an f-string's literal parts are joined with a
    placeholder so a statement split around `{...}` is still seen whole."""
    found = []
    inside_fstrings: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            parts = [v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else " x " for v in node.values]
            found.append((node.lineno, "".join(parts)))
            inside_fstrings.update(id(v) for v in node.values)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in inside_fstrings:
            found.append((node.lineno, node.value))
    return found


def sql_statements(path: Path) -> list[str]:
    """`path:line: text` for each string literal in the file that holds a SQL statement."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [f"{path}:{line}: {' '.join(text.split())[:100]}" for line, text in _strings(tree) if STATEMENT.search(text)]


def _scanned_files() -> list[Path]:
    files = []
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*.py")):
            if not any(path.is_relative_to(owner) for owner in OWNERS):
                files.append(path)
    return files


def test_no_module_outside_the_store_holds_sql():
    files = _scanned_files()
    assert len(files) > 100, "the scan found too few modules to mean anything"
    found = [hit for path in files for hit in sql_statements(path)]
    assert not found, "SQL outside core/store/ (give the store a named query instead):\n" + "\n".join(found)


def test_the_scan_finds_a_statement_in_any_string_and_not_in_prose(tmp_path):
    module = tmp_path / "leaky.py"
    module.write_text(
        '"""Select the batch from the list; update the row; delete from memory."""\n'
        "TABLE = 'conversations'\n"
        "def total(store, batch_id):\n"
        '    return store.read(f"SELECT TOTAL(cost_usd) FROM {TABLE} WHERE batch_id = ?", [batch_id])\n'
        "def wipe(db):\n"
        "    db.execute('DELETE FROM verdicts')\n"
        '    db.execute("""\n        UPDATE batches\n        SET status = 1""")\n',
        encoding="utf-8",
    )
    found = sql_statements(module)
    assert [hit.split(":")[1] for hit in found] == ["4", "6", "7"], found
    assert "SELECT TOTAL(cost_usd) FROM x WHERE" in found[0]

    clean = tmp_path / "clean.py"
    clean.write_text('"""Select the batch from the list."""\nfrom parley.core.store import outcome_rows\n', encoding="utf-8")
    assert sql_statements(clean) == []
