"""The database file, damaged, emptied, deleted or replaced: every command says so in one line
naming the file, nothing is written to a damaged one, and a run whose file disappears stops
with an error instead of writing on into a file nobody can open (on main: "batch completed",
then "no batches yet")."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from parley.core.store import DamagedDatabase, DatabaseGone
from parley.core.store.store import Store
from tests.test_store_fixtures import batch, conversation, spec, verdict
from tests.waiting import PATIENCE_S

ROOT = Path(__file__).resolve().parent.parent
PLAYBOOK = ROOT / "profiles" / "playbooks" / "track_shipped_order.yaml"
PARLEY = str(Path(sys.executable).parent / "parley")


def parley(*args: object, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PARLEY, *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=PATIENCE_S)


@pytest.fixture(scope="module")
def whole_db(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("whole")
    db = folder / "p.db"
    done = parley("run", ROOT / "profiles", "--db", db)
    assert done.returncode == 0, done.stdout + done.stderr
    return db


def damaged(whole: Path, folder: Path, how: str) -> Path:
    db = folder / f"{how}.db"
    shutil.copy(whole, db)
    middle = db.stat().st_size // 2 // 4096 * 4096
    with db.open("r+b") as file:
        if how == "empty":
            file.truncate(0)
        else:
            file.seek(middle)
            file.write(bytes(16 * 1024) if how == "zeros" else os.urandom(12 * 1024))
    return db


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


COMMANDS = [("batches", "list"), ("batches", "show", "latest"), ("report", "latest"), ("sessions", "list"), ("run", PLAYBOOK)]


@pytest.mark.parametrize("how", ["zeros", "garbage", "empty"])
def test_a_damaged_or_empty_file_is_one_line_naming_it_for_every_command_and_never_written(whole_db, tmp_path, how):
    db = damaged(whole_db, tmp_path, how)
    before = digest(db)
    what = "is empty (0 bytes" if how == "empty" else "is damaged ("
    for command in COMMANDS if how != "empty" else COMMANDS[:-1]:  # an empty file is where a writer makes a new database
        done = parley(*command, "--db", db)
        said = done.stderr.strip()
        assert done.returncode == 1, (command, done.stdout, said)
        assert said.startswith(f"error: the database {db} {what}") and "\n" not in said, (command, said)
        assert "Traceback" not in done.stdout + done.stderr
    assert digest(db) == before, "nothing was written to the damaged file"
    assert not Path(f"{db}-wal").exists() or Path(f"{db}-wal").stat().st_size == 0


def test_a_store_opened_on_a_damaged_file_refuses_it(whole_db, tmp_path):
    db = damaged(whole_db, tmp_path, "garbage")
    for read_only in (False, True):
        with pytest.raises(DamagedDatabase, match="is damaged"):
            Store.open(db, read_only=read_only)


@pytest.mark.parametrize("how", ["deleted", "replaced by another file"])
def test_a_file_deleted_or_replaced_under_a_writer_is_noticed_at_its_next_commit(tmp_path, how):
    db = tmp_path / "p.db"
    store = Store.open(db)
    try:
        b = store.create_batch(batch(planned=2))
        first = conversation("cancel")
        store.save_conversation(b.id, spec("cancel", 0), first, verdict(first))
        if how == "deleted":
            for suffix in ("", "-wal", "-shm"):
                Path(f"{db}{suffix}").unlink(missing_ok=True)
        else:
            sqlite3.connect(tmp_path / "other.db").close()
            os.replace(tmp_path / "other.db", db)
        second = conversation("cancel")
        with pytest.raises(DatabaseGone, match=f"the database {db} was {how} while parley wrote to it"):
            store.save_conversation(b.id, spec("cancel", 1), second, verdict(second))
    finally:
        store.close()


def test_a_run_whose_database_is_deleted_stops_with_an_error(tmp_path):
    db = tmp_path / "p.db"
    proc = subprocess.Popen(
        [PARLEY, "run", ROOT / "profiles", "--trials", "10", "-c", "1", "--db", db],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + PATIENCE_S
        while not _stored(db, at_least=20):
            assert time.monotonic() < deadline and proc.poll() is None, "no 20 stored conversations"
            time.sleep(0.02)
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
        out, err = proc.communicate(timeout=PATIENCE_S)
    finally:
        proc.kill()
    assert proc.returncode == 1, out + err
    assert f"batch failed: the database {db} was deleted while parley wrote to it" in out
    assert "batch completed" not in out


def _stored(db: Path, at_least: int) -> bool:
    if not db.is_file() or db.stat().st_size == 0:
        return False
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        try:
            return conn.execute("SELECT COUNT(*) FROM conversations").fetchone()[0] >= at_least
        finally:
            conn.close()
    except sqlite3.Error:
        return False
