"""The user profile: the Sensei YAML format plus parley's `world:` and `expect:` keys, declared once.

Each record below is both the value the rest of parley uses and the schema of the YAML that
makes it. Validated with a `ProfileReading` as context (parley.core.specs.profile_loader does
that for a file), a record takes the shapes Sensei's format allows and reports every problem
with the message people read, found where it was written (see parley.core.records.yaml_fields);
built in code, it holds the same constraints. What only a reader of files can do (personality
files, list functions, "today" for the date generator) the records ask of the reading.
"""

# No `from __future__ import annotations` here: annotations evaluated as each class is made spare
# pydantic evaluating every annotation string again (a sixth of this module's import).

import datetime
import math
import re
from abc import abstractmethod
from collections.abc import Sequence
from typing import Annotated, Any, Literal, get_args

from pydantic import BeforeValidator, Field, ValidationInfo, field_validator, model_validator

from parley.core.records.attack import AttackSpec
from parley.core.records.expect_extras import CheckLimits, PythonChecks
from parley.core.records.goal_variables import Variable, VariableReading, read_goals
from parley.core.records.world_facts import TableFacts
from parley.core.records.yaml_fields import (
    Keyed,
    Problems,
    Reading,
    YamlRecord,
    as_text,
    below,
    boolean,
    check_keys,
    checked,
    date,
    derived,
    describe,
    did_you_mean,
    expect_mapping,
    fail,
    integer,
    is_int,
    matching,
    number,
    one_of,
    plain_value,
    read_choice,
    read_mapping,
    read_text,
    reading_of,
    text_list,
    yaml_only,
    yaml_under,
)

# Sensei's defaults for the `llm:` block.
DEFAULT_LLM_MODEL = "gpt-4o"
DEFAULT_LLM_TEMPERATURE = 0.8
DEFAULT_LANGUAGE = "English"
DEFAULT_ALL_ANSWERED_LIMIT = 30
MAX_STEPS = 19
"""Sensei refuses `steps` and `random steps` of 20 or more."""
MAX_CONVERSATIONS = 10_000

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
FormatType = Literal["text", "speech"]

OUTPUT_TYPES: tuple[str, ...] = get_args(OutputType)
STYLE_NAMES: tuple[StyleName, ...] = get_args(StyleName)
_STYLES_BY_NAME: dict[str, StyleName] = {name: name for name in STYLE_NAMES}
FORMAT_TYPES: tuple[str, ...] = get_args(FormatType)
# The goal style's key: the kind as Sensei writes it ("random steps" with a space).
GOAL_STYLES = tuple(kind.replace("_steps", " steps") for kind in get_args(GoalStyleKind))

_GOAL_STYLE_ALIASES = {"random_steps": "random steps", "all answered": "all_answered"}
_STYLE_ALIASES = {"long phrase": "long phrases"}
_SAMPLE_RE = re.compile(r"^\s*sample\s*\(\s*([^()]*?)\s*\)\s*$")


def known_tool(written: str, tools: Sequence[str]) -> str:
    """A tool of the world's, by name (stripped); a near miss gets a suggestion."""
    name = written.strip()
    if name not in tools:
        fail(f"unknown tool '{name}'{did_you_mean(name, tools) or '; tools are ' + ', '.join(tools)}")
    return name


class ProfileReading(VariableReading):
    """What profile records ask of the reader of a profile file (parley.core.specs.profile_validation)."""

    @abstractmethod
    def personality(self, entry: dict[Any, Any], written: str, *, missing_ok: bool) -> tuple[list[str], str] | None:
        """The context lines and path of the personality file `entry["personality"]` names
        (`written`); problems are raised at `("personality",)`. None when it is not found and
        `missing_ok` (after a warning)."""
        raise NotImplementedError

    @abstractmethod
    def count(self, section: dict[Any, Any], number: "ConversationNumber", variables: list[Variable]) -> None:
        """Check `all_combinations` / `sample(f)` (written in `section`, the `conversation:`
        mapping) against the combinations of `variables`; problems are raised at `("number",)`."""
        raise NotImplementedError


# -- llm -------------------------------------------------------------------------------------------------


class LlmFormat(YamlRecord):
    """`llm.format` (the user-simulator fork of Sensei): text, or speech with a config file.
    parley simulates text only; a speech format is kept and warned about. `format: speech`
    names the type alone."""

    yaml_sensei = True

    type: Annotated[FormatType, one_of(FORMAT_TYPES, what=f"a format type ({', '.join(FORMAT_TYPES)})", noun="format type")] = "text"
    config: Annotated[str | None, as_text("the path of a speech configuration", optional=True)] = None

    @classmethod
    def read_yaml(cls, data: Any, handler: Any, reading: Reading) -> Any:
        if not isinstance(data, dict):
            return handler({"type": data})
        return read_mapping(cls, data, handler, reading)


class LlmSettings(YamlRecord):
    """The `llm:` block: the model Sensei would run the user simulator on.

    parley simulates users offline unless told otherwise; these settings are kept as data and
    used only when the user-simulator role is asked to follow the profile's model.
    """

    yaml_sensei = True

    model: Annotated[str, as_text("a model name such as gpt-4o", strip=True)] = DEFAULT_LLM_MODEL
    """The name as written in the profile, e.g. `gpt-4o`."""
    temperature: Annotated[float, number(0.0, 2.0)] = DEFAULT_LLM_TEMPERATURE
    top_p: Annotated[float | None, number(0.0, 1.0, optional=True)] = None
    max_tokens: Annotated[int | None, integer(1, optional=True)] = None
    seed: Annotated[int | None, integer(optional=True)] = None
    """The customer's model's seed; None: each conversation's own (derived from the batch seed)."""
    stop: Annotated[list[str], checked(lambda value: text_list(value, "texts that end the answer", non_empty=False))] = Field(
        default_factory=list, max_length=4
    )
    """parley's generation settings of the customer's model beside Sensei's temperature
    (`--gen user.KEY=VALUE` wins over each)."""
    format: LlmFormat = LlmFormat()
    qualified_model: str = derived(f"openai/{DEFAULT_LLM_MODEL}")
    """The same model as parley names models (`openai/gpt-4o`); names with a `/` are kept."""

    @classmethod
    def read_yaml(cls, data: Any, handler: Any, reading: Reading) -> Any:
        mapping = expect_mapping(data, cls.yaml_what)
        model = mapping.get("model")
        extra = {"qualified_model": qualify_model_name(model)} if isinstance(model, str) and model.strip() else {}
        settings = read_mapping(cls, mapping, handler, reading, extra=extra)
        if settings.format.type == "speech":
            written = mapping.get("format")
            where = (written, ("type",)) if isinstance(written, dict) else (mapping, ("format",))
            reading.warn(*where, "parley simulates text conversations only: the speech format is ignored")
        return settings


def qualify_model_name(name: str) -> str:
    """`gpt-4o` -> `openai/gpt-4o`; `ollama/llama3`, `offline` stay as they are."""
    name = name.strip()
    if "/" in name or name == "offline":
        return name
    return f"openai/{name}"


# -- user --------------------------------------------------------------------------------------------------


class Personality(YamlRecord):
    """A personality file: an optional name and the context lines it adds to a profile."""

    yaml_what = "a personality (name and context)"
    yaml_sensei = True

    name: Annotated[str | None, as_text("a name", optional=True)] = None
    context: Annotated[list[str], BeforeValidator(lambda v: text_list(v, "context lines", non_empty=True))]


class UserSection(YamlRecord):
    """The `user:` block. `context` has personalities already resolved into lines; `goals` are
    the goal texts with their `{{var}}` placeholders (variable definitions moved to `variables`).
    `ask_about` is the name older Sensei versions gave to `goals`."""

    yaml_sensei = True

    language: Annotated[str, as_text("a language such as English")] = DEFAULT_LANGUAGE
    role: Annotated[str, as_text("a role prompt")]
    context: list[str] = Field(default_factory=list)
    personalities: list[str] = derived(default_factory=list)
    """Paths of the personality files that were read, in order."""
    goals: list[str]
    variables: list[Variable] = derived(default_factory=list)
    """The variable definitions written among the goals."""

    @classmethod
    def read_yaml(cls, data: Any, handler: Any, reading: Reading) -> Any:
        reading = ProfileReading.of(reading, "a profile")
        mapping = expect_mapping(data, cls.yaml_what)
        problems = Problems()
        check_keys(mapping, (*cls.yaml_keys(), "ask_about"), reading, problems, sensei=True, required=("role",))
        goals_key = "goals"
        if "ask_about" in mapping:
            if "goals" in mapping:
                problems.add("give either goals or ask_about (its old name), not both", at=("ask_about",), at_key=True)
                problems.raise_if_any()
            goals_key = "ask_about"
        elif "goals" not in mapping:
            problems.add("missing required key 'goals'", at_key=True)
        fields: dict[str, Any] = {key: mapping[key] for key in ("language", "role") if key in mapping}
        if "language" in fields and fields["language"] is None:
            del fields["language"]  # the default, as Sensei reads it
        personalities: list[str] = []
        if mapping.get("context") is not None:
            lines = problems.check(_read_context, mapping["context"], reading, personalities, at=("context",))
            fields["context"] = lines or []
        fields["personalities"] = personalities
        if goals_key in mapping:
            goals = problems.check(read_goals, mapping[goals_key], reading, at=(goals_key,))
            fields["goals"], fields["variables"] = goals or ([], [])
        return problems.then(handler, fields, reported=("role", "goals"))


def _read_context(value: Any, reading: ProfileReading, personalities: list[str]) -> list[str]:
    """Context lines; a `personality:` entry adds its file's lines where it stands. Sensei also
    takes the context written as one mapping, `context: {personality: FILE}`."""
    problems = Problems()
    if isinstance(value, dict):
        if not check_keys(value, ("personality",), reading, problems, required=("personality",)):
            problems.raise_if_any()
        # Sensei ignores a personality it cannot find when the context is a mapping.
        lines: list[str] = problems.check(_personality, value, reading, personalities, missing_ok=True)
        problems.raise_if_any()
        return lines
    if not isinstance(value, list):
        fail(f"expected a list of context lines and personality: entries, got {describe(value)}")
    lines = []
    entries = 0
    for i, item in enumerate(value):
        if isinstance(item, str):
            line = problems.check(read_text, item, "a context line", at=(i,))
            lines += [line] if line is not None else []
        elif isinstance(item, dict):
            if not check_keys(item, ("personality",), reading, problems, required=("personality",), at=(i,)):
                continue
            entries += 1
            if entries > 1:
                problems.add("Sensei takes one personality: entry per context; merge the files or keep one", at=(i,), at_key=True)
                continue
            lines += problems.check(_personality, item, reading, personalities, missing_ok=False, at=(i,)) or []
        else:
            problems.add(f"expected a context line or 'personality: <file>', got {describe(item)}", at=(i,))
    problems.raise_if_any()
    return lines


def _personality(entry: dict[Any, Any], reading: ProfileReading, personalities: list[str], *, missing_ok: bool) -> list[str]:
    written = below(("personality",), read_text, entry["personality"], "the path of a personality file")
    found = reading.personality(entry, written, missing_ok=missing_ok)
    if found is None:
        return []
    lines, path = found
    personalities.append(path)
    return lines


# -- chatbot --------------------------------------------------------------------------------------------------


class OutputField(YamlRecord):
    """One `chatbot.output` entry, `name: {type, description}`: a typed value to extract from
    the finished conversation. A type Sensei does not know is extracted as str, as Sensei does."""

    yaml_what = "type and description"
    yaml_entry = True

    name: str = derived()
    """The entry's key (`price:`)."""
    type: Annotated[OutputType, one_of(OUTPUT_TYPES, what="an output type", noun="output type")]
    description: Annotated[str, as_text("a description")]

    @classmethod
    def read_yaml(cls, data: Any, handler: Any, reading: Reading) -> Any:
        assert isinstance(data, Keyed)  # read from the output list (see ChatbotSection)
        mapping = expect_mapping(data.body, cls.yaml_what)
        extra: dict[str, Any] = {"name": data.name}
        written = mapping.get("type")
        if isinstance(written, str) and written.strip() and written.strip().lower() not in OUTPUT_TYPES:
            if all(key in mapping for key in cls.yaml_keys()):
                reason = f"output type '{written}' is not one of {', '.join(OUTPUT_TYPES)}: extracted as str, as Sensei does"
                reading.warn(mapping, ("type",), reason)
            extra["type"] = "str"  # Sensei's data extraction warns and reads it as text
        return read_mapping(cls, mapping, handler, reading, extra=extra)


def _read_outputs(value: Any, reading: Reading) -> list[OutputField]:
    if not isinstance(value, list):
        fail(f"expected a list of outputs (name: type/description), got {describe(value)}", at_key=value is None)
    outputs: list[OutputField] = []
    seen: set[str] = set()
    problems = Problems()
    for i, item in enumerate(value):
        if not isinstance(item, dict) or not item:
            problems.add(f"expected an output like 'price: {{type: money, description: ...}}', got {describe(item)}", at=(i,))
            continue
        for name, body in item.items():
            if not isinstance(name, str):
                problems.add(f"output name {describe(name)} must be text", at=(i, name), at_key=True)
            elif name in seen:
                problems.add(f"output '{name}' is defined twice", at=(i, name), at_key=True)
            else:
                seen.add(name)
                output = problems.check(OutputField.model_validate, Keyed(name, body), context=reading, at=(i, name))
                outputs += [output] if output is not None else []
    problems.raise_if_any()
    return outputs


class ChatbotSection(YamlRecord):
    """The `chatbot:` block."""

    yaml_sensei = True

    is_starter: Annotated[bool, boolean()] = False
    fallback: Annotated[str | None, as_text("the chatbot's fallback message", optional=True)] = None
    outputs: Annotated[list[OutputField], yaml_only(_read_outputs)] = Field(default_factory=list, validation_alias="output")


# -- conversation -------------------------------------------------------------------------------------------------


class ConversationNumber(YamlRecord):
    """`conversation.number`: a count, `all_combinations`, or `sample(fraction)`."""

    kind: Literal["count", "all_combinations", "sample"]
    count: int | None = None
    fraction: Annotated[float | None, Field(gt=0.0, le=1.0)] = None

    @field_validator("count")
    @classmethod
    def _count_in_range(cls, value: int | None) -> int | None:
        if value is not None and value < 1:
            fail(f"must be at least 1 conversation, got {value}")
        if value is not None and value > MAX_CONVERSATIONS:
            fail(f"{value} conversations is more than the limit of {MAX_CONVERSATIONS}")
        return value

    @model_validator(mode="after")
    def _settings_of_the_kind(self) -> "ConversationNumber":
        wanted = {"count": ("count",), "sample": ("fraction",), "all_combinations": ()}[self.kind]
        given = tuple(name for name in ("count", "fraction") if getattr(self, name) is not None)
        if given != wanted:
            fail(f"{self.kind} takes {' and '.join(wanted) or 'no setting'}, got {', '.join(given) or 'none'}")
        return self

    @classmethod
    def read_yaml(cls, data: Any, handler: Any, reading: Reading) -> Any:
        value = data
        if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
            value = int(value.strip())
        if is_int(value):
            return handler({"kind": "count", "count": int(value)})
        if isinstance(value, str) and value.strip() == "all_combinations":
            return handler({"kind": "all_combinations"})
        sample = _SAMPLE_RE.match(value) if isinstance(value, str) else None
        if sample is not None:
            arg = sample.group(1)
            try:
                fraction = float(arg)
            except ValueError:
                fraction = math.nan
            if not (0.0 < fraction <= 1.0):
                fail(f"sample() takes a fraction above 0 and at most 1, such as sample(0.2); got '{arg}'")
            return handler({"kind": "sample", "fraction": fraction})
        hint = did_you_mean(str(value), ("all_combinations", "sample()")) if isinstance(value, str) else ""
        fail(f"expected a number of conversations, all_combinations or sample(fraction), got {describe(value)}{hint}", at_key=value is None)


class GoalStyle(YamlRecord):
    """How a conversation ends.

    - `steps`: after `steps` interactions;
    - `random_steps`: after a random number in 1..`max_steps` (drawn per conversation; a
      ConversationSpec carries the drawn number in `steps`);
    - `all_answered`: when every goal has been asked and answered, or after `limit` interactions;
    - `default`: Sensei's default, i.e. all_answered with export off and limit 30.

    Written `goal_style: default`, `{steps: 5}`, `{random steps: 5}`, `all_answered` or
    `{all_answered: {export, limit}}`.
    """

    kind: GoalStyleKind = derived()
    """The style's key: `steps`, `random steps`, `all_answered` or `default`."""
    steps: Annotated[int | None, integer(1, MAX_STEPS, optional=True)] = derived(None)
    max_steps: Annotated[int | None, integer(1, MAX_STEPS, optional=True)] = derived(None)
    export: Annotated[bool, boolean()] = yaml_under("all_answered", False)
    limit: Annotated[int, integer(1)] = yaml_under("all_answered", DEFAULT_ALL_ANSWERED_LIMIT)

    @model_validator(mode="after")
    def _steps_of_the_kind(self) -> "GoalStyle":
        if self.kind == "steps" and self.steps is None:
            fail("'steps' needs a number, e.g. 'steps: 5'")
        if self.kind == "random_steps" and self.max_steps is None:
            fail("'random steps' needs a number, e.g. 'random steps: 5'")
        return self

    @classmethod
    def read_yaml(cls, data: Any, handler: Any, reading: Reading) -> Any:
        styles_hint = f"; use one of {', '.join(GOAL_STYLES)}"
        if isinstance(data, str):
            word = _GOAL_STYLE_ALIASES.get(data.strip(), data.strip())
            if word in ("default", "all_answered"):
                return handler({"kind": word})
            if word in ("steps", "random steps"):
                fail(f"'{word}' needs a number, e.g. '{word}: 5'")
            fail(f"unknown goal style '{data}'{did_you_mean(word, GOAL_STYLES) or styles_hint}")
        if not isinstance(data, dict) or not data:
            fail(f"expected a goal style ({', '.join(GOAL_STYLES)}), got {describe(data)}", at_key=True)
        if len(data) > 1:
            fail(f"give one goal style, got {' and '.join(str(k) for k in data)}", at_key=True)
        ((key, value),) = data.items()
        word = _GOAL_STYLE_ALIASES.get(str(key).strip(), str(key).strip())
        if word == "steps":
            return Problems().then(handler, {"kind": "steps", "steps": value}, rename={"steps": (key,)})
        if word == "random steps":
            return Problems().then(handler, {"kind": "random_steps", "max_steps": value}, rename={"max_steps": (key,)})
        if word == "default":
            if value is not None:
                fail(f"default takes no settings, got {describe(value)}", at=(key,))
            return handler({"kind": "default"})
        if word == "all_answered":
            if value is None:
                return handler({"kind": "all_answered"})
            if not isinstance(value, dict):
                fail(f"expected a mapping, got {describe(value)}", at=(key,))
            problems = Problems()
            keys = cls.yaml_keys(under="all_answered")
            check_keys(value, keys, reading, problems, at=(key,))
            settings = {k: v for k, v in value.items() if k in keys and v is not None}
            return problems.then(handler, {"kind": "all_answered", **settings}, rename={name: (key, name) for name in settings})
        fail(f"unknown goal style '{key}'{did_you_mean(word, GOAL_STYLES) or styles_hint}", at=(key,), at_key=True)


class InteractionStyle(YamlRecord):
    """One interaction style; `languages` only for `change language`, which needs them."""

    name: StyleName
    languages: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _languages_for_change_language(self) -> "InteractionStyle":
        if self.name == "change language" and not self.languages:
            fail("change language needs a list of languages, e.g. 'change language: [italian, chinese]'")
        if self.name != "change language" and self.languages:
            fail(f"'{self.name}' takes no settings, got {describe(self.languages)}")
        return self


class RandomStyles(YamlRecord):
    """A `random:` entry: each conversation applies a random non-empty subset of `choices`."""

    choices: list[InteractionStyle] = Field(min_length=1)


_DEFAULT_STYLE: InteractionStyle | RandomStyles = InteractionStyle(name="default")


def _read_styles(value: Any, reading: Reading) -> list[InteractionStyle | RandomStyles]:
    """A list of interaction styles; a single style may be written without the list."""
    if isinstance(value, str):
        return [_read_style(value, in_random=False)]
    if not isinstance(value, list):
        fail(f"expected a list of interaction styles, got {describe(value)}", at_key=value is None)
    if not value:
        fail("must not be empty", at_key=True)
    problems = Problems()
    styles = [problems.check(_read_style, item, in_random=False, at=(i,)) for i, item in enumerate(value)]
    problems.raise_if_any()
    return styles


def _read_style(value: Any, *, in_random: bool) -> InteractionStyle | RandomStyles:
    known = STYLE_NAMES if in_random else (*STYLE_NAMES, "random")
    known_hint = f"; use one of {', '.join(known)}"
    if isinstance(value, str):
        word = " ".join(value.split()).lower()
        word = _STYLE_ALIASES.get(word, word)
        if word == "change language":
            fail("change language needs a list of languages, e.g. 'change language: [italian, chinese]'")
        if word == "random":
            fail("random needs a list of styles to choose from, e.g. 'random: [long phrases, all questions]'")
        style = _STYLES_BY_NAME.get(word)
        if style is None:
            fail(f"unknown interaction style '{value}'{did_you_mean(word, known) or known_hint}")
        return InteractionStyle(name=style)
    if not isinstance(value, dict) or not value:
        fail(f"expected an interaction style, got {describe(value)}")
    if len(value) > 1:
        fail("write one interaction style per list item", at_key=True)
    ((key, setting),) = value.items()
    word = " ".join(str(key).split()).lower()
    if word == "change language":
        languages = below((key,), text_list, setting, "language names", non_empty=True)
        return InteractionStyle(name="change language", languages=[language.strip() for language in languages])
    if word == "random":
        if in_random:
            fail("random cannot be nested inside random", at=(key,), at_key=True)
        if not isinstance(setting, list):
            fail(f"expected a list of interaction styles, got {describe(setting)}", at=(key,), at_key=setting is None)
        if not setting:
            fail("must not be empty", at=(key,), at_key=True)
        problems = Problems()
        choices = [problems.check(_read_style, item, in_random=True, at=(key, j)) for j, item in enumerate(setting)]
        problems.raise_if_any()
        return RandomStyles(choices=choices)
    word = _STYLE_ALIASES.get(word, word)
    if word in STYLE_NAMES:
        fail(f"'{word}' takes no settings, got {describe(setting)}", at=(key,), at_key=True)
    fail(f"unknown interaction style '{key}'{did_you_mean(word, known) or known_hint}", at=(key,), at_key=True)


class ConversationSection(YamlRecord):
    """The `conversation:` block."""

    yaml_sensei = True

    number: ConversationNumber = ConversationNumber(kind="count", count=1)
    goal_style: GoalStyle = GoalStyle(kind="default")
    interaction_style: Annotated[list[InteractionStyle | RandomStyles], yaml_only(_read_styles)] = Field(
        default_factory=lambda: [_DEFAULT_STYLE]
    )

    @classmethod
    def read_yaml(cls, data: Any, handler: Any, reading: Reading) -> Any:
        if isinstance(data, list):
            fail(
                "expected a mapping, got a list: write number, goal_style and interaction_style as keys of one "
                "mapping, not as list items (Sensei's older layout; its current code rejects the list too)",
                at_key=True,
            )
        return read_mapping(cls, data, handler, reading)


def _number_alone(written: Any, reading: Reading) -> ConversationNumber | None:
    """The number of a section that is wrong elsewhere (its own problems are reported there)."""
    try:
        return ConversationNumber.model_validate(written, context=reading)
    except ValueError:
        return None


# -- world (parley) ----------------------------------------------------------------------------------------------

WORLD_KEYS = ("name", "path", "customer_id", "today", "rows")
"""The keys of `world:` itself; any other key names a table of the world (`orders: [...]` is
`rows: {orders: [...]}`)."""


class WorldSpec(YamlRecord):
    """parley's `world:` key: which world (`name:` as the registry knows it, or `path:` to a Python
    file defining one; the default world when neither), who the customer is (the world's default
    customer when not given), the pinned date, and per-table `rows:` overrides merged onto the
    world's data by key (also written as `TABLE: [rows]` directly under `world:`).

    `today` None means "the world's own date, else the runner's pinned default date". Read from a
    file, everything is checked against the world it names (parley.core.specs loads it): a table,
    column or customer it does not hold, a value a column does not take, a date it cannot hold, each
    at its place with did-you-mean.
    """

    yaml_keeps_null = frozenset({"customer_id"})

    name: Annotated[str | None, as_text("a world's name", strip=True, optional=True)] = None
    path: Annotated[str | None, as_text("a world file's path", strip=True, optional=True)] = None
    customer_id: Annotated[str | None, as_text("a customer id", strip=True, optional=True)] = None
    today: Annotated[datetime.date | None, date(optional=True)] = None
    rows: dict[str, list[dict[str, Any]]] = Field(default_factory=dict)
    """Table -> partial rows (each with the table's key), merged onto the world's data."""

    @property
    def names_world(self) -> bool:
        """True when the file names a world (else the default one)."""
        return bool(self.name or self.path)

    @classmethod
    def read_yaml(cls, data: Any, handler: Any, reading: Reading) -> Any:
        mapping = expect_mapping(data, cls.yaml_what)
        facts, found = reading.read_world(mapping)
        problems = Problems()
        for at, why in found:
            problems.add(why, at=at, at_key=len(at) == 1 and at[0] not in mapping or (len(at) == 1 and at[0] in WORLD_KEYS[:2]))
        rows: dict[str, list[dict[str, Any]]] = {}
        for key, value in mapping.items():
            if key in WORLD_KEYS:
                continue
            if isinstance(key, str) and isinstance(value, list):
                rows[key] = [plain_value(row) for row in value if isinstance(row, dict)]
        written_rows = mapping.get("rows")
        if isinstance(written_rows, dict):
            for table, value in written_rows.items():
                if isinstance(table, str) and isinstance(value, list):
                    rows.setdefault(table, []).extend(plain_value(row) for row in value if isinstance(row, dict))
        elif written_rows is not None:
            problems.add(f"expected a mapping of table names to lists of rows, got {describe(written_rows)}", at=("rows",))
        problems.raise_if_any()
        fields = {key: mapping[key] for key in ("name", "path", "customer_id", "today") if mapping.get(key) is not None}
        fields["rows"] = rows
        if fields.get("customer_id") is None and facts.default_customer is not None:
            fields["customer_id"] = facts.default_customer
        return handler(fields)


# -- expect (parley) ----------------------------------------------------------------------------------------------


def _tools(value: Any, reading: Reading) -> list[str]:
    names = text_list(value, "tool names", non_empty=False)
    tools = reading.world_facts().tools
    problems = Problems()
    found = [problems.check(known_tool, written, tools, at=(i,)) for i, written in enumerate(names)]
    problems.raise_if_any()
    return list(dict.fromkeys(found))


def _records(value: Any, reading: Reading) -> dict[str, dict[str, Any]]:
    """`records: {TABLE/KEY: {field: value}}`: each record's fields at the end, checked against the
    world's tables, columns and the values a column takes."""
    if not isinstance(value, dict):
        fail(f"expected a mapping of records (TABLE/KEY) to their fields, e.g. {{orders/KEY: {{status: VALUE}}}}, got {describe(value)}")
    facts = reading.world_facts()
    problems = Problems()
    records: dict[str, dict[str, Any]] = {}
    for ref, fields in value.items():
        table_name, sep, key = str(ref).partition("/")
        table = facts.table(table_name)
        if not sep or not key.strip():
            problems.add(f"expected a record as TABLE/KEY, got {describe(ref)}", at=(ref,), at_key=True)
            continue
        if table is None:
            problems.add(
                f"no table '{table_name}' in world {facts.name}{did_you_mean(table_name, facts.tables)} (its tables: {', '.join(facts.tables)})",
                at=(ref,),
                at_key=True,
            )
            continue
        if not isinstance(fields, dict) or not fields:
            problems.add(
                f"expected the record's fields and their values, e.g. {{{table.state_field or 'field'}: VALUE}}, got {describe(fields)}",
                at=(ref,),
            )
            continue
        if table.fixed_keys and table.keys and key.strip() not in table.keys:
            problems.add(_unknown_record(table, key.strip(), facts.name), at=(ref,), at_key=True)
            continue
        checked_fields: dict[str, Any] = {}
        for name, wanted in fields.items():
            if table.columns and name not in table.columns:
                problems.add(f"no column '{name}' in table {table.name}{did_you_mean(name, table.columns)}", at=(ref, name), at_key=True)
                continue
            if name in table.choices and wanted not in table.choices[name]:
                word = problems.check(
                    read_choice,
                    wanted,
                    table.choices[name],
                    what=f"{_article(table.singular)} {table.singular} {name}",
                    noun=f"{table.singular} {name}",
                    at=(ref, name),
                )
                if word is None:
                    continue
                wanted = word
            checked_fields[str(name)] = plain_value(wanted)
        records[f"{table.name}/{key.strip()}"] = checked_fields
    problems.raise_if_any()
    return records


def _unknown_record(table: TableFacts, key: str, world: str) -> str:
    hint = did_you_mean(key, table.keys) or f"; its {table.name} are {', '.join(table.keys)}"
    return f"{table.singular} '{key}' is not in world {world}, so its expected {table.state_field or 'fields'} can never hold{hint}"


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def _state_shorthand(table_name: str, value: Any, reading: Reading, problems: Problems) -> dict[str, dict[str, Any]]:
    """`TABLE: {KEY: VALUE}` (the order world's `orders: {ID: cancelled}`): each record's state
    field at the end, as `records:` would say it."""
    facts = reading.world_facts()
    table = facts.table(table_name)
    if table is None or not table.state_field:
        stateful = list(facts.state_tables())
        hint = did_you_mean(table_name, [*EXPECT_KEYS, *stateful]) or f"; known keys: {', '.join([*EXPECT_KEYS, *stateful])}"
        problems.add(f"unknown key '{table_name}'{hint}", at=(table_name,), at_key=True)
        return {}
    field = table.state_field
    if not isinstance(value, dict):
        problems.add(
            f"expected a mapping of {table.singular} ids to {field}es, e.g. {{KEY: VALUE}}, got {describe(value)}", at=(table_name,)
        )
        return {}
    found: dict[str, dict[str, Any]] = {}
    for key, wanted in value.items():
        if not isinstance(key, str) or (table.id_pattern and not re.fullmatch(table.id_pattern, key.strip())):
            example = f" like {table.keys[0]}" if table.keys else ""
            problems.add(
                f"expected {_article(table.singular)} {table.singular} id{example}, got {describe(key)}", at=(table_name, key), at_key=True
            )
            continue
        if table.fixed_keys and table.keys and key.strip() not in table.keys:
            problems.add(_unknown_record(table, key.strip(), facts.name), at=(table_name, key), at_key=True)
            continue
        if field in table.choices:
            word = problems.check(
                read_choice,
                wanted,
                table.choices[field],
                what=f"{_article(table.singular)} {table.singular} {field}",
                noun=f"{table.singular} {field}",
                at=(table_name, key),
            )
            if word is None:
                continue
            wanted = word
        found[f"{table.name}/{key.strip()}"] = {field: plain_value(wanted)}
    return found


def _regexes(value: Any, reading: Reading) -> list[str]:
    """Regular expressions that compile. Only a file's are refused: a spec built another way
    keeps a bad one, and evaluating it makes that check an evaluation error, not a crash."""
    patterns = text_list(value, "regular expressions", non_empty=False)
    problems = Problems()
    for i, pattern in enumerate(patterns):
        try:
            re.compile(pattern)
        except re.error as exc:
            problems.add(f"invalid regular expression {pattern!r}: {exc}", at=(i,))
    problems.raise_if_any()
    return patterns


MAX_CRITERION_CHARS = 500


ITEM_ID_RE = r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$"
"""A criterion's or rubric's `id:`: letters, digits and `_ . : -`, up to 64 characters."""
_ITEM_ID = re.compile(ITEM_ID_RE)


def _criterion_entry(item: Any) -> Any:
    """A criterion written `{id: ID, text: TEXT}`: its text, once its keys and id are checked."""
    problems = Problems()
    for key in item:
        if key not in ("id", "text"):
            problems.add(f"unknown key '{key}'; a criterion with an id is written {{id: ID, text: TEXT}}", at=(key,), at_key=True)
    for key in ("id", "text"):
        if key not in item:
            problems.add(f"missing required key '{key}'", at_key=True)
    ident = item.get("id")
    if "id" in item and not (isinstance(ident, str) and _ITEM_ID.match(ident.strip())):
        problems.add(f"expected an id (letters, digits and _ . : -, at most 64 characters), got {describe(ident)}", at=("id",))
    problems.raise_if_any()
    return below(("text",), read_text, item["text"], "a criterion in words (one sentence)")


def criterion_ids(value: Any) -> dict[str, str]:
    """The ids given to criteria written `{id: ID, text: TEXT}` in a `criteria:` list: text (as
    `read_criteria` keeps it) -> id. An id keeps a criterion's labels and calibrations when its
    words are edited; without one, a criterion is known by its text."""
    ids: dict[str, str] = {}
    for item in value if isinstance(value, list) else []:
        if isinstance(item, dict) and isinstance(item.get("id"), str) and isinstance(item.get("text"), str):
            ids[" ".join(item["text"].split())] = item["id"].strip()
    return ids


def read_criteria(value: Any, *, with_ids: bool = False) -> list[str]:
    """`criteria:` (in `expect:`, or a scenario file's entry): sentences, each its own check
    named by its text, so each is written once; a criterion is a sentence or two, not a rubric.
    Every item is checked, whatever is wrong with the others; spaces are collapsed. `with_ids`
    (a profile's `expect.criteria`): an item may be `{id: ID, text: TEXT}` (see `criterion_ids`)."""
    if not isinstance(value, list):
        fail(f"expected a list of criteria in words (one sentence each), got {describe(value)}", at_key=value is None)
    problems = Problems()
    seen: dict[str, int] = {}
    sentences: list[str] = []
    for i, item in enumerate(value):
        if with_ids and isinstance(item, dict):
            text = problems.check(_criterion_entry, item, at=(i,))
        else:
            text = problems.check(read_text, item, "a criterion in words (one sentence)", at=(i,))
        if text is None:
            continue
        sentence = " ".join(text.split())
        if len(sentence) > MAX_CRITERION_CHARS:
            problems.add(
                f"a criterion is a sentence or two, at most {MAX_CRITERION_CHARS} characters; this one has {len(sentence)}", at=(i,)
            )
        elif sentence.casefold() in seen:
            problems.add(
                f"criterion {i + 1} repeats criterion {seen[sentence.casefold()]}: each is its own check, named by its text", at=(i,)
            )
        else:
            seen[sentence.casefold()] = i + 1
            sentences.append(sentence)
    problems.raise_if_any()
    return sentences


class JudgeSpec(YamlRecord):
    """A rubric for the judge and the lowest score (1..3) that passes."""

    yaml_entry = True

    rubric: Annotated[str, as_text("a rubric for the judge")]
    min_score: Annotated[Literal[1, 2, 3], integer(1, 3)] = 2
    id: Annotated[str | None, matching(ITEM_ID_RE, "an id (letters, digits and _ . : -, at most 64 characters)", optional=True)] = None
    """The rubric's stable id, for labels and calibrations (`parley judge calibrate`): kept when
    its words are edited. None: the rubric is known by its text."""


EXPECT_KEYS = (
    "records",
    "unchanged_others",
    "tools_called",
    "tools_attempted",
    "tools_not_called",
    "bot_says",
    "bot_never_says",
    "judge",
    "criteria",
    "python",
    "limits",
)
"""The keys of `expect:` itself; any other key is a table of the world with a state field
(`orders: {ID: cancelled}` in the order world)."""


class Expectations(YamlRecord):
    """parley's `expect:` key: what must be true when the conversation ends.

    `records` is each named record's fields at the end (`records: {TABLE/KEY: {field: value}}`, or
    for a table with a state field `TABLE: {KEY: VALUE}`: the order world's
    `orders: {ORD-1004: cancelled}`); read from a file, tables, columns, values and tools are checked
    against the file's world."""

    records: Annotated[dict[str, dict[str, Any]], yaml_only(_records)] = Field(default_factory=dict)
    unchanged_others: Annotated[bool | None, boolean(optional=True)] = None
    """True: the author asks that no other record change; False: other records may change; None
    (not written): parley checks it by default, a check that may fail a conversation but never
    makes one pass."""
    tools_called: Annotated[list[str], yaml_only(_tools)] = Field(default_factory=list)
    """Tools the bot must have called with success: a call the world refused or failed (a garbage
    id, a forbidden record) does not count."""
    tools_attempted: Annotated[list[str], yaml_only(_tools)] = Field(default_factory=list)
    """Tools the bot must have tried to call, however the world answered (a refused call counts)."""
    tools_not_called: Annotated[list[str], yaml_only(_tools)] = Field(default_factory=list)
    """Tools the bot must not have called: every attempt counts, refused or not."""
    bot_says: Annotated[list[str], yaml_only(_regexes)] = Field(default_factory=list)
    bot_never_says: Annotated[list[str], yaml_only(_regexes)] = Field(default_factory=list)
    judge: JudgeSpec | None = None
    criteria: Annotated[list[str], checked(lambda value: read_criteria(value, with_ids=True))] = Field(default_factory=list)
    """Checks written in words ("the bot apologises for the delay"), each its own check named by
    its text, decided by an LLM judge with evidence (parley.core.evaluation.criteria); under the
    offline judge they are not run. An item may be `{id: ID, text: TEXT}`: see `criterion_ids`."""
    python: PythonChecks = Field(default_factory=list)
    limits: CheckLimits | None = None
    """Checks written in Python, and limits on what the conversation cost (parley.core.records.expect_extras)."""
    criterion_ids: dict[str, str] = derived(default_factory=dict)
    """Criterion text -> the `id:` its author gave it (labels and calibrations follow the id when
    the text is edited); a criterion without one is known by its text."""

    @classmethod
    def read_yaml(cls, data: Any, handler: Any, reading: Reading) -> Any:
        mapping = expect_mapping(data, cls.yaml_what)
        problems = Problems()
        shorthand: dict[str, dict[str, Any]] = {}
        for key, value in mapping.items():
            if key not in EXPECT_KEYS:
                shorthand.update(_state_shorthand(str(key), value, reading, problems))
        fields: dict[str, Any] = {}
        for key in EXPECT_KEYS:
            if key in mapping and (mapping[key] is not None or key in cls.yaml_keeps_null):
                fields[key] = mapping[key]
        fields["criterion_ids"] = criterion_ids(mapping.get("criteria"))  # labels and calibrations follow a criterion's id
        made = problems.then(handler, fields)
        if shorthand:
            records = {**made.records}
            for ref, wanted in shorthand.items():
                records[ref] = {**records.get(ref, {}), **wanted}
            made = made.model_copy(update={"records": records})
        return made

    @property
    def watched(self) -> list[str]:
        """The records the checks name (`TABLE/KEY`), whose final rows a conversation keeps."""
        return list(self.records)

    @field_validator("tools_called", "tools_attempted", "tools_not_called", mode="after")
    @classmethod
    def _each_once(cls, names: list[str]) -> list[str]:
        """Each tool named once, in code as in a file."""
        return list(dict.fromkeys(names))

    @model_validator(mode="after")
    def _tools_apart(self) -> "Expectations":
        problems = Problems()
        for wanted in ("tools_called", "tools_attempted"):
            for tool in sorted(set(getattr(self, wanted)) & set(self.tools_not_called)):
                problems.add(f"{tool} is in both {wanted} and tools_not_called", at=("tools_not_called",), at_key=True)
        problems.raise_if_any()
        return self


ExpectBlock = Annotated[Expectations | None, yaml_only(lambda value, reading: {} if value is None else value)]
"""An `expect:` block; written with nothing after it, the defaults."""


# -- the profile ----------------------------------------------------------------------------------------------------


class Profile(YamlRecord):
    """A loaded, valid profile. `source` is the file path as it was given to the loader.

    Its sections are read in this order: `world` before `user`, whose date generators count
    from the world's `today`."""

    yaml_what = "a mapping of sections"
    yaml_sensei = True
    yaml_keeps_null = frozenset({"expect"})

    source: str = derived()
    test_name: Annotated[str, as_text()]
    llm: LlmSettings = LlmSettings()
    world: WorldSpec = WorldSpec()
    user: UserSection
    chatbot: ChatbotSection = ChatbotSection()
    conversation: ConversationSection = ConversationSection()
    expect: ExpectBlock = None
    attack: AttackSpec | None = None
    """An attack against the bot (parley.core.records.attack): the customer is an attacker."""
    warnings: list[str] = derived(default_factory=list)
    """Located warnings (`file:line:col: field: reason`): what was accepted but deserves a look."""
    notes: list[str] = derived(default_factory=list)
    """Located notes: where a personality or list-function file was found."""

    @classmethod
    def read_yaml(cls, data: Any, handler: Any, reading: Reading) -> Any:
        return read_mapping(cls, data, handler, reading, extra={"source": reading.file})

    @field_validator("user", mode="before")
    @classmethod
    def _today_from_world(cls, value: Any, info: ValidationInfo) -> Any:
        reading = reading_of(info)
        world = info.data.get("world")
        if isinstance(reading, ProfileReading) and isinstance(world, WorldSpec) and world.today is not None:
            reading.today = world.today
        return value

    @field_validator("conversation", mode="wrap")
    @classmethod
    def _counted(cls, value: Any, handler: Any, info: ValidationInfo) -> Any:
        """`number` counted against the user's variables (checked even when the rest of the
        section is wrong)."""
        reading = reading_of(info)
        if not isinstance(reading, ProfileReading) or not isinstance(value, dict) or value.get("number") is None:
            return handler(value)
        problems = Problems()
        section = problems.check(handler, value)
        number = section.number if section is not None else _number_alone(value["number"], reading)
        user = info.data.get("user")
        if isinstance(user, UserSection) and number is not None and number.kind != "count":
            problems.check(reading.count, value, number, user.variables)
        problems.raise_if_any()
        return section

    def variable(self, name: str) -> Variable | None:
        """The goal variable called `name`, if there is one."""
        return next((v for v in self.user.variables if v.name == name), None)
