"""The bodies the batch service takes and gives back (parley.core.service.app), as pydantic models.

Their docstrings and field descriptions are the OpenAPI schema's documentation. Validation that
needs no file is done here (ranges, model names: a 422 naming the field); what needs the files
(scenario variables, profile contents) is checked by the batch loader and reported as a 422 too.
"""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, create_model, field_validator, model_validator

from parley.core.errors import ConfigError
from parley.core.option_declarations import BatchOption, options_on
from parley.core.records import BatchStatus, OutcomeCounts, UnreadableBatch

MAX_ITEMS = 10_000
MAX_ENTRIES = 64
"""The most entries a repeatable option takes in one request (`gen`, `price`)."""
MAX_PLANNED = 50_000
"""The most conversations one request may plan (specs x trials, after profiles expand)."""
MAX_INLINE_CHARS = 512 * 1024
PROFILE_USER_MODEL = "profile"


def check_model_name(value: str | None, *, allow_profile: bool = False) -> str | None:
    """A model name as `parley run --bot/--user/--judge` takes it; ValueError saying the valid forms."""
    if value is None:
        return None
    from parley.core.models import parse_model_name

    value = value.strip()
    if allow_profile and value == PROFILE_USER_MODEL:
        return value
    try:
        parse_model_name(value)
    except ConfigError as exc:
        raise ValueError(str(exc)) from None
    return value


def check_bot_name(value: str | None) -> str | None:
    """A bot as the service takes it: a model name, or a `rasa:URL` / `taskyto:URL` connector.
    `http:FILE.yaml` is refused: it would read a file on the server (use `parley run` for it)."""
    if value is None:
        return None
    from parley.core.bots import parse_bot_spec

    value = value.strip()
    if value.startswith("http:") and not value.startswith("http://"):
        raise ValueError(
            "http:FILE connectors read a file on the server and are not accepted over the API; "
            "use rasa:URL or taskyto:URL, or run the batch with `parley run --bot http:FILE`"
        )
    try:
        parse_bot_spec(value)
    except ConfigError as exc:
        raise ValueError(str(exc)) from None
    return value


# ---- requests ---------------------------------------------------------------------------------


class ScenarioIn(BaseModel):
    """One scenario of 003's format: a name and the variables that fill the prompt templates."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=200, description="The scenario's name, unique in the batch.")
    variables: dict[str, Any] = Field(
        description="Template variables (PERSONALITY, AMB_LEVEL 0-3, PATIENCE 0-3, ORDER_GOAL, CURRENT_DATE, "
        "LOCATIONS, DELIVERY_DAYS, PURCHASE_HISTORY, SEED, CUSTOMER_ID...).",
        examples=[{"PERSONALITY": "calm", "AMB_LEVEL": 0, "PATIENCE": 2, "ORDER_GOAL": "find out where my latest order is"}],
    )
    criteria: list[str] = Field(
        default_factory=list,
        max_length=50,
        description="Checks in words for an LLM judge, each its own check named by its text, decided with a quote "
        "from the transcript as evidence (offline: not run).",
        examples=[["The agent gives the tracking number"]],
    )
    expect: dict[str, Any] | None = Field(
        None,
        description="What must hold, as a profile's `expect:` block (records, a table's states, unchanged_others, "
        "tools_called, tools_attempted, tools_not_called, bot_says, bot_never_says, criteria, judge): checks the offline "
        "roles decide too. Read as a scenario file's, against its world, each problem located (422).",
        examples=[{"bot_says": ["tracking"], "unchanged_others": True}],
    )
    world: dict[str, Any] | None = Field(
        None,
        description="The world it runs on, as a profile's `world:` (`name`, `customer_id`, `today`, rows by table); "
        "default: the order world. A world given by `path` is Python: refused unless the server allows Python.",
        examples=[{"name": "returns"}],
    )


class RoleModelsIn(BaseModel):
    """The model of each role; a role left out gets the service's default (`parley serve --bot ...`)."""

    model_config = ConfigDict(extra="forbid")

    bot: str | None = Field(
        None,
        description="The bot under test: offline, openai/MODEL, openrouter/MODEL, "
        "ollama/MODEL or openai-api/SERVICE/MODEL (the built-in order bot), or a deployed "
        "bot: rasa:URL (a Rasa REST webhook) or taskyto:URL.",
        examples=["offline"],
    )
    user: str | None = Field(
        None, description="The simulated customer; `profile` runs each profile's own llm: model.", examples=["offline"]
    )
    judge: str | None = Field(None, description="The judge (offline: no score; the checks alone decide).", examples=["offline"])

    @field_validator("bot")
    @classmethod
    def _known_bot(cls, value: str | None) -> str | None:
        return check_bot_name(value)

    @field_validator("judge")
    @classmethod
    def _known_model(cls, value: str | None) -> str | None:
        return check_model_name(value)

    @field_validator("user")
    @classmethod
    def _known_user_model(cls, value: str | None) -> str | None:
        return check_model_name(value, allow_profile=True)


class InlineProfile(BaseModel):
    """A profile, playbook or scenario file sent in the request (kept by the service so the
    batch can be resumed)."""

    model_config = ConfigDict(extra="forbid")

    yaml: str = Field(min_length=1, max_length=MAX_INLINE_CHARS, description="The file's text (YAML; JSON is YAML too).")
    name: str | None = Field(
        None,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$",
        description="A file name to keep it under (its suffix says the kind: .yaml or .json); default profile_N.yaml.",
    )


class ProfilePath(BaseModel):
    """A file or folder inside one of the service's profile folders."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(
        min_length=1,
        max_length=4096,
        description="Relative to the service's working directory or to a profile folder; it must resolve inside a profile folder.",
    )


ProfileItem = Annotated[
    Annotated[str, Field(min_length=1, max_length=MAX_INLINE_CHARS)] | InlineProfile | ProfilePath,
    Field(
        description="A path (a string without a line break), inline YAML (a string with line breaks), or an object {path} / {yaml, name}."
    ),
]


REQUEST_OPTIONS = tuple(o for o in options_on("service") if o.role is None)
"""The batch options a request sets at its top level (the roles' models are under `models`)."""


class BatchRequestBase(BaseModel):
    """A new batch: 003's `{"scenarios": [...]}`, and/or profiles, with how to run it. Its options
    (concurrency, trials, seed...) are fields made from their declarations (BatchRequest)."""

    model_config = ConfigDict(extra="forbid")

    scenarios: list[ScenarioIn] | None = Field(None, max_length=MAX_ITEMS, description="Scenarios in 003's format.")
    profiles: list[ProfileItem] | None = Field(
        None, max_length=MAX_ITEMS, description="Profiles, playbooks, scenario files or folders of them."
    )
    models: RoleModelsIn = Field(default_factory=RoleModelsIn, description="The model of each role.")

    def option_values(self) -> dict[str, Any]:
        """Each declared option's value, by name (parley.core.option_declarations)."""
        return {o.name: getattr(self, o.name) for o in REQUEST_OPTIONS}

    @model_validator(mode="after")
    def _something_to_run(self) -> Self:
        if not self.scenarios and not self.profiles:
            raise ValueError("give `scenarios` or `profiles` (or both): there is nothing to run")
        trials = self.option_values()["trials"]
        planned = len(self.scenarios or []) * trials
        if planned > MAX_PLANNED:
            raise ValueError(
                f"{len(self.scenarios or []):,} scenarios x {trials} trials plan {planned:,} conversations; "
                f"at most {MAX_PLANNED:,} may be planned by one request: split it into smaller batches"
            )
        return self


def _request_field(declared: BatchOption) -> tuple[Any, Any]:
    """A declared option as a request field: its type, default, bounds (the service's own where
    they are lower) and help."""
    annotation: Any = declared.kind | None if declared.optional else declared.kind
    low = declared.request_minimum if declared.request_minimum is not None else declared.minimum
    high = declared.request_maximum if declared.request_maximum is not None else declared.maximum
    limits: dict[str, Any] = {}
    if declared.many:  # repeatable on the command line: a list of its entries (`gen`: ["bot.temperature=0.2"])
        entries: Any = list[declared.kind]  # type: ignore[name-defined]
        return entries, Field(declared.default, description=declared.help, max_length=MAX_ENTRIES)
    if declared.kind is str:
        limits = {"max_length": int(high)} if high is not None else {}
    else:
        if low is not None:
            limits["gt" if declared.above_minimum else "ge"] = low
        if high is not None:
            limits["le"] = high
    return annotation, Field(declared.default, description=declared.help, **limits)


if TYPE_CHECKING:  # type checkers see the base; its options are read through `option_values`
    BatchRequest = BatchRequestBase
else:
    BatchRequest = create_model(
        "BatchRequest",
        __base__=BatchRequestBase,
        __module__=__name__,
        __doc__=BatchRequestBase.__doc__,
        **{o.name: _request_field(o) for o in REQUEST_OPTIONS},
    )


def _body_kind(value: Any) -> str:
    return "scenario-list" if isinstance(value, list) else "batch-request"


BODY_TAGS = ("batch-request", "scenario-list")
BatchBody = Annotated[
    Annotated[BatchRequest, Tag("batch-request")] | Annotated[list[ScenarioIn], Tag("scenario-list")],
    Discriminator(_body_kind),
]
"""POST /batches takes a BatchRequest or, as 003's README shows, a bare list of scenarios."""


# ---- responses --------------------------------------------------------------------------------


class ErrorDetail(BaseModel):
    """An error: `detail` says what went wrong (a 422 lists each problem with its `loc`)."""

    detail: str | list[dict[str, Any]]


class RoleHealth(BaseModel):
    model: str = Field(description="The role's default model on this service.")
    ready: bool = Field(description="Whether the key / base URL that model needs is set (the key itself is never shown).")
    problem: str | None = Field(None, description="What is missing when not ready.")


class DatabaseHealth(BaseModel):
    path: str
    """The database file's name (never the server's absolute path)."""
    reachable: bool
    schema_version: int | None = None
    error: str | None = None


class Health(BaseModel):
    """Whether the service and its database answer."""

    status: Literal["healthy", "degraded"]
    service: str = "parley batch service"
    version: str
    database: DatabaseHealth
    roles: dict[str, RoleHealth] = Field(description="bot, user, judge: the default model and whether it can run.")
    keys: dict[str, bool] = Field(description="Which provider variables are set (names only, never values).")
    running_batches: int
    auth: bool = Field(description="Whether routes other than /health need a bearer token.")


class BatchLaunched(BaseModel):
    """003's reply to POST /batches (and to a resume): the batch runs in the background."""

    batch_id: str
    status: Literal["launched", "resumed"]
    total_scenarios: int = Field(description="Conversations planned (specs x trials).")
    already_done: int = Field(0, description="Conversations a resumed batch had finished before.")
    warnings: list[str] = Field(default_factory=list)


class BatchCountsView(BaseModel):
    """A batch's counts as every view of it shows them: the summary's (parley.core.records.OutcomeCounts),
    under the summary's names, and 003's `completed_scenarios` and `failed_scenarios`."""

    completed_scenarios: int = Field(description="Conversations stored (any outcome).")
    failed_scenarios: int = Field(
        description="Conversations whose run broke (the bot's, the simulator's or parley's: bot_errors + errors): 003's failed."
    )
    passed: int
    failed: int = Field(description="Conversations in which a check about the bot failed.")
    bot_errors: int = Field(default=0, description="Conversations the bot under test broke: with `failed`, the bot's failures.")
    unverified: int = Field(default=0, description="Nothing about the bot was checked: neither passed nor failed.")
    user_faults: int = Field(default=0, description="Simulator faults: the simulated user misbehaved, not blamed on the bot.")
    errors: int = Field(description="Runs that broke on the simulator's or parley's side: counted apart.")
    evaluation_errors: int = Field(default=0, description="A check could not be decided: counted apart.")
    unevaluated: int = Field(default=0, description="Stored without a verdict: counted apart.")
    pass_rate: float | None = Field(None, description="passed / (passed + failed + bot_errors); null before anything was judged.")

    @classmethod
    def of(cls, counts: OutcomeCounts) -> BatchCountsView:
        """The counts of a batch's summary."""
        return cls(
            completed_scenarios=counts.done,
            failed_scenarios=counts.broken,
            passed=counts.passed,
            failed=counts.failed,
            bot_errors=counts.bot_errors,
            unverified=counts.unverified,
            user_faults=counts.user_faults,
            errors=counts.errors,
            evaluation_errors=counts.evaluation_errors,
            unevaluated=counts.unevaluated,
            pass_rate=counts.pass_rate,
        )


class BatchStatusView(BatchCountsView):
    """Where a batch is, counted from the stored conversations (it moves as each one ends)."""

    batch_id: str
    status: BatchStatus
    progress: float = Field(ge=0, le=100, description="Percent done, 0 to 100, as the simulation service gives it.")
    progress_fraction: float = Field(ge=0, le=1, description="The same as a fraction: done / total_scenarios.")
    total_scenarios: int
    in_flight: int = Field(description="Conversations running now in this service.")
    created_at: datetime.datetime
    started_at: datetime.datetime | None
    completed_at: datetime.datetime | None
    elapsed_s: float | None = Field(description="From start to finish, or to now while it runs.")
    eta_s: float | None = Field(None, description="Estimated seconds left, while this service runs it.")
    running_here: bool = Field(description="Whether this service is running it now.")
    owner: str | None = Field(None, description="The process running it, when another one does.")
    sources: list[str]
    options: dict[str, Any]
    error: str | None


class BatchListItem(BatchCountsView):
    """A batch in the list: the same counts, under the same names, as GET /batches/{id}."""

    batch_id: str
    status: BatchStatus
    total_scenarios: int
    created_at: datetime.datetime
    started_at: datetime.datetime | None
    completed_at: datetime.datetime | None


class BatchList(BaseModel):
    """Batches newest first."""

    batches: list[BatchListItem]
    total_count: int
    limit: int
    offset: int
    unreadable: list[UnreadableBatch] = Field(
        default_factory=list,
        description="Batches of this page whose stored row cannot be read (a damaged row): each one's id and why. "
        "They take their place in the page; the others list as usual.",
    )


class RoleCost(BaseModel):
    role: str
    models: list[str]
    calls: int
    input_tokens: int
    output_tokens: int
    total_tokens: int
    unreported_calls: int = Field(description="Calls whose provider reported no token counts.")
    cost_usd: float | None = Field(description="null when a model's price is unknown (never 0 for unknown).")


class BatchCost(BaseModel):
    """Tokens and cost per role, from the usage stored with each conversation."""

    batch_id: str
    status: BatchStatus
    partial: bool
    roles: list[RoleCost]
    total_cost_usd: float | None
    total_tokens: int
    total_requests: int
    average_cost_per_request: float | None
    unpriced_models: list[str] = Field(description="Models used without a known price.")
    note: str | None = None


class BatchActionResult(BaseModel):
    batch_id: str
    status: BatchStatus
    message: str
