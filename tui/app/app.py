"""The parley terminal app: chat, profiles, batches and sessions, one tab and one module each.

Start-up stays light: this module imports Textual and the panes only. The engine (the order
API, the store, the model SDKs) loads in workers when a pane first needs it, so the first frame
never waits for a database or a network.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.driver import Driver
from textual.markup import escape
from textual.notifications import SeverityLevel
from textual.widgets import Footer, Header, TabbedContent, TabPane
from textual.worker import Worker, WorkerState

from parley.core.settings import settings
from parley.core.specs import SHIPPED_DIR
from parley.tui.app import heap
from parley.tui.app.inert_text import keep_drawn_text_inert
from parley.tui.app.messages import DatabaseOpenedReadOnly
from parley.tui.app.panes.base import Pane
from parley.tui.app.panes.batches_pane import BatchesPane
from parley.tui.app.panes.chat_pane import ChatPane
from parley.tui.app.panes.profiles_pane import ProfilesPane
from parley.tui.app.panes.session_detail import SessionScreen
from parley.tui.app.panes.sessions_pane import SessionsPane
from parley.tui.app.screens.calibrations import CalibrationsScreen
from parley.tui.app.screens.label_conversation import LabelScreen
from parley.tui.terminal_text import visible

if TYPE_CHECKING:
    from textual.command import Provider

    from parley.core.engine import PreparedBatch
    from parley.core.engine.distributed import Placement
    from parley.core.models import ChatModel
    from parley.core.store import Store

PANES: dict[str, str] = {"chat": "Chat", "profiles": "Profiles", "batches": "Batches", "sessions": "Sessions"}
DEFAULT_DB = Path("sessions") / "parley.db"


def _parley_commands() -> type[Provider]:
    from parley.tui.app.commands import ParleyCommands

    return ParleyCommands


def tab_label(number: int, pane: str) -> Content:
    """A tab's title with the key that shows it from anywhere: "F1 Chat" (the digit alone works
    too, but not while a text field has the focus: it types there)."""
    return Content.from_markup(f"[b $accent]F{number}[/]\u00a0{PANES[pane]}")


def default_profile_dirs(extra: Sequence[Path] = ()) -> list[Path]:
    """`profiles/` under the current directory (else the shipped one), then each extra folder."""
    base = Path("profiles") if Path("profiles").is_dir() else SHIPPED_DIR
    dirs = [base]
    for folder in extra:
        if folder.resolve() != base.resolve():
            dirs.append(folder)
    return dirs


class ParleyApp(App[None]):
    """Chat, profiles, batches and sessions in one window."""

    TITLE = "parley"
    SUB_TITLE = "test customer-service bots with simulated customers"
    CSS_PATH = Path(__file__).with_name("app.tcss")  # absolute: subclasses (tests, benches) find it too
    COMMANDS = App.COMMANDS | {_parley_commands}
    # The screen's width class: panels beside the main view move below it, or fold away, when
    # the terminal is narrow (app.tcss says how for each pane).
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-normal"), (160, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (30, "-tall")]
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", priority=True),
        # F1-F4 anywhere, plain digits when no text field has the focus; the tabs show the F-keys
        # ("F1 Chat": what works on every pane), so the footer keeps its room for the pane's own keys.
        *(Binding(f"f{i}", f"show_pane('{pane}')", title, priority=True, show=False) for i, (pane, title) in enumerate(PANES.items(), 1)),
        *(Binding(str(i), f"show_pane('{pane}')", title, show=False) for i, (pane, title) in enumerate(PANES.items(), 1)),
    ]

    def __init__(
        self,
        *,
        initial_pane: str = "chat",
        customer: str | None = None,
        bot_model: str | ChatModel = "offline",
        world: str | None = None,
        profile_dirs: Sequence[Path | str] | None = None,
        db_path: Path | str | None = None,
        today: dt.date | None = None,
        sessions_page_size: int = 200,
        personality_dirs: Sequence[Path | str] = (),
        placement: Placement | None = None,
    ) -> None:
        """`bot_model` is a model name (`offline`, `openai/gpt-4o-mini`, ...) or a ChatModel; `world`
        the live chat's world (a name or a world file's path; default: the order world), `customer` its
        customer (default: the world's);
        `profile_dirs` are shown besides `profiles/`; `db_path` defaults to PARLEY_DB, else
        `sessions/parley.db`; `today` pins the date order ages count from; `personality_dirs`
        are the `--personalities` folders profiles are read with; `placement`
        (parley.core.engine.distributed.placement.Placement: `parley --workers N`) runs batches
        over worker processes."""
        super().__init__()
        keep_drawn_text_inert()  # whatever text a widget draws, none of it acts on the terminal
        if initial_pane not in PANES:
            raise ValueError(f"unknown pane {initial_pane!r}: one of {', '.join(PANES)}")
        self.initial_pane = initial_pane
        self.customer = customer
        self.bot_model = bot_model
        self.world = world
        self.profile_dirs = default_profile_dirs([Path(p) for p in profile_dirs or ()])
        self.personality_dirs = [Path(p) for p in personality_dirs]
        self.db_path: Path | None = Path(db_path) if db_path else settings().db
        self.today = today
        self.sessions_page_size = sessions_page_size
        self._store: Store | None = None
        self._store_lock = threading.Lock()
        self._active_pane: str | None = None
        self.placement = placement
        self._signals: list[signal.Signals] = []

    @property
    def export_dir(self) -> Path:
        """Where exports go: beside the database (`sessions/` by default)."""
        return (self.db_path or DEFAULT_DB).parent

    def store(self) -> Store:
        """The app's store, opened on first use. Call it from a worker thread."""
        with self._store_lock:
            if self._store is None:
                from parley.core.store import ReadOnlyDatabase, Store

                try:
                    self._store = Store.open(self.db_path)
                except ReadOnlyDatabase:
                    # Browsing still works; saving a chat or launching a batch says "read-only".
                    self._store = Store.open(self.db_path, read_only=True)
            return self._store

    @work(thread=True, exit_on_error=False, group="database", description="opening the database")
    def _open_database(self) -> None:
        """At start, so that a read-only database is said once, before anything tries to write."""
        from parley.core.errors import ParleyError

        try:
            store = self.store()
        except ParleyError as exc:  # the pane that reads it says what is wrong, where it is read
            logging.getLogger("parley.tui").info("the database did not open at start: %s", exc)
            return
        if store.read_only:
            self.post_message(DatabaseOpenedReadOnly(str(store.path)))

    def on_database_opened_read_only(self, message: DatabaseOpenedReadOnly) -> None:
        self.notify(
            f"{message.path} is read-only: everything stored can be browsed, but chats are not saved "
            "and batches cannot be launched. Start parley with --db (or PARLEY_DB) on a writable file to do so.",
            title="Read-only database",
            severity="warning",
            timeout=20,
        )

    # ---- layout -------------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Header()
        with TabbedContent(initial=f"{self.initial_pane}-pane", id="panes"):
            with TabPane(tab_label(1, "chat"), id="chat-pane"):
                yield ChatPane(customer=self.customer, bot_model=self.bot_model, world=self.world, id="chat")
            with TabPane(tab_label(2, "profiles"), id="profiles-pane"):
                yield ProfilesPane(profile_dirs=self.profile_dirs, personality_dirs=self.personality_dirs, id="profiles")
            with TabPane(tab_label(3, "batches"), id="batches-pane"):
                yield BatchesPane(id="batches")
            with TabPane(tab_label(4, "sessions"), id="sessions-pane"):
                yield SessionsPane(page_size=self.sessions_page_size, id="sessions")
        yield Footer()

    def on_mount(self) -> None:
        self._handle_hangup()
        self.call_after_refresh(self._activate, self.initial_pane)
        # The modules and widgets, out of every full collection (thawed first: an app started
        # again in the same process, as the tests do, lets the last one's garbage be collected).
        self.call_after_refresh(heap.settle, thaw=True)
        # After the first frame: the store's modules load in this worker's thread, which would
        # otherwise take turns at the interpreter with composing and painting that frame.
        self.call_after_refresh(self._open_database)

    def pane(self, name: str) -> Pane:
        return self.query_one(f"#{name}", Pane)

    def _activate(self, name: str) -> None:
        if name != self._active_pane:  # the first tab is announced twice at start-up
            self._active_pane = name
            self.pane(name).activate()

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.tabbed_content.id == "panes" and event.pane.id:
            self._activate(event.pane.id.removesuffix("-pane"))

    def _handle_hangup(self) -> None:
        """Closing the app's terminal (SIGHUP) or SIGTERM quits as ctrl+q does: a running batch
        is cancelled, what it had in flight stored as `cancelled`, and the batch can be resumed.
        (Were the app to die before it could, its batch's process sees it and does the same:
        parley.tui.app.panes.batch_feed.run_child.)"""
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGHUP, signal.SIGTERM):
            try:
                loop.add_signal_handler(sig, self._hung_up, sig)
                self._signals.append(sig)
            except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or Windows
                pass

    def _hung_up(self, sig: signal.Signals) -> None:
        logging.getLogger("parley.tui").warning("%s: quitting (a running batch is cancelled, and can be resumed)", sig.name)
        terminal_gone = getattr(self._driver, "terminal_gone", None)
        if sig == signal.SIGHUP and terminal_gone is not None:
            terminal_gone()  # its window is closed: quitting must not wait on writing to it
        self.query_one("#batches", BatchesPane).cancel_running()
        self.exit()

    def get_driver_class(self) -> type[Driver]:
        """Textual's driver, but on Linux and macOS one whose writes never wait on a terminal that
        is gone (parley.tui.app.terminal_writer)."""
        driver = super().get_driver_class()
        if sys.platform == "win32":
            return driver
        from textual.drivers.linux_driver import LinuxDriver

        from parley.tui.app.terminal_writer import TerminalDriver

        return TerminalDriver if driver is LinuxDriver else driver

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Textual's notification, with every secret this process resolved taken out first
        (parley.core.redaction: an error's text may quote an endpoint that echoed a key) and its
        control characters spelled out (it may quote a bot's reply or a file)."""
        from parley.core.redaction import REDACTED

        message, title = visible(message), visible(title)  # an error may quote a bot or a file: spelled out, secrets taken out
        if markup:  # the mark is text, not a tag
            message = message.replace(REDACTED, escape(REDACTED))
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=markup)

    # ---- one handler for every worker's failure -------------------------------------------------

    def worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Every pane's workers report here. A failure becomes a notification with the error's
        own message (ours are written for people), never a traceback."""
        if event.state != WorkerState.ERROR:
            return
        error = event.worker.error
        what = event.worker.description or event.worker.name or "a background task"
        from parley.core.errors import ParleyError

        text = str(error) if isinstance(error, ParleyError) else f"{type(error).__name__}: {error}"
        self.log.error(f"worker {what!r} failed: {text}")
        self.notify(text, title=f"Failed: {what}", severity="error", timeout=10)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        self.worker_state_changed(event)

    def sessions_changed(self) -> None:
        """Something was saved: the Sessions pane reloads when next shown."""
        sessions = self.query_one("#sessions", SessionsPane)
        sessions.stale = True

    # ---- actions ------------------------------------------------------------------------------------

    def action_show_pane(self, pane: str) -> None:
        while isinstance(self.screen, (SessionScreen, LabelScreen, CalibrationsScreen)):  # leave a detail screen for the pane
            self.pop_screen()
        self.query_one("#panes", TabbedContent).active = f"{pane}-pane"

    def action_new_chat(self) -> None:
        self.action_show_pane("chat")
        self.query_one("#chat", ChatPane).action_new_chat()

    def action_run_batch(self) -> None:
        """The launch form, prefilled with the file or folder selected in Profiles."""
        self.launch_batch(self.query_one("#profiles", ProfilesPane).selected_source())

    def launch_batch(self, sources: str) -> None:
        """Open the launch form for `sources`; a batch it prepares runs in the Batches pane."""
        from parley.tui.app.screens.launch_batch import LaunchBatchScreen

        form = LaunchBatchScreen(sources)

        def launched(prepared: PreparedBatch | None) -> None:
            if prepared is None:
                return
            self.action_show_pane("batches")
            pane = self.query_one("#batches", BatchesPane)
            pane.queued = list(form.queued)  # several bots: the group's other batches, one after the other
            pane.start(prepared)
            pane.results_table.focus()  # its keys (c stops the batch) work at once

        self.push_screen(form, launched)

    def batch_running(self) -> bool:
        """Whether a batch is running in the Batches pane (one at a time)."""
        return self.query_one("#batches", BatchesPane).running_batch is not None

    def action_compare_batches(self) -> None:
        """Compare batches in the Batches pane (its `c`)."""
        self.action_show_pane("batches")
        pane = self.query_one("#batches", BatchesPane)
        self.call_after_refresh(pane.action_compare)

    def label_conversations(self, conversation_ids: Sequence[str], start: str) -> None:
        """Label conversations by hand, from `start`, walking `conversation_ids` in their order."""
        self.push_screen(LabelScreen(conversation_ids, start, settings().labeller_name))

    def action_label_conversations(self) -> None:
        """Label the conversation highlighted in Batches (its results), else say how to pick one."""
        self.action_show_pane("batches")
        self.call_after_refresh(self.query_one("#batches", BatchesPane).action_label)

    def show_calibrations(self) -> None:
        """The judges' stored calibrations."""
        self.push_screen(CalibrationsScreen())

    def action_mutate_batch(self) -> None:
        """The mutants of the batch highlighted in the Batches pane (its `M`)."""
        self.action_show_pane("batches")
        pane = self.query_one("#batches", BatchesPane)
        self.call_after_refresh(pane.action_mutate)

    def action_open_sessions(self) -> None:
        self.action_show_pane("sessions")
        self.call_after_refresh(lambda: self.query_one("#sessions-table").focus())

    async def on_unmount(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in self._signals:
            loop.remove_signal_handler(sig)
        if self._store is not None:
            self._store.close()
