"""Messages the panes' workers post back to the UI, named for what happened (past tense).

Workers never touch widgets: they post one of these, and the pane that owns the worker updates
its widgets on the event loop. Payloads are plain records from core, imported for the type
checker only: this module, imported at start-up, does not import the engine.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from parley.core.bots import BotTurn
    from parley.core.chat import ChatSession, CommandResult
    from parley.core.engine import PreparedBatch
    from parley.core.errors import ProfileError
    from parley.core.records import ConversationRow, ConversationSpec, OutcomeCounts, SessionMetrics, ToolCallRecord, UnreadableBatch
    from parley.core.rules import RuleSummary
    from parley.core.store import BatchRow, SessionCursor, SessionItem
    from parley.tui.app.panes.session_listing import SessionDetail

# ---- the app -----------------------------------------------------------------------------------


@dataclass
class DatabaseOpenedReadOnly(Message):
    """The database can only be read (a read-only file or file system): said once, at start."""

    path: str


# ---- chat -------------------------------------------------------------------------------------


@dataclass
class ChatSessionStarted(Message):
    """A ChatSession was built (its World, its bot and the bot's client); not checked yet.
    `not_saved`: why it will not be saved (the database is read-only), else None."""

    session: ChatSession
    not_saved: str | None = None


@dataclass
class ChatSessionReady(Message):
    """The new ChatSession checked out (its customer exists, its bot has what it needs)."""

    session: ChatSession


@dataclass
class ChatSessionFailedToStart(Message):
    """The chat could not start (an unknown model name, say): the reason, for a person."""

    reason: str


@dataclass
class BotTextReceived(Message):
    """A piece of the bot's reply streamed in."""

    text: str


@dataclass
class ToolCallBegan(Message):
    """The bot asked for a tool call; its result follows in ToolCallEnded."""

    call_id: str
    name: str
    arguments: str


@dataclass
class ToolCallEnded(Message):
    """A tool call ran (parley.core.bots.order_tools.ToolCallRecord: result, ok, refused)."""

    record: ToolCallRecord


@dataclass
class BotTurnCompleted(Message):
    """The bot finished its answer (parley.core.bots.api.BotTurn) and the session's metrics after it."""

    turn: BotTurn
    metrics: SessionMetrics


@dataclass
class ChatCommandCompleted(Message):
    """A slash command (or a failed turn) produced a parley.core.chat.commands.CommandResult."""

    line: str
    result: CommandResult
    metrics: SessionMetrics


@dataclass
class ChatSessionSaved(Message):
    """The chat was written to the store (it is saved after every turn)."""

    session_id: str
    messages: int


# ---- profiles ---------------------------------------------------------------------------------


@dataclass
class ProfileFilesListed(Message):
    """The profile folders were walked: (label, root, files relative to root) per folder."""

    roots: list[tuple[str, Path, list[Path]]]


@dataclass
class ProfileLoaded(Message):
    """A profile/playbook/scenario file was read, validated and expanded."""

    path: Path
    shown_as: str
    text: str
    language: str | None
    kind: str | None
    specs: list[ConversationSpec] = field(default_factory=list)
    errors: list[ProfileError] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


# ---- sessions and batches ---------------------------------------------------------------------


@dataclass
class SessionsPageLoaded(Message):
    """A page of stored sessions (parley.core.store.session_queries.SessionItem), newest first,
    with their table cells."""

    generation: int
    cursor: SessionCursor
    """Pages on from here."""
    items: list[SessionItem]
    cells: list[tuple[str, ...]]
    first_page: bool
    shown: int
    total: int
    conversations: int
    chats: int
    profile_options: list[tuple[str, str]] | None = None  # (label, value), "live chats" first
    outcome_options: list[tuple[str, str]] | None = None  # the outcomes stored, as they are named


@dataclass
class SessionOpened(Message):
    """A stored session was loaded in full (parley.tui.app.panes.session_listing.SessionDetail)."""

    detail: SessionDetail


@dataclass
class SessionExported(Message):
    """A stored session was written to a file: JSON, or a playbook (YAML)."""

    path: Path


@dataclass
class BatchReportWritten(Message):
    """A batch's HTML report was written to a file."""

    batch_id: str
    path: Path
    conversations: int


@dataclass
class BatchesListed(Message):
    """Past batches (parley.core.store.BatchRow: each with its summary), newest first; a row that
    cannot be read is there as what it is. `version`: the database's data version when they were
    read (parley.core.store.Store.data_version)."""

    rows: list[BatchRow | UnreadableBatch]
    version: int | None = None


@dataclass
class BatchesChanged(Message):
    """The database's data version as last looked at: when it moved, another process (the command
    line, the service) committed to it since the batches were listed."""

    version: int


@dataclass
class BatchRowsLoaded(Message):
    """A batch's conversations (parley.core.records.batch.ConversationRow) were read from the store."""

    batch_id: str
    rows: list[ConversationRow]
    rates: str = ""
    """The batch's pass rate and pass^k with their 95% intervals, one line (empty: no conversations)."""
    counts: str = ""
    """The batch's counts in words, from its summary (parley.core.reports.short_counts)."""
    rules: list[RuleSummary] = field(default_factory=list)
    """The batch's pair and batch rules (`parley run --rules`), as last decided."""
    rule_labels: dict[str, str] = field(default_factory=dict)
    """`SPEC_ID trial N` of the batch's conversations, by id (the rules name them by id)."""


@dataclass
class BatchPrepared(Message):
    """The launch form's inputs checked out: a stored, pending parley.core.engine.batch_runner.PreparedBatch."""

    prepared: PreparedBatch
    queued: list[PreparedBatch] = field(default_factory=list)
    """Several bots: the group's other batches, stored too, to run after this one."""


@dataclass
class GroupCompared(Message):
    """A group of batches, compared side by side (its markdown report)."""

    group_id: str
    markdown: str


@dataclass
class BatchLaunchRefused(Message):
    """The launch form's inputs did not check out: why, for a person, and the files' problems."""

    reason: str
    problems: list[str] = field(default_factory=list)


@dataclass
class TranscriptMatched(Message):
    """The conversations of `batch_id` whose transcripts contain `text` (the results filter)."""

    generation: int
    batch_id: str
    text: str
    ids: set[str]


@dataclass
class BatchRunEnded(Message):
    """The running batch ended: completed, cancelled or failed (`error` says why)."""

    batch_id: str
    status: str
    total: int
    counts: OutcomeCounts
    """The stored conversations per outcome (parley.core.records.OutcomeCounts)."""
    error: str | None = None

    @property
    def done(self) -> int:
        return self.counts.done
