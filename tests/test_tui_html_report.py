"""The app's report key, driven with Pilot: in Batches, `h` writes the highlighted batch's HTML
report beside the database (reports/ID.html) and says where; the page is the one `parley report
--format html` writes (its numbers read against the JSON report)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from parley.core.store import Store
from parley.tui.app.panes.batches_pane import BatchesPane
from parley.tui.cli.main import cli
from tests.comparison_fixtures import FAIL, PASS, make_batch
from tests.html_reading import at, marked_numbers, parse
from tests.test_tui_support import SIZE, db_path, make_app, settle  # noqa: F401  (fixture)


async def test_h_writes_the_highlighted_batchs_html_report_and_says_where(db_path):
    with Store.open(db_path) as store:
        older = make_batch(store, {("kept#0", 1): PASS, ("broke#0", 1): PASS}, minutes=1)
        newer = make_batch(store, {("kept#0", 1): PASS, ("broke#0", 1): FAIL, ("other#0", 1): FAIL}, minutes=2)
    app = make_app(initial_pane="batches")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        pane = app.query_one(BatchesPane)
        assert pane.batch_ids == [newer.id, older.id]
        pane.table.focus()
        pane.table.move_cursor(row=pane.batch_ids.index(older.id), animate=False)
        await pilot.pause()
        await pilot.press("h")
        await settle(pilot)
        path = (db_path.parent / "reports" / f"{older.id}.html").resolve()
        said = [(n.title, n.message) for n in app._notifications]
        assert (f"HTML report of {older.id[:12]}", f"{path}\n(2 conversations)") in said
    assert not (db_path.parent / "reports" / f"{newer.id}.html").exists()  # the highlighted batch's only
    assert not list(path.parent.glob("*.partial"))

    root = parse(path.read_text(encoding="utf-8"))
    doc = json.loads(CliRunner().invoke(cli, ["report", older.id, "--db", str(db_path), "--format", "json"]).stdout)
    numbers = {field: value for field, value, _, _ in marked_numbers(root)}
    assert numbers["summary.done"] == 2 and numbers["summary.passed"] == 2
    for field, value in numbers.items():
        assert value == at(doc, field), field
    assert sorted(e.attrs["data-conversation"] for e in root.iter() if "data-conversation" in e.attrs) == sorted(
        r["session_id"] for r in doc["results"]
    )


async def test_h_with_no_batch_says_there_is_none(db_path):
    app = make_app(initial_pane="batches")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.query_one(BatchesPane).table.focus()
        await pilot.press("h")
        await pilot.pause()
        assert any(n.message == "No batch selected." for n in app._notifications)
    assert not (db_path.parent / "reports").exists()
