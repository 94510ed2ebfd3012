"""SVG snapshots of every pane (and the session detail and launch form) at 80x24, 120x36 and
200x50 (pytest-textual-snapshot); their variants at 120x36. Kept stable: a pinned date, a
private database with fixed times, fixed seeds, a fake clock for the bot's latency, ids and
times that depend on the run replaced, and no blinking cursors. Update with `pytest tests/test_tui_snapshots.py --snapshot-update` after
looking at the new pictures."""

from __future__ import annotations

import asyncio
import datetime as dt
import itertools

import pytest

from parley.core.bots import world_bot
from parley.core.store.store import Store
from parley.tui.app.panes.profiles_pane import ProfileTree
from tests.test_store_fixtures import T0, batch, build_scored_batch, conversation, spec, verdict
from tests.test_tui_profiles import BROKEN
from tests.test_tui_sessions import CHAT_STARTED, save_chat
from tests.test_tui_support import SIZE, db_path, freeze_cursors, make_app, say, settle, until  # noqa: F401  (fixture)


class FakeClock:
    """time.perf_counter for the bot: every call 12.5 ms after the previous one."""

    def __init__(self) -> None:
        self._ticks = itertools.count()

    def perf_counter(self) -> float:
        return next(self._ticks) * 0.0125


@pytest.fixture
def fixed_ids(monkeypatch):
    """uuid4 counts up from 1: the ids the detail screen shows are the same on every run."""
    import uuid

    counter = itertools.count(1)
    monkeypatch.setattr(uuid, "uuid4", lambda: uuid.UUID(int=next(counter)))


@pytest.fixture
def stored(db_path, fixed_ids):
    with Store.open(db_path) as store:
        build_scored_batch(store)
        asyncio.run(save_chat(store, ["hello", "please cancel ORD-1005"], CHAT_STARTED))
    return db_path


async def _ready(pilot) -> None:
    await settle(pilot)
    freeze_cursors(pilot.app)
    await pilot.pause()


SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((120, 36), id="120x36"), pytest.param((200, 50), id="200x50")]


@pytest.mark.parametrize("size", SIZES)
def test_chat_pane(snap_compare, db_path, monkeypatch, size):
    monkeypatch.setattr(world_bot, "time", FakeClock())

    async def run_before(pilot) -> None:
        await _ready(pilot)
        for line in ("hello", "where is ORD-1003?", "please cancel ORD-1005"):
            await say(pilot, line)
        freeze_cursors(pilot.app)

    assert snap_compare(make_app(), terminal_size=size, run_before=run_before)


def test_chat_pane_with_a_refused_tool_call_expanded(snap_compare, db_path, monkeypatch):
    from tests.test_bot_order_loop import ScriptedModel, calls, text

    monkeypatch.setattr(world_bot, "time", FakeClock())
    model = ScriptedModel(
        calls(("cancel_order", '{"order_id": "ORD-1005"}'), tokens=(310, 22)),
        text("I'm sorry, ORD-1005 is past the 10-day window and cannot be cancelled.", tokens=(402, 18)),
    )

    async def run_before(pilot) -> None:
        await _ready(pilot)
        await say(pilot, "cancel ORD-1005 right now")
        await pilot.press("ctrl+o")  # expand the tool calls
        await pilot.pause()
        freeze_cursors(pilot.app)

    assert snap_compare(make_app(bot_model=model), terminal_size=SIZE, run_before=run_before)


def test_chat_pane_with_a_command_table(snap_compare, db_path):
    async def run_before(pilot) -> None:
        await _ready(pilot)
        await say(pilot, "/orders")
        freeze_cursors(pilot.app)

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


async def _select_profile(pilot, path) -> None:
    await _ready(pilot)
    tree = pilot.app.query_one(ProfileTree)
    node = tree.find_file(path)
    tree.move_cursor(node)
    await pilot.pause()
    tree.select_node(node)
    await settle(pilot)
    freeze_cursors(pilot.app)


@pytest.mark.parametrize("size", SIZES)
def test_profiles_pane(snap_compare, db_path, size):
    from tests.test_tui_support import PROFILES

    async def run_before(pilot) -> None:
        await _select_profile(pilot, PROFILES / "track_shipped_order.yaml")

    assert snap_compare(make_app(initial_pane="profiles", profile_dirs=[PROFILES]), terminal_size=size, run_before=run_before)


def test_profiles_pane_with_a_broken_profile(snap_compare, db_path, tmp_path):
    folder = tmp_path / "my-profiles"
    folder.mkdir()
    (folder / "broken.yaml").write_text(BROKEN)

    async def run_before(pilot) -> None:
        await _select_profile(pilot, folder / "broken.yaml")

    assert snap_compare(make_app(initial_pane="profiles", profile_dirs=[folder]), terminal_size=SIZE, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_sessions_pane(snap_compare, stored, size):
    assert snap_compare(make_app(initial_pane="sessions"), terminal_size=size, run_before=_ready)


@pytest.mark.parametrize("size", SIZES)
def test_session_detail_with_a_failed_check_shown(snap_compare, stored, size):
    async def run_before(pilot) -> None:
        await _ready(pilot)
        table = pilot.app.query_one("#sessions-table")
        row = next(i for i in range(table.row_count) if table.full_row(i)[3] == "failed")
        table.focus()
        table.move_cursor(row=row)
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("c")  # the first failed check
        await pilot.pause()
        freeze_cursors(pilot.app)

    assert snap_compare(make_app(initial_pane="sessions"), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_launch_form(snap_compare, db_path, size):
    from tests.test_tui_support import PROFILES

    async def run_before(pilot) -> None:
        await _ready(pilot)
        pilot.app.launch_batch("profiles/")
        await pilot.pause()
        freeze_cursors(pilot.app)

    assert snap_compare(make_app(initial_pane="profiles", profile_dirs=[PROFILES]), terminal_size=size, run_before=run_before)


def test_sessions_pane_empty(snap_compare, db_path):
    assert snap_compare(make_app(initial_pane="sessions"), terminal_size=SIZE, run_before=_ready)


@pytest.mark.parametrize("size", SIZES)
def test_batches_pane(snap_compare, db_path, fixed_ids, size):
    with Store.open(db_path) as store:
        b = store.create_batch(batch(id="b20261121-demo", planned=2, status="completed", started_at=T0))
        for i, script in enumerate(("track", "cancel")):
            conv = conversation(script, started=T0 + dt.timedelta(minutes=i + 1))
            store.save_conversation(b.id, spec("track_order" if script == "track" else "cancel_recent", i), conv, verdict(conv))
    assert snap_compare(make_app(initial_pane="batches"), terminal_size=size, run_before=_ready)


def test_batches_pane_after_an_offline_batch(snap_compare, db_path, tmp_path):
    """A deterministic offline batch (seed 7, one at a time) launched from Profiles, run to the
    end. The batch id, its creation time and the durations are the only cells that depend on
    when the test runs: they are replaced before the picture."""
    import shutil

    from textual.widgets import Input, Static

    from parley.tui.app.panes.batches_pane import BatchesPane
    from parley.tui.app.widgets.row_table import RowTable
    from tests.test_tui_batches import SMALL
    from tests.test_tui_support import PROFILES

    folder = tmp_path / "suite"
    folder.mkdir()
    for name in SMALL:
        shutil.copy(PROFILES / name, folder / name)

    async def run_before(pilot) -> None:
        await _ready(pilot)
        tree = pilot.app.query_one(ProfileTree)
        tree.move_cursor(next(n for n in tree.root.children if n.data == folder))
        tree.focus()
        await pilot.pause()
        await pilot.press("r")
        await pilot.pause()
        form = pilot.app.screen
        form.query_one("#launch-sources", Input).value = "suite"
        form.query_one("#launch-seed", Input).value = "7"
        form.query_one("#launch-concurrency", Input).value = "1"
        await pilot.click("#launch-go")
        pane = pilot.app.query_one(BatchesPane)
        # the batch's own process starts, runs and ends
        await until(pilot, lambda: pane.feed_result is not None and pane.running_batch is None, "the batch to end")
        await settle(pilot, rounds=60)
        batches = pilot.app.query_one("#batches-table", RowTable)
        cells = list(batches.full_row(0))
        real_id, cells[0:2] = cells[0], ["b-snapshot", "2026-11-21 09:00"]
        batches.set_text_row(0, cells)
        status = pilot.app.query_one("#batches-status", Static)
        status.update(str(status.render()).replace(real_id, "b-snapshot"))  # the pass rate line names it too
        pane.results.reset(pane.results.batch_id, [r.model_copy(update={"duration_s": 0.1}) for r in pane.results.rows])
        pane._show_results()
        pilot.app.clear_notifications()
        freeze_cursors(pilot.app)
        await pilot.pause()

    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.chdir(tmp_path)  # so the source reads `suite`, as typed
    try:
        app = make_app(initial_pane="profiles", profile_dirs=[folder])
        assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
    finally:
        monkeypatch.undo()


def test_labelling_a_conversation_at_80x24(snap_compare, stored, monkeypatch):
    """The labelling screen over a batch conversation, one item labelled: the items under the transcript."""
    monkeypatch.setenv("PARLEY_LABELLER", "alice")

    async def run_before(pilot) -> None:
        await _ready(pilot)
        table = pilot.app.query_one("#sessions-table")
        row = next(i for i in range(table.row_count) if table.full_row(i)[1] == "batch")
        table.focus()
        table.move_cursor(row=row)
        await pilot.press("L")
        await settle(pilot)
        await pilot.press("m")
        await settle(pilot)
        freeze_cursors(pilot.app)

    assert snap_compare(make_app(initial_pane="sessions"), terminal_size=(80, 24), run_before=run_before)
