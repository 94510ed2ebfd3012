"""The Batches pane with real offline batches: launched from Profiles through the form, watched
to the end (progress, results, histogram), a missing key refused in the form, a running batch
cancelled, and a result opened as its transcript with the verdict."""

from __future__ import annotations

import shutil

import pytest
from textual.widgets import Input, ProgressBar, Static, TabbedContent

from parley.core.store.store import Store
from parley.tui.app.panes.batch_results import result_cells
from parley.tui.app.panes.batches_pane import BatchesPane
from parley.tui.app.panes.profiles_pane import ProfileTree
from parley.tui.app.panes.session_detail import CheckView, SessionScreen
from parley.tui.app.screens.launch_batch import LaunchBatchScreen
from parley.tui.app.widgets.results_table import ResultsTable
from parley.tui.app.widgets.row_table import RowTable
from parley.tui.app.widgets.score_histogram import ScoreHistogram
from tests.test_tui_support import PROFILES, SIZE, db_path, make_app, settle, type_slowly, until  # noqa: F401  (fixture)

SMALL = ("track_shipped_order.yaml", "cancel_eligible_order.yaml", "list_my_orders.yaml")


@pytest.fixture
def folder(tmp_path):
    """Three shipped profiles (their 'today' pinned in them) in a folder of their own."""
    target = tmp_path / "suite"
    target.mkdir()
    for name in SMALL:
        shutil.copy(PROFILES / name, target / name)
    return target


async def open_form(pilot, folder) -> LaunchBatchScreen:
    """Select the folder in the Profiles tree and press r."""
    await settle(pilot)
    tree = pilot.app.query_one(ProfileTree)
    top = next(node for node in tree.root.children if node.data == folder)
    tree.move_cursor(top)
    tree.focus()
    await pilot.pause()
    await pilot.press("r")
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, LaunchBatchScreen)
    return screen


def fill(screen: LaunchBatchScreen, **values: str) -> None:
    for name, value in values.items():
        screen.query_one(f"#launch-{name}", Input).value = value


async def launch(pilot, folder, **values: str) -> None:
    screen = await open_form(pilot, folder)
    assert screen.query_one("#launch-sources", Input).value.endswith("suite")
    fill(screen, **values)
    await pilot.click("#launch-go")
    await settle(pilot, rounds=60)


def planned(folder, trials: int = 1) -> int:
    from parley.core.specs.sources import load_specs

    return len(load_specs([folder], seed=7).specs) * trials


def cells(table: ResultsTable, key: str) -> list[str]:
    """One column of the results table, by its key (shown at this width or not)."""
    return [result_cells(row)[key] for row in table.rows]


async def test_an_offline_batch_launched_from_profiles_runs_to_the_end(db_path, folder):
    app = make_app(initial_pane="profiles", profile_dirs=[folder])
    async with app.run_test(size=SIZE) as pilot:
        await launch(pilot, folder, seed="7", concurrency="2")
        total = planned(folder)
        assert app.query_one("#panes", TabbedContent).active == "batches-pane"
        pane = app.query_one(BatchesPane)
        assert pane.running_batch is None and pane.progress is not None
        assert pane.progress.done == pane.progress.total == total
        bar = app.query_one("#batch-progress", ProgressBar)
        assert bar.progress == bar.total == total
        counts = str(app.query_one("#batch-counts").render())
        assert counts.startswith(f"completed: {total}/{total} done")

        results = app.query_one("#batch-results", ResultsTable)
        assert results.row_count == total
        with Store.open(db_path) as store:
            rows = store.conversation_rows(batch_id=pane.shown_batch, limit=100)
            listed = store.list_batches()
        assert len(rows) == total and listed[0].batch.status == "completed"
        assert sorted(cells(results, "name")) == sorted(r.name for r in rows)
        histogram = app.query_one(ScoreHistogram)
        # the offline judge gives no score: nothing is charted as one, and the panel says why
        assert histogram.counts == {1: 0, 2: 0, 3: 0} and all(r.score is None for r in rows)
        assert str(histogram.render()).startswith(f"no score: no LLM judge\nscored these {total}")
        batches = app.query_one("#batches-table", RowTable)
        assert batches.full_row(0)[2] == "completed"
        assert all(c in ("unknown", "$0.0000") for c in cells(results, "cost"))


async def test_a_missing_key_is_refused_in_the_form(db_path, folder):
    app = make_app(initial_pane="profiles", profile_dirs=[folder])
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_form(pilot, folder)
        fill(screen, bot="openrouter/x")
        await pilot.click("#launch-go")
        await settle(pilot)
        assert app.screen is screen, "the form stays open"
        error = screen.error_text
        assert "OPENROUTER_API_KEY" in error and "Traceback" not in error
        with Store.open(db_path) as store:
            assert store.list_batches() == []
        fill(screen, bot="offline", trials="zero")
        await pilot.click("#launch-go")
        await pilot.pause()
        assert screen.error_text == "Trials must be a whole number."


async def test_a_running_batch_can_be_cancelled(db_path, folder):
    app = make_app(initial_pane="profiles", profile_dirs=[folder])
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_form(pilot, folder)
        fill(screen, trials="40", concurrency="1")
        await pilot.click("#launch-go")
        pane = app.query_one(BatchesPane)
        await until(pilot, lambda: pane.progress is not None and pane.progress.done >= 1, "a first finished conversation")
        assert pane.feed is not None and pane.running_batch is not None, "still running"
        pane.query_one("#batch-results").focus()
        await pilot.press("x")
        await pilot.press("x")
        await until(pilot, lambda: pane.running_batch is None, "the cancelled batch ends")
        await settle(pilot)
        assert str(app.query_one("#batch-counts").render()).startswith("cancelled:")
        assert app.query_one("#batches-table", RowTable).full_row(0)[2] == "cancelled"
        total = planned(folder, 40)
        with Store.open(db_path) as store:
            row = store.list_batches()[0]
            stored = store.conversation_rows(batch_id=row.id, limit=1000)
        assert row.batch.status == "cancelled" and row.batch.finished_at is not None
        assert 0 < row.summary.done == len(stored) < total
        assert app.query_one("#batch-results", ResultsTable).row_count == len(stored)


async def test_enter_on_a_result_opens_its_transcript_and_verdict(db_path, folder):
    app = make_app(initial_pane="profiles", profile_dirs=[folder])
    async with app.run_test(size=SIZE) as pilot:
        await launch(pilot, folder, seed="7")
        pane = app.query_one(BatchesPane)
        results = app.query_one("#batch-results", ResultsTable)
        results.focus()
        await pilot.press("down")
        await pilot.press("enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        assert screen.detail.id == pane.results.view[1].id
        assert "Outcome:" in str(screen.query_one("#detail-verdict").render())
        assert len(screen.query(CheckView)) > 0
        await pilot.press("escape")
        assert app.screen is not screen


async def test_a_past_batch_shows_its_results_when_highlighted(db_path, folder):
    from tests.test_store_fixtures import build_scored_batch

    with Store.open(db_path) as store:
        build_scored_batch(store)
        rows = store.conversation_rows(limit=100)
    app = make_app(initial_pane="batches")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.query_one("#batch-results", ResultsTable).row_count == len(rows) == 12
        expected = {s: sum(1 for r in rows if r.score == s) for s in (1, 2, 3)}
        assert app.query_one(ScoreHistogram).counts == expected
        await pilot.press("x")
        assert any("No batch is running" in n.message for n in app._notifications)


async def test_the_palette_run_batch_opens_the_form(db_path, folder):
    app = make_app(initial_pane="batches", profile_dirs=[folder])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.action_run_batch()
        await pilot.pause()
        assert isinstance(app.screen, LaunchBatchScreen)
        await pilot.press("escape")
        assert not isinstance(app.screen, LaunchBatchScreen)


async def test_the_list_counts_a_running_batch_as_it_goes(db_path, folder):
    app = make_app(initial_pane="profiles", profile_dirs=[folder])
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_form(pilot, folder)
        fill(screen, trials="30", concurrency="1")
        await pilot.click("#launch-go")
        pane = app.query_one(BatchesPane)
        batches = app.query_one("#batches-table", RowTable)
        seen = set()

        def counted_while_running() -> bool:
            if pane.progress is not None and batches.row_count:
                row = batches.full_row(0)
                seen.add((row[2], row[5]))
                if pane.progress.done >= 5 and row[5] != "0":
                    return True
            return pane.running_batch is None and pane.progress is not None  # ended: the assertion below says what was seen

        await until(pilot, counted_while_running, "the list to count the running batch")
        assert any(status == "running" and done not in ("0", "") for status, done in seen), seen
        assert pane.draws >= 1
        await pilot.press("c", "c")
        await settle(pilot, rounds=60)


async def test_updates_from_a_running_batch_are_drawn_at_most_ten_times_a_second(db_path, folder):
    app = make_app(initial_pane="profiles", profile_dirs=[folder])
    async with app.run_test(size=SIZE) as pilot:
        await launch(pilot, folder, trials="20", concurrency="4")
        pane = app.query_one(BatchesPane)
        total = planned(folder, 20)
        assert pane.results_table.row_count == total and pane.results.outcomes.total() == total
        # 60 conversations ran; each was drawn on its own before
        assert 1 <= pane.draws < total


async def test_reload_keeps_the_newest_batches_in_view(db_path):
    from parley.core.records.batch import BatchRecord
    from tests.test_store_fixtures import T0

    with Store.open(db_path) as store:
        for i in range(20):
            store.create_batch(BatchRecord(id=f"b{i:02d}-batch", created_at=T0.replace(minute=i), status="completed", planned=0))
    app = make_app(initial_pane="batches")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        table = app.query_one("#batches-table", RowTable)
        table.focus()
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert table.full_row(0)[0] == "b19-batch" and table.cursor_row == 0
        assert table.scroll_y == 0, "the newest batch is on screen"


async def test_a_status_is_never_cut_and_an_empty_batch_says_so(db_path):
    from parley.core.records.batch import BatchRecord
    from tests.test_store_fixtures import T0

    with Store.open(db_path) as store:
        store.create_batch(BatchRecord(id="b-empty-one", created_at=T0, status="completed", planned=0))
    app = make_app(initial_pane="batches")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        table = app.query_one("#batches-table", RowTable)
        status_column = table.shown_titles.index("Status")
        assert str(table.get_row_at(0)[status_column]) == "completed"
        assert table.columns[table.ordered_columns[status_column].key].get_render_width(table) >= len("completed")
        note = app.query_one("#batch-empty")
        assert note.display and "no conversations" in str(note.render())


async def test_trials_get_a_column_of_their_own(db_path):
    from tests.test_store_fixtures import build_scored_batch

    with Store.open(db_path) as store:
        build_scored_batch(store)  # 3 trials of each spec
    app = make_app(initial_pane="batches")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        results = app.query_one("#batch-results", ResultsTable)
        assert "Trial" in [c.title for c, _ in results.columns()]
        assert sorted({results.row_text(i)[1] for i in range(results.row_count)}) == ["1", "2", "3"]


async def test_results_filter_and_sort_and_say_how_many_are_shown(db_path):
    from tests.test_store_fixtures import build_scored_batch

    with Store.open(db_path) as store:
        build_scored_batch(store)
        rows = store.conversation_rows(limit=100)
    app = make_app(initial_pane="batches")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        pane = app.query_one(BatchesPane)
        results = app.query_one("#batch-results", ResultsTable)
        shown = app.query_one("#batch-shown")
        assert str(shown.render()) == "12 conversations"

        outcome = app.query_one("#batch-filter-outcome")
        offered = {value for _, value in pane.results.outcome_choices()}
        assert offered == {r.outcome or "unevaluated" for r in rows}  # from the data, not a fixed list
        outcome.value = "failed"
        await settle(pilot)
        failed = [r for r in rows if r.outcome == "failed"]
        assert {r.id for r in results.rows} == {r.id for r in failed}
        assert str(shown.render()) == f"{len(failed)} of 12 shown"

        outcome.clear()
        await pilot.press("slash")  # the filter line, typed into as a person types
        await type_slowly(pilot, "profile:cancel score:<3")
        want = [r for r in rows if "cancel" in r.name and r.score is not None and r.score < 3]
        assert {r.id for r in results.rows} == {r.id for r in want}
        assert str(shown.render()) == f"{len(want)} of 12 shown"
        assert app.query_one("#panes").active == "batches-pane"  # no key fired a binding

        box = app.query_one("#batch-filter-text")
        box.value = "stop:max_turns"  # typed key by key above; the rest is set and entered
        await pilot.press("enter")
        await settle(pilot)
        assert all(r.stop_reason == "max_turns" for r in results.rows) and results.rows

        box.value = "ORD-1001"  # only in the transcripts of the cancel conversations
        await pilot.press("enter")
        await settle(pilot)
        assert results.rows and all(r.name == "cancel_recent" for r in results.rows)

        box.value = "score:9x"
        await pilot.press("enter")
        await settle(pilot)
        assert "score" in str(shown.render()) and "-invalid" in box.classes

        box.value = ""
        await pilot.press("enter")
        results.focus()
        await pilot.press("s")  # sort: by score, lowest first
        await settle(pilot)
        scores = [r.score for r in results.rows if r.score is not None]
        assert scores == sorted(scores) and len(results.rows) == 12
        await pilot.press("end")
        assert results.cursor_row == 11


async def test_the_counts_line_grows_with_its_text_at_80_columns(db_path, folder):
    # The counts are repainted without a layout while they fit; when a longer text needs more
    # lines (the progress, then the final counts, wrap at 80 columns), the screen is laid out
    # again and no line of it is cut.
    app = make_app(initial_pane="profiles", profile_dirs=[folder])
    async with app.run_test(size=(80, 24)) as pilot:
        await launch(pilot, folder, trials="2", concurrency="1")
        counts = app.query_one("#batch-counts", Static)
        text = str(counts.render())
        assert "done" in text and "error" in text
        needed = counts.get_content_height(counts.container_size, app.size, counts.content_size.width)
        assert needed > 1 and counts.content_size.height == needed, (needed, counts.content_size)
