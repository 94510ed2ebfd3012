"""Raw reads of a test's database, for tests that check what was written row by row (parley's
own code reads through the store's named queries)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from parley.core.store import Store


def query(store: Store, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
    """The rows of a read query, as dicts."""
    return list(store.db.query(sql, params))
