"""The validated user profile: the Sensei YAML format plus parley's `world:` and `expect:` keys.

These models hold data that `parley.core.specs.profile_loader` has already checked, with every range,
list function and personality file resolved. They carry no positions except where a later
step (any() resolution, expansion) may still need to point at the YAML that caused a problem.
"""

from __future__ import annotations

import datetime
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from parley.core.errors import ProfileError

# Sensei's defaults for the `llm:` block.
DEFAULT_LLM_MODEL = "gpt-4o"
DEFAULT_LLM_TEMPERATURE = 0.8
DEFAULT_LANGUAGE = "English"
DEFAULT_CUSTOMER_ID = "C-100"
DEFAULT_ALL_ANSWERED_LIMIT = 30
MAX_STEPS = 19
"""Sensei refuses `steps` and `random steps` of 20 or more."""

VariableType = Literal["int", "float", "string"]
FunctionKind = Literal["default", "random", "another", "forward"]
OutputType = Literal["int", "float", "money", "str", "time", "date"]
StyleName = Literal[
    "long phrases",
    "change your mind",
    "change language",
    "make spelling mistakes",
    "single question",
    "all questions",
    "default",
]
GoalStyleKind = Literal["steps", "random_steps", "all_answered", "default"]
OrderStatus = Literal["pending", "processing", "shipped", "delivered", "cancelled"]
ToolName = Literal["get_order", "track_order", "list_my_orders", "check_cancellation", "cancel_order"]
FormatType = Literal["text", "speech"]

VARIABLE_TYPES: tuple[str, ...] = get_args(VariableType)
OUTPUT_TYPES: tuple[str, ...] = get_args(OutputType)
STYLE_NAMES: tuple[str, ...] = get_args(StyleName)
ORDER_STATUSES: tuple[str, ...] = get_args(OrderStatus)
FORMAT_TYPES: tuple[str, ...] = get_args(FormatType)

Scalar = int | float | str


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# -- the YAML keys, said once: each model's fields are its section's keys -------------------------
#
# A field is written in YAML under its own name unless its metadata says otherwise:
# `yaml_key(...)` names the YAML key it is read from, `filled_by_loader(...)` marks what the
# loader works out (positions, resolved paths, warnings), and `yaml_under(...)` a key written one
# level down (goal_style's `all_answered: {export, limit}`). `yaml_keys(Model)` lists them.


def yaml_key(name: str, default: Any = ..., **kwargs: Any) -> Any:
    """A field read from the YAML key `name`."""
    return Field(default, json_schema_extra={"yaml": name}, **kwargs)


def filled_by_loader(default: Any = ..., **kwargs: Any) -> Any:
    """A field the loader works out; no YAML key of its own."""
    return Field(default, json_schema_extra={"yaml": None}, **kwargs)


def yaml_under(parent: str, default: Any = ..., **kwargs: Any) -> Any:
    """A field written under the key `parent` (e.g. `all_answered: {limit: 8}`)."""
    return Field(default, json_schema_extra={"yaml_under": parent}, **kwargs)


def yaml_keys(model: type[BaseModel], *, under: str | None = None) -> tuple[str, ...]:
    """The YAML keys of `model`'s section (or of its `under:` sub-mapping), in field order."""
    keys: list[str] = []
    for name, field in model.model_fields.items():
        extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
        if extra.get("yaml_under") != under:
            continue
        key = extra.get("yaml", name)
        if key is not None:
            keys.append(str(key))
    return tuple(keys)


class SourceLocation(_Model):
    """Where something was written: enough to raise a ProfileError pointing at it later."""

    file: str
    line: int | None = None
    column: int | None = None
    field_path: str | None = None

    def error(self, reason: str) -> ProfileError:
        """A ProfileError at this place."""
        return ProfileError(reason, file=self.file, line=self.line, column=self.column, field_path=self.field_path)

    def render(self, reason: str) -> str:
        """`file:line:col: field: reason`: how warnings about this place are written."""
        return self.error(reason).render()


class LlmFormat(_Model):
    """`llm.format` (the user-simulator fork of Sensei): text, or speech with a config file.
    parley simulates text only; a speech format is kept and warned about."""

    type: FormatType = "text"
    config: str | None = None


class LlmSettings(_Model):
    """The `llm:` block: the model Sensei would run the user simulator on.

    parley simulates users offline unless told otherwise; these settings are kept as data and
    used only when the user-simulator role is asked to follow the profile's model.
    """

    model: str = DEFAULT_LLM_MODEL
    """The name as written in the profile, e.g. `gpt-4o`."""
    temperature: float = DEFAULT_LLM_TEMPERATURE
    format: LlmFormat = LlmFormat()
    qualified_model: str = filled_by_loader(f"openai/{DEFAULT_LLM_MODEL}")
    """The same model as parley names models (`openai/gpt-4o`); names with a `/` are kept."""


def qualify_model_name(name: str) -> str:
    """`gpt-4o` -> `openai/gpt-4o`; `ollama/llama3`, `offline` stay as they are."""
    name = name.strip()
    if "/" in name or name == "offline":
        return name
    return f"openai/{name}"


class VariableFunction(_Model):
    """A parsed `function:` of a goal variable.

    `count` is N of `random(N)`; `rand` is set for `random(rand)`; `nests` names the variable
    a `forward(x)` nests (x turns fastest, like the last wheel of an odometer).
    """

    kind: FunctionKind
    text: str
    """The function as written (`default()` when the profile left it blank)."""
    count: int | None = None
    rand: bool = False
    nests: str | None = None


class Variable(_Model):
    """A goal variable with its data resolved to concrete values.

    `values` come from a plain list, a min/max range or a list function. `any_prompts` are the
    `any(...)` items still waiting for a model to generate them (see
    `parley.core.specs.expansion.resolve_any_items`); an empty list means nothing is pending.
    """

    name: str = filled_by_loader()
    """The variable's key in the goals list."""
    function: VariableFunction
    type: VariableType
    values: list[Scalar] = yaml_key("data")
    any_prompts: list[str] = filled_by_loader(default_factory=list)
    data_form: Literal["list", "range", "list_function", "date"] = filled_by_loader("list")
    location: SourceLocation = filled_by_loader()
    function_location: SourceLocation = filled_by_loader()
    data_location: SourceLocation = filled_by_loader()


class OutputField(_Model):
    """One `chatbot.output` entry: a typed value to extract from the finished conversation."""

    name: str = filled_by_loader()
    """The entry's key (`price:`)."""
    type: OutputType
    description: str


class InteractionStyle(_Model):
    """One interaction style; `languages` only for `change language`."""

    name: StyleName
    languages: list[str] = Field(default_factory=list)


class RandomStyles(_Model):
    """A `random:` entry: each conversation applies a random non-empty subset of `choices`."""

    choices: list[InteractionStyle]


_DEFAULT_STYLE: InteractionStyle | RandomStyles = InteractionStyle(name="default")


class GoalStyle(_Model):
    """How a conversation ends.

    - `steps`: after `steps` interactions;
    - `random_steps`: after a random number in 1..`max_steps` (drawn per conversation; a
      ConversationSpec carries the drawn number in `steps`);
    - `all_answered`: when every goal has been asked and answered, or after `limit` interactions;
    - `default`: Sensei's default, i.e. all_answered with export off and limit 30.
    """

    kind: GoalStyleKind = filled_by_loader()
    """The style's key: `steps`, `random steps`, `all_answered` or `default`."""
    steps: int | None = filled_by_loader(None)
    max_steps: int | None = filled_by_loader(None)
    export: bool = yaml_under("all_answered", False)
    limit: int = yaml_under("all_answered", DEFAULT_ALL_ANSWERED_LIMIT)


class ConversationNumber(_Model):
    """`conversation.number`: a count, `all_combinations`, or `sample(fraction)`."""

    kind: Literal["count", "all_combinations", "sample"]
    count: int | None = None
    fraction: float | None = None


class OrderOverride(_Model):
    """A partial order merged onto the shipped fixture (keyed by `id`)."""

    id: str
    customer_id: str | None = None
    placed_days_ago: int | None = None
    status: OrderStatus | None = None
    currency: str | None = None
    total: float | None = None
    items: list[dict[str, Any]] | None = None
    tracking: dict[str, Any] | None = None

    def as_override(self) -> dict[str, Any]:
        """Only the fields the profile wrote, as the fixture's `apply_overrides` takes them."""
        return self.model_dump(exclude_unset=True)


class WorldSpec(_Model):
    """parley's `world:` key: who the customer is, the pinned date, fixture overrides.

    `today` None means "the runner's pinned default date".
    """

    customer_id: str = DEFAULT_CUSTOMER_ID
    today: datetime.date | None = None
    orders: list[OrderOverride] = Field(default_factory=list)


class JudgeSpec(_Model):
    """A rubric for the judge and the lowest score (1..3) that passes."""

    rubric: str
    min_score: Literal[1, 2, 3] = 2


class Expectations(_Model):
    """parley's `expect:` key: what must be true when the conversation ends."""

    orders: dict[str, OrderStatus] = Field(default_factory=dict)
    unchanged_others: bool | None = None
    """True: the author asks that no other order change; False: other orders may change; None
    (not written): parley checks it by default, a check that may fail a conversation but never
    makes one pass."""
    tools_called: list[ToolName] = Field(default_factory=list)
    tools_not_called: list[ToolName] = Field(default_factory=list)
    bot_says: list[str] = Field(default_factory=list)
    bot_never_says: list[str] = Field(default_factory=list)
    judge: JudgeSpec | None = None
    criteria: list[str] = Field(default_factory=list)
    """Checks written in words ("the bot apologises for the delay"), each its own check named by
    its text, decided by an LLM judge with evidence (parley.core.evaluation.criteria); under the
    offline judge they are not run."""


class UserSection(_Model):
    """The `user:` block. `context` has personalities already resolved into lines; `goals` are
    the goal texts with their `{{var}}` placeholders (variable definitions moved to `variables`)."""

    language: str = DEFAULT_LANGUAGE
    role: str
    context: list[str] = Field(default_factory=list)
    personalities: list[str] = filled_by_loader(default_factory=list)
    """Paths of the personality files that were read, in order."""
    goals: list[str]
    variables: list[Variable] = filled_by_loader(default_factory=list)
    """The variable definitions written among the goals."""


class Personality(_Model):
    """A personality file: an optional name and the context lines it adds to a profile."""

    name: str | None = None
    context: list[str]


class ChatbotSection(_Model):
    """The `chatbot:` block."""

    is_starter: bool = False
    fallback: str | None = None
    outputs: list[OutputField] = yaml_key("output", default_factory=list)


class ConversationSection(_Model):
    """The `conversation:` block."""

    number: ConversationNumber = ConversationNumber(kind="count", count=1)
    goal_style: GoalStyle = GoalStyle(kind="default")
    interaction_style: list[InteractionStyle | RandomStyles] = Field(default_factory=lambda: [_DEFAULT_STYLE])


class Profile(_Model):
    """A loaded, valid profile. `source` is the file path as it was given to the loader."""

    source: str = filled_by_loader()
    test_name: str
    llm: LlmSettings = LlmSettings()
    user: UserSection
    chatbot: ChatbotSection = ChatbotSection()
    conversation: ConversationSection = ConversationSection()
    world: WorldSpec = WorldSpec()
    expect: Expectations | None = None
    warnings: list[str] = filled_by_loader(default_factory=list)
    """Located warnings (`file:line:col: field: reason`): what was accepted but deserves a look."""
    notes: list[str] = filled_by_loader(default_factory=list)
    """Located notes: where a personality or list-function file was found."""

    def variable(self, name: str) -> Variable | None:
        """The goal variable called `name`, if there is one."""
        return next((v for v in self.user.variables if v.name == name), None)
