"""tau2's database as a parley world's tables, and back.

- `load_rows`: db.json read from SOURCE through the domain's record models (retail_records,
  airline_records) into one row per record, table by table, in the file's order (a copy keeps it:
  tau2's tools scan users and flights in that order);
- `tau2_state` / `tau2_hash`: a world copy's state as tau2's database dict, and tau2's hash of it
  (`get_db_hash`: sha256 of the dict dumped as JSON with sorted keys), so a parley run can print
  the hash tau2 would report beside parley's own record-by-record comparison;
- `tau2_text`: a tool's result as the text tau2 shows the agent (a string as it is, anything else
  as JSON in tau2's spacing).
"""

from __future__ import annotations

import hashlib
import json
import threading
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

from parley.core.records import RecordChange
from parley.core.world import WorldCopy, WorldTemplate
from parley.worlds.tau2.source import Tau2Source, Tau2SourceError, first_error

__all__ = ["FILE_ORDER", "changed_hash", "dict_hash", "load_rows", "tau2_hash", "tau2_state", "tau2_text"]

FILE_ORDER = "rowid"
"""How a tool lists a table's records in db.json's order (rows are inserted in that order)."""


def load_rows(source: Tau2Source, domain: str, model: type[BaseModel]) -> dict[str, list[dict[str, Any]]]:
    """Each table of db.json -> its records as rows (see the module doc); `Tau2SourceError` naming
    the file, the record and the field of the first one whose schema differs."""
    path = source.file(domain, "db.json")
    data = source.read_json(domain, "db.json")
    try:
        db = model.model_validate(data)
    except ValidationError as exc:
        raise Tau2SourceError(f"{path}: {first_error(exc)}") from exc
    dumped = db.model_dump()
    return {table: list(records.values()) for table, records in dumped.items()}


def tau2_state(copy: WorldCopy) -> dict[str, dict[str, Any]]:
    """The copy's tables as tau2's database: table -> key -> record (every row as stored)."""
    return {name: {row[table.key]: row for row in copy.db.select(name, order_by=FILE_ORDER)} for name, table in copy.tables.items()}


def tau2_hash(copy: WorldCopy) -> str:
    """tau2's hash of the copy's state: what `Environment.get_db_hash()` answers for the same database.

    The JSON tau2 hashes is its records' JSON in key order; each record's is computed once per
    template, and again only for the records the copy changed (milliseconds, not a tenth of a second)."""
    return changed_hash(copy.template, copy.changes_since(0))


def changed_hash(template: WorldTemplate, changes: Sequence[RecordChange]) -> str:
    """tau2's hash of the state `changes` (a copy's, or a stored conversation's final state's) leave on `template`."""
    records = {name: dict(rows) for name, rows in _template_json(template).items()}
    for change in changes:
        if change.after is None:
            records[change.table].pop(change.key, None)
        else:
            records[change.table][change.key] = _json(change.after)
    text = "{" + ", ".join(f"{_json(name)}: {_join(records[name])}" for name in sorted(records)) + "}"
    return hashlib.sha256(text.encode()).hexdigest()


_record_json: weakref.WeakKeyDictionary[WorldTemplate, dict[str, dict[str, str]]] = weakref.WeakKeyDictionary()
_record_json_lock = threading.Lock()


def _template_json(template: WorldTemplate) -> dict[str, dict[str, str]]:
    """Each record of the template as tau2's hash writes it (JSON, sorted keys), by table and key."""
    with _record_json_lock:
        cached = _record_json.get(template)
    if cached is None:
        with template.new_copy() as fresh:
            cached = {name: {str(key): _json(row) for key, row in rows.items()} for name, rows in tau2_state(fresh).items()}
        with _record_json_lock:
            cached = _record_json.setdefault(template, cached)
    return cached


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _join(records: Mapping[str, str]) -> str:
    return "{" + ", ".join(f"{_json(key)}: {records[key]}" for key in sorted(records)) + "}"


def dict_hash(state: Mapping[str, Any]) -> str:
    """tau2's `get_dict_hash`: sha256 of the JSON with sorted keys (anything else as its str)."""
    return hashlib.sha256(_json(state).encode()).hexdigest()


def tau2_text(value: Any) -> str:
    """A tool's result as tau2 shows it to the agent: a string as it is, anything else as JSON in
    tau2's spacing (`", "` and `": "`, non-ASCII escaped); a record as its model dumps it."""
    if isinstance(value, str):
        return value
    return json.dumps(value, default=str)
