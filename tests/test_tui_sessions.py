"""The Sessions pane over a prepared store: newest first, filters, paging, the detail screen with
transcript and verdict, JSON export, and the empty-database message."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from textual.widgets import DataTable, Input, Select

from parley.core.chat.session import ChatSession
from parley.core.store.store import Store
from parley.tui.app.panes.session_detail import CheckView, SessionScreen
from parley.tui.app.panes.sessions_pane import EMPTY_TEXT, SessionsPane
from parley.tui.app.widgets.transcript_view import ChatLog, ToolCallView
from tests.test_store_fixtures import T0, build_scored_batch, conversation, spec, verdict
from tests.test_tui_support import SIZE, TODAY, db_path, make_app, settle, type_slowly  # noqa: F401  (fixture)

CHAT_STARTED = T0 + dt.timedelta(minutes=30)


async def save_chat(store: Store, lines: list[str], started: dt.datetime) -> str:
    """A real offline chat, saved as the Chat pane saves it."""
    async with ChatSession(today=TODAY, export_dir=store.path.parent) as session:
        for line in lines:
            await session.send(line)
        snapshot = session.snapshot().model_copy(update={"exported_at": started})
        store.save_chat_session(snapshot, started_at=started)
        return session.id


@pytest.fixture
async def prepared(db_path):
    """12 scored batch conversations (09:01..09:12 UTC) and one live chat at 09:30."""
    with Store.open(db_path) as store:
        batch = build_scored_batch(store)
        chat_id = await save_chat(store, ["hello", "please cancel ORD-1005"], CHAT_STARTED)
    return {"db": db_path, "batch": batch, "chat": chat_id}


def _column(table, index: int) -> list[str]:
    """Column `index` of the Sessions table's rows (every column, shown at this width or not)."""
    return [table.full_row(i)[index] for i in range(table.row_count)]


def _status(app) -> str:
    return str(app.query_one("#sessions-status").render())


async def _open_sessions(pilot) -> DataTable:
    await settle(pilot)
    return pilot.app.query_one("#sessions-table", DataTable)


async def test_everything_stored_is_listed_newest_first(prepared):
    app = make_app(initial_pane="sessions")
    async with app.run_test(size=SIZE) as pilot:
        table = await _open_sessions(pilot)
        assert table.row_count == 13
        started = _column(table, 0)
        assert started == sorted(started, reverse=True)
        assert started[0] == "2026-11-21 09:30" and _column(table, 1)[0] == "chat"
        assert started[-1] == "2026-11-21 09:01"
        assert _column(table, 1).count("batch") == 12
        assert "13 of 13 shown" in _status(app) and "12 batch conversations, 1 chat" in _status(app)
        assert not app.query_one("#sessions-empty").display


async def test_filters_narrow_the_list(prepared):
    app = make_app(initial_pane="sessions")
    async with app.run_test(size=SIZE) as pilot:
        table = await _open_sessions(pilot)
        with Store.open(prepared["db"]) as store:
            failed = store.count_conversations(outcome="failed")

        app.query_one("#sessions-outcome", Select).value = "failed"
        await settle(pilot)
        assert table.row_count == failed and set(_column(table, 3)) == {"failed"}

        app.query_one("#sessions-outcome", Select).value = Select.NULL
        app.query_one("#sessions-profile", Select).value = "cancel_recent"
        await settle(pilot)
        assert table.row_count == 6 and set(_column(table, 2)) == {"cancel_recent"}

        app.query_one("#sessions-profile", Select).value = Select.NULL
        search = app.query_one("#sessions-text", Input)
        search.focus()
        search.value = "ORD-1005"  # only the live chat talked about ORD-1005
        await pilot.press("enter")
        await settle(pilot)
        assert _column(table, 2) == ["chat as C-100"]

        search.value = ""
        date = app.query_one("#sessions-date", Input)
        date.value = "2026-11-22"
        date.focus()
        await pilot.press("enter")
        await settle(pilot)
        assert table.row_count == 0 and "No sessions match" in _status(app)

        date.value = "2026-11-20..2026-11-21"
        await pilot.press("enter")
        await settle(pilot)
        assert table.row_count == 13

        date.value = "21/11/2026"
        await pilot.press("enter")
        await settle(pilot)
        assert "is not a date" in _status(app) and "-invalid" in date.classes


async def test_enter_opens_the_transcript_and_the_verdict(prepared):
    app = make_app(initial_pane="sessions")
    async with app.run_test(size=SIZE) as pilot:
        table = await _open_sessions(pilot)
        names = _column(table, 2)
        outcomes = _column(table, 3)
        row = next(i for i, (n, o) in enumerate(zip(names, outcomes, strict=False)) if n == "track_order" and o == "failed")
        table.focus()
        table.move_cursor(row=row)
        await pilot.press("enter")
        await settle(pilot)

        screen = app.screen
        assert isinstance(screen, SessionScreen)
        log = screen.query_one(ChatLog)
        assert [m.text for m in log.messages if m.role == "user"] == ["hi", "where is my order ORD-1003?"]
        assert [v.tool_name for v in log.query(ToolCallView)] == ["track_order"]
        verdict_text = str(screen.query_one("#detail-verdict").render())
        assert "Outcome: failed" in verdict_text and "Score:" in verdict_text
        checks = [str(view.render()) for view in screen.query(CheckView)]
        assert checks == [
            "✓ pass  ORD-1003 stays shipped\n   as expected",
            "✗ fail  bot tracks the order\n   track_order was never called",
        ]

        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, SessionScreen)


async def test_a_live_chat_opens_too(prepared):
    app = make_app(initial_pane="sessions")
    async with app.run_test(size=SIZE) as pilot:
        table = await _open_sessions(pilot)
        table.focus()
        table.move_cursor(row=0)
        await pilot.press("enter")
        await settle(pilot)
        log = app.screen.query_one(ChatLog)
        assert "can't cancel that order" in log.messages[-1].text
        assert "not evaluated" in str(app.screen.query_one("#detail-verdict").render())


async def test_export_writes_json_under_the_sessions_folder(prepared):
    app = make_app(initial_pane="sessions")
    async with app.run_test(size=SIZE) as pilot:
        table = await _open_sessions(pilot)
        table.focus()
        table.move_cursor(row=1)  # the newest batch conversation
        await pilot.press("e")
        await settle(pilot)
        written = sorted(prepared["db"].parent.glob("conversation-*.json"))
        assert len(written) == 1
        record = json.loads(written[0].read_text())
        assert record["batch_id"] == prepared["batch"].id and record["messages"] and "verdict" in record
        assert any(str(written[0]) in n.message for n in app._notifications)

        table.move_cursor(row=0)
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("e")  # from the detail screen
        await settle(pilot)
        chat = json.loads(next(prepared["db"].parent.glob("chat-*.json")).read_text())
        assert chat["session_id"] == prepared["chat"]


async def test_an_empty_database_says_how_to_fill_it(db_path):
    app = make_app(initial_pane="sessions")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        empty = app.query_one("#sessions-empty")
        assert empty.display and str(empty.render()) == EMPTY_TEXT
        assert not app.query_one("#sessions-table").display


async def test_pages_load_lazily(db_path):
    with Store.open(db_path) as store:
        for i in range(450):
            conv = conversation("track", started=T0 + dt.timedelta(seconds=i))
            store.save_conversation(None, spec("track_order", i), conv, verdict(conv))
    app = make_app(initial_pane="sessions", sessions_page_size=100)
    async with app.run_test(size=SIZE) as pilot:
        table = await _open_sessions(pilot)
        pane = app.query_one(SessionsPane)
        assert table.row_count == 100 and "100 of 450 shown" in _status(app) and "l loads more" in _status(app)
        await pilot.press("l")
        await settle(pilot)
        assert table.row_count == 200
        table.focus()
        await pilot.press("ctrl+end")  # the cursor near the end fetches the next page
        await settle(pilot)
        assert table.row_count == 300
        table.move_cursor(row=0)
        await pilot.pause()
        table.scroll_to(y=table.max_scroll_y, animate=False)  # so does scrolling to the end
        await settle(pilot)
        assert table.row_count == 400
        await pilot.press("l", "l")
        await settle(pilot)
        assert table.row_count == 450 and "450 of 450 shown" in _status(app)
        started = _column(table, 0)
        assert started == sorted(started, reverse=True) and len(set(pane.items)) == 450


async def test_typing_in_the_search_box_never_fires_a_binding(prepared):
    app = make_app(initial_pane="sessions")
    async with app.run_test(size=SIZE) as pilot:
        await _open_sessions(pilot)
        await pilot.press("slash")
        search = app.query_one("#sessions-text", Input)
        assert app.focused is search
        await type_slowly(pilot, "refuse2")  # e is "export", 2 is "show Profiles" elsewhere
        assert search.value == "refuse2" and app.focused is search
        assert app.query_one("#panes").active == "sessions-pane"
        assert not list(prepared["db"].parent.glob("*.json")), "nothing was exported"


async def test_a_chat_is_found_by_the_name_the_list_shows(prepared):
    app = make_app(initial_pane="sessions")
    async with app.run_test(size=SIZE) as pilot:
        table = await _open_sessions(pilot)
        assert _column(table, 2)[0] == "chat as C-100"
        await pilot.press("slash")
        await type_slowly(pilot, "chat as")
        assert _column(table, 2) == ["chat as C-100"] and "1 of 1 shown" in _status(app)


@pytest.mark.parametrize("size", [(80, 24), SIZE])
async def test_the_date_hint_is_not_cut(db_path, size):
    app = make_app(initial_pane="sessions")
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        date = app.query_one("#sessions-date", Input)
        assert date.content_region.width >= len(date.placeholder)


async def test_long_profile_names_stay_on_one_line_in_the_filter(db_path):
    long_name = "a_profile_with_a_very_long_name_that_goes_on_and_on_for_ever"
    with Store.open(db_path) as store:
        conv = conversation("track", started=T0)
        store.save_conversation(None, spec(long_name, 0), conv, verdict(conv))
    app = make_app(initial_pane="sessions")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        select = app.query_one("#sessions-profile", Select)
        select.focus()
        await pilot.press("enter")  # open the choices
        await pilot.pause()
        await pilot.press("down", "down", "enter")  # past "Live chats" to the long name
        await settle(pilot)
        assert select.value == long_name
        assert select.outer_size.height == 3, "the chosen name does not wrap the filter to two lines"
        assert _column(app.query_one("#sessions-table"), 2) == [long_name]


async def test_enter_on_a_failed_check_goes_to_the_turn_that_broke_it(db_path):
    from parley.core.records.verdict import CheckResult
    from parley.tui.app.panes.session_detail import CheckView

    with Store.open(db_path) as store:
        conv = conversation("cancel", started=T0)  # "please cancel ORD-1001", "yes": the bot cancels it
        broke = CheckResult(
            kind="unchanged_others",
            name="ORD-1001 not expected to change",
            outcome="fail",
            reason="ORD-1001 was cancelled (it was processing) although the profile did not expect it to change.",
            policy_violation=True,
            details={"order_id": "ORD-1001", "initial": "processing", "final": "cancelled"},
        )
        never = CheckResult(
            kind="tool_called", name="track_order called", outcome="fail", reason="never", details={"tool": "track_order", "count": 0}
        )
        store.save_conversation(None, spec("cancel_recent", 0), conv, verdict(conv, "failed", 1, checks=[never, broke]))
    app = make_app(initial_pane="sessions")
    async with app.run_test(size=(80, 24)) as pilot:
        table = await _open_sessions(pilot)
        table.focus()
        await pilot.press("enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        checks = list(screen.query(CheckView))
        await pilot.press("c")  # to the checks (the footer offers it), the first failed one first
        await pilot.pause()
        assert app.focused is checks[0]
        await pilot.press("enter")  # a tool never called: no single turn, and it says so
        await pilot.pause()
        assert any("no single turn" in n.message for n in app._notifications)
        await pilot.press("tab", "enter")
        await pilot.pause()
        log = screen.query_one(ChatLog)
        target = [v for v in log.tool_calls if "-target" in v.classes]
        assert [v.tool_name for v in target] == ["cancel_order"] and not target[0].collapsed
        assert log.scrollable_content_region.contains(target[0].region.x, target[0].region.y), "the turn is on screen"
        assert "Outcome: failed" in str(screen.query_one("#detail-verdict").render())
        facts = str(screen.query_one("#detail-facts").render())
        assert "judge offline" in facts  # the Models line names all three roles


async def test_a_passed_verdict_says_passed_once(db_path):
    with Store.open(db_path) as store:
        conv = conversation("track", started=T0)
        store.save_conversation(None, spec("track_order", 0), conv, verdict(conv))
    app = make_app(initial_pane="sessions")
    async with app.run_test(size=SIZE) as pilot:
        table = await _open_sessions(pilot)
        table.focus()
        await pilot.press("enter")
        await settle(pilot)
        first = str(app.screen.query_one("#detail-verdict").render()).splitlines()[0]
        assert first == "Outcome: passed"


async def test_end_and_home_go_to_the_last_and_first_rows(prepared):
    app = make_app(initial_pane="sessions")
    async with app.run_test(size=(80, 24)) as pilot:
        table = await _open_sessions(pilot)
        table.focus()
        await pilot.press("end")  # DataTable's own End scrolls sideways
        await pilot.pause()
        assert table.cursor_row == table.row_count - 1 and table.scroll_x == 0
        await pilot.press("home")
        await pilot.pause()
        assert table.cursor_row == 0
