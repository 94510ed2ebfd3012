"""`parley mockapi --db FILE` on files it did not make: somebody's own SQLite database (never
dropped or reset), parley's batch store, garbage, a read-only file: one line, exit 1, no traceback."""

from __future__ import annotations

import sqlite3

import pytest
from mockapi_fixtures import TODAY

from parley.core.store.store import Store
from parley.mockapi.order_store import DatabaseRefused, open_file_store
from tests.read_only_fs import seal, unseal
from tests.test_store_hostile import digest, finished_batch_db, foreign_db, parley, read_only_db, tables  # noqa: F401  (fixtures)


@pytest.mark.parametrize("reset", [False, True], ids=["open", "reset"])
def test_somebody_elses_database_is_refused_and_left_as_it_is(foreign_db, reset):
    before = digest(foreign_db)
    result = parley("mockapi", "--db", str(foreign_db), "--port", "0", *(["--reset"] if reset else []))
    assert result.returncode == 1
    assert result.stderr.strip() == (
        f"error: {foreign_db} is not the mock API's database: it holds tables the mock API did not create "
        "(customers, orders); it is left as it is (give --db a new file)"
    )
    assert digest(foreign_db) == before and tables(foreign_db) == ["customers", "orders"]
    conn = sqlite3.connect(foreign_db)
    assert conn.execute("SELECT name FROM customers").fetchall() == [("their customer",)]
    conn.close()


def test_parleys_batch_store_is_not_an_order_database(tmp_path):
    path = tmp_path / "parley.db"
    Store.open(path).close()
    with pytest.raises(DatabaseRefused, match="is not the mock API's database"):
        open_file_store(path, today=TODAY)


def test_a_garbage_file_is_one_line(tmp_path):
    garbage = tmp_path / "orders.db"
    garbage.write_bytes(b"\x00\x01 not sqlite at all " * 200)
    result = parley("mockapi", "--db", str(garbage), "--port", "0")
    assert result.returncode == 1
    assert result.stderr.strip() == f"error: {garbage} is not a database the mock API can use (file is not a database)"


def test_a_read_only_order_database_is_one_line(read_only_db):
    # An order database made by the mock API, beside read_only_db on its read-only file system.
    folder = read_only_db.parent
    unseal(folder)
    orders = folder / "orders.db"
    open_file_store(orders, today=TODAY).close()
    with sqlite3.connect(orders) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    for leftover in folder.glob("orders.db-*"):
        leftover.unlink()
    seal(folder)
    before = digest(orders)
    result = parley("mockapi", "--db", str(orders), "--port", "0", cwd=folder, read_only=folder)
    assert result.returncode == 1
    assert result.stderr.strip() == (
        f"error: {orders} is read-only: the mock API writes to its database (cancellations, the audit trail); give --db a writable file"
    )
    assert digest(orders) == before


def test_a_new_order_database_in_a_folder_that_cannot_be_written_names_the_folder(read_only_db):
    folder = read_only_db.parent
    orders = folder / "orders.db"
    result = parley("mockapi", "--db", str(orders), "--port", "0", cwd=folder, read_only=folder)
    assert result.returncode == 1
    assert result.stderr.strip() == (
        f"error: cannot create {orders}: the folder {folder} cannot be written (a read-only file system or no permission); "
        "give --db a file in a folder you can write"
    )
    assert sorted(p.name for p in folder.iterdir()) == ["p.db"]


def test_its_own_database_from_before_the_mark_still_opens_and_keeps_its_orders(tmp_path):
    path = tmp_path / "orders.db"
    store = open_file_store(path, today=TODAY)
    store.db.execute("DELETE FROM meta WHERE key = 'app'")  # as the mock API wrote it before the mark
    store.db.execute("UPDATE orders SET status = 'cancelled' WHERE id = 'ORD-1004'")
    store.close()
    reopened = open_file_store(path)
    assert reopened.db.execute("SELECT status FROM orders WHERE id = 'ORD-1004'").fetchone() == ("cancelled",)
    assert reopened.db.execute("SELECT value FROM meta WHERE key = 'app'").fetchone() == ("parley-mockapi",)
    reopened.close()
