"""ChatLog: a conversation as a person reads it.

User and bot messages in turn, each tool call inline as a collapsed block (name, arguments,
result, and whether the order API refused it), and slash-command output (tables, details,
errors) where it was asked for. The live chat appends to it as events stream in; the session
detail screen fills it from a stored transcript.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from textual import events
from textual.containers import VerticalScroll
from textual.content import Content
from textual.markup import escape
from textual.reactive import reactive
from textual.scrollbar import ScrollTo, ScrollUp
from textual.widget import Widget
from textual.widgets import Collapsible, Static

from parley.tui.app.widgets.command_table import CommandTable
from parley.tui.terminal_text import visible

if TYPE_CHECKING:
    from parley.core.chat import CommandResult
    from parley.core.records import ChatMessage, ToolCallRecord

MAX_ARGUMENTS_IN_TITLE = 60


def _pretty(text: str) -> str:
    """JSON text indented for reading; anything else as it is."""
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except (ValueError, TypeError):
        return text


def _arguments_summary(arguments: dict[str, Any] | None, raw: str) -> str:
    if arguments is None:
        summary = raw.strip() or "{}"
    else:
        summary = ", ".join(f"{k}={v}" for k, v in arguments.items())
    return summary if len(summary) <= MAX_ARGUMENTS_IN_TITLE else summary[: MAX_ARGUMENTS_IN_TITLE - 1] + "…"


def _parse_arguments(raw: str) -> dict[str, Any] | None:
    try:
        value = json.loads(raw or "{}")
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def tool_status(record: ToolCallRecord) -> tuple[str, str]:
    """(label, css class) for a finished tool call: refused by the world, an error, or ok."""
    if record.refused:
        code = f"{record.http_status} {record.error}" if record.http_status else (record.error or "")
        return f"REFUSED ({code.strip()})" if code.strip() else "REFUSED", "-refused"
    if not record.ok:
        return f"error ({record.error})" if record.error else "error", "-error"
    if record.result.startswith("{") and '"eligible"' in record.result:  # a check that says no is not a refusal, but say so
        try:
            body = json.loads(record.result)
        except ValueError:
            body = None
        if isinstance(body, dict) and body.get("eligible") is False:
            return f"not eligible ({body.get('reason', 'policy')})", "-ok"
    return "ok", "-ok"


class ChatMessageView(Static):
    """One message: who said it in the border title, the text inside (never read as markup)."""

    def __init__(self, text: str, *, speaker: str, role: str) -> None:
        super().__init__(Content(visible(text)), classes=f"message {role}-message")
        self.text = text
        self.border_title = speaker
        self.role = role

    def append(self, text: str) -> None:
        self.text += text
        self.update(Content(visible(self.text)))


class ToolCallView(Collapsible):
    """A tool call, collapsed to one line: name, arguments and status; expanded: the arguments
    and the exact result the bot received."""

    def __init__(self, call_id: str, name: str, arguments_raw: str) -> None:
        self.call_id = call_id
        self.tool_name = name
        self.arguments_raw = arguments_raw
        self.record: ToolCallRecord | None = None
        self.status = "running"
        self._arguments_view = Static(Content(""), classes="tool-arguments")
        self._result_view = Static(Content("(waiting for the result)"), classes="tool-result")
        super().__init__(self._arguments_view, self._result_view, title=self._title_for(None), collapsed=True, classes="tool-call -running")
        self._show_arguments(_parse_arguments(arguments_raw), arguments_raw)

    def _title_for(self, record: ToolCallRecord | None) -> str:
        arguments = record.arguments if record is not None else _parse_arguments(self.arguments_raw)
        status = tool_status(record)[0] if record is not None else "running…"
        return escape(visible(f"tool {self.tool_name}({_arguments_summary(arguments, self.arguments_raw)}) · {status}"))

    def _show_arguments(self, arguments: dict[str, Any] | None, raw: str) -> None:
        shown = json.dumps(arguments, indent=2, ensure_ascii=False) if arguments is not None else raw
        self._arguments_view.update(Content(visible(f"arguments: {shown}")))

    def finish(self, record: ToolCallRecord) -> None:
        """Show the finished call: its result and whether it was refused."""
        self.record = record
        label, css = tool_status(record)
        self.status = label
        self.remove_class("-running")
        self.add_class(css)
        self.title = self._title_for(record)
        self._show_arguments(record.arguments, record.arguments_raw)
        lines = [f"status: {label}"]
        if record.ignored_arguments:
            lines.append(f"ignored arguments: {', '.join(record.ignored_arguments)} (the session's customer is {record.customer_id})")
        lines.append(f"result: {_pretty(record.result)}")
        self._result_view.update(Content(visible("\n".join(lines))))


class Notice(Static):
    """A line from the app itself: a command's text, an error, a hint."""

    def __init__(self, text: str, *, kind: str = "info", title: str | None = None) -> None:
        super().__init__(Content(visible(text)), classes=f"notice -{kind}")
        self.text = text
        self.kind = kind
        if title:
            self.border_title = title


class ChatLog(VerticalScroll):
    """The transcript. `user_name`/`bot_name` label the messages.

    It follows what is added (scrolls it into view) unless the person has scrolled up to read:
    then `unseen` counts what arrived below, until they are back at the end. Only a move of the
    scroll position changes that; content growing or shrinking (a tool call expanded) does not.
    """

    unseen: reactive[int] = reactive(0)

    def __init__(self, *, user_name: str = "You", bot_name: str = "Bot", id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.user_name = user_name
        self.bot_name = bot_name
        self.following = True
        self._streaming: ChatMessageView | None = None
        self._calls: dict[str, ToolCallView] = {}

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if new_value >= self.max_scroll_y - 1:  # back at the end, however it got there
            self.following = True
            self.unseen = 0

    # The person scrolling up (wheel, keys, scrollbar) is what stops the following; the app's
    # own scrolling (a tool call expanded and scrolled into view) is not.

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        self._reading()

    def on_scroll_up(self, message: ScrollUp) -> None:
        self._reading()

    def on_scroll_to(self, message: ScrollTo) -> None:
        if message.y is not None and message.y < self.max_scroll_y - 1:
            self._reading()

    def action_scroll_up(self) -> None:
        self._reading()
        super().action_scroll_up()

    def action_page_up(self) -> None:
        self._reading()
        super().action_page_up()

    def action_scroll_home(self) -> None:
        self._reading()
        super().action_scroll_home()

    def _reading(self) -> None:
        if self.max_scroll_y > 0:
            self.following = False

    def follow(self) -> None:
        """Scroll to the end and follow again (the "new messages below" marker's action)."""
        self.following = True
        self.unseen = 0
        self.scroll_end(animate=False)

    # ---- appending ----------------------------------------------------------------------------

    def _shown(self) -> None:
        """Something was added or grew: keep it in view, or count it as unseen."""
        if self.following:
            self.call_after_refresh(self.scroll_end, animate=False)
        else:
            self.unseen += 1

    def _add(self, *widgets: Widget) -> None:
        self.mount_all(widgets)
        self._shown()

    def add_user(self, text: str) -> ChatMessageView:
        self._streaming = None
        view = ChatMessageView(text, speaker=self.user_name, role="user")
        self._add(view)
        return view

    def add_bot(self, text: str) -> ChatMessageView:
        view = ChatMessageView(text, speaker=self.bot_name, role="bot")
        self._add(view)
        return view

    def stream_bot(self, delta: str) -> None:
        """Append streamed text to the bot's current message (a new one after a tool call)."""
        if self._streaming is None:
            self._streaming = self.add_bot(delta)
        else:
            self._streaming.append(delta)
            if self.following:
                self.call_after_refresh(self.scroll_end, animate=False)

    def end_bot_turn(self, text: str) -> None:
        """The turn is complete: make sure its final text is shown even if nothing streamed."""
        if self._streaming is None and text and not self._shown_since_last_user(text):
            self.add_bot(text)
        self._streaming = None

    def _shown_since_last_user(self, text: str) -> bool:
        for child in reversed(self.children):
            if isinstance(child, ChatMessageView):
                if child.role == "user":
                    return False
                if child.text.strip() == text.strip():
                    return True
        return False

    def start_tool(self, call_id: str, name: str, arguments: str) -> ToolCallView:
        self._streaming = None
        view = ToolCallView(call_id, name, arguments)
        self._calls[call_id] = view
        self._add(view)
        return view

    def finish_tool(self, record: ToolCallRecord) -> ToolCallView:
        self._streaming = None
        view = self._calls.get(record.call_id)
        if view is None or view.record is not None:
            view = self.start_tool(record.call_id, record.name, record.arguments_raw)
        view.finish(record)
        return view

    def add_notice(self, text: str, *, kind: str = "info", title: str | None = None) -> Notice:
        self._streaming = None
        notice = Notice(text, kind=kind, title=title)
        self._add(notice)
        return notice

    def add_command_result(self, result: CommandResult) -> Widget:
        """Render a slash command's result by its kind."""
        self._streaming = None
        title = " ".join(part for part in (result.command, result.title and f"· {result.title}") if part) or None
        if result.kind == "table":
            widget: Widget = CommandTable(result.columns, result.rows, title=title or "", classes="command-output")
            self._add(widget)
            return widget
        if result.kind == "json":
            body = json.dumps(result.data, indent=2, ensure_ascii=False)
            widget = Notice(f"{result.text or ''}\n\n{body}".strip(), kind="json", title=title)
            self._add(widget)
            return widget
        if result.kind == "error":
            return self.add_notice(result.text or "Something went wrong.", kind="error", title=title or "error")
        return self.add_notice(result.text or "", kind=result.kind, title=title)

    def clear_log(self) -> None:
        self._streaming = None
        self._calls.clear()
        self.remove_children()
        self.following = True
        self.unseen = 0

    # ---- reading (for tests and the detail screen) ------------------------------------------------

    @property
    def messages(self) -> list[ChatMessageView]:
        return list(self.query(ChatMessageView))

    @property
    def tool_calls(self) -> list[ToolCallView]:
        return list(self.query(ToolCallView))

    # ---- a stored transcript ----------------------------------------------------------------------

    def show_transcript(self, messages: Sequence[ChatMessage], tool_calls: Iterable[ToolCallRecord]) -> None:
        """Fill the log from stored ChatMessages and ToolCallRecords (tool results are shown in
        their call's block, not as messages of their own)."""
        records = {r.call_id: r for r in tool_calls}
        widgets: list[Widget] = []
        for message in messages:
            if message.role == "user":
                widgets.append(ChatMessageView(message.content or "", speaker=self.user_name, role="user"))
            elif message.role == "assistant":
                if message.content:
                    widgets.append(ChatMessageView(message.content, speaker=self.bot_name, role="bot"))
                for call in message.tool_calls:
                    view = ToolCallView(call.id, call.name, call.arguments)
                    record = records.get(call.id)
                    if record is not None:
                        view.finish(record)
                    widgets.append(view)
        if not widgets:
            widgets.append(Notice("No messages.", kind="info"))
        self.mount_all(widgets)
