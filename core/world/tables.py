"""A world's tables: their columns, keys, fixtures, whose each record is, and the shape of its ids.

    Table(
        "orders",
        key="id",
        columns={"id": "text", "customer_id": "text", "status": "text", "total": "real", "items": "json"},
        rows="fixtures/orders.yaml",       # JSON, YAML or CSV beside the world's file, or a list, or
                                           # a function of the world's `today` returning rows
        owner="customer_id",               # the column naming the customer a record belongs to
        id_pattern=r"ORD-[0-9]{1,10}",     # how people write a key: parley finds ids in text with it
        free_text=["note"],                # fields anyone may write into (a planted instruction lives there)
    )

Column types: `text`, `integer`, `real`, `boolean`, `date` (ISO text), `json` (a list or mapping,
stored as JSON text). The key column is text. `owner` is a column, `"key"` (the record is the
customer: a customers table), a function of the row, or None (public data: products, a catalogue).
A `log` table records what happened (an audit trail): the world writes it, and its rows are never
a change a customer asked for.
"""

from __future__ import annotations

import csv
import datetime
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from parley.core.errors import ParleyError
from parley.core.records import did_you_mean

__all__ = ["COLUMN_TYPES", "ColumnType", "Table", "TableError"]

ColumnType = Literal["text", "integer", "real", "boolean", "date", "json"]
COLUMN_TYPES: tuple[str, ...] = ("text", "integer", "real", "boolean", "date", "json")
_SQL_TYPES: dict[str, str] = {"text": "TEXT", "integer": "INTEGER", "real": "REAL", "boolean": "INTEGER", "date": "TEXT", "json": "TEXT"}

Rows = Sequence[Mapping[str, Any]]
RowSource = Rows | str | Path | Callable[[datetime.date], Rows] | None
Owner = str | Callable[[Mapping[str, Any]], str | None] | None

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class TableError(ParleyError):
    """A table's declaration or one of its rows is wrong; the message says which and where."""


@dataclass(frozen=True)
class Table:
    """One table of a world (see the module doc)."""

    name: str
    key: str = "id"
    columns: Mapping[str, ColumnType] = field(default_factory=dict)
    rows: RowSource = None
    owner: Owner = None
    id_pattern: str | None = None
    free_text: Sequence[str] = ()
    log: bool = False
    description: str = ""
    base_dir: Path | None = None
    """Where a relative `rows` path is read from (set by the world: its file's folder)."""
    choices: Mapping[str, Sequence[Any]] = field(default_factory=dict)
    """Columns that take one of a few values (an order's status), for checks of rows and files."""
    inputs: Mapping[str, ColumnType] = field(default_factory=dict)
    """Fields a file's override may write that are not columns, which the world's own build turns
    into columns (the order world's `placed_days_ago`)."""
    fixed_keys: bool = False
    """True: a file's override may change this table's records but not add new ones."""
    state_field: str | None = None
    """The column that says where a record stands (an order's status): a file may expect it as
    `expect: {TABLE: {KEY: VALUE}}`, and reports name a record's state by it."""
    declared_at: str = field(default="", compare=False)
    """`file:line` where the table was declared, for messages (found when it is made)."""

    def __post_init__(self) -> None:
        if not self.declared_at:
            object.__setattr__(self, "declared_at", _caller_place())

    def problems(self) -> list[str]:
        """Every mistake in the declaration itself, each as one sentence naming the table."""
        found: list[str] = []
        if not _NAME.match(self.name):
            found.append(f"table {self.name!r}: a table name is letters, digits and _, starting with a letter")
        for column, kind in self.columns.items():
            if not _NAME.match(column):
                found.append(f"table {self.name}: column {column!r}: a column name is letters, digits and _")
            if kind not in COLUMN_TYPES:
                found.append(
                    f"table {self.name}: column {column}: unknown type {kind!r}{did_you_mean(kind, COLUMN_TYPES)} (one of {', '.join(COLUMN_TYPES)})"
                )
        if self.columns and self.key not in self.columns:
            found.append(f"table {self.name}: its key {self.key!r} is not one of its columns{did_you_mean(self.key, self.columns)}")
        if isinstance(self.owner, str) and self.owner != "key" and self.columns and self.owner not in self.columns:
            found.append(
                f"table {self.name}: owner names a missing column {self.owner!r}{did_you_mean(self.owner, self.columns)}"
                ' (a column, "key", a function of the row, or None)'
            )
        if self.state_field is not None and self.columns and self.state_field not in self.columns:
            found.append(
                f"table {self.name}: state_field names a missing column {self.state_field!r}{did_you_mean(self.state_field, self.columns)}"
            )
        for name in self.free_text:
            if self.columns and name not in self.columns:
                found.append(f"table {self.name}: free_text names a missing column {name!r}{did_you_mean(name, self.columns)}")
        if self.id_pattern is not None:
            try:
                re.compile(self.id_pattern)
            except re.error as exc:
                found.append(f"table {self.name}: id_pattern {self.id_pattern!r} is not a regular expression: {exc}")
        return found

    @property
    def id_regex(self) -> re.Pattern[str] | None:
        return re.compile(self.id_pattern) if self.id_pattern else None

    def owner_of(self, row: Mapping[str, Any]) -> str | None:
        """The customer the record belongs to (None: public, or a row without one)."""
        if self.owner is None:
            return None
        if callable(self.owner):
            value = self.owner(row)
        elif self.owner == "key":
            value = row.get(self.key)
        else:
            value = row.get(self.owner)
        return None if value is None else str(value)

    def fixture_rows(self, today: datetime.date) -> list[dict[str, Any]]:
        """The table's rows as declared (read from their file when `rows` names one)."""
        source = self.rows
        if source is None:
            return []
        if callable(source):
            return [dict(row) for row in source(today)]
        if isinstance(source, (str, Path)):
            return read_rows_file(Path(source) if Path(source).is_absolute() or self.base_dir is None else self.base_dir / source, self)
        return [dict(row) for row in source]

    def sql_type(self, column: str) -> str:
        return _SQL_TYPES[self.columns.get(column, "text")]

    def to_sql(self, row: Mapping[str, Any]) -> dict[str, Any]:
        """A row as SQLite stores it: json columns as JSON text, booleans as 0/1, dates as ISO text."""
        stored: dict[str, Any] = {}
        for column, value in row.items():
            kind = self.columns.get(column, "text")
            if value is None:
                stored[column] = None
            elif kind == "json":
                stored[column] = json.dumps(value, ensure_ascii=False, sort_keys=False)
            elif kind == "boolean":
                stored[column] = 1 if value else 0
            elif kind == "date" and isinstance(value, (datetime.date, datetime.datetime)):
                stored[column] = value.isoformat()
            else:
                stored[column] = value
        return stored

    def from_sql(self, row: Mapping[str, Any]) -> dict[str, Any]:
        """A stored row as plain data (json columns decoded, booleans as bool)."""
        plain: dict[str, Any] = {}
        for column, value in row.items():
            kind = self.columns.get(column, "text")
            if value is None:
                plain[column] = None
            elif kind == "json" and isinstance(value, str):
                try:
                    plain[column] = json.loads(value)
                except ValueError:
                    plain[column] = value
            elif kind == "boolean":
                plain[column] = bool(value)
            else:
                plain[column] = value
        return plain

    def row_problems(self, row: Mapping[str, Any]) -> list[tuple[str | None, str]]:
        """Every way `row` breaks the table's schema (an unknown column, a value of the wrong type,
        no key), each as (the column it is about, or None; why)."""
        found: list[tuple[str | None, str]] = []
        if self.columns:
            known = {**self.columns, **self.inputs}
            for column in row:
                if column not in known:
                    found.append((column, f"unknown column {column!r} of table {self.name}{did_you_mean(column, known)}"))
        if row.get(self.key) in (None, ""):
            found.append((None, f"no {self.key} (the key of table {self.name})"))
        for column, value in row.items():
            kind = self.columns.get(column) or self.inputs.get(column)
            if kind is None or value is None:
                continue
            problem = _type_problem(kind, value)
            if problem:
                found.append((column, problem))
            elif column in self.choices and value not in self.choices[column]:
                options = [str(c) for c in self.choices[column]]
                found.append((column, f"{value!r} is not one of {', '.join(options)}{did_you_mean(value, options)}"))
        return found

    def check_row(self, row: Mapping[str, Any], where: str) -> list[str]:
        """`row_problems` as sentences, each naming `where` (e.g. `fixtures/orders.yaml: row 3`)."""
        return [f"{where}: {column}: {why}" if column else f"{where}: {why}" for column, why in self.row_problems(row)]


def _caller_place() -> str:
    """`file:line` of the code that made the table (the first frame outside this module and dataclasses)."""
    import sys

    frame = sys._getframe(1)
    while (
        frame is not None
        and frame.f_code.co_filename in (__file__, "<string>")
        or (frame is not None and frame.f_code.co_filename.endswith("dataclasses.py"))
    ):
        frame = frame.f_back  # type: ignore[assignment]
    return f"{frame.f_code.co_filename}:{frame.f_lineno}" if frame is not None else ""


def _type_problem(kind: str, value: Any) -> str | None:
    if kind == "text" and not isinstance(value, str):
        return f"expected text, got {type(value).__name__} {value!r}"
    if kind == "integer" and (isinstance(value, bool) or not isinstance(value, int)):
        return f"expected a whole number, got {type(value).__name__} {value!r}"
    if kind == "real" and (isinstance(value, bool) or not isinstance(value, (int, float))):
        return f"expected a number, got {type(value).__name__} {value!r}"
    if kind == "boolean" and not isinstance(value, bool):
        return f"expected true or false, got {type(value).__name__} {value!r}"
    if kind == "date":
        if isinstance(value, (datetime.date, datetime.datetime)):
            return None
        try:
            datetime.date.fromisoformat(str(value))
        except ValueError:
            return f"expected a date such as 2026-11-21, got {value!r}"
    if kind == "json" and not isinstance(value, (list, dict)):
        return f"expected a list or a mapping, got {type(value).__name__} {value!r}"
    return None


def read_rows_file(path: Path, table: Table) -> list[dict[str, Any]]:
    """Rows from a JSON, YAML or CSV file (a list of mappings; CSV cells are converted by the
    table's column types). `TableError` naming the file when it cannot be read."""
    if not path.is_file():
        raise TableError(f"{path}: no such file (the rows of table {table.name})")
    suffix = path.suffix.lower()
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TableError(f"{path}: cannot be read: {exc}") from exc
    if suffix == ".csv":
        return [_csv_row(row, table, path, i) for i, row in enumerate(csv.DictReader(text.splitlines()), start=2)]
    if suffix in (".yaml", ".yml"):
        from ruamel.yaml import YAML, YAMLError

        try:
            data = YAML(typ="safe").load(text)
        except YAMLError as exc:
            raise TableError(f"{path}: not valid YAML: {exc}") from exc
    elif suffix == ".json":
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise TableError(f"{path}: not valid JSON: {exc}") from exc
    else:
        raise TableError(f"{path}: rows are read from .json, .yaml, .yml or .csv files, not {suffix or 'a file without a suffix'}")
    if isinstance(data, dict) and table.name in data and isinstance(data[table.name], list):
        data = data[table.name]
    if not isinstance(data, list) or not all(isinstance(row, dict) for row in data):
        raise TableError(f"{path}: expected a list of rows (mappings of column to value) for table {table.name}")
    return [dict(row) for row in data]


def _csv_row(row: Mapping[str, str], table: Table, path: Path, line: int) -> dict[str, Any]:
    converted: dict[str, Any] = {}
    for column, cell in row.items():
        kind = table.columns.get(column, "text")
        if cell is None or cell == "":
            converted[column] = None
            continue
        try:
            if kind == "integer":
                converted[column] = int(cell)
            elif kind == "real":
                converted[column] = float(cell)
            elif kind == "boolean":
                converted[column] = cell.strip().lower() in ("1", "true", "yes")
            elif kind == "json":
                converted[column] = json.loads(cell)
            else:
                converted[column] = cell
        except ValueError as exc:
            raise TableError(f"{path}:{line}: {column}: {cell!r} is not a {kind} value: {exc}") from exc
    return converted
