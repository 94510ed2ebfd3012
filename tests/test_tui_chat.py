"""The Chat pane as a person uses it: an offline conversation, every slash command, tool calls
inline, the side panel, errors in place, and the chat saved to the store as it goes."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import DataTable, Input

from parley.core.chat.commands import COMMANDS
from parley.core.store.store import Store
from parley.tui.app.messages import BotTextReceived
from parley.tui.app.panes.chat_pane import COMMAND_NAMES, ChatPane, ChatSidebar
from parley.tui.app.widgets.command_table import CommandTable
from parley.tui.app.widgets.transcript_view import ChatLog, Notice, ToolCallView
from tests.test_bot_order_loop import ScriptedModel, calls, text
from tests.test_tui_support import SIZE, db_path, make_app, say, settle, until  # noqa: F401  (fixture)


def _log(app) -> ChatLog:
    return app.query_one("#chat-log", ChatLog)


def _bot_texts(app) -> list[str]:
    return [m.text for m in _log(app).messages if m.role == "bot"]


def _last(app, kind):
    return list(_log(app).query(kind))[-1]


def _sidebar(app) -> str:
    return str(app.query_one(ChatSidebar).render())


async def test_an_offline_chat_streams_replies_shows_tool_calls_and_is_saved(db_path):
    streamed: list[str] = []

    def hook(message):
        if isinstance(message, BotTextReceived):
            streamed.append(message.text)

    app = make_app()
    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        await settle(pilot)
        assert app.focused is app.query_one("#chat-input", Input)  # type at once

        await say(pilot, "hello")
        assert "I'm the order assistant" in _bot_texts(app)[-1]
        assert streamed, "the reply arrived as streamed text"

        await say(pilot, "where is ORD-1003?")
        track = _last(app, ToolCallView)
        assert track.tool_name == "track_order" and track.record.arguments == {"order_id": "ORD-1003"}
        assert track.status == "ok" and "-ok" in track.classes
        assert "UPS" in _bot_texts(app)[-1]
        assert "order_id=ORD-1003" in str(track.title)

        await say(pilot, "please cancel ORD-1005")
        check = _last(app, ToolCallView)
        assert check.tool_name == "check_cancellation"
        assert check.status == "not eligible (too_old)"
        assert "can't cancel that order" in _bot_texts(app)[-1] and "10-day" in _bot_texts(app)[-1]

        sidebar = _sidebar(app)
        assert "C-100" in sidebar and "offline" in sidebar
        assert "Turns       3" in sidebar and "Tool calls  2 (0 refused, 0 errors)" in sidebar
        assert "Unreported  0 calls" in sidebar and "Latency" in sidebar
        session_id = app.query_one(ChatPane).session.id

    with Store.open(db_path) as store:
        saved = store.load_chat_session(session_id).chat
    users = [m.content for m in saved.messages if m.role == "user"]
    assert users == ["hello", "where is ORD-1003?", "please cancel ORD-1005"]
    assert [c.name for c in saved.tool_calls] == ["track_order", "check_cancellation"]


async def test_a_refused_cancellation_is_marked_refused_in_the_transcript(db_path):
    # An LLM that skips the eligibility check: the order API itself refuses (409 too_old).
    model = ScriptedModel(
        calls(("cancel_order", '{"order_id": "ORD-1005"}')),
        text("I'm sorry, ORD-1005 is past the 10-day window and cannot be cancelled."),
        name="fake/llm",
    )
    app = make_app(bot_model=model)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await say(pilot, "cancel ORD-1005 right now")
        view = _last(app, ToolCallView)
        assert view.record.refused and "-refused" in view.classes
        assert view.status == "REFUSED (409 too_old)"
        assert "REFUSED" in str(view.title) and "cancel_order" in str(view.title)
        view.collapsed = False
        await pilot.pause()
        result = str(view.query(".tool-result").first().render())
        assert "REFUSED [409 too_old]" in result and "10-day" in result
        assert "cannot be cancelled" in _bot_texts(app)[-1]
        assert "1 refused" in _sidebar(app)


async def test_every_slash_command_renders_in_place(db_path, tmp_path):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)

        await say(pilot, "/database")
        table = _last(app, CommandTable)
        assert table.table.row_count == 18 and "Cancellable" in table.columns
        assert "/database" in table.title

        await say(pilot, "/orders")
        orders = _last(app, CommandTable)
        assert "C-100" in orders.title and orders.rows[0][0] == "ORD-1001"
        assert all(row[1] == "C-100" for row in orders.rows)

        await say(pilot, "/order ORD-1003")
        detail = _last(app, Notice)
        assert "ORD-1003 of C-100: shipped" in detail.text and '"carrier": "UPS"' in detail.text

        await say(pilot, "where is ORD-1003?")
        await say(pilot, "/metrics")
        metrics = dict(_last(app, CommandTable).rows)
        assert metrics["Turns"] == "1" and metrics["Tool calls"] == "1"

        await say(pilot, "/help")
        help_text = _last(app, Notice).text
        assert all(f"/{name}" in help_text for name in COMMANDS)

        await say(pilot, "/export")
        exported = _last(app, Notice)
        path = Path(exported.text.removeprefix("Conversation exported to "))
        assert path.is_file() and path.parent == db_path.parent
        assert json.loads(path.read_text())["messages"][0]["content"] == "where is ORD-1003?"

        await say(pilot, "/reset")
        assert "restored to its starting state" in _last(app, Notice).text

        await say(pilot, "/customer C-200")
        assert "Now chatting as C-200" in _last(app, Notice).text
        assert "C-200" in _sidebar(app)
        await say(pilot, "list my orders")
        assert "ORD-2001" in _bot_texts(app)[-1]
        assert _log(app).messages[-2].border_title == "You · C-200"

        await say(pilot, "/databse")
        error = _last(app, Notice)
        assert error.kind == "error" and "Did you mean /database?" in error.text

        await say(pilot, "/exit")  # what /help says: the chat ends, the app stays
        assert not app._exit and app.query_one(ChatPane).session is None
        assert "ended" in _sidebar(app) and "ctrl+n starts a new chat" in _last(app, Notice).text
        await say(pilot, "/quit")  # and /quit quits parley
        assert app._exit


async def test_slash_commands_are_suggested_while_typing(db_path):
    assert set(COMMAND_NAMES) == set(COMMANDS)  # the pane's list follows core's commands
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("/", "d", "a")
        await pilot.pause()
        field = app.query_one("#chat-input", Input)
        assert field._suggestion == "/database"
        await pilot.press("right")  # accept the suggestion
        assert field.value == "/database"


async def test_a_missing_api_key_is_a_clear_message_not_a_traceback(db_path):
    app = make_app(bot_model="openrouter/some/model")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await say(pilot, "hello")
        error = _last(app, Notice)
        assert error.kind == "error" and "OPENROUTER_API_KEY" in error.text
        assert any("OPENROUTER_API_KEY" in n.message for n in app._notifications)
        assert app.is_running


async def test_an_unknown_model_name_is_shown_in_place(db_path):
    app = make_app(bot_model="nonsense")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        error = _last(app, Notice)
        assert error.kind == "error" and "could not start" in error.text
        assert "not started" in _sidebar(app)
        await say(pilot, "hello")
        assert any("could not start" in n.message for n in app._notifications)


async def test_new_chat_starts_afresh_and_keeps_the_old_one_saved(db_path):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await say(pilot, "where is ORD-1003?")
        first = app.query_one(ChatPane).session.id
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert not _log(app).messages and app.query_one(ChatPane).session.id != first
        await say(pilot, "hello")
        await pilot.press("f4")  # the Sessions pane lists both chats, newest first
        await settle(pilot)
        table = app.query_one("#sessions-table", DataTable)
        assert [str(table.get_row_at(i)[2]) for i in range(table.row_count)] == ["chat as C-100", "chat as C-100"]
    with Store.open(db_path) as store:
        assert {s.id for s in store.list_chat_sessions()} >= {first}
        assert len(store.list_chat_sessions()) == 2


async def test_the_commands_tables_are_datatables(db_path):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await say(pilot, "/orders C-200")
        table = _last(app, CommandTable).query_one(DataTable)
        assert [str(table.get_row_at(i)[0]) for i in range(table.row_count)] == ["ORD-2001", "ORD-2002", "ORD-2003", "ORD-2004"]


async def test_calls_without_token_counts_are_shown_as_unreported(db_path):
    from parley.core.records.chat import ModelReply, Usage

    silent = ModelReply(model="fake/llm", text="Hi there.", usage=Usage(calls=1, unreported_calls=1))
    app = make_app(bot_model=ScriptedModel(silent, name="fake/llm"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await say(pilot, "hello")
        assert "Unreported  1 call" in _sidebar(app)
        assert "-unreported" in app.query_one(ChatSidebar).classes


async def type_line(pilot, text: str, *, pause: float = 0.05) -> None:
    """Type a line into the chat key by key and press Enter, then wait for the answer."""
    pilot.app.query_one("#chat-input", Input).focus()
    for ch in text:
        await pilot.press("space" if ch == " " else ch)
        await pilot.pause(pause)
    await pilot.press("enter")
    await settle(pilot)


def _in_view(log: ChatLog, widget) -> bool:
    """Whether `widget`'s last line is inside the log's visible area."""
    return log.scrollable_content_region.contains(widget.region.x, widget.region.bottom - 1)


async def test_new_messages_follow_after_tool_details_are_shown(db_path):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await type_line(pilot, "where is ORD-1003?")
        await pilot.press("ctrl+o")  # tool details: the log grows under the reader
        await pilot.pause()
        for line in ("hello", "list my orders"):
            await type_line(pilot, line)
        log = _log(app)
        await pilot.pause()
        assert "ORD-1001" in _bot_texts(app)[-1]
        assert _in_view(log, log.messages[-1]), "the newest reply is on screen"
        assert not app.query_one("#chat-new-below").display


async def test_scrolled_up_the_reader_stays_put_and_is_told_of_new_messages(db_path):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        for line in ("hello", "where is ORD-1003?", "list my orders"):
            await type_line(pilot, line)
        log = _log(app)
        log.focus()
        await pilot.press("home")  # the person scrolls up to read
        await pilot.wait_for_scheduled_animations()
        top = log.scroll_y
        assert top < log.max_scroll_y
        await say(pilot, "hello")
        await pilot.pause()
        assert log.scroll_y == top, "reading is not interrupted"
        marker = app.query_one("#chat-new-below")
        assert marker.display and "new messages below" in str(marker.render())
        app.query_one("#chat-input").focus()  # typing again, they ask to follow (as the marker says)
        await pilot.press("ctrl+end")
        await pilot.pause()
        assert not marker.display and _in_view(log, log.messages[-1])


async def test_reset_clears_the_transcript_on_screen(db_path):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await type_line(pilot, "where is ORD-1003?")
        assert _log(app).messages
        await type_line(pilot, "/reset")
        assert not _log(app).messages and not _log(app).tool_calls  # cleared, as it says
        assert "Conversation cleared" in _last(app, Notice).text
        assert "Turns       0" in _sidebar(app) and "Tool calls  0" in _sidebar(app)


async def test_switching_customer_starts_the_counts_afresh(db_path):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await type_line(pilot, "where is ORD-1003?")
        assert "Turns       1" in _sidebar(app) and "Tool calls  1" in _sidebar(app)
        await type_line(pilot, "/customer C-200")
        assert "conversation was cleared" in _last(app, Notice).text
        assert not _log(app).messages and not _log(app).tool_calls
        sidebar = _sidebar(app)
        assert "Turns       0" in sidebar and "Tool calls  0" in sidebar and "C-200" in sidebar
        await type_line(pilot, "list my orders")
        assert "Turns       1" in _sidebar(app)


async def test_an_unknown_customer_is_said_at_start_with_what_to_do(db_path):
    app = make_app(customer="C-999")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        error = _last(app, Notice)
        assert error.kind == "error" and "C-999" in error.text and "C-100" in error.text
        assert "parley chat --customer" in error.text
        assert "not started" in _sidebar(app) and "ready" not in _sidebar(app)


async def test_a_missing_key_is_said_at_start_not_at_the_first_message(db_path):
    app = make_app(bot_model="openai/gpt-4o-mini")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        error = _last(app, Notice)
        assert error.kind == "error" and "OPENAI_API_KEY" in error.text and "--bot offline" in error.text
        assert "not started" in _sidebar(app)


async def test_saves_that_finish_out_of_order_keep_the_latest_chat(db_path, monkeypatch):
    import threading

    from parley.core.store.store import Store as StoreClass

    first_may_finish = threading.Event()
    calls = []
    original = StoreClass.save_chat_session

    def racing_save(self, chat, **kw):
        calls.append(len(chat.messages))
        if len(calls) == 1:
            first_may_finish.wait(5)  # the first turn's save is overtaken by the second's
        original(self, chat, **kw)
        if len(calls) == 2:
            first_may_finish.set()

    monkeypatch.setattr(StoreClass, "save_chat_session", racing_save)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        pane = app.query_one(ChatPane)
        pane.send("hello")
        await until(pilot, lambda: bool(calls), "the first turn's save to start")
        await say(pilot, "where is ORD-1003?")
        await settle(pilot)
        session_id = pane.session.id
        latest = len(pane.session.snapshot().messages)
    assert len(calls) == 2 and calls[0] < calls[1]
    with Store.open(db_path) as store:
        assert len(store.load_chat_session(session_id).chat.messages) == latest


async def test_a_chat_that_fails_to_save_says_so_once_per_failure(db_path, monkeypatch):
    # Textual runs a message's handler of every class up the pane's MRO: a pane that also called
    # its base's handler reported each failure twice.
    from parley.core.errors import ParleyError

    def full_disk(self, chat, **kw):
        raise ParleyError(f"{self.path}: database or disk is full")

    monkeypatch.setattr(Store, "save_chat_session", full_disk)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await say(pilot, "hello")
        await say(pilot, "where is ORD-1003?")
        failures = [(n.title, n.message) for n in app._notifications]
    assert failures == [("Failed: saving the chat", f"{db_path}: database or disk is full")] * 2


async def test_an_llm_bots_client_is_built_before_the_first_message_off_the_ui_loop(db_path, monkeypatch):
    # Importing the SDK and building its SSL context take ~0.5 s: done in the start-up thread,
    # so the first message does not freeze the screen.
    import threading

    from parley.core.models import openai_provider

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    built_on = []
    original = openai_provider._shared_endpoint

    def spy(endpoint, loop=None):
        built_on.append(threading.current_thread() is threading.main_thread())
        return original(endpoint, loop)

    monkeypatch.setattr(openai_provider, "_shared_endpoint", spy)
    app = make_app(bot_model="openai/gpt-4o-mini")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "ready" in _sidebar(app)
        assert openai_provider.shared_client_count() == 1, "the app loop's client exists before any message"
        assert built_on and not built_on[0], "it was built in a worker thread"
        await openai_provider.aclose_clients()


async def test_orders_shows_the_same_columns_from_call_to_call(db_path):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        shown = []
        for line in ("/orders", "/orders C-200", "/orders", "/orders C-300"):
            await say(pilot, line)
            await pilot.pause()
            shown.append(list(app.query(CommandTable))[-1].table.shown_titles)
        assert shown == [shown[0]] * 4 and "Cancellable" in shown[0]  # whose orders, and how full the transcript, change nothing


async def test_exit_on_an_empty_chat_says_nothing_was_saved(db_path):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await say(pilot, "/exit")
        said = [n.text for n in app.query(Notice)]
        assert any("nothing was said, so nothing was saved" in text for text in said), said
        assert not any("stays saved" in text for text in said)
