"""The Sessions pane: every stored chat and batch conversation, newest first, filterable, paged.

A page (200 rows by default) loads in a thread; more load as the cursor nears the end, or with
`l`. Enter opens a session's transcript and verdict; `e` exports it as JSON, `p` as a playbook (the
chat as a test to edit and run: parley.core.reports.session_playbook). The queries are the
store's (parley.core.store.session_queries); the choices of the profile and outcome filters come
from what is stored.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.content import Content
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Input, Select, Static

from parley.tui.app.messages import SessionExported, SessionOpened, SessionsPageLoaded
from parley.tui.app.panes.base import Pane
from parley.tui.app.panes.session_detail import SessionScreen
from parley.tui.app.panes.session_listing import COLUMNS, parse_date_filter
from parley.tui.app.widgets.row_table import Ranked, RowTable, clip_option
from parley.tui.terminal_text import visible

if TYPE_CHECKING:
    from parley.core.store import SessionCursor, SessionItem

EMPTY_TEXT = "No sessions yet: chat in the Chat pane or run `parley run profiles/`"
LOAD_AHEAD = 20  # rows from the end at which the next page is fetched
SEARCH_DELAY_S = 0.3
DATE_PLACEHOLDER = "Date YYYY-MM-DD.."
RANKS = {"Started (UTC)": 1, "Kind": 4, "Name": 1, "Outcome": 1, "Score": 2, "Turns": 3, "Tokens": 5, "Stop": 3, "Details": 6}
CAPS = {"Name": 32, "Details": 60}
NO_FILTERS: dict[str, Any] = {"text": "", "profile": None, "outcome": None, "since": None, "until": None}


class SessionsTable(RowTable):
    """The sessions table: Enter opens the highlighted session (and says so in the footer)."""

    BINDINGS = [Binding("enter", "select_cursor", "Open")]


class SessionsPane(Pane):
    """Filters on top, the table below, a status line with the counts."""

    BINDINGS = [
        Binding("e", "export_session", "Export JSON"),
        Binding("p", "export_playbook", "Playbook"),
        Binding("l", "load_more", "Load more"),
        Binding("ctrl+r", "reload", "Reload"),
        Binding("slash", "focus_search", "Search"),
        Binding("L", "label", "Label", show=False),  # label the highlighted conversation by hand
    ]

    def __init__(self, *, page_size: int = 200, id: str | None = None) -> None:
        super().__init__(id=id)
        self.page_size = page_size
        self.filters: dict[str, Any] = dict(NO_FILTERS)
        self.cursor: SessionCursor | None = None  # of the rows shown
        self.items: list[SessionItem] = []
        self.total = 0
        # Not `loading`: that is Textual's own reactive, which covers the pane with a spinner
        # (and takes the focus away from the search box while a person types in it).
        self.page_loading = False
        self.stale = False
        self._generation = 0
        self._options: dict[str, list[tuple[str, str]]] = {}
        self._debounce: Timer | None = None

    def compose(self) -> ComposeResult:
        with Horizontal(id="sessions-filters"):
            yield Input(placeholder="Search transcripts, names, comments…", id="sessions-text")
            yield Select[str]([], prompt="Any profile", id="sessions-profile")
            yield Select[str]([], prompt="Any outcome", id="sessions-outcome")
            yield Input(placeholder=DATE_PLACEHOLDER, id="sessions-date", tooltip="YYYY-MM-DD, or FROM..TO (either end may be left out)")
        yield Static(Content("Loading…"), id="sessions-status")
        yield SessionsTable(ranked=[Ranked(c, RANKS[c], CAPS.get(c, 40)) for c in COLUMNS], id="sessions-table")
        yield Static(Content(EMPTY_TEXT), id="sessions-empty")

    def on_mount(self) -> None:
        empty = self.query_one("#sessions-empty")
        empty.display = False
        empty.can_focus = True
        self.watch(self.table, "scroll_y", self._scrolled, init=False)

    @property
    def table(self) -> SessionsTable:
        return self.query_one("#sessions-table", SessionsTable)

    # ---- loading ----------------------------------------------------------------------------------

    def main_widget(self) -> Widget:
        """The table, or the message saying how to fill it when nothing is stored (it takes the
        keyboard so that the pane's keys, ctrl+r and /, still work)."""
        empty = self.query_one("#sessions-empty")
        return empty if empty.display else self.table

    def load_data(self) -> None:
        self.reload()

    def refresh_data(self) -> None:
        if self.stale:
            self.reload()

    def reload(self) -> None:
        """Start again from the first page with the current filters."""
        self.stale = False
        self._generation += 1
        self.page_loading = True
        self._load_page(self._generation, dict(self.filters), None)

    def load_more(self) -> None:
        if self.page_loading or self.cursor is None or self.cursor.remaining <= 0:
            return
        self.page_loading = True
        self._load_page(self._generation, dict(self.filters), self.cursor)

    @work(thread=True, exclusive=True, exit_on_error=False, group="sessions-page", description="reading the sessions")
    def _load_page(self, generation: int, filters: dict[str, Any], cursor: SessionCursor | None) -> None:
        """The next page of `cursor`, or the first page of a new cursor for `filters`. The
        cursor is handed back in the message: only the current generation's is kept."""
        from parley.core.store import CHATS, SessionCursor, SessionFilters, outcome_names, profile_names
        from parley.tui.app.panes.session_listing import session_cells

        store = self.parley.store()
        first = cursor is None
        profiles = outcomes = None
        if cursor is None:
            cursor = SessionCursor(store, SessionFilters(**filters), page_size=self.page_size)
            profiles = [("Live chats", CHATS), *((n, n) for n in profile_names(store))]
            outcomes = [(o, o) for o in outcome_names(store)]
        items = cursor.next_page()
        self.post_message(
            SessionsPageLoaded(
                generation,
                cursor,
                items,
                [session_cells(item) for item in items],
                first,
                cursor.shown,
                cursor.total,
                cursor.conversations,
                cursor.chats,
                profiles,
                outcomes,
            )
        )

    def on_sessions_page_loaded(self, message: SessionsPageLoaded) -> None:
        if message.generation != self._generation:
            return  # the filters changed while this page loaded
        self.page_loading = False
        self.cursor = message.cursor
        table = self.table
        if message.first_page:
            table.set_rows([])
            self.items = []
            self._set_options("profile", message.profile_options)
            self._set_options("outcome", message.outcome_options)
        self.items.extend(message.items)
        self.total = message.total
        table.add_text_rows(message.cells)  # row i is self.items[i]
        empty = message.first_page and message.total == 0 and self.filters == NO_FILTERS
        message_widget = self.query_one("#sessions-empty")
        had_keyboard = self.app.focused in (None, table, message_widget)
        changed = message_widget.display != empty
        message_widget.display = empty
        table.display = not empty
        if changed:
            self.main_widget_changed(had_keyboard)
        self._status(message)

    def _set_options(self, name: str, options: list[tuple[str, str]] | None) -> None:
        """New choices for a filter, from what is stored (the current choice is kept)."""
        if options is None or options == self._options.get(name):
            return
        self._options[name] = options
        select = self.query_one(f"#sessions-{name}", Select)
        current = select.value
        with self.prevent(Select.Changed):
            select.set_options([(clip_option(label), value) for label, value in options])
            if current in {value for _, value in options}:
                select.value = current

    def _status(self, message: SessionsPageLoaded) -> None:
        from parley.tui.app.panes.session_listing import plural

        if message.total == 0:
            text = "0 sessions stored." if self.filters == NO_FILTERS else "No sessions match these filters."
        else:
            text = (
                f"{message.shown:,} of {message.total:,} shown · {plural(message.conversations, 'batch conversation')},"
                f" {plural(message.chats, 'chat')}"
            )
            if message.shown < message.total:
                text += " · l loads more"
        self.query_one("#sessions-status", Static).update(Content(visible(text)))

    def _scrolled(self, _old: float, _new: float) -> None:
        table = self.table
        if table.max_scroll_y and table.scroll_y >= table.max_scroll_y - LOAD_AHEAD:
            self.load_more()

    @on(SessionsTable.RowHighlighted, "#sessions-table")
    def _row_highlighted(self, event: SessionsTable.RowHighlighted) -> None:
        if event.cursor_row >= len(self.items) - LOAD_AHEAD:
            self.load_more()

    # ---- filters ----------------------------------------------------------------------------------

    @on(Input.Changed, "#sessions-text")
    def _text_changed(self) -> None:
        # Search as you type, once typing pauses: a text search reads every transcript.
        if self._debounce is not None:
            self._debounce.stop()
        self._debounce = self.set_timer(SEARCH_DELAY_S, self.apply_filters)

    @on(Input.Submitted, "#sessions-text, #sessions-date")
    @on(Select.Changed, "#sessions-profile, #sessions-outcome")
    def _filters_changed(self) -> None:
        self.apply_filters()

    def apply_filters(self) -> None:
        if self._debounce is not None:
            self._debounce.stop()
            self._debounce = None
        date_input = self.query_one("#sessions-date", Input)
        try:
            since, until = parse_date_filter(date_input.value)
        except ValueError as exc:
            date_input.add_class("-invalid")
            self.query_one("#sessions-status", Static).update(Content(visible(str(exc))))
            return
        date_input.remove_class("-invalid")
        profile = self.query_one("#sessions-profile", Select).value
        outcome = self.query_one("#sessions-outcome", Select).value
        filters = {
            "text": self.query_one("#sessions-text", Input).value.strip(),
            "profile": None if profile is Select.NULL else str(profile),
            "outcome": None if outcome is Select.NULL else str(outcome),
            "since": since,
            "until": until,
        }
        if filters != self.filters:
            self.filters = filters
            self.reload()

    # ---- opening and exporting --------------------------------------------------------------------

    def _current(self) -> SessionItem | None:
        table = self.table
        if not self.items or table.cursor_row is None or not (0 <= table.cursor_row < len(self.items)):
            return None
        return self.items[table.cursor_row]

    @on(SessionsTable.RowSelected, "#sessions-table")
    def _row_selected(self, event: SessionsTable.RowSelected) -> None:
        event.stop()
        self.action_open_session()

    def action_open_session(self) -> None:
        item = self._current()
        if item is None:
            self.notify("No session selected.", severity="warning")
            return
        self._open(item.kind, item.id)

    @work(thread=True, exclusive=True, exit_on_error=False, group="sessions-open", description="opening the session")
    def _open(self, kind: str, session_id: str) -> None:
        from parley.tui.app.panes.session_listing import load_detail

        self.post_message(SessionOpened(load_detail(self.parley.store(), kind, session_id)))  # type: ignore[arg-type]

    def on_session_opened(self, message: SessionOpened) -> None:
        self.app.push_screen(SessionScreen(message.detail, export=self.export))

    def action_label(self) -> None:
        """Label the highlighted batch conversation by hand, walking the listed conversations (chats have no criteria)."""
        current = self._current()
        if current is None or current.kind == "chat":
            self.notify("Pick a batch conversation to label (a live chat has no criteria).", severity="warning")
            return
        self.parley.label_conversations([item.id for item in self.items if item.kind != "chat"], current.id)

    def action_export_session(self) -> None:
        item = self._current()
        if item is None:
            self.notify("No session selected.", severity="warning")
            return
        self.export(item.kind, item.id)

    def export(self, kind: str, session_id: str) -> None:
        self._export(kind, session_id)

    @work(thread=True, exit_on_error=False, group="sessions-export", description="exporting the session")
    def _export(self, kind: str, session_id: str) -> None:
        from parley.tui.app.panes.session_listing import export_detail

        path = export_detail(self.parley.store(), kind, session_id, self.parley.export_dir)  # type: ignore[arg-type]
        self.post_message(SessionExported(path))

    def on_session_exported(self, message: SessionExported) -> None:
        if message.path.suffix == ".yaml":
            self.notify(f"Written to {message.path}: edit its expectations, then `parley run` it", title="Playbook made")
        else:
            self.notify(f"Exported to {message.path}", title="Session exported")

    def action_export_playbook(self) -> None:
        item = self._current()
        if item is None:
            self.notify("No session selected.", severity="warning")
            return
        self._export_playbook(item.kind, item.id)

    @work(thread=True, exit_on_error=False, group="sessions-export", description="making a playbook of the session")
    def _export_playbook(self, kind: str, session_id: str) -> None:
        from parley.tui.app.panes.session_listing import export_playbook

        path = export_playbook(self.parley.store(), kind, session_id, self.parley.export_dir)  # type: ignore[arg-type]
        self.post_message(SessionExported(path))

    # ---- actions ----------------------------------------------------------------------------------

    def action_load_more(self) -> None:
        if self.cursor is not None and self.cursor.remaining <= 0:
            self.notify("Every session is shown.")
        self.load_more()

    def action_reload(self) -> None:
        self.reload()

    def action_focus_search(self) -> None:
        self.query_one("#sessions-text", Input).focus()
