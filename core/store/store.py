"""parley's SQLite store: batches, conversations (transcript, tool calls, verdict, usage), live
chats and the LLM response cache.

One `Store` owns one connection (WAL, foreign keys on) guarded by a lock, so the batch runner may
call it from worker threads (`asyncio.to_thread`) while the TUI reads the same file through its
own `Store`. Every finished conversation is written in ONE transaction: a crash leaves either
all of it or none of it.

Callers get pydantic records (parley.core.records.batch), never rows. API keys are never written: every
text column written goes through the one redactor (parley.core.redaction: the secrets this
process resolved), and cached requests lose their credential fields.
"""

from __future__ import annotations

import contextlib
import datetime
import functools
import itertools
import json
import logging
import os
import pathlib
import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple, TypedDict, TypeVar, Unpack

from pydantic import ValidationError

from parley.core.errors import ParleyError
from parley.core.evaluation import CRITERION_KIND, BatchSummary, criterion_state
from parley.core.records import (
    BROKEN_STOPS,
    OUTCOME_FILTERS,
    RERUN_STOPS,
    BatchOptions,
    BatchRecord,
    ChatExport,
    ChatSessionRow,
    Conversation,
    ConversationCopy,
    ConversationRow,
    ConversationSpec,
    OutcomeFilter,
    ResultRow,
    StoredChatSession,
    StoredConversation,
    UnreadableBatch,
    Usage,
    Verdict,
)
from parley.core.redaction import REDACTOR
from parley.core.store.batch_owner import BatchOwner, current_owner, owner_alive
from parley.core.store.batch_row import BatchRow
from parley.core.store.file_health import DamagedDatabase, FileIdentity, empty_file, quick_check, remember_opened
from parley.core.store.rows import (
    JUDGE_ROLE,
    bound_text,
    compact_json,
    conversation_row,
    conversation_row_model,
    failed_check_lines,
    like_pattern,
    loads_list,
    message_rows,
    parse_utc,
    redact_row,
    stored_time,
    strip_credentials,
    tool_call_rows,
    usage_dict,
    usage_rows,
    user_fault_items,
    utc_text,
    verdict_row,
)
from parley.core.store.schema import MIGRATIONS, Migration, check_owner, migrate, schema_version
from parley.core.store.schema import ForeignDatabase as ForeignDatabase  # raised by Store.open
from parley.core.store.sqlite_database import Database

MIN_PREFIX = 6

# SQL shared by the store's modules (never outside the store).
RERUN_SQL = "(" + ", ".join(f"'{s}'" for s in sorted(RERUN_STOPS)) + ")"
"""Stop reasons `--resume` runs again (the run broke on parley's or the simulator's side)."""
BROKEN_SQL = "(" + ", ".join(f"'{s}'" for s in sorted(BROKEN_STOPS)) + ")"
OUTCOME_SQL = f"COALESCE(v.outcome, CASE WHEN c.stop_reason IN {BROKEN_SQL} THEN c.stop_reason ELSE 'unevaluated' END)"
"""The outcome of conversation `c` with verdict `v` (LEFT JOIN): one of
parley.core.records.verdict.OUTCOMES (the verdict's; a broken run stored without a verdict is
its stop reason), or unevaluated when no verdict was stored."""

_LIST_HINT = "`parley sessions list` shows what is stored"

ACTIVE_STATUSES = ("pending", "running")
"""Statuses of a batch some process is (or should be) running: the ones with an owner."""

T = TypeVar("T")


def _orphaned(row: Mapping[str, Any], alive: Callable[[BatchOwner], bool]) -> str | None:
    """Why the batch of `row` is interrupted when it is stored pending or running but the process
    that ran it is gone (parley.core.store.batch_owner; no recorded owner counts as gone); None
    when it is not such a batch (or the file predates owners)."""
    if row["status"] not in ACTIVE_STATUSES or "owner_token" not in row.keys():
        return None
    owner = None
    if row["owner_token"] is not None:
        owner = BatchOwner(host=row["owner_host"], pid=row["owner_pid"], started=row["owner_started"], token=row["owner_token"])
        if alive(owner):
            return None
    who = f"the process running it ({owner.describe()})" if owner else "the process running it"
    return f"{who} ended before the batch did; resume it to continue"


def _latest_offset(ref: str) -> int | None:
    """`latest` -> 0, `latest~2` -> 2; None for anything else (an id or a prefix)."""
    name, tilde, back = ref.partition("~")
    if name != "latest":
        return None
    if not tilde:
        return 0
    if not (back.isascii() and back.isdigit()):
        raise ParleyError(f"'{ref}': after `latest~` comes how many batches back, e.g. latest~1")
    return int(back)


log = logging.getLogger("parley.store")


class UnreadableBatchError(ParleyError):
    """A stored batch whose row cannot be read back (see UnreadableBatch): its id and why."""

    def __init__(self, batch: UnreadableBatch) -> None:
        self.batch = batch
        super().__init__(f"batch {batch.id} cannot be read: {batch.reason}")


_LOGGED_UNREADABLE: set[tuple[str, str]] = set()


def _unreadable(row: Mapping[str, Any], exc: Exception, column: str | None = None) -> UnreadableBatch:
    """The record of a batch row that does not read back (`column`: the one that did not); logged
    once per process and problem."""
    if isinstance(exc, ValidationError):
        reason = "; ".join(f"{'.'.join(str(p) for p in (column, *e['loc']) if p) or 'row'}: {e['msg']}" for e in exc.errors()[:3])
        if exc.error_count() > 3:
            reason += f" (and {exc.error_count() - 3} more)"
    else:
        reason = f"{type(exc).__name__}: {exc}"
    created, status = row.get("created_at"), row.get("status")
    batch = UnreadableBatch(
        id=str(row.get("id")),
        created_at=created if isinstance(created, str) else None,
        status=status if isinstance(status, str) else None,
        reason=reason,
    )
    if (batch.id, reason) not in _LOGGED_UNREADABLE:
        _LOGGED_UNREADABLE.add((batch.id, reason))
        log.warning("batch %s cannot be read (listed as unreadable): %s", batch.id, reason)
    return batch


class DuplicateConversationError(ParleyError):
    """The batch already holds a finished conversation for this spec and trial."""


# ---- helpers ------------------------------------------------------------------------------------


def default_db_path() -> pathlib.Path:
    """PARLEY_DB if set, else `sessions/parley.db` under the current directory."""
    from parley.core.settings import settings

    return settings().db_path


def _locked(method: Callable[..., T]) -> Callable[..., T]:
    @functools.wraps(method)
    def wrapper(self: Store, *args: Any, **kwargs: Any) -> T:
        with self._lock:
            return method(self, *args, **kwargs)

    return wrapper


def _writes(method: Callable[..., T]) -> Callable[..., T]:
    """A locked method that writes: ReadOnlyDatabase on a store opened read-only."""

    @functools.wraps(method)
    def wrapper(self: Store, *args: Any, **kwargs: Any) -> T:
        if self.read_only:
            raise ReadOnlyDatabase(f"{self.path} is open read-only: {method.__name__.replace('_', ' ')} needs to write to it")
        with self._lock:
            return method(self, *args, **kwargs)

    return wrapper


class ReadOnlyDatabase(ParleyError):
    """The database cannot be written (a read-only file or file system)."""


def _read_only_problem(exc: sqlite3.Error, path: pathlib.Path) -> str | None:
    """Whether a failure to open `path` for writing is because it is read-only."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    if name.startswith("SQLITE_READONLY"):
        return "read-only"
    if name.startswith("SQLITE_CANTOPEN") and path.exists() and not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)):
        return "read-only"
    return None


def _read_only(path: pathlib.Path) -> ReadOnlyDatabase:
    return ReadOnlyDatabase(
        f"{path} is read-only: this command writes to the database. Commands that only read it "
        "(parley sessions, parley report) still can; give --db (or PARLEY_DB) a writable file to run this one"
    )


def _unwritable_folder(path: pathlib.Path) -> pathlib.Path | None:
    """The folder that stops a new database at `path` from being made (the nearest one that
    exists, when it cannot be written: a read-only file system or no permission), else None."""
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return None if os.access(folder, os.W_OK | os.X_OK) else folder


def _cannot_create(path: pathlib.Path, folder: pathlib.Path) -> ParleyError:
    return ParleyError(
        f"cannot create the database {path}: the folder {folder} cannot be written (a read-only file system "
        "or no permission); give --db (or PARLEY_DB) a file in a folder you can write"
    )


def _connect_read_only(path: pathlib.Path) -> sqlite3.Connection:
    """A read-only connection. `mode=ro` first; a WAL database in a folder this user cannot
    write (a read-only file system) can only be read as `immutable` (no -shm file to share)."""
    for options in ("mode=ro", "mode=ro&immutable=1"):
        conn = sqlite3.connect(f"{path.as_uri()}?{options}", uri=True, check_same_thread=False, timeout=30.0)
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return conn
        except sqlite3.OperationalError:
            conn.close()
            if options.endswith("immutable=1"):
                raise
    raise AssertionError("unreachable")


_SUMMARY_COLUMNS = f"""
    c.batch_id, c.spec_id, c.spec_index, c.name, c.trial, ({OUTCOME_SQL}) AS outcome, v.score, c.turns, c.duration_s,
    c.cost_usd, c.stop_reason, json_extract(v.judge, '$.error') IS NOT NULL AS judge_error,
    json_extract(v.judge, '$.prompt_fit') AS judge_prompt_fit, json_extract(v.judge, '$.criteria_prompt_fit') AS criteria_prompt_fit,
    json_extract(v.judge, '$.checkpoint_prompt_fits') AS checkpoint_prompt_fits
"""


class _CountedRow(NamedTuple):
    """A conversation as a batch's summary counts it (parley.core.evaluation.CountedRow): a plain
    tuple, so a list of many batches reads fast."""

    batch_id: str
    spec_id: str
    spec_index: int
    name: str
    trial: int
    outcome: str
    score: int | None
    turns: int
    duration_s: float
    cost_usd: float | None
    stop_reason: str
    judge_error: bool
    judge_prompt_fit: str | None
    criteria_prompt_fit: str | None
    checkpoint_prompt_fits: list[str]


_COPIED = (
    ("messages", "conversation_id, position, role, content, tool_calls, tool_call_id, name"),
    (
        "tool_calls",
        "conversation_id, position, call_id, name, arguments_raw, arguments, customer_id, result, ok, refused, http_status, error, "
        "latency_s, ignored_arguments, world_effects",
    ),
)
"""The rows `save_copy` copies from one conversation to its copy: every column, the id first."""

_ROW_COLUMNS = f"""
    c.id, c.batch_id, c.name, c.spec_id, c.kind, c.variables, c.trial, c.stop_reason, c.error,
    c.turns, c.input_tokens, c.output_tokens, c.cost_usd, c.duration_s, c.started_at,
    {OUTCOME_SQL} AS outcome, v.passed, v.score, v.comment, v.policy_violations,
    v.error AS verdict_error
"""


class ConversationFilters(TypedDict, total=False):
    """Which stored conversations a listing or a count takes (every one when none is given)."""

    text: str | None
    """Searched for in names, spec ids, variables, comments, errors and the transcript."""
    name: str | None
    """The exact profile or test name."""
    outcome: OutcomeFilter | None
    """One of OUTCOME_FILTERS."""
    since: datetime.datetime | datetime.date | None
    """Started at or after."""
    until: datetime.datetime | datetime.date | None
    """Started before."""


def _marks(values: Sequence[Any]) -> str:
    return ",".join("?" * len(values))


class Store:
    """The SQLite store. Open with `Store.open()`; close with `close()` or a `with` block."""

    def __init__(self, db: Database, path: pathlib.Path | None, *, read_only: bool = False) -> None:
        self.db = db
        self.path = path
        self.read_only = read_only
        self._lock = threading.RLock()
        self._owner_columns: bool | None = None
        self._identity: FileIdentity | None = None
        if path is not None and not read_only:
            try:
                self._identity = FileIdentity(path)
            except OSError:  # not there (yet): nothing to compare a commit with
                self._identity = None
        if path is not None:
            remember_opened(path)

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        """One write transaction that takes SQLite's write lock at once (BEGIN IMMEDIATE), waiting
        its turn (busy_timeout). Another connection may write the same file (the service's
        batches and its handlers, a `parley run` beside the app): a deferred transaction that
        read first and wrote second would fail with "database is locked" instead of waiting."""
        if self.db.conn.in_transaction:
            with self.db.atomic():
                yield
            return
        self.db.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
            if self._identity is not None:
                self._identity.check()  # the file deleted or replaced meanwhile: this commit would go nowhere
        except BaseException:
            self.db.conn.rollback()
            raise
        self.db.conn.commit()

    # ---- opening ------------------------------------------------------------------------------

    @classmethod
    def open(
        cls, path: str | os.PathLike[str] | None = None, *, migrations: Sequence[Migration] = MIGRATIONS, read_only: bool = False
    ) -> Store:
        """Open (creating if need be) the database at `path`; default PARLEY_DB, else
        `sessions/parley.db` under the current directory. ":memory:" gives a private in-memory
        store. `read_only` (for commands that only read) opens an existing file without
        writing to it, even on a read-only file system; its write methods raise ReadOnlyDatabase.

        Raises ForeignDatabase for a SQLite file parley did not create (it is left untouched),
        ReadOnlyDatabase when a writer cannot write the file, ParleyError if the file was
        written by a newer parley or is not a database at all."""
        if path is not None and str(path) == ":memory:":
            conn = sqlite3.connect(":memory:", check_same_thread=False)
            resolved: pathlib.Path | None = None
        else:
            resolved = pathlib.Path(path) if path is not None else default_db_path()
            resolved = resolved.expanduser().resolve()
            empty = empty_file(resolved)
            if read_only and empty is not None:  # a writer makes its database in an empty file, as SQLite does (several may at once)
                raise empty
            existed = resolved.is_file() and empty is None
            if read_only and existed:
                return cls._open_read_only(resolved, migrations)
            try:
                resolved.parent.mkdir(parents=True, exist_ok=True)
                # One connection shared by worker threads; the Store's lock serialises its use.
                conn = sqlite3.connect(str(resolved), check_same_thread=False, timeout=30.0)
            except (sqlite3.Error, OSError) as exc:
                if isinstance(exc, sqlite3.Error) and _read_only_problem(exc, resolved):
                    raise _read_only(resolved) from None
                if not resolved.exists() and (folder := _unwritable_folder(resolved)) is not None:
                    raise _cannot_create(resolved, folder) from None
                reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
                raise ParleyError(f"cannot open the database {resolved}: {reason}") from exc
        db = Database(conn)
        try:
            db.execute("PRAGMA foreign_keys = ON")
            db.execute("PRAGMA busy_timeout = 30000")
            if resolved is not None and existed:
                quick_check(conn, resolved)  # a damaged file is never written to
            if resolved is not None:
                check_owner(db, str(resolved))  # before WAL mode or anything else is written
                db.enable_wal()
                # WAL + NORMAL: a commit survives the process being killed; only a power cut
                # may lose the last commits, never consistency.
                db.execute("PRAGMA synchronous = NORMAL")
            migrate(db, migrations, where=str(resolved or "the in-memory database"))
        except sqlite3.DatabaseError as exc:
            conn.close()
            if resolved is not None and _read_only_problem(exc, resolved):
                raise _read_only(resolved) from None
            raise ParleyError(f"{resolved} is not a parley database ({exc})") from exc
        except DamagedDatabase:
            conn.close()
            raise
        except BaseException:
            conn.close()
            raise
        return cls(db, resolved)

    @classmethod
    def _open_read_only(cls, path: pathlib.Path, migrations: Sequence[Migration]) -> Store:
        try:
            conn = _connect_read_only(path)
        except sqlite3.OperationalError as exc:
            raise ParleyError(f"cannot open the database {path}: {exc}") from exc
        except sqlite3.DatabaseError as exc:
            raise ParleyError(f"{path} is not a parley database ({exc})") from exc
        db = Database(conn)
        try:
            quick_check(conn, path)  # a damaged file: one line, whatever the command goes on to read
            check_owner(db, str(path))
            current = schema_version(db)
            if current > len(migrations):
                raise ParleyError(
                    f"{path} was written by a newer parley (schema version {current}; this parley "
                    f"reads up to version {len(migrations)}). Upgrade parley, or set PARLEY_DB to another file."
                )
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise ParleyError(f"{path} is not a parley database ({exc})") from exc
        except BaseException:
            conn.close()
            raise
        return cls(db, path, read_only=True)

    def close(self) -> None:
        with self._lock:
            self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @_locked
    def schema_version(self) -> int:
        return schema_version(self.db)

    # ---- reads for the store's own query modules -------------------------------------------------

    @_locked
    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Run a read query and return its (small) result as dicts. Only for the store's own
        named queries (batch_queries, session_queries): everyone else gets records."""
        return list(self.db.query(sql, params))

    def _resolve(self, table: str, ident: str, what: str) -> str:
        """An id from an exact id or a unique prefix of >= MIN_PREFIX characters."""
        ident = (ident or "").strip()
        if ident and self.db.execute(f"SELECT 1 FROM {table} WHERE id = ?", [ident]).fetchone():
            return ident
        if len(ident) >= MIN_PREFIX:
            rows = self.db.execute(f"SELECT id FROM {table} WHERE substr(id, 1, ?) = ? ORDER BY id LIMIT 3", [len(ident), ident]).fetchall()
            if len(rows) == 1:
                return str(rows[0][0])
            if len(rows) > 1:
                plural = what + ("es" if what.endswith("ch") else "s")
                raise ParleyError(f"'{ident}' matches several {plural} ({', '.join(r[0] for r in rows)}...); type more of the id")
        elif ident:
            if self.db.execute(f"SELECT 1 FROM {table} WHERE substr(id, 1, ?) = ? LIMIT 1", [len(ident), ident]).fetchone():
                raise ParleyError(f"'{ident}' is too short to pick a {what}: type at least {MIN_PREFIX} characters of the id")
        raise ParleyError(f"no {what} '{ident}'; {_LIST_HINT}")

    def _insert(self, table: str, rows: list[dict[str, Any]], redact: Callable[[str], str] | None = None) -> None:
        """Insert rows that all have the same keys, redacted (`redact`: the write's
        `REDACTOR.stored_redaction()`, one for all of its rows). Plain executemany: sqlite-utils'
        insert_all inspects the table on every call, which costs more than the write itself here."""
        if not rows:
            return
        clean = redact or REDACTOR.stored_redaction()
        columns = list(rows[0])
        sql = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
        self.db.conn.executemany(sql, [[r[c] for c in columns] for r in (redact_row(r, clean) for r in rows)])

    # ---- batches --------------------------------------------------------------------------------

    @_writes
    def create_batch(self, batch: BatchRecord) -> BatchRecord:
        """Store a new batch; returns it. An existing id is an error."""
        if self.db.execute("SELECT 1 FROM batches WHERE id = ?", [batch.id]).fetchone():
            raise ParleyError(f"a batch '{batch.id}' already exists")
        row = self._batch_row(batch)
        if batch.status in ACTIVE_STATUSES:
            row.update(self._owner_row())
        with self._writing():
            self._insert("batches", [row])
        return batch

    def _has_owner_columns(self) -> bool:
        if self._owner_columns is None:
            self._owner_columns = "owner_token" in self.db["batches"].columns_dict
        return self._owner_columns

    def _owner_row(self) -> dict[str, Any]:
        """This process as the owner of a batch it stores as pending or running."""
        if not self._has_owner_columns():
            return {}
        owner = current_owner()
        return {"owner_host": owner.host, "owner_pid": owner.pid, "owner_started": owner.started, "owner_token": owner.token}

    @staticmethod
    def _batch_row(batch: BatchRecord) -> dict[str, Any]:
        return {
            "id": batch.id,
            "created_at": utc_text(batch.created_at),
            "started_at": utc_text(batch.started_at),
            "finished_at": utc_text(batch.finished_at),
            "status": batch.status,
            "sources": compact_json(batch.sources),
            "options": batch.options.model_dump_json(),
            "planned": batch.planned,
            "error": batch.error,
            "parent_id": batch.parent_id,
            # a batch of no group leaves its group columns out: written so, it is the row an older parley wrote
            **({"group_id": batch.group_id, "group_role": batch.group_role} if batch.group_id is not None else {}),
        }

    @staticmethod
    def _batch_from(row: Mapping[str, Any]) -> BatchRecord:
        """The row as a BatchRecord; UnreadableBatchError (logged) when it does not read back."""
        try:
            options = BatchOptions.model_validate_json(row["options"])
        except ValidationError as exc:  # what a damaged row or a non-finite number stored as null gives
            raise UnreadableBatchError(_unreadable(row, exc, "options")) from None
        orphaned = _orphaned(row, owner_alive)  # a killed run's batch reads as interrupted, even from a read-only file
        try:
            return BatchRecord(
                id=row["id"],
                created_at=stored_time(row["created_at"]),
                started_at=parse_utc(row["started_at"]),
                finished_at=parse_utc(row["finished_at"]),
                status="interrupted" if orphaned else row["status"],
                sources=json.loads(row["sources"]),
                options=options,
                planned=row["planned"],
                error=orphaned or row["error"],
                parent_id=row["parent_id"],
                group_id=row.get("group_id"),
                group_role=row.get("group_role"),
            )
        except (ValidationError, ValueError, TypeError) as exc:  # JSONDecodeError and a bad date are ValueErrors
            raise UnreadableBatchError(_unreadable(row, exc)) from None

    @classmethod
    def _batch_or_unreadable(cls, row: Mapping[str, Any]) -> BatchRecord | UnreadableBatch:
        try:
            return cls._batch_from(row)
        except UnreadableBatchError as exc:
            return exc.batch

    @_writes
    def update_batch(self, batch_id: str, **fields: Any) -> BatchRecord:
        """Change some of a batch's fields (status, started_at, finished_at, planned, error,
        sources, options); returns the updated record. Values are validated as BatchRecord's."""
        unknown = set(fields) - (set(BatchRecord.model_fields) - {"id", "created_at"})
        if unknown:
            raise ValueError(f"update_batch cannot change {', '.join(sorted(unknown))}")
        current = self.get_batch(batch_id)
        updated = BatchRecord.model_validate({**current.model_dump(), **fields})
        row = self._batch_row(updated)
        changes = {k: row[k] for k in fields}
        if "status" in fields and updated.status in ACTIVE_STATUSES:
            changes.update(self._owner_row())  # whoever starts (or resumes) a batch owns it
        with self._writing():
            self.db.table("batches").update(current.id, redact_row(changes))
        return updated

    @_locked
    def get_batch(self, batch_id: str) -> BatchRecord:
        """The batch with this id (or unique id prefix of >= 6 characters)."""
        resolved = self.resolve_batch_ref(batch_id)
        row = next(self.db.query("SELECT * FROM batches WHERE id = ?", [resolved]))
        return self._batch_from(row)

    @_locked
    def batch_owner(self, batch_id: str) -> BatchOwner | None:
        """The process that last stored the batch as pending or running (None: not recorded,
        e.g. a batch written before owners were)."""
        if not self._has_owner_columns():
            return None
        resolved = self.resolve_batch_ref(batch_id)
        row = next(self.db.query("SELECT owner_host, owner_pid, owner_started, owner_token FROM batches WHERE id = ?", [resolved]))
        if row["owner_token"] is None:
            return None
        return BatchOwner(host=row["owner_host"], pid=row["owner_pid"], started=row["owner_started"], token=row["owner_token"])

    @_locked
    def interrupt_orphans(self, alive: Callable[[BatchOwner], bool] = owner_alive) -> list[str]:
        """Mark `interrupted` every batch left pending or running by a process that is gone
        (see parley.core.store.batch_owner; a batch with no recorded owner counts as gone); returns their
        ids. A batch another live process runs is left alone. Each change is conditional on
        the owner read, so a batch resumed meanwhile by someone else is not touched."""
        if self.read_only or not self._has_owner_columns():
            return []  # read-only: what is stored is shown as it is
        marks = ",".join("?" * len(ACTIVE_STATUSES))
        rows = list(
            self.db.query(
                f"SELECT id, owner_host, owner_pid, owner_started, owner_token FROM batches WHERE status IN ({marks})",
                list(ACTIVE_STATUSES),
            )
        )
        interrupted = []
        for row in rows:
            why = _orphaned({**row, "status": ACTIVE_STATUSES[0]}, alive)
            if why is None:
                continue
            with self._writing():
                cursor = self.db.execute(
                    f"UPDATE batches SET status = 'interrupted', error = ? WHERE id = ? AND status IN ({marks}) AND owner_token IS ?",
                    [why, row["id"], *ACTIVE_STATUSES, row["owner_token"]],
                )
            if cursor.rowcount:
                interrupted.append(row["id"])
        return interrupted

    @_locked
    def batch_row(self, batch_id: str) -> BatchRow:
        """One batch (id or unique prefix) with its summary so far, as `list_batches` gives it."""
        batch = self.get_batch(batch_id)
        return self._with_summaries([batch])[0]

    def _with_summaries(self, batches: list[BatchRecord]) -> list[BatchRow]:
        """Each batch with its summary, from one read of their conversations' light rows."""
        rows: dict[str, list[_CountedRow]] = {b.id: [] for b in batches}
        for start in range(0, len(batches), 500):  # SQLite's limit on parameters
            ids = [b.id for b in batches[start : start + 500]]
            sql = (
                f"SELECT {_SUMMARY_COLUMNS} FROM conversations c LEFT JOIN verdicts v ON v.conversation_id = c.id"
                f" WHERE c.batch_id IN ({','.join('?' * len(ids))}) ORDER BY c.batch_id, c.spec_index, c.spec_id, c.trial"
            )
            for found in self.db.execute(sql, ids).fetchall():
                row = _CountedRow._make((*found[:-1], loads_list(found[-1])))  # the checkpoints' fits: a JSON list
                rows[row.batch_id].append(row)
        return [
            BatchRow(
                batch=b,
                summary=BatchSummary.from_rows(rows[b.id], planned=b.planned, trials=b.options.trials, seed=b.options.seed),
            )
            for b in batches
        ]

    @_locked
    def count_batches(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM batches").fetchone()[0])

    @_locked
    def data_version(self) -> int:
        """A number that changes whenever another connection (another process: `parley run`, the
        service) commits to the database, and not for this one's own writes: SQLite's
        `PRAGMA data_version`, which reads no table, so asking every few seconds costs nothing."""
        return int(self.db.execute("PRAGMA data_version").fetchone()[0])

    @_locked
    def latest_batch_id(self, back: int = 0) -> str | None:
        """The id of the batch created last (`back` = 1: the one before it...), or None when there
        is no such batch."""
        row = self.db.execute("SELECT id FROM batches ORDER BY created_at DESC, rowid DESC LIMIT 1 OFFSET ?", [back]).fetchone()
        return row[0] if row else None

    @_locked
    def resolve_batch_ref(self, ref: str) -> str:
        """A batch id from what a person types: an id, a unique prefix of >= 6 characters,
        `latest` (the batch created last) or `latest~N` (N batches before it). ParleyError,
        saying what exists, otherwise."""
        text = (ref or "").strip()
        back = _latest_offset(text)
        if back is None:
            return self._resolve("batches", text, "batch")
        found = self.latest_batch_id(back)
        if found is not None:
            return found
        count = self.count_batches()
        if not count:
            raise ParleyError(f"there are no batches in {self.path or 'this database'} yet; `parley run PATH` starts one")
        raise ParleyError(
            f"'{text}' goes back further than the {count} batch{'es' if count != 1 else ''} stored (latest~{count - 1} is the oldest)"
        )

    @_locked
    def child_batches(self, batch_id: str) -> list[BatchRecord | UnreadableBatch]:
        """The batches made from this one (re-runs, replays and re-scores), oldest first; one that cannot
        be read is there as UnreadableBatch."""
        rows = self.db.query("SELECT * FROM batches WHERE parent_id = ? ORDER BY created_at, rowid", [batch_id])
        return [self._batch_or_unreadable(r) for r in rows]

    @_locked
    def group_batches(self, group_id: str) -> list[BatchRecord]:
        """The batches of a group (parley.core.records.BatchRecord.group_id), in the order they were
        made; ParleyError for a group with no batch."""
        rows = list(self.db.query("SELECT * FROM batches WHERE group_id = ? ORDER BY created_at, rowid", [group_id]))
        if not rows:
            raise ParleyError(f"no batch belongs to a group '{group_id}'")
        return [self._batch_from(r) for r in rows]

    @_locked
    def resolve_group_ref(self, ref: str) -> str:
        """A group id from what a person types: the group's id or a unique prefix of it (>= 6
        characters), a batch of the group (its id, prefix, `latest` or `latest~N`), or `latest`
        for the group made last. ParleyError otherwise, saying why."""
        text = (ref or "").strip()
        if text == "latest":
            row = self.db.execute(
                "SELECT group_id FROM batches WHERE group_id IS NOT NULL ORDER BY created_at DESC, rowid DESC LIMIT 1"
            ).fetchone()
            if row is None:
                raise ParleyError(f"no group of batches in {self.path or 'this database'} yet; `parley run PATH --bot A --bot B` makes one")
            return str(row[0])
        if len(text) >= 6:
            found = [
                r[0] for r in self.db.execute("SELECT DISTINCT group_id FROM batches WHERE group_id LIKE ?", [text.replace("%", "") + "%"])
            ]
            if len(found) == 1:
                return str(found[0])
            if len(found) > 1:
                raise ParleyError(f"'{text}' is the start of several groups' ids; give more of it")
        batch = self.get_batch(text)
        if batch.group_id is None:
            raise ParleyError(f"batch {batch.id} belongs to no group of batches (one run of several --bot makes one)")
        return batch.group_id

    @_locked
    def list_batches(self, limit: int = 50, offset: int = 0, *, status: str | None = None) -> list[BatchRow | UnreadableBatch]:
        """Batches newest first (the order `latest~N` counts in), each with its summary so far;
        `status` keeps only batches in that status. A batch whose row cannot be read is listed in
        its place as UnreadableBatch (its id and why), and logged."""
        # a batch stored running whose process is gone reads as interrupted: asked for either, both are read, then kept by what they read as
        if status:
            stored_as = [status, *ACTIVE_STATUSES] if status == "interrupted" else [status]
            sql = f"SELECT * FROM batches WHERE status IN ({','.join('?' * len(stored_as))}) ORDER BY created_at DESC, rowid DESC"
            rows = (self._batch_or_unreadable(r) for r in self.db.query(sql, stored_as))
            read = list(itertools.islice((r for r in rows if r.status == status), offset, offset + limit))
        else:
            sql = "SELECT * FROM batches ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?"
            read = [self._batch_or_unreadable(r) for r in self.db.query(sql, [limit, offset])]
        summarised = iter(self._with_summaries([b for b in read if isinstance(b, BatchRecord)]))
        return [b if isinstance(b, UnreadableBatch) else next(summarised) for b in read]

    # ---- conversations --------------------------------------------------------------------------

    @_writes
    def save_conversation(
        self,
        batch_id: str | None,
        spec: ConversationSpec,
        conversation: Conversation,
        verdict: Verdict | None = None,
        trial: int = 1,
    ) -> str:
        """Store a finished conversation with its messages, tool calls, verdict and usage in one
        transaction; returns its id.

        Duplicates: saving the same conversation id again is a no-op (a retried write). Another
        conversation for a (batch, spec, trial) already stored raises DuplicateConversationError
        and changes nothing, unless the stored one's run broke on parley's or the simulator's
        side (RERUN_STOPS: user_error, infrastructure_error, cancelled, a legacy error): that one
        is replaced, so `--resume` can re-run it.
        """
        if self._stored_already(conversation, verdict):
            return conversation.id
        clean = REDACTOR.stored_redaction()
        with self._writing():
            self._make_room(batch_id, spec, trial)
            self._insert("conversations", [conversation_row(batch_id, spec, conversation, verdict, trial)], clean)
            self._insert("messages", message_rows(conversation), clean)
            self._insert("tool_calls", tool_call_rows(conversation), clean)
            if verdict is not None:
                self._insert("verdicts", [verdict_row(conversation, verdict)], clean)
            self._insert("usage", usage_rows(conversation, verdict), clean)
        return conversation.id

    def _stored_already(self, conversation: Conversation, verdict: Verdict | None) -> bool:
        """Whether `conversation` is stored already (saving it again is a no-op: a retried
        write); ValueError when `verdict` is another conversation's."""
        if verdict is not None and verdict.conversation_id != conversation.id:
            raise ValueError(f"verdict is for conversation {verdict.conversation_id}, not {conversation.id}")
        return self.db.execute("SELECT 1 FROM conversations WHERE id = ?", [conversation.id]).fetchone() is not None

    def _make_room(self, batch_id: str | None, spec: ConversationSpec, trial: int) -> None:
        """In a write transaction: check that the batch exists and has no conversation for this
        spec and trial (one whose run broke on the simulator's or parley's side is replaced)."""
        if batch_id is None:
            return
        if not self.db.execute("SELECT 1 FROM batches WHERE id = ?", [batch_id]).fetchone():
            raise ParleyError(f"no batch '{batch_id}'; create it with create_batch() first")
        existing = self.db.execute(
            "SELECT id, stop_reason FROM conversations WHERE batch_id = ? AND spec_id = ? AND trial = ?",
            [batch_id, spec.spec_id, trial],
        ).fetchone()
        if existing is not None:
            if existing[1] not in RERUN_STOPS:
                raise DuplicateConversationError(
                    f"batch '{batch_id}' already has {spec.spec_id} trial {trial} (conversation {existing[0]}); nothing was replaced"
                )
            self.db.execute("DELETE FROM conversations WHERE id = ?", [existing[0]])

    def save_copy(
        self, batch_id: str, spec: ConversationSpec, conversation: Conversation, verdict: Verdict, trial: int, *, source_id: str
    ) -> str:
        """Store `conversation`, a copy of stored conversation `source_id` under a new id (a
        re-score's), with its own verdict and usage, in one transaction as save_conversation
        does; its messages and tool calls are copied row for row inside SQLite, as they were
        stored. ParleyError, with nothing stored, when the source no longer has them all."""
        copy = ConversationCopy(spec=spec, conversation=conversation, verdict=verdict, trial=trial, source_id=source_id)
        error = self.save_copies(batch_id, [copy])[0]
        if error is not None:
            raise error
        return conversation.id

    @_writes
    def save_copies(self, batch_id: str, copies: Sequence[ConversationCopy]) -> list[Exception | None]:
        """Store several re-score copies (see `save_copy`) in one transaction: a re-score's
        copies are many and small, and a commit costs more than one copy. They are written with
        a statement per table when none is in the way; else (and when that fails) each in a
        savepoint of its own, so one the store refuses (DuplicateConversationError, a source
        that changed, a value it cannot write) is rolled back alone: its error is at its place
        in the list returned (None: stored), and the others are stored all the same."""
        for copy in copies:
            if copy.verdict.conversation_id != copy.conversation.id:
                raise ValueError(f"verdict is for conversation {copy.verdict.conversation_id}, not {copy.conversation.id}")
        errors: list[Exception | None] = []
        clean = REDACTOR.stored_redaction()
        with self._writing():
            if len(copies) > 1:
                try:
                    with self._writing():  # a savepoint: every copy at once, when none is in the way
                        if self._copy_all(batch_id, copies, clean):
                            return [None] * len(copies)
                except Exception:  # noqa: BLE001 - each copy is tried alone next, and gets its own error
                    log.debug("%d copies could not be stored at once; storing them one by one", len(copies), exc_info=True)
            for copy in copies:
                try:
                    with self._writing():  # a savepoint inside the transaction
                        self._copy(batch_id, copy, clean)
                except Exception as exc:  # noqa: BLE001 - the caller gets it, in its place
                    if not self.db.conn.in_transaction:
                        raise  # SQLite ended the whole transaction: none of the copies is stored
                    errors.append(exc)
                else:
                    errors.append(None)
        return errors

    def _copy_all(self, batch_id: str, copies: Sequence[ConversationCopy], clean: Callable[[str], str]) -> bool:
        """Every copy with a statement per table, not per copy; False, with nothing written, when
        one of them is not a plain new one (its id or its run is stored already, or the batch is
        gone): `_copy` deals with those one by one. Raises (the caller rolls back) when a source
        no longer has the rows its copy counts."""
        ids = [copy.conversation.id for copy in copies]
        if self.db.execute(f"SELECT 1 FROM conversations WHERE id IN ({_marks(ids)}) LIMIT 1", ids).fetchone():
            return False
        if not self.db.execute("SELECT 1 FROM batches WHERE id = ?", [batch_id]).fetchone():
            return False
        spec_ids = sorted({copy.spec.spec_id for copy in copies})
        sql = f"SELECT spec_id, trial FROM conversations WHERE batch_id = ? AND spec_id IN ({_marks(spec_ids)})"
        stored = {(row[0], row[1]) for row in self.db.execute(sql, [batch_id, *spec_ids]).fetchall()}
        runs = [(copy.spec.spec_id, copy.trial) for copy in copies]
        if stored.intersection(runs) or len(set(runs)) < len(runs):
            return False
        rows = [conversation_row(batch_id, copy.spec, copy.conversation, copy.verdict, copy.trial) for copy in copies]
        self._insert("conversations", rows, clean)
        pairs = [value for copy in copies for value in (copy.conversation.id, copy.source_id)]
        expected = [sum(len(c.conversation.messages) for c in copies), sum(len(c.conversation.tool_calls) for c in copies)]
        for (table, columns), count in zip(_COPIED, expected, strict=True):
            rest = columns.split(", ", 1)[1]
            sql = (
                f"INSERT INTO {table} ({columns}) SELECT copied.column1, {rest} FROM {table}"
                f" JOIN (VALUES {', '.join(['(?, ?)'] * len(copies))}) AS copied ON {table}.conversation_id = copied.column2"
            )
            if self.db.execute(sql, pairs).rowcount != count:
                raise ParleyError(f"a conversation changed while {len(copies)} copies of it were made")  # each is tried alone next
        self._insert("verdicts", [verdict_row(copy.conversation, copy.verdict) for copy in copies], clean)
        self._insert("usage", [row for copy in copies for row in usage_rows(copy.conversation, copy.verdict)], clean)
        return True

    def _copy(self, batch_id: str, copy: ConversationCopy, clean: Callable[[str], str]) -> None:
        conversation, verdict = copy.conversation, copy.verdict
        if self._stored_already(conversation, verdict):
            return
        self._make_room(batch_id, copy.spec, copy.trial)
        self._insert("conversations", [conversation_row(batch_id, copy.spec, conversation, verdict, copy.trial)], clean)
        copied = [
            self.db.execute(
                f"INSERT INTO {table} ({columns}) SELECT ?, {columns.split(', ', 1)[1]} FROM {table} WHERE conversation_id = ?",
                [conversation.id, copy.source_id],
            ).rowcount
            for table, columns in _COPIED
        ]
        if copied != [len(conversation.messages), len(conversation.tool_calls)]:
            raise ParleyError(f"conversation {copy.source_id} changed while it was copied ({copied[0]} messages, {copied[1]} tool calls)")
        self._insert("verdicts", [verdict_row(conversation, verdict)], clean)
        self._insert("usage", usage_rows(conversation, verdict), clean)

    @_locked
    def completed_keys(self, batch_id: str, *, retry_errors: bool = True) -> set[tuple[str, int]]:
        """(spec_id, trial) of the batch's stored conversations, for `--resume`. With
        `retry_errors` (the default), conversations whose run broke on parley's or the
        simulator's side (RERUN_STOPS) are left out so they run again; a bot_error is a result."""
        sql = "SELECT spec_id, trial FROM conversations WHERE batch_id = ?"
        if retry_errors:
            sql += f" AND stop_reason NOT IN {RERUN_SQL}"
        return {(r[0], r[1]) for r in self.db.execute(sql, [batch_id]).fetchall()}

    @_locked
    def run_keys(self, batch_id: str, outcomes: Sequence[str]) -> list[tuple[str, int]]:
        """(spec_id, trial) of the batch's stored conversations whose outcome (OUTCOME_SQL) is
        one of `outcomes`, in plan order: what `parley run --rerun` runs again."""
        if not outcomes:
            return []
        marks = ",".join("?" * len(outcomes))
        sql = (
            f"SELECT c.spec_id, c.trial FROM conversations c LEFT JOIN verdicts v ON v.conversation_id = c.id "
            f"WHERE c.batch_id = ? AND ({OUTCOME_SQL}) IN ({marks}) ORDER BY c.spec_index, c.spec_id, c.trial"
        )
        return [(r[0], r[1]) for r in self.db.execute(sql, [batch_id, *outcomes]).fetchall()]

    @staticmethod
    def _filters(batch_id: str | None, filters: ConversationFilters) -> tuple[str, list[Any]]:
        where: list[str] = []
        params: list[Any] = []
        text, name, outcome = filters.get("text"), filters.get("name"), filters.get("outcome")
        since, until = filters.get("since"), filters.get("until")
        if batch_id is not None:
            where.append("c.batch_id = ?")
            params.append(batch_id)
        if name:
            where.append("c.name = ?")
            params.append(name)
        if outcome:
            if outcome not in OUTCOME_FILTERS:
                raise ParleyError(f"unknown outcome {outcome!r}: use {', '.join(OUTCOME_FILTERS)}")
            where.append(f"({OUTCOME_SQL}) = ?")
            params.append(outcome)
        if since is not None:
            where.append("c.started_at >= ?")
            params.append(bound_text(since))
        if until is not None:
            where.append("c.started_at < ?")
            params.append(bound_text(until))
        if text:
            pattern = like_pattern(text)
            where.append(
                "(c.name LIKE ?1 ESCAPE '\\' OR c.spec_id LIKE ?1 ESCAPE '\\' OR c.variables LIKE ?1 ESCAPE '\\'"
                " OR c.error LIKE ?1 ESCAPE '\\' OR v.comment LIKE ?1 ESCAPE '\\'"
                " OR EXISTS (SELECT 1 FROM messages m WHERE m.conversation_id = c.id AND m.content LIKE ?1 ESCAPE '\\'))".replace("?1", "?")
            )
            params.extend([pattern] * 6)
        return (" WHERE " + " AND ".join(where)) if where else "", params

    @_locked
    def conversation_rows(
        self, batch_id: str | None = None, *, limit: int = 100, offset: int = 0, **filters: Unpack[ConversationFilters]
    ) -> list[ConversationRow]:
        """Conversations newest first (by start time), of batch `batch_id` (None: of every
        batch) and taken as `filters` say (ConversationFilters: `since` <= started < `until`)."""
        where, params = self._filters(batch_id, filters)
        sql = (
            f"SELECT {_ROW_COLUMNS} FROM conversations c LEFT JOIN verdicts v ON v.conversation_id = c.id"
            f"{where} ORDER BY c.started_at DESC, c.id DESC LIMIT ? OFFSET ?"
        )
        return [conversation_row_model(r) for r in self.db.query(sql, [*params, limit, offset])]

    @_locked
    def count_conversations(self, batch_id: str | None = None, **filters: Unpack[ConversationFilters]) -> int:
        """How many conversations `conversation_rows` would page through with these filters."""
        where, params = self._filters(batch_id, filters)
        sql = f"SELECT COUNT(*) FROM conversations c LEFT JOIN verdicts v ON v.conversation_id = c.id{where}"
        return int(self.db.execute(sql, params).fetchone()[0])

    @_locked
    def stored_runs(self, batch_id: str) -> list[tuple[str, int, str, ConversationSpec]]:
        """(spec id, trial, conversation id, spec) of each of a batch's stored conversations, in
        plan order, without their transcripts: what a re-score of the batch plans from."""
        rows = self.db.execute(
            "SELECT spec_id, trial, id, spec FROM conversations WHERE batch_id = ? ORDER BY spec_index, spec_id, trial, id", [batch_id]
        ).fetchall()
        specs: dict[str, ConversationSpec] = {}
        out = []
        for spec_id, trial, cid, text in rows:
            spec = specs.get(text)
            if spec is None:
                spec = specs[text] = ConversationSpec.model_validate_json(text)
            out.append((spec_id, trial, cid, spec))
        return out

    @_locked
    def load_conversation(self, conversation_id: str) -> StoredConversation:
        """A stored conversation in full, by id or unique id prefix of >= 6 characters."""
        resolved = self._resolve("conversations", conversation_id, "conversation")
        row = next(self.db.query("SELECT * FROM conversations WHERE id = ?", [resolved]))
        return self._load_many([row])[0]

    @_locked
    def load_conversations(self, conversation_ids: Sequence[str]) -> list[StoredConversation]:
        """Stored conversations in full, by exact id, in the order given: a page of them read
        at once (a few queries for all), not one by one. ParleyError for an id not stored."""
        if not conversation_ids:
            return []
        marks = ",".join("?" * len(conversation_ids))
        rows = {r["id"]: r for r in self.db.query(f"SELECT * FROM conversations WHERE id IN ({marks})", list(conversation_ids))}
        missing = [i for i in conversation_ids if i not in rows]
        if missing:
            raise ParleyError(f"no conversation '{missing[0]}'; {_LIST_HINT}")
        return self._load_many([rows[i] for i in conversation_ids])

    def iter_conversations(self, batch_id: str, *, page_size: int = 25) -> Iterator[StoredConversation]:
        """Every conversation of a batch in full, in spec order then trial, a page at a time:
        memory stays bounded however large the batch."""
        for page in self._pages(batch_id, "*", page_size):
            with self._lock:
                loaded = self._load_many(page)
            yield from loaded

    def _pages(self, batch_id: str, columns: str, page_size: int) -> Iterator[list[dict[str, Any]]]:
        """Pages of a batch's conversation rows by keyset (spec_index, spec_id, trial, id)."""
        key: tuple[Any, ...] | None = None
        while True:
            params: list[Any] = [batch_id]
            after = ""
            if key is not None:
                after = " AND (c.spec_index, c.spec_id, c.trial, c.id) > (?, ?, ?, ?)"
                params.extend(key)
            sql = (
                f"SELECT {columns} FROM conversations c LEFT JOIN verdicts v ON v.conversation_id = c.id"
                f" WHERE c.batch_id = ?{after} ORDER BY c.spec_index, c.spec_id, c.trial, c.id LIMIT ?"
            )
            with self._lock:
                rows = list(self.db.query(sql, [*params, page_size]))
            if not rows:
                return
            yield rows
            last = rows[-1]
            key = (last["spec_index"], last["spec_id"], last["trial"], last["id"])
            if len(rows) < page_size:
                return

    def iter_result_rows(self, batch_id: str, *, page_size: int = 500) -> Iterator[ResultRow]:
        """Each conversation of a batch as a flat result (verdict, usage per role, failed
        checks; no transcript), in spec order then trial, a page at a time: what a CSV needs."""
        columns = (
            f"{_ROW_COLUMNS}, c.spec_index, c.source, c.seed, c.customer_id, c.bot_model, c.user_model,"
            " c.ended_at, c.tool_call_count, v.outcome AS verdict_outcome, v.judge, v.checks, v.user_faults"
        )
        for page in self._pages(batch_id, columns, page_size):
            with self._lock:
                usage = self._rows_by_conversation("usage", [r["id"] for r in page], "role")
            for row in page:
                judge = json.loads(row["judge"]) if row["judge"] else None
                yield ResultRow(
                    **conversation_row_model(row).model_dump(),
                    source=row["source"],
                    seed=row["seed"],
                    customer_id=row["customer_id"],
                    bot_model=row["bot_model"],
                    user_model=row["user_model"],
                    judge_model=judge["judge"] if judge else None,
                    ended_at=stored_time(row["ended_at"]),
                    tool_call_count=row["tool_call_count"],
                    verdict_outcome=row["verdict_outcome"],
                    usage={u["role"]: Usage(**usage_dict(u)) for u in usage.get(row["id"], [])},
                    failed_checks=failed_check_lines(row["checks"]),
                    user_faults=[f"{kind}: {reason}" for kind, reason in user_fault_items(row["user_faults"])],
                    criteria={
                        str(c.get("name")): criterion_state(c.get("outcome"), c.get("details"))
                        for c in json.loads(row["checks"] or "[]")
                        if c.get("kind") == CRITERION_KIND
                    },
                )

    def _rows_by_conversation(self, table: str, ids: Sequence[str], order: str) -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = {}
        if not ids:
            return out
        marks = ",".join("?" * len(ids))
        sql = f"SELECT * FROM {table} WHERE conversation_id IN ({marks}) ORDER BY conversation_id, {order}"
        for row in self.db.query(sql, list(ids)):
            out.setdefault(row["conversation_id"], []).append(row)
        return out

    def _load_many(self, rows: Sequence[Mapping[str, Any]]) -> list[StoredConversation]:
        """Full records for conversation rows: four queries for the whole page, and one
        pydantic validation per record (nested dicts validate far faster than nested inits)."""
        ids = [r["id"] for r in rows]
        messages = self._rows_by_conversation("messages", ids, "position")
        tools = self._rows_by_conversation("tool_calls", ids, "position")
        usage = self._rows_by_conversation("usage", ids, "role")
        verdicts = {cid: vs[0] for cid, vs in self._rows_by_conversation("verdicts", ids, "conversation_id").items()}
        specs: dict[str, ConversationSpec] = {}  # a spec's trials share it: read once a page
        out = []
        for row in rows:
            cid = row["id"]
            conv = Conversation.model_validate(
                {
                    "id": cid,
                    "customer_id": row["customer_id"],
                    "bot_model": row["bot_model"],
                    "user_simulator": row["user_model"],
                    "bot_starts": bool(row["bot_starts"]),
                    "system_prompt": row["system_prompt"],
                    "messages": [
                        {
                            "role": m["role"],
                            "content": m["content"],
                            "tool_calls": loads_list(m["tool_calls"]),
                            "tool_call_id": m["tool_call_id"],
                            "name": m["name"],
                        }
                        for m in messages.get(cid, [])
                    ],
                    "tool_calls": [
                        {
                            "call_id": t["call_id"],
                            "name": t["name"],
                            "arguments_raw": t["arguments_raw"],
                            "arguments": json.loads(t["arguments"]) if t["arguments"] is not None else None,
                            "customer_id": t["customer_id"],
                            "result": t["result"],
                            "ok": bool(t["ok"]),
                            "error": t["error"],
                            "refused": bool(t["refused"]),
                            "http_status": t["http_status"],
                            "latency_s": t["latency_s"],
                            "ignored_arguments": loads_list(t["ignored_arguments"]),
                            **json.loads(t["world_effects"] or "{}"),
                        }
                        for t in tools.get(cid, [])
                    ],
                    "usage": {u["role"]: usage_dict(u) for u in usage.get(cid, []) if u["role"] != JUDGE_ROLE},
                    "turns": json.loads(row["turn_timings"]),
                    "started_at": row["started_at"],
                    "ended_at": row["ended_at"],
                    "duration_s": row["duration_s"],
                    "stop_reason": row["stop_reason"],
                    "error": row["error"],
                    "final_state": json.loads(row["final_state"]) if row["final_state"] is not None else None,
                    "metadata": json.loads(row["metadata"]),
                }
            )
            v = verdicts.get(cid)
            verdict = None
            if v is not None:
                verdict = Verdict.model_validate(
                    {
                        "conversation_id": cid,
                        "outcome": v["outcome"],
                        "passed": bool(v["passed"]),
                        "score": v["score"],
                        "comment": v["comment"],
                        "judge": json.loads(v["judge"]) if v["judge"] is not None else None,
                        "checks": json.loads(v["checks"]),
                        "outputs": json.loads(v["outputs"]),
                        "error": v["error"],
                        "user_faults": json.loads(v["user_faults"]) if v.get("user_faults") else [],
                    }
                )
            out.append(
                StoredConversation(
                    spec=specs.get(row["spec"]) or specs.setdefault(row["spec"], ConversationSpec.model_validate_json(row["spec"])),
                    conversation=conv,
                    verdict=verdict,
                    trial=row["trial"],
                    batch_id=row["batch_id"],
                )
            )
        return out

    # ---- live chat sessions ---------------------------------------------------------------------

    @_writes
    def save_chat_session(self, chat: ChatExport, *, started_at: datetime.datetime | None = None) -> None:
        """Insert or update a live chat from its snapshot (`ChatSession.snapshot()`); call it
        after each turn so a chat is saved as it goes. `started_at` sets created_at the first
        time (default: the snapshot's time); later saves keep it. A snapshot older than the one
        stored (saves that finished out of order) changes nothing: the stored chat is always
        the latest state."""
        usage = chat.metrics.usage
        created = utc_text(started_at or chat.exported_at)
        row = {
            "id": chat.session_id,
            "created_at": created,
            "updated_at": utc_text(chat.exported_at),
            "customer_id": chat.customer_id,
            "bot_model": chat.bot_model,
            "today": chat.today.isoformat(),
            "system_prompt": chat.system_prompt,
            "messages": compact_json([m.model_dump(mode="json") for m in chat.messages]),
            "message_count": len(chat.messages),
            "tool_calls": compact_json([t.model_dump(mode="json") for t in chat.tool_calls]),
            "metrics": chat.metrics.model_dump_json(),
            "world_state": chat.world_state.model_dump_json(),
        }
        usage_row = {
            "chat_session_id": chat.session_id,
            "role": "bot",
            "model": chat.bot_model,
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "calls": usage.calls,
            "unreported_calls": usage.unreported_calls,
            "cost_usd": usage.cost_usd,
        }
        row = redact_row(row)
        columns = list(row)
        updates = ", ".join(f"{c} = excluded.{c}" for c in columns if c not in ("id", "created_at"))
        with self._writing():
            cursor = self.db.execute(
                f"INSERT INTO chat_sessions ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
                f" ON CONFLICT (id) DO UPDATE SET {updates} WHERE excluded.updated_at >= chat_sessions.updated_at",
                [row[c] for c in columns],
            )
            if not cursor.rowcount:
                return  # a newer snapshot is stored already
            self.db.execute("DELETE FROM usage WHERE chat_session_id = ?", [chat.session_id])
            self._insert("usage", [usage_row])

    @_locked
    def list_chat_sessions(self, limit: int = 50, offset: int = 0) -> list[ChatSessionRow]:
        """Live chats, the most recently saved first."""
        sql = """
            SELECT s.id, s.created_at, s.updated_at, s.customer_id, s.bot_model, s.message_count,
                   json_extract(s.metrics, '$.turns') AS turns,
                   u.input_tokens, u.output_tokens, u.cost_usd
            FROM chat_sessions s LEFT JOIN usage u ON u.chat_session_id = s.id AND u.role = 'bot'
            ORDER BY s.updated_at DESC, s.id DESC LIMIT ? OFFSET ?
        """
        return [
            ChatSessionRow(
                id=r["id"],
                created_at=stored_time(r["created_at"]),
                updated_at=stored_time(r["updated_at"]),
                customer_id=r["customer_id"],
                bot_model=r["bot_model"],
                messages=r["message_count"],
                turns=r["turns"] or 0,
                input_tokens=r["input_tokens"] or 0,
                output_tokens=r["output_tokens"] or 0,
                cost_usd=r["cost_usd"] if r["input_tokens"] is not None else 0.0,
            )
            for r in self.db.query(sql, [limit, offset])
        ]

    @_locked
    def load_chat_session(self, session_id: str) -> StoredChatSession:
        """A saved live chat, by id or unique id prefix of >= 6 characters."""
        resolved = self._resolve("chat_sessions", session_id, "chat session")
        r = next(self.db.query("SELECT * FROM chat_sessions WHERE id = ?", [resolved]))
        chat = ChatExport(
            session_id=r["id"],
            exported_at=stored_time(r["updated_at"]),
            customer_id=r["customer_id"],
            bot_model=r["bot_model"],
            today=datetime.date.fromisoformat(r["today"]),
            system_prompt=r["system_prompt"],
            messages=json.loads(r["messages"]),
            tool_calls=json.loads(r["tool_calls"]),
            metrics=json.loads(r["metrics"]),
            world_state=json.loads(r["world_state"]),
        )
        chat = chat.model_copy(update={"world": chat.world_state.world or None})  # the world's name is in its state
        return StoredChatSession(created_at=stored_time(r["created_at"]), updated_at=stored_time(r["updated_at"]), chat=chat)

    # ---- LLM response cache ---------------------------------------------------------------------

    @_locked
    def cache_get(self, key: str) -> Any | None:
        """The cached response for `key` (see `cache_key`), or None."""
        row = self.db.execute("SELECT response FROM llm_cache WHERE key = ?", [key]).fetchone()
        return json.loads(row[0]) if row else None

    @_writes
    def cache_put(self, key: str, model: str, request: Mapping[str, Any], response: Any) -> None:
        """Remember `response` for `key`. The first response stored for a key is kept, so a
        replay is stable; credential fields of `request` are dropped before it is written."""
        row = {
            "key": key,
            "model": model,
            "request": compact_json(strip_credentials(request)),
            "response": compact_json(response),
            "created_at": utc_text(datetime.datetime.now(datetime.UTC)),
        }
        with self._writing():
            self.db.table("llm_cache").insert(redact_row(row), ignore=True)
