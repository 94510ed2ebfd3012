"""Raw reads of a test's database, for tests that check what was written row by row (parley's
own code reads through the store's named queries)."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Sequence
from typing import Any

from parley.core.store import Store


def query(store: Store, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
    """The rows of a read query, as dicts, as another reader of the file sees them (what is
    committed). Through a connection of its own: the store's connection may be in the middle of
    a batch's transaction on the store's worker thread while a test polls (a read slipped into
    it once broke sqlite-utils' savepoint: "no such savepoint"). An in-memory store, which no
    other connection can open, is read as the store's own queries read it (under its lock)."""
    if store.path is None:
        return store._read(sql, params)
    uri = store.path.resolve().as_uri() + "?mode=ro"
    with contextlib.closing(sqlite3.connect(uri, uri=True)) as conn:
        conn.row_factory = sqlite3.Row
        return [dict(row) for row in conn.execute(sql, list(params))]
