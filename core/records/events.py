"""What a running batch tells its watchers: plain pydantic records, named in the past tense.

The batch runner (parley.core.engine.batch_runner) emits them to a callback and to async iterators; the CLI
draws its progress bar from them, the TUI and a REST service consume the same records. They
carry no transcript (a batch may hold 10,000 conversations): a finished conversation comes with
its results-table row, and anything more is read from the store by id.

`TranscriptEvent`s are the exception: they carry one conversation's messages as they happen,
and are only emitted when the runner is asked to stream transcripts (`parley run --single`).
"""

from __future__ import annotations

import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from parley.core.records.batch import ConversationRow
from parley.core.records.outcome_counts import OutcomeCounts
from parley.core.records.tools import ToolCallRecord


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


class _Event(BaseModel):
    batch_id: str
    at: datetime.datetime = Field(default_factory=_now)


class BatchStarted(_Event):
    kind: Literal["batch_started"] = "batch_started"
    total: int
    """Conversations the batch plans (specs x trials), those already done included."""
    already_done: int = 0
    """Conversations a resumed batch had finished before this run."""
    resumed: bool = False
    concurrency: int = 1


class ConversationStarted(_Event):
    kind: Literal["conversation_started"] = "conversation_started"
    conversation_id: str
    spec_id: str
    name: str
    trial: int


class ConversationFinished(_Event):
    """A conversation ran to an end of its own (the bot's or the user's, max turns, timeout) or
    the bot broke (bot_error: the bot's failure), and was evaluated and stored."""

    kind: Literal["conversation_finished"] = "conversation_finished"
    conversation_id: str
    spec_id: str
    name: str
    trial: int
    outcome: str
    """The conversation's outcome (parley.core.records.verdict.Outcome)."""
    passed: bool
    score: int | None = None
    stop_reason: str
    row: ConversationRow


class ConversationFailed(_Event):
    """The run broke on the simulator's or parley's side (user_error, infrastructure_error,
    cancelled): not the bot's failure. `row` is set when the conversation was stored (it always
    is, unless the store itself is broken: then it is not counted either)."""

    kind: Literal["conversation_failed"] = "conversation_failed"
    conversation_id: str
    spec_id: str
    name: str
    trial: int
    stop_reason: str
    """user_error, infrastructure_error or cancelled."""
    error: str
    row: ConversationRow | None = None


class ConcurrencyChanged(_Event):
    """The adaptive limit moved: down on rate limits (429), back up as calls succeed."""

    kind: Literal["concurrency_changed"] = "concurrency_changed"
    limit: int
    previous: int
    reason: str
    paused_for_s: float = 0.0
    """How long new launches wait (the server's Retry-After), 0 when they do not."""


class _Counts(_Event, OutcomeCounts):
    """The batch's counts as the runner keeps them, live: conversations stored per outcome, those
    of earlier runs of a resumed batch included, with every figure derived from them under the
    names every report uses (OutcomeCounts: done, passed, failed, bot_errors, errors...)."""

    model_config = ConfigDict(frozen=False)

    total: int


class Progress(_Counts):
    kind: Literal["progress"] = "progress"
    in_flight: int
    rate_per_s: float
    """Conversations finished per second in this run."""
    eta_s: float | None
    concurrency: int
    """The current (adaptive) limit of conversations in flight."""


class BatchFinished(_Counts):
    kind: Literal["batch_finished"] = "batch_finished"
    status: str
    """completed, cancelled or failed."""
    elapsed_s: float
    error: str | None = None


TranscriptStep = Literal["user", "bot_text", "bot_done", "tool_call"]
"""One step of a streamed conversation: a customer line, a piece of the bot's text, the end of
the bot's turn, a tool call."""


class TranscriptEvent(_Event):
    """One step of a streamed conversation: a customer line, a piece of the bot's text, a
    tool call and its result, or the end of the bot's turn."""

    kind: Literal["transcript"] = "transcript"
    conversation_id: str
    spec_id: str
    trial: int
    step: TranscriptStep
    text: str | None = None
    tool: ToolCallRecord | None = None
    """For `tool_call`: the call as it ran (name, arguments, result, ok/refused)."""
    details: dict[str, Any] = Field(default_factory=dict)


BatchEvent = Annotated[
    BatchStarted
    | ConversationStarted
    | ConversationFinished
    | ConversationFailed
    | ConcurrencyChanged
    | Progress
    | BatchFinished
    | TranscriptEvent,
    Field(discriminator="kind"),
]
"""Every event a batch emits; `TypeAdapter(BatchEvent)` reads one back from JSON."""
