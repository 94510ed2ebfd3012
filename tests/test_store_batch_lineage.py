"""Batches that name their parent, stop at a budget, and are found as `latest`, `latest~N` or a
prefix; a database from before these existed is migrated without losing a row."""

from __future__ import annotations

import datetime as dt

import pytest
from sqlite_utils import Database

from parley.core.errors import ParleyError
from parley.core.records.batch import BatchRecord
from parley.core.store.schema import MIGRATIONS, migrate
from parley.core.store.store import Store
from tests.test_store_fixtures import T0, conversation, spec, verdict


def _batch(store: Store, minutes: int, **fields) -> BatchRecord:
    return store.create_batch(BatchRecord(created_at=T0 + dt.timedelta(minutes=minutes), status="completed", **fields))


def test_latest_and_latest_tilde_n_and_prefixes_name_batches(tmp_path):
    with Store.open(tmp_path / "p.db") as store:
        first, second, third = (_batch(store, m) for m in (1, 2, 3))
        assert store.resolve_batch_ref("latest") == third.id
        assert store.resolve_batch_ref("latest~0") == third.id
        assert store.resolve_batch_ref(" latest~1 ") == second.id
        assert store.get_batch("latest~2").id == first.id
        assert store.resolve_batch_ref(first.id[:8]) == first.id
        with pytest.raises(ParleyError, match=r"'latest~3' goes back further than the 3 batches stored \(latest~2 is the oldest\)"):
            store.resolve_batch_ref("latest~3")
        with pytest.raises(ParleyError, match=r"after `latest~` comes how many batches back"):
            store.resolve_batch_ref("latest~x")
        with pytest.raises(ParleyError, match="no batch 'nothing'"):
            store.resolve_batch_ref("nothing")


def test_no_batch_at_all_says_how_to_start_one(tmp_path):
    with Store.open(tmp_path / "p.db") as store, pytest.raises(ParleyError, match="no batches in .* yet; `parley run PATH` starts one"):
        store.resolve_batch_ref("latest")


def test_a_batch_keeps_its_parent_and_may_stop_at_its_budget(tmp_path):
    with Store.open(tmp_path / "p.db") as store:
        parent = _batch(store, 1)
        child = _batch(store, 2, parent_id=parent.id)
        store.update_batch(child.id, status="stopped_budget")
    with Store.open(tmp_path / "p.db") as store:
        again = store.get_batch(child.id)
        assert (again.parent_id, again.status) == (parent.id, "stopped_budget")
        assert store.get_batch(parent.id).parent_id is None


def test_a_schema_v2_database_is_migrated_with_every_batch_and_conversation(tmp_path):
    path = tmp_path / "old.db"
    db = Database(path)
    db.execute("PRAGMA foreign_keys = ON")
    migrate(db, MIGRATIONS[:2])  # the file as the previous parley left it
    db.execute(
        "INSERT INTO batches (id, created_at, status, sources, options, planned) VALUES "
        "('b1', '2026-11-21T09:00:00.000000+00:00', 'completed', '[\"profiles\"]', '{}', 1),"
        "('b2', '2026-11-21T09:00:00.000000+00:00', 'cancelled', '[]', '{}', 1)"
    )
    db.conn.commit()
    db.close()
    with Store.open(path) as store:  # v2 -> latest
        conv = conversation("track", started=T0)
        store.save_conversation("b1", spec("track_order", 0), conv, verdict(conv, "passed"))
    with Store.open(path) as store:
        assert store.schema_version() == len(MIGRATIONS)
        assert [b.id for b in store.list_batches()] == ["b2", "b1"]  # same created_at: later row first
        assert store.resolve_batch_ref("latest") == "b2"
        assert store.batch_row("b1").summary.done == 1
        assert store.db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        store.db.execute("DELETE FROM batches WHERE id = 'b1'")  # cascades as before the rebuild
        assert store.count_conversations() == 0
