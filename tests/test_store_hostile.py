"""The store and the commands on databases parley did not create, read-only databases and files
that are not databases: refused with one line naming the file, never changed, never a traceback."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from parley.core.errors import ParleyError
from parley.core.store.store import ForeignDatabase, ReadOnlyDatabase, Store
from tests.read_only_fs import on_read_only_fs, seal, unseal
from tests.stored_rows import query

ROOT = Path(__file__).resolve().parent.parent
PARLEY = Path(sys.executable).parent / "parley"
PLAYBOOK = ROOT / "profiles" / "playbooks" / "track_pending_order.yaml"


def parley(*args: str, cwd: Path | None = None, read_only: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The installed command; `read_only`: with that folder on a read-only file system (read_only_fs)."""
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}
    env.pop("PARLEY_DB", None)
    command = [str(PARLEY), *args]
    if read_only is not None:
        command = on_read_only_fs(read_only, command)
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def tables(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        return sorted(r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'"))
    finally:
        conn.close()


@pytest.fixture
def foreign_db(tmp_path) -> Path:
    """Somebody's own SQLite file, with `orders` and `customers` tables of its own."""
    path = tmp_path / "shop.db"
    conn = sqlite3.connect(path)
    conn.executescript(
        "CREATE TABLE customers (id TEXT PRIMARY KEY, name TEXT);"
        "CREATE TABLE orders (id TEXT PRIMARY KEY, customer_id TEXT, total REAL);"
        "INSERT INTO customers VALUES ('K-1', 'their customer');"
        "INSERT INTO orders VALUES ('O-1', 'K-1', 9.5);"
    )
    conn.commit()
    conn.close()
    return path


@pytest.mark.parametrize(
    "command",
    [
        ["run", str(PLAYBOOK)],
        ["sessions", "list"],
        ["report", "latest"],
        ["serve", "--port", "0"],
    ],
    ids=["run", "sessions", "report", "serve"],
)
def test_every_command_refuses_a_sqlite_file_parley_did_not_create(foreign_db, command):
    before = digest(foreign_db)
    result = parley(*command, "--db", str(foreign_db))
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stderr.strip() == (
        f"error: {foreign_db} is not a parley database: it holds tables parley did not create (customers, orders). "
        "parley leaves it as it is; give --db (or PARLEY_DB) a new file"
    )
    assert "Traceback" not in result.stderr
    assert digest(foreign_db) == before and tables(foreign_db) == ["customers", "orders"]
    assert not Path(f"{foreign_db}-wal").exists()


def test_the_mock_apis_order_database_is_not_parleys_store(tmp_path):
    from parley.mockapi.order_store import open_file_store

    orders = tmp_path / "orders.db"
    open_file_store(orders).close()
    with pytest.raises(ForeignDatabase, match="it holds tables parley did not create"):
        Store.open(orders)


def test_a_database_from_before_the_mark_is_recognised_and_marked(tmp_path):
    path = tmp_path / "old.db"
    Store.open(path).close()
    conn = sqlite3.connect(path)
    conn.execute("DROP TABLE meta")  # as parley wrote it before the mark existed
    conn.commit()
    conn.close()
    with Store.open(path) as store:
        assert query(store, "SELECT key, value FROM meta") == [{"key": "app", "value": "parley"}]


def test_a_file_that_is_not_a_database_is_one_line(tmp_path):
    garbage = tmp_path / "notes.db"
    garbage.write_bytes(b"these are my notes, not a database\n" * 100)
    before = digest(garbage)
    for command in (["sessions", "list"], ["run", str(PLAYBOOK)]):
        result = parley(*command, "--db", str(garbage))
        assert result.returncode == 1
        assert result.stderr.strip() == f"error: {garbage} is not a parley database (file is not a database)"
    assert digest(garbage) == before


# ---- read-only databases ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def finished_batch_db(tmp_path_factory) -> Path:
    """A parley database holding one finished batch, its log folded in: made once, copied by
    each test that needs one."""
    source = tmp_path_factory.mktemp("finished") / "p.db"
    made = parley("run", str(PLAYBOOK), "--db", str(source))
    assert made.returncode == 0, made.stdout + made.stderr
    with Store.open(source) as store:
        store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return source


@pytest.fixture
def read_only_db(finished_batch_db) -> Iterator[Path]:
    """A copy of `finished_batch_db`, alone in a folder that commands given
    `read_only=path.parent` see as a read-only file system (no -wal or -shm file can be made
    beside it). Outside those commands the folder is the test's to change (`unseal` it first)."""
    source = finished_batch_db
    # Not under tmp_path: where no mount namespace can be made, `nobody` reads it (read_only_fs).
    folder = Path(tempfile.mkdtemp(prefix="parley-read-only-"))
    path = folder / "p.db"
    shutil.copy(source, path)
    seal(folder)
    try:
        yield path
    finally:
        unseal(folder)
        shutil.rmtree(folder)


@pytest.mark.parametrize(
    ("command", "says"),
    [
        (["sessions", "list"], "track_pending_order"),
        (["report", "latest"], "# parley batch report"),
        (["report", "latest", "--format", "csv"], "session_id,scenario"),
        (["sessions", "list", "--outcome", "passed"], "passed"),
        (["batches", "list"], "completed"),
        (["batches", "list", "--json"], '"status": "completed"'),
        (["batches", "show"], "Pass rate: 100.0% (1 of 1"),
        (["compare", "latest", "latest"], "# parley comparison"),
    ],
)
def test_read_only_commands_read_a_read_only_database(read_only_db, command, says):
    before = digest(read_only_db)
    result = parley(*command, "--db", str(read_only_db), cwd=read_only_db.parent, read_only=read_only_db.parent)
    assert result.returncode == 0, result.stderr
    assert says in result.stdout
    assert digest(read_only_db) == before
    assert sorted(p.name for p in read_only_db.parent.iterdir()) == ["p.db"]


def test_a_command_that_writes_says_the_database_is_read_only(read_only_db):
    result = parley("run", str(PLAYBOOK), "--db", str(read_only_db), cwd=read_only_db.parent, read_only=read_only_db.parent)
    assert result.returncode == 1
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"error: {read_only_db} is read-only: this command writes to the database.")
    assert "not a parley database" not in line


@pytest.mark.parametrize(
    "command",
    [["run", str(PLAYBOOK)], ["sessions", "list"], ["batches", "list"], ["serve", "--port", "0"]],
    ids=["run", "sessions", "batches", "serve"],
)
@pytest.mark.parametrize("where", ["new.db", "sub/new.db"], ids=["in-it", "below-it"])
def test_a_new_database_in_a_folder_that_cannot_be_written_names_the_folder(read_only_db, command, where):
    folder = read_only_db.parent
    result = parley(*command, "--db", str(folder / where), cwd=folder, read_only=folder)
    assert result.returncode == 1
    assert result.stderr.strip() == (
        f"error: cannot create the database {folder / where}: the folder {folder} cannot be written "
        "(a read-only file system or no permission); give --db (or PARLEY_DB) a file in a folder you can write"
    )
    assert sorted(p.name for p in folder.iterdir()) == ["p.db"]


def test_a_store_opened_read_only_refuses_writes_by_name(tmp_path):
    path = tmp_path / "p.db"
    Store.open(path).close()
    with Store.open(path, read_only=True) as store:
        assert store.read_only and store.list_batches() == []
        assert store.interrupt_orphans() == []
        with pytest.raises(ReadOnlyDatabase, match="read-only: update batch needs to write to it"):
            store.update_batch("x", status="failed")
    assert isinstance(ReadOnlyDatabase("x"), ParleyError)


APP_READER = textwrap.dedent(
    """
    import asyncio, sys, time
    from textual.widgets import DataTable
    from parley.tui.app.app import ParleyApp

    async def main():
        app = ParleyApp(initial_pane="sessions", db_path=sys.argv[1], profile_dirs=[])
        async with app.run_test(size=(120, 36)) as pilot:
            table = app.query_one("#sessions-table", DataTable)
            deadline = time.monotonic() + 120  # waits for the rows; the deadline only stops a hang
            while not table.row_count and time.monotonic() < deadline:
                await app.workers.wait_for_complete()
                await pilot.pause(0.05)
            print("rows", table.row_count, "read_only", app.store().read_only)

    asyncio.run(main())
    """
)


APP_CHATTER = textwrap.dedent(
    """
    import asyncio, datetime, sys, time
    from textual.widgets import Input
    from parley.tui.app.app import ParleyApp
    from parley.tui.app.panes.chat_pane import ChatPane
    from parley.tui.app.widgets.transcript_view import Notice

    async def main():
        app = ParleyApp(initial_pane="chat", db_path=sys.argv[1], profile_dirs=[], today=datetime.date(2026, 11, 21))
        async with app.run_test(size=(120, 36)) as pilot:
            pane = app.query_one(ChatPane)
            deadline = time.monotonic() + 120  # the deadlines only stop a hang
            while (pane.session is None or any(w.is_running for w in app.workers)) and time.monotonic() < deadline:
                await pilot.pause(0.05)
            print("at start:", [n.title for n in app._notifications])
            for text in ("hello", "where is ORD-1003?"):
                app.query_one("#chat-input", Input).value = text
                await pilot.press("enter")
                while (pane.busy or any(w.is_running for w in app.workers)) and time.monotonic() < deadline:
                    await pilot.pause(0.05)
            for n in app._notifications:
                print("notified:", n.title, "|", n.message)
            for notice in pane.log_view.query(Notice):
                print("notice:", notice.text)
            print("bot said:", len([m for m in pane.session.transcript if m.role == "assistant"]))

    asyncio.run(main())
    """
)


def test_the_app_says_once_that_the_database_is_read_only_and_chat_that_it_is_not_saved(read_only_db):
    before = digest(read_only_db)
    result = subprocess.run(
        on_read_only_fs(read_only_db.parent, [sys.executable, "-c", APP_CHATTER, str(read_only_db)]),
        cwd=read_only_db.parent,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.splitlines()
    assert "at start: ['Read-only database']" in lines  # said at start...
    notified = [line for line in lines if line.startswith("notified:")]
    assert notified == [  # ...and only then: no "Failed: saving the chat" after each message
        f"notified: Read-only database | {read_only_db} is read-only: everything stored can be browsed, but chats are not saved "
        "and batches cannot be launched. Start parley with --db (or PARLEY_DB) on a writable file to do so."
    ]
    assert [line for line in lines if "not be saved" in line] == [f"notice: This chat will not be saved: {read_only_db} is read-only."]
    assert any(line.startswith("bot said:") and int(line.split(":")[1]) >= 2 for line in lines), lines  # the chat itself works
    assert digest(read_only_db) == before and sorted(p.name for p in read_only_db.parent.iterdir()) == ["p.db"]


def test_the_apps_sessions_pane_reads_a_read_only_database(read_only_db):
    result = subprocess.run(
        on_read_only_fs(read_only_db.parent, [sys.executable, "-c", APP_READER, str(read_only_db)]),
        cwd=read_only_db.parent,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split() == ["rows", "1", "read_only", "True"]


# ---- two connections writing one file ---------------------------------------------------------


def test_two_connections_writing_at_once_wait_their_turn(tmp_path, monkeypatch):
    """The service writes through two connections (its handlers and its batches). A transaction
    that read, then saw the other connection commit, then wrote, failed with "database is
    locked" (found by bench/bench_service_load.py: 1 batch in 20 ended `failed`). Here the other
    connection writes exactly in that gap."""
    import threading

    from tests.test_store_fixtures import batch, conversation, spec, verdict

    path = tmp_path / "p.db"
    writer_a, writer_b = Store.open(path), Store.open(path)
    target = writer_a.create_batch(batch(planned=1))
    in_the_gap, b_wrote = threading.Event(), threading.Event()
    original = Store._insert

    def insert_after_a_pause(self, *args, **kwargs):
        if self is writer_a and not in_the_gap.is_set():
            in_the_gap.set()  # A has read inside its transaction; now B writes...
            b_wrote.wait(timeout=1.0)  # ...unless B has to wait for A's transaction (as it must)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Store, "_insert", insert_after_a_pause)
    errors: list[BaseException] = []

    def b_writes() -> None:
        in_the_gap.wait(timeout=10)
        try:
            writer_b.create_batch(batch())
        except BaseException as exc:  # noqa: BLE001 - the test reports it
            errors.append(exc)
        b_wrote.set()

    other = threading.Thread(target=b_writes)
    other.start()
    conv = conversation()
    try:
        writer_a.save_conversation(target.id, spec(), conv, verdict(conv), 1)
    except BaseException as exc:  # noqa: BLE001 - the test reports it
        errors.append(exc)
    other.join(timeout=60)
    writer_a.close()
    writer_b.close()
    assert errors == []
    with Store.open(path, read_only=True) as store:
        assert store.count_conversations(target.id) == 1 and store.count_batches() == 2


# ---- processes creating one new file ----------------------------------------------------------

OPEN_NEW = "import sys\nfrom parley.core.store import Store\nStore.open(sys.argv[1]).close()\n"


def test_processes_opening_one_new_file_at_once_all_get_it(tmp_path):
    """pytest-xdist's workers open one new database together (`pytest -n 2 --parley`): one of them
    saw the other's version table before its first migration and refused the file as not
    parley's. Each round starts several processes on a new file at the same moment."""
    for round_ in range(4):
        path = tmp_path / f"new{round_}.db"
        openers = [subprocess.Popen([sys.executable, "-c", OPEN_NEW, str(path)], stderr=subprocess.PIPE, text=True) for _ in range(6)]
        failures = [p.communicate(timeout=120)[1] for p in openers if p.wait(timeout=120) != 0]
        assert not failures, failures[0]
        with Store.open(path, read_only=True) as store:
            assert query(store, "SELECT COUNT(*) AS n FROM schema_version")[0]["n"] >= 4
