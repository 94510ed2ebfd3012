"""The Chat pane: a live conversation with the bot under test, as the session's customer.

The ChatSession (core) does the work; this pane types into it and renders what comes back:
bot text as it streams, each tool call inline, slash-command output in place. The session is
built, and its bot's HTTP client set up, in a thread; before the first message the pane checks
that the customer exists and the bot has its key, and says what to do if not. Model calls run
in a worker; the chat is saved to the store after every turn, from a thread (the store keeps
the newest snapshot whatever order the saves finish in).
"""

from __future__ import annotations

import asyncio
import datetime
import logging
import uuid
from typing import TYPE_CHECKING

from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.suggester import SuggestFromList
from textual.widgets import Input, Static
from textual.worker import Worker, WorkerState

from parley.tui.app.messages import (
    BotTextReceived,
    BotTurnCompleted,
    ChatCommandCompleted,
    ChatSessionFailedToStart,
    ChatSessionReady,
    ChatSessionSaved,
    ChatSessionStarted,
    ToolCallBegan,
    ToolCallEnded,
)
from parley.tui.app.panes.base import Pane
from parley.tui.app.widgets.transcript_view import ChatLog
from parley.tui.terminal_text import visible

if TYPE_CHECKING:
    from parley.core.chat import ChatSession
    from parley.core.models import ChatModel
    from parley.core.records import ChatExport, SessionMetrics

# The chat's slash commands, for completion. Kept here (not read from parley.core.chat.commands) so
# the app's start-up imports no engine code; tests check the two lists agree.
COMMAND_NAMES = ["tables", "table", "record", "customer", "metrics", "reset", "export", "playbook", "help", "exit", "quit"]
"""Every world's commands; a chat's own world adds its own once the chat has started."""
SUGGESTIONS = [f"/{name}" for name in COMMAND_NAMES]


LABEL_WIDTH = 12


def _fmt_s(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.2f} s"


class ChatSidebar(Static):
    """Who is chatting with which bot, and what it cost: updated after every turn."""

    def __init__(self, *, customer: str, bot_model: str, id: str | None = None) -> None:
        super().__init__(id=id)
        self.customer = customer
        self.bot_model = bot_model
        self.status = "starting…"
        self.metrics: SessionMetrics | None = None
        self.saved = "not yet"
        self.border_title = "Session"

    def on_mount(self) -> None:
        self._render_stats()

    def show(self, *, metrics: SessionMetrics | None = None, status: str | None = None, saved: str | None = None) -> None:
        if metrics is not None:
            self.metrics = metrics
            self.customer = metrics.customer_id
            self.bot_model = metrics.bot_model
        if status is not None:
            self.status = status
        if saved is not None:
            self.saved = saved
        self._render_stats()

    def _render_stats(self) -> None:
        m = self.metrics
        rows: list[tuple[str, str]] = [
            ("Customer", self.customer),
            ("Bot model", self.bot_model),
            ("Status", self.status),
            ("", ""),
        ]
        if m is None:
            rows += [("Turns", "0"), ("Tokens", "0 in · 0 out"), ("Tool calls", "0")]
        else:
            usage = m.usage
            cost = "unknown" if usage.cost_usd is None else f"${usage.cost_usd:.4f}"
            rows += [
                ("Turns", str(m.turns)),
                ("Model calls", str(usage.calls)),
                ("Tokens", f"{usage.input_tokens:,} in · {usage.output_tokens:,} out"),
                ("Unreported", f"{usage.unreported_calls} call{'' if usage.unreported_calls == 1 else 's'}"),
                ("Cost", cost),
                ("", ""),
                ("Tool calls", f"{m.tool_calls} ({m.refused} refused, {m.tool_errors} errors)"),
            ]
            rows += [(" ", f"{name} ×{count}") for name, count in sorted(m.tool_calls_by_name.items())]
            rows += [
                ("", ""),
                ("Latency", f"{_fmt_s(m.bot_latency_last_s)} last"),
                (" ", f"{_fmt_s(m.bot_latency_mean_s)} mean"),
            ]
        rows += [("", ""), ("Saved", self.saved)]
        lines = [
            Content(f"{label:<{LABEL_WIDTH}}").stylize("bold") + Content(visible(value)) if label else Content("") for label, value in rows
        ]
        self.update(Content("\n").join(lines))
        self.set_class(m is not None and m.usage.unreported_calls > 0, "-unreported")
        self.post_message(self.Changed(self.summary()))

    class Changed(Message):
        """The panel's figures changed; `summary` is them on one line (for narrow screens)."""

        def __init__(self, summary: str) -> None:
            super().__init__()
            self.summary = summary

    def summary(self) -> str:
        """Who, with which bot, in what state, and the counts: one line for a narrow terminal."""
        m = self.metrics
        parts = [self.customer, self.bot_model, self.status]
        if m is not None:
            parts += [f"{m.turns} turn{'' if m.turns == 1 else 's'}", f"{m.tool_calls} tool call{'' if m.tool_calls == 1 else 's'}"]
            if m.usage.cost_usd is not None and m.usage.cost_usd > 0:
                parts.append(f"${m.usage.cost_usd:.4f}")
        parts.append(f"saved: {self.saved}")
        return "ctrl+b ▸ " + " · ".join(parts)


class ChatPane(Pane):
    """Live chat. Enter sends; lines starting with / are commands (/help lists them)."""

    BINDINGS = [
        Binding("ctrl+n", "new_chat", "New chat"),
        Binding("ctrl+s", "export_chat", "Export"),
        Binding("ctrl+o", "toggle_tool_calls", "Tool details", key_display="^o"),
        Binding("ctrl+b", "toggle_panel", "Panel"),
        Binding("ctrl+end", "follow", "Follow new messages", show=False),
    ]

    def __init__(self, *, customer: str | None, bot_model: str | ChatModel, world: str | None = None, id: str | None = None) -> None:
        super().__init__(id=id)
        self.customer = customer or ""
        """The customer (empty: the world's own default, known once the chat started)."""
        self.bot_model = bot_model
        self.world = world
        self.session: ChatSession | None = None  # once started
        self.busy = False
        self._started_at: datetime.datetime | None = None
        self._tools_expanded = False
        self._start_error: str | None = None
        self._not_saved: str | None = None  # why chats are not saved (a read-only database)
        self._ended = False

    @property
    def _model_label(self) -> str:
        return self.bot_model if isinstance(self.bot_model, str) else getattr(self.bot_model, "name", "custom")

    def compose(self) -> ComposeResult:
        with Horizontal(id="chat-body"):
            with Vertical(id="chat-main"):
                yield ChatLog(id="chat-log", user_name=f"You · {self.customer}", bot_name=f"Bot · {self._model_label}")
                yield Static(Content(""), id="chat-new-below")
            yield ChatSidebar(customer=self.customer, bot_model=self._model_label, id="chat-sidebar")
        yield Static(Content(""), id="chat-summary")
        yield Input(
            placeholder="Message the bot, or /help for the commands",
            suggester=SuggestFromList(SUGGESTIONS, case_sensitive=False),
            id="chat-input",
        )

    @property
    def log_view(self) -> ChatLog:
        return self.query_one("#chat-log", ChatLog)

    @property
    def sidebar(self) -> ChatSidebar:
        return self.query_one("#chat-sidebar", ChatSidebar)

    @property
    def input(self) -> Input:
        return self.query_one("#chat-input", Input)

    # ---- starting ---------------------------------------------------------------------------------

    def on_mount(self) -> None:
        self.query_one("#chat-new-below").display = False
        self.watch(self.log_view, "unseen", self._unseen_changed, init=False)

    def on_chat_sidebar_changed(self, message: ChatSidebar.Changed) -> None:
        self.query_one("#chat-summary", Static).update(Content(visible(message.summary)))

    def action_toggle_panel(self) -> None:
        """On a narrow terminal the session panel replaces the conversation until toggled back;
        on a wide one it folds away to give the conversation the whole width."""
        self.toggle_class("-panel-toggled")

    def _unseen_changed(self, unseen: int) -> None:
        marker = self.query_one("#chat-new-below", Static)
        marker.display = unseen > 0
        if unseen:
            marker.update(Content(f"↓ new messages below ({unseen}) · ctrl+end follows"))

    def action_follow(self) -> None:
        self.log_view.follow()

    def on_click(self, event: events.Click) -> None:
        if event.widget is not None and event.widget.id == "chat-new-below":
            self.log_view.follow()

    def main_widget(self) -> Input:
        return self.input

    def load_data(self) -> None:
        self._start_session(self.customer)

    def _start_session(self, customer: str) -> None:
        self._build_session(customer, asyncio.get_running_loop())

    @work(thread=True, exclusive=True, exit_on_error=False, group="chat-start", description="starting the chat")
    def _build_session(self, customer: str, loop: asyncio.AbstractEventLoop) -> None:
        # In a thread: the first session loads its world and builds its database;
        # an LLM bot's SDK is imported and its client (SSL context and all) built here too.
        from parley.core.chat import ChatSession
        from parley.core.errors import ParleyError

        try:
            session = ChatSession(
                customer_id=customer or None,
                model=self.bot_model,
                export_dir=self.parley.export_dir,
                today=self.parley.today,
                world=self.world,
            )
        except ParleyError as exc:
            self.post_message(ChatSessionFailedToStart(str(exc)))
            return
        try:
            session.prepare(loop)
        except ParleyError:
            pass  # a missing key: check_ready says so, with what to do
        self.post_message(ChatSessionStarted(session, not_saved=self._why_not_saved()))

    def _why_not_saved(self) -> str | None:
        """Why this chat cannot be saved (a read-only database), else None. In a worker thread."""
        from parley.core.errors import ParleyError

        try:
            store = self.parley.store()
        except ParleyError as exc:  # saving after the first turn says what is wrong
            logging.getLogger("parley.tui").info("the chat's database did not open: %s", exc)
            return None
        return f"{store.path} is read-only" if store.read_only else None

    def on_chat_session_started(self, message: ChatSessionStarted) -> None:
        self._not_saved = message.not_saved
        self.sidebar.show(status="checking…")
        self._check_session(message.session)

    @work(exclusive=True, exit_on_error=False, group="chat-check", description="checking the chat")
    async def _check_session(self, session: ChatSession) -> None:
        from parley.core.errors import ParleyError

        try:
            await session.check_ready()
        except ParleyError as exc:
            await session.aclose()
            self.post_message(ChatSessionFailedToStart(str(exc)))
            return
        self.post_message(ChatSessionReady(session))

    def on_chat_session_ready(self, message: ChatSessionReady) -> None:
        self.session = message.session
        self._start_error = None
        self._started_at = datetime.datetime.now(datetime.UTC)
        self.customer = self.session.customer_id
        self.log_view.user_name = f"You · {self.session.customer_id}"
        self.log_view.bot_name = f"Bot · {self.session.bot_model}"
        self.sidebar.show(metrics=self.session.metrics(), status="ready", saved="no (read-only)" if self._not_saved else "not yet")
        self.query_one("#chat-input", Input).suggester = SuggestFromList(
            [f"/{name}" for name in self.session.commands], case_sensitive=False
        )
        self.log_view.add_notice(
            f"Chatting as {self.session.customer_id} with the {self.session.bot_model} bot on world {self.session.definition.name}; "
            f"its data as of {self.session.today.isoformat()}. Type a message, or /help for the commands.",
            kind="hint",
        )
        if self._not_saved:
            self.log_view.add_notice(f"This chat will not be saved: {self._not_saved}.", kind="warning", title="not saved")

    def on_chat_session_failed_to_start(self, message: ChatSessionFailedToStart) -> None:
        self._start_error = message.reason
        self.sidebar.show(status="not started")
        self.log_view.add_notice(
            f"The chat could not start: {message.reason}\nFix it and press ctrl+n, or type /customer ID to chat as another customer.",
            kind="error",
            title="error",
        )
        self.notify(message.reason, title="Chat not started", severity="error")

    # ---- sending ----------------------------------------------------------------------------------

    @on(Input.Submitted, "#chat-input")
    def _submitted(self, event: Input.Submitted) -> None:
        text = event.value
        if not text.strip():
            return
        if text.strip().lower() == "/quit":  # quits parley whatever state the chat is in
            self.app.exit()
            return
        if self.session is None and self._start_error and text.strip().lower().startswith("/customer "):
            event.input.clear()  # start again as that customer (the check says if it is one)
            self.customer = text.strip().split(None, 1)[1].strip()
            self.action_new_chat()
            return
        if self.session is None:
            if self._ended:
                self.notify("This chat has ended: ctrl+n starts a new one.", severity="warning")
            elif self._start_error:
                self.notify(f"The chat could not start: {self._start_error}", severity="error")
            else:
                self.notify("The chat is still starting; try again in a moment.", severity="warning")
            return
        if self.busy:
            self.notify("The bot is still answering.", severity="warning")
            return
        event.input.clear()
        self.send(text)

    def send(self, text: str) -> None:
        """Send a message (or run a slash command) as if typed."""
        if not text.lstrip().startswith("/"):
            self.log_view.add_user(text)
        self.busy = True
        self.sidebar.show(status="answering…")
        self._send(text)

    @work(exclusive=True, exit_on_error=False, group="chat-turn", description="the bot's turn")
    async def _send(self, text: str) -> None:
        from parley.core.bots import TextDelta, ToolCallFinished, ToolCallStarted, TurnCompleted
        from parley.core.chat import CommandResult

        session = self.session
        assert session is not None, "send() is offered only once the session is ready"
        async for event in session.send_stream(text):
            if isinstance(event, TextDelta):
                self.post_message(BotTextReceived(event.text))
            elif isinstance(event, ToolCallStarted):
                self.post_message(ToolCallBegan(event.call_id, event.name, event.arguments))
            elif isinstance(event, ToolCallFinished):
                self.post_message(ToolCallEnded(event.record))
            elif isinstance(event, TurnCompleted):
                self.post_message(BotTurnCompleted(event.turn, session.metrics()))
            elif isinstance(event, CommandResult):
                self.post_message(ChatCommandCompleted(text, event, session.metrics()))

    def on_bot_text_received(self, message: BotTextReceived) -> None:
        self.log_view.stream_bot(message.text)

    def on_tool_call_began(self, message: ToolCallBegan) -> None:
        self.log_view.start_tool(message.call_id, message.name, message.arguments).collapsed = not self._tools_expanded

    def on_tool_call_ended(self, message: ToolCallEnded) -> None:
        self.log_view.finish_tool(message.record)

    def on_bot_turn_completed(self, message: BotTurnCompleted) -> None:
        self.log_view.end_bot_turn(message.turn.text)
        self._turn_done(message.metrics)

    def on_chat_command_completed(self, message: ChatCommandCompleted) -> None:
        result = message.result
        if result.kind == "error" and result.command is None:  # a failed turn, not a command
            self.notify(result.text or "The bot failed.", title="Bot error", severity="error")
        if result.command == "/export" and result.path:
            self.notify(f"Exported to {result.path}", title="Chat exported")
        if result.command in ("/reset", "/customer") and result.kind == "text":
            # Cleared means cleared on screen too: the conversation so far stays saved as it
            # was, and what follows is a new session with its own counts.
            assert self.session is not None, "a command ran in this session"
            self.session.id = uuid.uuid4().hex
            self._started_at = datetime.datetime.now(datetime.UTC)
            self.log_view.clear_log()
            self.log_view.user_name = f"You · {self.session.customer_id}"
            self.log_view.add_command_result(result)
            self.sidebar.show(saved="not yet")
        else:
            self.log_view.add_command_result(result)
        self._turn_done(message.metrics)
        if result.command == "/quit":
            self.app.exit()
        elif result.kind == "exit":
            self._end_chat()

    def _turn_done(self, metrics: SessionMetrics) -> None:
        self.busy = False
        self.sidebar.show(metrics=metrics, status="ready")
        self._save()

    def _end_chat(self) -> None:
        """/exit: this chat ends (saved as it is); the app stays, and ctrl+n starts another."""
        session, self.session = self.session, None
        self._ended = True
        if session is not None:
            self.customer = session.customer_id  # the next chat goes on as the same customer
            self._close_session(session)
        self.sidebar.show(status="ended")
        self.log_view.add_notice("ctrl+n starts a new chat; ctrl+q quits parley.", kind="hint")

    # ---- saving -----------------------------------------------------------------------------------

    def _save(self) -> None:
        if self.session is None or not self.session.transcript or self._not_saved:
            return
        self._write_session(self.session.snapshot(), self._started_at)

    @work(thread=True, exit_on_error=False, group="chat-save", description="saving the chat")
    def _write_session(self, snapshot: ChatExport, started_at: datetime.datetime | None) -> None:
        self.parley.store().save_chat_session(snapshot, started_at=started_at)
        self.post_message(ChatSessionSaved(snapshot.session_id, len(snapshot.messages)))

    def on_chat_session_saved(self, message: ChatSessionSaved) -> None:
        self.sidebar.show(saved=f"{message.messages} messages")
        self.parley.sessions_changed()

    # ---- actions ----------------------------------------------------------------------------------

    def action_new_chat(self) -> None:
        """A fresh session: new World, empty transcript (the old one stays saved)."""
        if self.session is None and self.busy:
            return
        old, self.session = self.session, None
        self.busy = False
        self.workers.cancel_group(self, "chat-turn")
        if old is not None:
            self._close_session(old)
            customer = old.customer_id
        else:
            customer = self.customer
        self._ended = False
        self._start_error = None
        self.log_view.clear_log()
        self.sidebar.show(status="starting…", saved="not yet")
        self._start_session(customer)
        self.input.focus()

    @work(exit_on_error=False, group="chat-close", description="closing the chat")
    async def _close_session(self, session: ChatSession) -> None:
        await session.aclose()

    def action_export_chat(self) -> None:
        if self.session is None or self.busy:
            self.notify("Nothing to export yet.", severity="warning")
            return
        self.send("/export")

    def action_toggle_tool_calls(self) -> None:
        self._tools_expanded = not self._tools_expanded
        for view in self.log_view.tool_calls:
            view.collapsed = not self._tools_expanded

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        # Pane's own handler (which reports failures) runs too: Textual calls the handler of
        # every class up the MRO, so calling super() here reported each failure twice.
        if event.worker.group == "chat-turn" and event.state in (WorkerState.ERROR, WorkerState.CANCELLED):
            self.busy = False
            self.sidebar.show(status="ready")
        if event.worker.group == "chat-start" and event.state == WorkerState.ERROR:
            self.sidebar.show(status="not started")

    async def on_unmount(self) -> None:
        if self.session is not None:  # the app is closing: release the session's World
            await self.session.aclose()
