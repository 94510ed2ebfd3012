"""Records the store takes and gives back: batches, conversation rows, stored conversations,
stored chat sessions.

Callers never see SQLite rows: the store converts them into these models first.
"""

from __future__ import annotations

import datetime
import uuid
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator

from parley.core.option_declarations import option
from parley.core.records.chat import GenerateConfig, Usage
from parley.core.records.chat_export import ChatExport
from parley.core.records.conversation import Conversation
from parley.core.records.expect_extras import CheckLimits, read_limits
from parley.core.records.generation import ModelPrice, read_generation, read_prices
from parley.core.records.spec import ConversationSpec
from parley.core.records.verdict import Outcome, Verdict

# stopped_budget: `--budget` was reached; no conversation was launched after that.
BatchStatus = Literal["pending", "running", "completed", "failed", "cancelled", "interrupted", "stopped_budget"]
BATCH_STATUSES: tuple[BatchStatus, ...] = (
    "pending",
    "running",
    "completed",
    "failed",
    "cancelled",
    "interrupted",
    "stopped_budget",
)

PYTHON_SOURCE = "python"
"""The one source of a batch run from Python (parley.api, the pytest plugin): its specs were
built in code or collected by pytest, so it has no files to resume or re-run from."""

RerunSelection = Literal["failed", "errors", "unverified", "user-faults", "evaluation-errors"]
"""What `parley run --rerun WHAT BATCH` picks from the parent: each word picks the outcomes whose
row names it (parley.core.records.outcome_classes.OUTCOME_KINDS)."""

# Conversation outcome filter values: a verdict's outcome (parley.core.records.verdict.Outcome),
# or "unevaluated" for no verdict.
OutcomeFilter = Literal[Outcome, "unevaluated"]
OUTCOME_FILTERS: tuple[OutcomeFilter, ...] = get_args(OutcomeFilter)


def utc_now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


class RoleModels(BaseModel):
    """The model of each role, named the way the model registry names them."""

    model_config = ConfigDict(allow_inf_nan=False)  # JSON has no inf or nan: stored, they would come back null

    bot: str = "offline"
    """A model name, or a connector: rasa:URL, taskyto:URL, http:FILE.yaml (parley.core.bots.bot_names)."""
    user: str = "offline"
    judge: str = "offline"
    bot_prompt: str | None = None
    """The system prompt file of a prompt bot (`--bot-prompt`); None: the built-in order bot."""
    bot_timeout_s: float = Field(default=option("bot_timeout_s").default, gt=0)
    """A connector's limit per HTTP call, connect to last byte (`--bot-timeout`)."""
    bot_max_reply_bytes: int = Field(default=option("bot_max_reply_bytes").default, ge=1)
    """A connector's cap on each reply's body (`--bot-max-reply-bytes`): past it, a bot_error."""
    bot_context: int | None = Field(default=None, gt=0)
    """The bot model's context length in tokens (`--bot-context`, PARLEY_BOT_CONTEXT); None: what
    its endpoint reports, else parley.core.prompts.DEFAULT_CONTEXT_TOKENS. The same for the user
    simulator's and the judge's below."""
    user_context: int | None = Field(default=None, gt=0)
    judge_context: int | None = Field(default=None, gt=0)
    endpoint_context: dict[str, int] = Field(default_factory=dict)
    """Role (bot, user, judge) -> the context length its endpoint reported in `GET /models` when
    the batch was checked before launch (parley.core.engine.reachability); a role's own option wins."""
    generation: dict[str, GenerateConfig] = Field(default_factory=dict)
    """Role (bot, user, judge) -> the generation settings given for it (`--gen ROLE.KEY=VALUE`:
    temperature, top_p, max_tokens, seed, stop), each sent with every request of the role in
    place of its default (parley.core.engine.batch_models.role_generation says the defaults)."""

    @field_validator("generation", mode="before")
    @classmethod
    def _read_generation(cls, value: Any) -> Any:
        return read_generation(value)


class LoadOptions(BaseModel):
    """How a batch's files are read, kept so that `--resume` reads them the same way."""

    agent_template: str | None = None
    client_template: str | None = None
    evaluator_template: str | None = None
    """Scenario files' prompt templates (`--agent-template` ...); None: a prompts/ folder's or the shipped one."""
    personality_dirs: list[str] = Field(default_factory=list)
    """`--personalities` folders: where else a profile's personality and list-function files are looked for."""
    from_working_dir: bool = True
    """Whether a profile's files are looked for from the working directory (as Sensei does) and in its
    parent folders; the batch service reads them beside the profile only."""


class BatchOptions(BaseModel):
    """How a batch was run; stored as JSON with the batch so a report can say it."""

    model_config = ConfigDict(allow_inf_nan=False)  # JSON has no inf or nan: stored, they would come back null

    models: RoleModels = Field(default_factory=RoleModels)
    concurrency: int = option("concurrency").default
    trials: int = Field(default=option("trials").default, ge=1, description="Runs of each spec (pass^k goes up to this k).")
    seed: int = option("seed").default
    max_turns: int = option("max_turns").default
    timeout_s: float = option("timeout_s").default
    cache: bool = option("cache").default
    prompt_version: str | None = None
    """A label for the bot prompt under test (the 003 CSV's `prompt_version` column)."""
    only: list[str] | None = None
    """The spec ids the batch is limited to (`parley run --single`); None: every spec."""
    loading: LoadOptions = Field(default_factory=LoadOptions)
    pairs: list[tuple[str, int]] | None = None
    """The exact (spec id, trial) pairs the batch runs (a re-run of some of its parent's);
    None: every spec x trial."""
    rerun: list[RerunSelection] | None = None
    """A re-run (`--rerun`): the outcomes of the parent it picked."""
    replay_of: str | None = None
    """A replay (`--replay`): the batch whose customers' words are replayed to this bot."""
    rescore_of: str | None = None
    """A re-score (`parley rescore`): the batch whose stored conversations are judged again (no
    bot or customer is called; `models.judge` is the judge that re-scored them)."""
    mutant: str | None = None
    """A mutation run's batch (`parley mutate`): the mutant the bot ran under (parley.core.mutation);
    its parent is the batch of the bot as it is, run from the same files with the same seed."""
    criteria_from: list[str] | None = None
    """A re-score's `--criteria-from`: the files whose `expect:` blocks replaced the stored ones
    (matched by spec id); None: the expectations stored with the parent's specs."""
    budget_usd: float | None = Field(default=None, gt=0)
    """`--budget`: no conversation is launched once the measured cost reaches it."""
    today: datetime.date | None = None
    """The date order ages count from for specs that pin none; None: the day the batch was
    created. A re-run or replay takes its parent's, so it runs in the same world."""
    rules: str | None = None
    """`--rules`: a Sensei rule file or a folder of them, read again by `--resume`. Its
    `conversations: 1` rules are checks of each conversation; its pair and batch rules are
    decided once every conversation is in. None: no rules."""
    min_kappa: float = Field(default=option("min_kappa").default, ge=-1.0, le=1.0)
    """`--min-kappa`: the judge's measured kappa a criterion's or rubric's verdict must reach not
    to be marked "below threshold" (parley.core.evaluation.calibration_marks)."""
    require_calibrated: bool = option("require_calibrated").default
    """`--require-calibrated`: only verdicts of a judge calibrated at or above `min_kappa` on
    that item count towards a pass."""
    prices: dict[str, ModelPrice] = Field(default_factory=dict)
    """`--price MODEL=INPUT/OUTPUT`: prices (USD per million tokens) for models the price table
    does not know, or in place of its own, for the batch's cost and `--budget`."""

    @field_validator("prices", mode="before")
    @classmethod
    def _read_prices(cls, value: Any) -> Any:
        return read_prices(value)

    limits: CheckLimits | None = None
    """`--limit KEY=VALUE`: limits every conversation is checked against (a spec's own
    `expect.limits` keys win); None: none."""

    @field_validator("limits", mode="before")
    @classmethod
    def _read_limits(cls, value: Any) -> Any:
        return read_limits(value)

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> BatchOptions:
        """The options of a batch from the values of its declared options (parley.core.option_declarations:
        `max_turns`, `bot`, `agent_template`...), each put where its declaration says (`max_turns`,
        `models.bot`, `loading.agent_template`); paths are kept as text. Options left out keep their
        defaults; a value the record refuses is a pydantic ValidationError."""
        data: dict[str, Any] = {}
        for name, value in values.items():
            *parents, leaf = option(name).option_field.split(".")
            place = data
            for parent in parents:
                place = place.setdefault(parent, {})
            place[leaf] = _plain(value)
        return cls.model_validate(data)


def _plain(value: Any) -> Any:
    """A path as text, a sequence of them as a list of text."""
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


class BatchRecord(BaseModel):
    """One batch: what was planned and how it went. `planned` counts conversations (specs x
    trials); how many are done is counted from the stored conversations."""

    id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    created_at: datetime.datetime = Field(default_factory=utc_now)
    started_at: datetime.datetime | None = None
    finished_at: datetime.datetime | None = None
    status: BatchStatus = "pending"
    sources: list[str] = Field(default_factory=list)
    options: BatchOptions = Field(default_factory=BatchOptions)
    planned: int = 0
    error: str | None = None
    parent_id: str | None = None
    """The batch this one re-runs, replays or re-scores (`--rerun`, `--replay`, `parley rescore`);
    None: a batch of its own."""
    group_id: str | None = None
    """The group of batches this one belongs to (`parley run --bot A --bot B`: one batch per bot,
    the same specs and seeds, compared side by side); None: none."""
    group_role: str | None = None
    """Its name in the group (the bot's: `A`, `openai/gpt-4o-mini`), which reports show it under."""


class UnreadableBatch(BaseModel):
    """A stored batch whose row cannot be read back (options no record of this parley takes, a
    damaged field): listed as what it is, with its id and why, so the batches beside it still list."""

    id: str
    created_at: str | None = None
    """As stored (it may be what cannot be read)."""
    status: str | None = None
    """As stored."""
    reason: str
    """What cannot be read, in words: the field and the problem."""


class ConversationRow(BaseModel):
    """One line of a results table: light, no transcript."""

    id: str
    batch_id: str | None
    name: str
    spec_id: str
    kind: str
    variables: dict[str, str] = Field(default_factory=dict)
    trial: int
    stop_reason: str
    outcome: str | None
    """The conversation's outcome (parley.core.records.verdict.Outcome), None when not evaluated."""
    passed: bool | None
    score: int | None
    comment: str | None = None
    turns: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    """None when a price was unknown for any call (never 0 for "unknown")."""
    duration_s: float
    started_at: datetime.datetime
    policy_violations: int = 0
    error: str | None = None

    @classmethod
    def of(
        cls, batch_id: str | None, spec: ConversationSpec, conversation: Conversation, verdict: Verdict | None, trial: int
    ) -> ConversationRow:
        """The row of a conversation, from its records: what the store lists once it is saved
        (tokens and cost include the judge's; the error is the run's, else the verdict's)."""
        total = conversation.total_usage
        if verdict is not None and verdict.judge is not None:
            total = total + verdict.judge.usage
        return cls(
            id=conversation.id,
            batch_id=batch_id,
            name=spec.name,
            spec_id=spec.spec_id,
            kind=spec.kind,
            variables=spec.variables,
            trial=trial,
            stop_reason=conversation.stop_reason,
            outcome=verdict.outcome if verdict is not None else None,
            passed=verdict.passed if verdict is not None else None,
            score=verdict.score if verdict is not None else None,
            comment=verdict.comment if verdict is not None else None,
            turns=conversation.bot_turns,
            input_tokens=total.input_tokens,
            output_tokens=total.output_tokens,
            cost_usd=total.cost_usd,
            duration_s=conversation.duration_s,
            started_at=conversation.started_at,
            policy_violations=len(verdict.policy_violations) if verdict is not None else 0,
            error=conversation.error or (verdict.error if verdict is not None else None),
        )


class ResultRow(ConversationRow):
    """A conversation as an export row: the results-table row plus who ran it, usage per role
    and the failed checks ("name: reason"); still no transcript."""

    source: str
    seed: int
    customer_id: str
    bot_model: str
    user_model: str
    judge_model: str | None
    ended_at: datetime.datetime
    tool_call_count: int
    verdict_outcome: str | None
    """The verdict's outcome (None: not evaluated); the same as `outcome` since schema v4."""
    usage: dict[str, Usage] = Field(default_factory=dict)
    failed_checks: list[str] = Field(default_factory=list)
    user_faults: list[str] = Field(default_factory=list)
    """The simulated user's faults ("kind: reason")."""
    criteria: dict[str, str] = Field(default_factory=dict)
    """Each criterion in words of the conversation -> met, not met, not applicable, not run or
    judge error."""


class StoredConversation(BaseModel):
    """A conversation as it was saved, with the spec it ran and its verdict."""

    spec: ConversationSpec
    conversation: Conversation
    verdict: Verdict | None
    trial: int
    batch_id: str | None


class ConversationCopy(BaseModel):
    """A re-score's copy of stored conversation `source_id`, to store: the copy under its own
    id, the spec and trial it is judged as, and its fresh verdict."""

    spec: ConversationSpec
    conversation: Conversation
    verdict: Verdict
    trial: int
    source_id: str


class ChatSessionRow(BaseModel):
    """One live chat in a list of chats."""

    id: str
    created_at: datetime.datetime
    updated_at: datetime.datetime
    customer_id: str
    bot_model: str
    messages: int
    turns: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None


class StoredChatSession(BaseModel):
    """A saved live chat: when it started, when it was last saved, and its snapshot."""

    created_at: datetime.datetime
    updated_at: datetime.datetime
    chat: ChatExport
