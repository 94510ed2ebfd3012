"""A stored batch whose row cannot be read back (options with a null where a number goes, as an
older parley stored `--timeout inf`; JSON that does not parse) breaks no listing and no view:
`batches list`, the service's GET /api/batches and the app's Batches pane show it as unreadable
with its id and why, and list the rest; a view of that batch itself (`batches show`, `report`,
`compare`, `run --resume`) is one line saying so; every other batch reads as before; the store
logs it. The rows are damaged straight in the SQLite file, as the probe found them."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from parley.core.store import Store, UnreadableBatchError
from parley.tui.cli.main import cli
from tests.comparison_fixtures import FAIL, PASS, make_batch
from tests.stored_rows import query

NULL_TIMEOUT = "options.timeout_s: Input should be a valid number"


def parley(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args])


def damage(db: Path, batch_id: str, options: str) -> None:
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE batches SET options = ? WHERE id = ?", [options, batch_id])


@pytest.fixture
def db(tmp_path) -> tuple[Path, str, str, str]:
    """(database, the oldest batch, a batch with a null timeout, the newest: unparseable options)."""
    path = tmp_path / "sessions" / "parley.db"
    path.parent.mkdir()
    with Store.open(path) as store:
        good = make_batch(store, {("a#0", 1): PASS, ("b#0", 1): FAIL}, minutes=1).id
        nulled = make_batch(store, {("a#0", 1): PASS}, minutes=2).id
        broken = make_batch(store, {("a#0", 1): FAIL}, minutes=3).id
        options = json.loads(query(store, "SELECT options FROM batches WHERE id = ?", [nulled])[0]["options"])
    damage(path, nulled, json.dumps(options | {"timeout_s": None}))
    damage(path, broken, "{not json")
    return path, good, nulled, broken


def one_error_line(result) -> str:
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_the_list_shows_each_unreadable_batch_with_its_id_and_why_and_lists_the_rest(db):
    path, good, nulled, broken = db
    result = parley("batches", "list", "--db", path)
    assert result.exit_code == 0, result.output
    rows = {line[:12]: line for line in result.stdout.splitlines() if line[:12] in (good[:12], nulled[:12], broken[:12])}
    assert list(rows) == [broken[:12], nulled[:12], good[:12]], result.stdout  # newest first, all three
    assert rows[broken[:12]].split()[2] == rows[nulled[:12]].split()[2] == "unreadable"
    assert rows[good[:12]].split()[3] == "completed" and "50.0%" in rows[good[:12]]
    assert result.stdout.splitlines()[-3:] == [
        "3 batches",
        f"unreadable: batch {broken}: options: Invalid JSON: key must be a string at line 1 column 2",
        f"unreadable: batch {nulled}: {NULL_TIMEOUT}",
    ]
    rows = json.loads(parley("batches", "list", "--json", "--db", path).stdout)
    assert [r["id"] for r in rows] == [broken, nulled, good]
    assert NULL_TIMEOUT in rows[1]["unreadable"] and rows[2]["pass_rate"] == 0.5
    log = (path.parent / "parley.log").read_text()
    assert f"batch {nulled} cannot be read" in log and f"batch {broken} cannot be read" in log


def test_a_view_of_the_unreadable_batch_is_one_line_and_every_other_batch_reads(db):
    path, good, nulled, broken = db
    for args in (
        ("batches", "show", "latest~1"),
        ("report", "latest~1"),
        ("compare", "latest~2", "latest~1"),
        ("run", "--resume", "latest~1"),
    ):
        line = one_error_line(parley(*args, "--db", path))
        assert line.startswith(f"error: batch {nulled} cannot be read: {NULL_TIMEOUT}"), (args, line)
    assert one_error_line(parley("report", "latest", "--db", path)).startswith(
        f"error: batch {broken} cannot be read: options: Invalid JSON"
    )
    shown = parley("batches", "show", "latest~2", "--db", path)
    assert shown.exit_code == 0 and f"Batch {good}: completed" in shown.stdout
    report = parley("report", "latest~2", "--db", path)
    assert report.exit_code == 0 and good in report.stdout


def test_a_parent_lists_the_child_it_cannot_read(tmp_path):
    path = tmp_path / "p.db"
    with Store.open(path) as store:
        parent = make_batch(store, {("a#0", 1): FAIL}, minutes=1).id
        child = make_batch(store, {("a#0", 1): PASS}, minutes=2, parent_id=parent).id
    damage(path, child, "[]")
    shown = parley("batches", "show", parent, "--db", path)
    assert shown.exit_code == 0, shown.output
    assert f"Made into: batch {child} (cannot be read: options: Input should be an object)" in shown.stdout


def test_the_store_says_which_batch_and_why(db):
    path, good, nulled, _ = db
    with Store.open(path) as store:
        with pytest.raises(UnreadableBatchError, match=f"batch {nulled} cannot be read: {NULL_TIMEOUT}") as caught:
            store.get_batch(nulled)
        assert caught.value.batch.id == nulled and caught.value.batch.status == "completed"
        assert store.get_batch(good).id == good


async def test_the_service_lists_the_others_and_names_the_unreadable(db):
    from tests.service_support import service

    path, good, nulled, broken = db
    async with service(path.parent) as client:
        listed = await client.get("/api/batches")
        assert listed.status_code == 200, listed.text
        body = listed.json()
        assert [b["batch_id"] for b in body["batches"]] == [good] and body["total_count"] == 3
        assert {u["id"]: u["reason"] for u in body["unreadable"]}[nulled] == NULL_TIMEOUT
        assert {u["id"] for u in body["unreadable"]} == {nulled, broken}
        one = await client.get(f"/api/batches/{nulled}")
        assert one.status_code == 404 and f"batch {nulled} cannot be read" in one.json()["detail"]
        assert (await client.get(f"/api/batches/{good}")).status_code == 200


async def test_the_apps_batches_pane_lists_it_as_unreadable(db, monkeypatch):
    from textual.widgets import Static

    from parley.tui.app.panes.batches_pane import BatchesPane
    from parley.tui.app.widgets.row_table import RowTable
    from tests.test_tui_support import SIZE, make_app, settle

    path, good, nulled, broken = db
    monkeypatch.setenv("PARLEY_DB", str(path))
    app = make_app(initial_pane="batches")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        pane = app.query_one(BatchesPane)
        table = app.query_one("#batches-table", RowTable)
        assert pane.batch_ids == [broken, nulled, good]
        assert table.full_row(1)[:4] == (nulled[:12], table.full_row(1)[1], "unreadable", NULL_TIMEOUT)
        table.move_cursor(row=1)
        await settle(pilot)
        status = str(app.query_one("#batches-status", Static).render())
        assert f"batch {nulled} cannot be read" in status
        assert not any(n.severity == "error" for n in app._notifications), [n.message for n in app._notifications]
