"""OrderStore: the order database (SQLite through sqlite-utils) and every operation on it.

Ownership, policy and the audit trail live here, below HTTP, so the API, the worlds and the
tests all go through the same checks. Errors are `OrderStoreError(reason, message)`; the app
maps each reason to its HTTP status.
"""

from __future__ import annotations

import datetime
import json
import os
import pathlib
import sqlite3
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import sqlite_utils

from parley.mockapi.fixture import Fixture, apply_overrides, order_rows, read_fixture
from parley.mockapi.policy import NON_CANCELLABLE_STATUSES, decide_cancellation
from parley.mockapi.schema import (
    AdminOrder,
    AuditEntry,
    CancellationCheck,
    CancelResult,
    ErrorReason,
    Item,
    Order,
    Tracking,
    TrackingInfo,
    WorldState,
)

Clock = Callable[[], datetime.datetime]
BUSY_TIMEOUT_SECONDS = 10.0
APP_KEY = "app"
APP_NAME = "parley-mockapi"
"""The `meta` row that marks an order database the mock API created."""
OWN_TABLES = frozenset({"meta", "customers", "orders", "audit"})


class DatabaseRefused(Exception):
    """A database file the mock API will not use; the message is one line naming the file."""


class OrderStoreError(Exception):
    """A request the store refuses; `reason` is the API's error code, `message` one sentence."""

    def __init__(self, reason: ErrorReason, message: str) -> None:
        super().__init__(message)
        self.reason: ErrorReason = reason
        self.message = message


def utc_now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC).replace(microsecond=0)


def connect(path: pathlib.Path | str = ":memory:") -> sqlite_utils.Database:
    """Open a connection usable from any thread (the store serializes access with a lock).

    isolation_level=None: the store issues BEGIN IMMEDIATE itself, so a cancel takes the
    write lock before it reads the status it is about to change.
    """
    conn = sqlite3.connect(str(path), check_same_thread=False, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None)
    return sqlite_utils.Database(conn)


def load_fixture(
    db: sqlite_utils.Database,
    *,
    today: datetime.date,
    fixture: pathlib.Path | None = None,
    overrides: Sequence[Mapping[str, Any]] = (),
) -> None:
    """(Re)create the tables and load the fixture, ages materialized against `today`."""
    data = apply_overrides(read_fixture(fixture), overrides)
    with db.atomic():
        _create_and_fill(db, data, today)


def _create_and_fill(db: sqlite_utils.Database, data: Fixture, today: datetime.date) -> None:
    for name in ("audit", "orders", "customers", "meta"):
        db[name].drop(ignore=True)
    db.table("meta").create({"key": str, "value": str}, pk="key")
    db.table("customers").create({"id": str, "name": str, "email": str}, pk="id", not_null={"name", "email"})
    db.table("orders").create(
        {
            "id": str,
            "customer_id": str,
            "placed_date": str,
            "status": str,
            "total": float,
            "currency": str,
            "items": str,
            "tracking": str,
            "cancelled_at": str,
            "note": str,
        },
        pk="id",
        not_null={"customer_id", "placed_date", "status", "total", "currency", "items"},
        foreign_keys=[("customer_id", "customers", "id")],
    )
    db.table("audit").create(
        {
            "id": int,
            "order_id": str,
            "customer_id": str,
            "old_status": str,
            "new_status": str,
            "at": str,
            "reason": str,
        },
        pk="id",
        not_null={"order_id", "customer_id", "old_status", "new_status", "at"},
        foreign_keys=[("order_id", "orders", "id")],
    )
    db.table("orders").create_index(["customer_id"])
    db.table("meta").insert_all([{"key": APP_KEY, "value": APP_NAME}, {"key": "today", "value": today.isoformat()}])
    db.table("customers").insert_all([c.model_dump() for c in data.customers])
    db.table("orders").insert_all(order_rows(data, today))


def stored_today(db: sqlite_utils.Database) -> datetime.date | None:
    """The `today` kept in the meta table, or None if the database holds no orders yet."""
    if "meta" not in db.table_names():
        return None
    row = db.execute("SELECT value FROM meta WHERE key = 'today'").fetchone()
    return None if row is None else datetime.date.fromisoformat(row[0])


def set_stored_today(db: sqlite_utils.Database, today: datetime.date) -> None:
    db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('today', ?)", [today.isoformat()])


class OrderStore:
    """Orders, customers and the audit trail of one database, seen from its `today`."""

    def __init__(
        self,
        db: sqlite_utils.Database,
        *,
        clock: Clock = utc_now,
        today: datetime.date | None = None,
        in_memory: bool | None = None,
    ) -> None:
        """Serve `db`; `today` defaults to the one in its meta table.

        `in_memory` (detected when None) decides `blocking`: a file database may wait on
        another connection's lock, so the app keeps its calls off the event loop.
        """
        today = today or stored_today(db)
        if today is None:
            raise ValueError("the database has no orders loaded; call load_fixture() first")
        self.db = db
        self.today: datetime.date = today
        self._clock = clock
        # One connection shared by the threadpool: every use of it goes through this lock.
        self._lock = threading.RLock()
        if in_memory is None:
            in_memory = db.execute("PRAGMA database_list").fetchone()[2] == ""
        self.blocking: bool = not in_memory

    # ---- reading -------------------------------------------------------------------------
    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        # db.execute, not db.query: a plain SELECT needs no savepoint around it.
        cur = self.db.execute(sql, params)
        keys = [d[0] for d in cur.description]
        return [dict(zip(keys, values, strict=True)) for values in cur.fetchall()]

    def _row(self, order_id: str) -> dict[str, Any]:
        rows = self._rows("SELECT * FROM orders WHERE id = ?", [order_id])
        if not rows:
            raise OrderStoreError("order_not_found", f"There is no order {order_id}.")
        return rows[0]

    def _owned_row(self, order_id: str, customer_id: str) -> dict[str, Any]:
        row = self._row(order_id)
        if row["customer_id"] != customer_id:
            raise OrderStoreError("not_your_order", f"Order {order_id} does not belong to customer {customer_id}.")
        return row

    def _order(self, row: Mapping[str, Any]) -> Order:
        placed = datetime.date.fromisoformat(row["placed_date"])
        return Order(
            id=row["id"],
            customer_id=row["customer_id"],
            items=[Item(**item) for item in json.loads(row["items"])],
            total=row["total"],
            currency=row["currency"],
            placed_date=placed,
            age_days=(self.today - placed).days,
            status=row["status"],
            tracking=None if row["tracking"] is None else Tracking(**json.loads(row["tracking"])),
            note=row.get("note"),
        )

    def _check(self, order: Order) -> CancellationCheck:
        decision = decide_cancellation(order_id=order.id, status=order.status, age_days=order.age_days, placed_date=order.placed_date)
        return CancellationCheck(
            order_id=order.id,
            eligible=decision.eligible,
            reason=decision.reason,
            message=decision.message,
            age_days=order.age_days,
            placed_date=order.placed_date,
            status=order.status,
        )

    def owner_of(self, order_id: str) -> str:
        """The customer an order belongs to (order_not_found when there is no such order)."""
        with self._lock:
            return str(self._row(order_id)["customer_id"])

    def customer(self, customer_id: str) -> dict[str, str]:
        """A customer's id, name and email (customer_not_found when there is none)."""
        with self._lock:
            rows = self._rows("SELECT id, name, email FROM customers WHERE id = ?", [customer_id])
        if not rows:
            raise OrderStoreError("customer_not_found", f"There is no customer {customer_id}.")
        return rows[0]

    def count_orders(self) -> int:
        with self._lock:
            return self.db.execute("SELECT count(*) FROM orders").fetchone()[0]

    def get_order(self, order_id: str, *, customer_id: str) -> Order:
        """The order, if it belongs to `customer_id` (else not_your_order)."""
        with self._lock:
            return self._order(self._owned_row(order_id, customer_id))

    def tracking(self, order_id: str, *, customer_id: str) -> TrackingInfo:
        """Tracking details, or a message saying why there are none yet."""
        with self._lock:
            order = self._order(self._owned_row(order_id, customer_id))
        return TrackingInfo(order_id=order.id, status=order.status, tracking=order.tracking, message=_tracking_message(order))

    def cancellation(self, order_id: str, *, customer_id: str) -> CancellationCheck:
        """Whether the customer's order may be cancelled now (ownership checked first)."""
        with self._lock:
            order = self._order(self._owned_row(order_id, customer_id))
        return self._check(order)

    def customer_orders(self, customer_id: str, *, acting_customer_id: str) -> list[Order]:
        """Every order of `customer_id`; only that customer may list them."""
        if customer_id != acting_customer_id:
            raise OrderStoreError(
                "not_your_order",
                f"Customer {acting_customer_id} cannot list the orders of customer {customer_id}.",
            )
        with self._lock:
            if self.db.execute("SELECT 1 FROM customers WHERE id = ?", [customer_id]).fetchone() is None:
                raise OrderStoreError("customer_not_found", f"There is no customer {customer_id}.")
            rows = self._rows("SELECT * FROM orders WHERE customer_id = ? ORDER BY id", [customer_id])
            return [self._order(row) for row in rows]

    def admin_orders(self) -> list[AdminOrder]:
        """Every order with its owner's name and its cancellation eligibility."""
        with self._lock:
            rows = self._rows(
                "SELECT orders.*, customers.name AS customer_name FROM orders "
                "JOIN customers ON customers.id = orders.customer_id ORDER BY orders.id"
            )
        result = []
        for row in rows:
            order = self._order(row)
            result.append(AdminOrder(**order.model_dump(), customer_name=row["customer_name"], cancellation=self._check(order)))
        return result

    def statuses(self) -> dict[str, str]:
        with self._lock:
            return dict(self.db.execute("SELECT id, status FROM orders ORDER BY id").fetchall())

    def audit_log(self) -> list[AuditEntry]:
        with self._lock:
            rows = self._rows("SELECT * FROM audit ORDER BY id")
        return [AuditEntry.model_validate({k: v for k, v in row.items() if k != "id"}) for row in rows]

    def final_state(self) -> WorldState:
        """Statuses and audit trail as plain data."""
        return WorldState(today=self.today, statuses=self.statuses(), audit=self.audit_log())

    # ---- changing ------------------------------------------------------------------------
    def cancel(self, order_id: str, *, customer_id: str, reason: str | None = None) -> CancelResult:
        """Cancel the customer's order if policy allows, recording it in the audit table.

        The status check, the conditional UPDATE and the audit row share one IMMEDIATE
        transaction, so of two simultaneous cancels (threads or separate connections) exactly
        one succeeds and the other sees already_cancelled.
        """
        with self._lock:
            conn = self.db.conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                order = self._order(self._owned_row(order_id, customer_id))
                decision = self._check(order)
                if not decision.eligible:
                    raise OrderStoreError(decision.reason or "already_cancelled", decision.message)
                at = self._clock()
                placeholders = ", ".join("?" for _ in NON_CANCELLABLE_STATUSES)
                cur = conn.execute(
                    f"UPDATE orders SET status = 'cancelled', cancelled_at = ? "
                    f"WHERE id = ? AND status = ? AND status NOT IN ({placeholders})",
                    [at.isoformat(), order_id, order.status, *NON_CANCELLABLE_STATUSES],
                )
                if cur.rowcount != 1:  # cannot happen under the write lock; refuse rather than guess
                    raise OrderStoreError("already_cancelled", f"Order {order_id} is already cancelled.")
                conn.execute(
                    "INSERT INTO audit (order_id, customer_id, old_status, new_status, at, reason) VALUES (?, ?, ?, 'cancelled', ?, ?)",
                    [order_id, customer_id, order.status, at.isoformat(), reason],
                )
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        return CancelResult(
            order_id=order_id,
            status="cancelled",
            previous_status=order.status,
            cancelled_at=at,
            message=f"Order {order_id} has been cancelled (it was {order.status}).",
        )

    def close(self) -> None:
        with self._lock:
            self.db.close()


def _tracking_message(order: Order) -> str:
    t = order.tracking
    if order.status == "cancelled":
        return f"Order {order.id} was cancelled, so it will not be delivered."
    if order.status in ("pending", "processing"):
        return f"Order {order.id} is {order.status} and has not shipped yet, so there is no tracking number yet."
    if t is None:
        return f"Order {order.id} is {order.status}, but the carrier has not shared tracking details yet."
    if order.status == "delivered":
        when = f" on {t.delivered_date.isoformat()}" if t.delivered_date else ""
        return f"Order {order.id} was delivered{when} by {t.carrier} (tracking {t.tracking_number})."
    eta = f"; estimated delivery {t.estimated_delivery.isoformat()}" if t.estimated_delivery else ""
    return f"Order {order.id} has shipped with {t.carrier} (tracking {t.tracking_number}); latest: {t.last_event}{eta}."


def owner_problem(db: sqlite_utils.Database) -> str | None:
    """Why `db` is not the mock API's to use (None when it is: empty, marked as its own, or one
    it created before the mark existed: only its own tables and a `today`)."""
    tables = {t for t in db.table_names() if not t.startswith("sqlite_")}
    if not tables:
        return None
    if "meta" in tables and {"key", "value"} <= {c.name for c in db["meta"].columns}:
        marks = dict(db.execute("SELECT key, value FROM meta WHERE key IN (?, 'today')", [APP_KEY]).fetchall())
        if marks.get(APP_KEY) == APP_NAME or (APP_KEY not in marks and "today" in marks and tables <= OWN_TABLES):
            return None
    shown = ", ".join(sorted(tables)[:6]) + (", ..." if len(tables) > 6 else "")
    return f"it holds tables the mock API did not create ({shown})"


def _refusal(path: pathlib.Path, exc: sqlite3.Error) -> DatabaseRefused:
    name = getattr(exc, "sqlite_errorname", "") or ""
    writable = os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)
    if name.startswith("SQLITE_READONLY") or (name.startswith("SQLITE_CANTOPEN") and path.exists() and not writable):
        return DatabaseRefused(
            f"{path} is read-only: the mock API writes to its database (cancellations, the audit trail); give --db a writable file"
        )
    if name.startswith("SQLITE_CANTOPEN") and not path.exists() and not os.access(path.parent, os.W_OK | os.X_OK):
        return DatabaseRefused(
            f"cannot create {path}: the folder {path.parent} cannot be written (a read-only file system or no permission); "
            "give --db a file in a folder you can write"
        )
    return DatabaseRefused(f"{path} is not a database the mock API can use ({exc})")


def open_file_store(path: pathlib.Path, *, today: datetime.date | None = None, reset: bool = False, clock: Clock = utc_now) -> OrderStore:
    """Open (creating if needed) a file database in WAL mode.

    The fixture is loaded when the file is new or `reset` is set. The `today` used is kept in
    the meta table so a restarted server agrees with itself; passing `today` replaces it.
    DatabaseRefused (one line naming the file) for a database the mock API did not create (it is
    left untouched, `reset` or not), a file that is not a database, or one it cannot write.
    """
    path = pathlib.Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DatabaseRefused(f"cannot make the folder of {path}: {exc.strerror or exc}") from None
    db: sqlite_utils.Database | None = None
    try:
        db = connect(path)
        problem = owner_problem(db)
        if problem is not None:
            raise DatabaseRefused(f"{path} is not the mock API's database: {problem}; it is left as it is (give --db a new file)")
        db.enable_wal()
        current = stored_today(db)
        if reset or current is None:
            load_fixture(db, today=today or datetime.date.today())
        else:
            if today is not None and today != current:
                set_stored_today(db, today)
            db.execute("INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)", [APP_KEY, APP_NAME])
    except sqlite3.Error as exc:
        if db is not None:
            db.close()
        raise _refusal(path, exc) from None
    except BaseException:
        if db is not None:
            db.close()
        raise
    return OrderStore(db, clock=clock)
