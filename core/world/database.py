"""A world's database: one template image per (world, today, overrides), a cheap private copy per
conversation, and what each conversation changed.

`WorldTemplate` builds the world's tables once into an in-memory SQLite database (from its
declared tables and fixtures, or its own `build` hook), adds a change log, and keeps the
serialized image; `new_copy()` deserializes that image into a fresh connection (a memory copy:
tens of microseconds for the order world, about 0.2 ms for a database of 1,500 JSON records; see
bench/bench_worlds.py).

Every insert, update and delete of a declared table is logged by a trigger with the record's row
as it was before, whoever wrote it (a tool through `WorldDB`, a world's own SQL, a store of its
own): so a copy knows what changed since the template (`diff`) and since any moment (`mark` /
`changes_since`: what one tool call changed), with no copy of the database kept around.
"""

from __future__ import annotations

import datetime
import itertools
import json
import sqlite3
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from parley.core.records import RecordChange, WorldDiff
from parley.core.world.tables import Table, TableError

if TYPE_CHECKING:
    from parley.core.world.declaration import WorldDefinition

__all__ = ["CHANGE_LOG", "WorldClock", "WorldCopy", "WorldDB", "WorldTemplate"]

CHANGE_LOG = "_parley_changes"


class WorldClock:
    """A world's clock: noon UTC of its `today`, one second later at every reading. A logical
    clock keeps a conversation's final state (timestamps included) the same from run to run."""

    def __init__(self, today: datetime.date) -> None:
        self._start = datetime.datetime.combine(today, datetime.time(12, 0), tzinfo=datetime.UTC)
        self._ticks = itertools.count()

    def __call__(self) -> datetime.datetime:
        return self._start + datetime.timedelta(seconds=next(self._ticks))


class WorldDB:
    """A conversation's database as its tools use it: rows as plain data (json columns decoded),
    by table name. Writes made any other way (`execute`, a world's own store) are logged too."""

    def __init__(self, connection: sqlite3.Connection, tables: Mapping[str, Table]) -> None:
        self.connection = connection
        self.tables = tables

    def table(self, name: str) -> Table:
        try:
            return self.tables[name]
        except KeyError:
            raise KeyError(f"no table {name!r} in this world (its tables: {', '.join(self.tables)})") from None

    def get(self, table: str, key: Any) -> dict[str, Any] | None:
        """The record of `table` with key `key`, or None."""
        t = self.table(table)
        rows = _dicts(self.connection.execute(f'SELECT * FROM "{table}" WHERE "{t.key}" = ?', (key,)))
        return t.from_sql(rows[0]) if rows else None

    def select(self, table: str, where: str = "", params: Sequence[Any] = (), *, order_by: str | None = None) -> list[dict[str, Any]]:
        """Records of `table` matching an SQL condition (`where="customer_id = ?"`), in key order
        unless `order_by` says otherwise."""
        t = self.table(table)
        sql = f'SELECT * FROM "{table}"' + (f" WHERE {where}" if where else "") + f" ORDER BY {order_by or repr_column(t.key)}"
        return [t.from_sql(row) for row in _dicts(self.connection.execute(sql, tuple(params)))]

    def find(self, table: str, **equals: Any) -> list[dict[str, Any]]:
        """Records whose columns equal the values given (`db.find("orders", customer_id="C-100")`)."""
        t = self.table(table)
        stored = t.to_sql(equals)
        where = " AND ".join(f"{repr_column(column)} = ?" for column in stored)
        return self.select(table, where, list(stored.values()))

    def insert(self, table: str, row: Mapping[str, Any]) -> None:
        t = self.table(table)
        stored = t.to_sql(row)
        columns = ", ".join(repr_column(c) for c in stored)
        self.connection.execute(f'INSERT INTO "{table}" ({columns}) VALUES ({", ".join("?" for _ in stored)})', list(stored.values()))

    def update(self, table: str, key: Any, **fields: Any) -> None:
        """Set `fields` of the record `key` (KeyError when there is none)."""
        t = self.table(table)
        stored = t.to_sql(fields)
        assignments = ", ".join(f"{repr_column(c)} = ?" for c in stored)
        cursor = self.connection.execute(f'UPDATE "{table}" SET {assignments} WHERE {repr_column(t.key)} = ?', [*stored.values(), key])
        if cursor.rowcount == 0:
            raise KeyError(f"no record {key!r} in table {table}")

    def delete(self, table: str, key: Any) -> None:
        t = self.table(table)
        self.connection.execute(f'DELETE FROM "{table}" WHERE {repr_column(t.key)} = ?', (key,))

    def execute(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Cursor:
        """Any SQL; its writes are logged like the others'."""
        return self.connection.execute(sql, tuple(params))

    def count(self, table: str) -> int:
        self.table(table)
        return int(self.connection.execute(f'SELECT COUNT(*) FROM "{table}"').fetchone()[0])


def _dicts(cursor: sqlite3.Cursor) -> list[dict[str, Any]]:
    names = [d[0] for d in cursor.description or ()]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def repr_column(name: str) -> str:
    return f'"{name}"'


def _log_triggers(table: Table, columns: Sequence[str]) -> list[str]:
    """The triggers that log every write of `table` with the record's row before it."""
    name = table.name
    old_row = "json_object(" + ", ".join(f"'{c}', OLD.\"{c}\"" for c in columns) + ")"
    key = f'CAST(OLD."{table.key}" AS TEXT)'
    new_key = f'CAST(NEW."{table.key}" AS TEXT)'
    log = f'INSERT INTO "{CHANGE_LOG}" (tbl, key, before)'
    return [
        f'CREATE TRIGGER "_parley_ins_{name}" AFTER INSERT ON "{name}" BEGIN {log} VALUES (\'{name}\', {new_key}, NULL); END',
        f'CREATE TRIGGER "_parley_upd_{name}" AFTER UPDATE ON "{name}" BEGIN {log} VALUES (\'{name}\', {key}, {old_row}); '
        f"{log} SELECT '{name}', {new_key}, NULL WHERE {new_key} IS NOT {key}; END",
        f'CREATE TRIGGER "_parley_del_{name}" AFTER DELETE ON "{name}" BEGIN {log} VALUES (\'{name}\', {key}, {old_row}); END',
    ]


class WorldTemplate:
    """A world's database built once (see the module doc); `new_copy()` per conversation."""

    def __init__(
        self, world: WorldDefinition, today: datetime.date, overrides: Mapping[str, Sequence[Mapping[str, Any]]] | None = None
    ) -> None:
        self.world = world
        self.today = today
        self.tables: dict[str, Table] = {t.name: t for t in world.tables}
        self._keys: dict[str, list[tuple[str, str | None]]] | None = None
        conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        try:
            if world.build is not None:
                world.build(conn, today, dict(overrides or {}))
            else:
                self._create_and_fill(conn, overrides or {})
            self._add_change_log(conn)
            self._image = conn.serialize()
        finally:
            conn.close()

    def _create_and_fill(self, conn: sqlite3.Connection, overrides: Mapping[str, Sequence[Mapping[str, Any]]]) -> None:
        from parley.core.world.overrides import merge_overrides

        conn.execute("BEGIN")
        for table in self.tables.values():
            rows = merge_overrides(table, table.fixture_rows(self.today), overrides.get(table.name, ()))
            columns = list(table.columns) or list(dict.fromkeys(c for row in rows for c in row)) or [table.key]
            if table.key not in columns:
                raise TableError(f"table {table.name}: its key {table.key!r} is in none of its rows")
            defs = ", ".join(f'"{c}" {table.sql_type(c)}' + (" PRIMARY KEY" if c == table.key else "") for c in columns)
            conn.execute(f'CREATE TABLE "{table.name}" ({defs})')
            for c in columns:
                if isinstance(table.owner, str) and c == table.owner and c != table.key:
                    conn.execute(f'CREATE INDEX "_idx_{table.name}_{c}" ON "{table.name}" ("{c}")')
            for row in rows:
                stored = table.to_sql(row)
                names = ", ".join(f'"{c}"' for c in stored)
                try:
                    conn.execute(f'INSERT INTO "{table.name}" ({names}) VALUES ({", ".join("?" for _ in stored)})', list(stored.values()))
                except sqlite3.IntegrityError as exc:
                    raise TableError(f"table {table.name}: row {row.get(table.key)!r}: {exc}") from exc
        conn.execute("COMMIT")

    def _add_change_log(self, conn: sqlite3.Connection) -> None:
        conn.execute(f'CREATE TABLE "{CHANGE_LOG}" (seq INTEGER PRIMARY KEY, tbl TEXT NOT NULL, key TEXT, before TEXT)')
        for table in self.tables.values():
            columns = [row[1] for row in conn.execute(f'PRAGMA table_info("{table.name}")')]
            if not columns:
                raise TableError(f"table {table.name} is declared but the world's build did not create it")
            for statement in _log_triggers(table, columns):
                conn.execute(statement)

    @property
    def image_bytes(self) -> int:
        return len(self._image)

    def key_index(self) -> dict[str, list[tuple[str, str | None]]]:
        """Each key of a table whose records belong to customers -> (table, owner) of its records,
        built once: how a tool result's text is read for the records it shows."""
        if self._keys is None:
            index: dict[str, list[tuple[str, str | None]]] = {}
            with self.new_copy() as copy:
                for table in self.tables.values():
                    if table.owner is None or table.log:
                        continue
                    for row in copy.db.select(table.name):
                        index.setdefault(str(row[table.key]), []).append((table.name, table.owner_of(row)))
            self._keys = index
        return self._keys

    def new_copy(self) -> WorldCopy:
        """A private copy of the template's database."""
        conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        conn.deserialize(self._image)
        return WorldCopy(self, conn)


class WorldCopy:
    """One conversation's private database (see the module doc)."""

    def __init__(self, template: WorldTemplate, connection: sqlite3.Connection) -> None:
        self.template = template
        self.world = template.world
        self.today = template.today
        self.tables = template.tables
        self.connection = connection
        self.db = WorldDB(connection, self.tables)
        self.clock = WorldClock(self.today)
        self.extras: dict[str, Any] = {}
        self.lock = threading.Lock()
        """Held while a tool runs: a served world may be called from several requests at once."""

    def mark(self) -> int:
        """A point in the change log; `changes_since(mark)` is what was written after it."""
        row = self.connection.execute(f'SELECT COALESCE(MAX(seq), 0) FROM "{CHANGE_LOG}"').fetchone()
        return int(row[0])

    def changes_since(self, mark: int = 0) -> list[RecordChange]:
        """The records written after `mark` (0: since the template), each with its row before (as
        it was at `mark`) and now; a record written and then put back as it was is left out."""
        first_before: dict[tuple[str, str], str | None] = {}
        for tbl, key, before in self.connection.execute(f'SELECT tbl, key, before FROM "{CHANGE_LOG}" WHERE seq > ? ORDER BY seq', (mark,)):
            first_before.setdefault((tbl, key), before)
        changes: list[RecordChange] = []
        for (tbl, key), before_json in first_before.items():
            table = self.tables[tbl]
            before = table.from_sql(json.loads(before_json)) if before_json is not None else None
            after = self.db.get(tbl, key) if key is not None else None
            if before == after:
                continue
            owner = table.owner_of(after or before or {})
            changes.append(RecordChange(table=tbl, key=str(key), owner=owner, before=before, after=after, log=table.log))
        return changes

    def diff(self, watched: Iterable[str] = ()) -> WorldDiff:
        """What the conversation changed, and the final rows of the `table/key` records in `watched`."""
        rows: dict[str, dict[str, Any] | None] = {}
        for ref in watched:
            table, _, key = ref.partition("/")
            if table not in self.tables:
                continue
            row = self.db.get(table, key)
            if row is None and key != key.strip().upper():  # as people write ids: "so-5001" is SO-5001
                row = self.db.get(table, key.strip().upper())
            rows[f"{table}/{row[self.tables[table].key]}" if row is not None else ref] = row
        return WorldDiff(world=self.world.name, today=self.today, changes=self.changes_since(0), watched=rows)

    def rows(self, table: str) -> list[dict[str, Any]]:
        return self.db.select(table)

    def close(self) -> None:
        self.connection.close()

    def __enter__(self) -> WorldCopy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
