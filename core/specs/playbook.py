"""Playbooks: scripted conversations with assertions (the experiments of CustomerBotBlitz).

A playbook is a YAML file:

    name: cancel_recent_order          # required; the spec id is `<name>#0`
    description: free text             # optional
    world: {name: returns}             # optional, the world it runs on (default: the order world),
                                       #   as a profile's `world:` (name or path, rows, customer_id, today)
    customer_id: C-100                 # optional, the signed-in customer (default: the world's)
    today: 2026-11-21                  # optional, the world's date (ages count from it)
    steps:                             # required, run in order
      - user: "Please cancel ORD-1002"             # the customer says this; the bot answers it
      - simulate: 3                                # the simulated customer goes on for up to 3
                                                   #   turns (it may stop sooner), pursuing the
                                                   #   playbook's `user` lines as its goals
      - inject_bot_response: "text"                # an assistant message put in the transcript
                                                   #   as context; no model is called
      - inject_tool:                               # a tool call and its result, as if the bot
          name: check_cancellation                 #   had made it (the tools are not run)
          arguments: {order_id: ORD-1002}          #   optional, default {}
          result: {eligible: true}                 #   text, or a mapping/list sent as JSON
      - expect_tool: check_cancellation            # the bot called this tool in its last answer
      - expect_tool:                               #   (to a `user` step or a simulated turn); the long
          name: cancel_order                       #   form also checks arguments (those
          arguments: {order_id: ORD-1002}          #   given must match, case-insensitively)
      - expect_bot_regex: "(?i)cancell?ed"         # the bot's last answer matches (re.search,
                                                   #   case-insensitive)
      - judge:                                     # a checkpoint: an LLM judge decides these
          criteria:                                #   criteria on the conversation as it stands
            - The bot asked which order it is      #   here (what comes later is not shown); each
                                                   #   is a check named "at step N: CRITERION"
    expect:                            # optional: parley's `expect:` block, as in profiles
      orders: {ORD-1002: cancelled}    #   (final order statuses, tools, bot_says, ...)

Assertions never stop a playbook: each is recorded in `conversation.metadata["assertions"]` as
`{"step": n, "kind", "expected", "passed", "reason", "ran"}` (n counts steps from 1) and the run
goes on. An injected tool call is not one the bot made: it is in the transcript but not in
`conversation.tool_calls`, and expect_tool does not see it. A `judge` step reached is recorded
in `conversation.metadata["checkpoints"]` as `{"step": n, "messages": m}` (the transcript had m
messages then); its criteria are decided after the conversation, on those first m messages
(parley.core.evaluation.checkpoints). A playbook runs on the conversation harness:
parley.core.engine.playbook_run.
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, Field, TypeAdapter, field_validator

from parley.core.errors import ProfileError
from parley.core.records import (
    ConversationSpec,
    ExpectBlock,
    Keyed,
    Problems,
    Reading,
    WorldSpec,
    YamlRecord,
    as_text,
    below,
    checked,
    date,
    derive_seed,
    derived,
    describe,
    did_you_mean,
    expect_mapping,
    fail,
    known_tool,
    make_spec_id,
    plain_value,
    read_criteria,
    read_mapping,
    read_text,
    yaml_only,
)
from parley.core.specs.profile_loader import InvalidProfile
from parley.core.specs.yaml_reading import read_yaml
from parley.core.specs.yaml_validation import YamlReading

MAX_SIMULATED_TURNS = 100
"""The most turns one `simulate` step may ask for (a conversation's own --max-turns still applies)."""
PLAYBOOK_USER = "playbook"

AssertionKind = Literal["expect_tool", "expect_bot_regex"]
ToolCalled = Annotated[str, yaml_only(lambda value, reading: known_tool(read_text(value, "a tool name"), reading.world_facts().tools))]


# -- the model ----------------------------------------------------------------------------------
#
# Each step is written `- kind: what follows` (see the module doc). A step record reads what
# follows its kind (a `Keyed`: the kind and its body); `line` is filled in by the playbook.


class _Step(YamlRecord):
    line: int | None = derived(None)
    """Where the step was written, for messages that point back at the playbook."""

    yaml_body_field: ClassVar[str | None] = None
    """The field a step written with a value alone (`user: hi`) fills; None for a step written
    as a mapping of its keys."""

    @classmethod
    def read_yaml(cls, data: Any, handler: Any, reading: Reading) -> Any:
        assert isinstance(data, Keyed)  # read from the steps list (see Playbook)
        if cls.yaml_body_field is None:
            return read_mapping(cls, data.body, handler, reading)
        return Problems().then(handler, {cls.yaml_body_field: data.body}, rename={cls.yaml_body_field: ()})


class UserStep(_Step):
    yaml_body_field = "text"
    kind: Literal["user"] = derived("user")
    text: Annotated[str, as_text("what the customer says")]


class SimulateStep(_Step):
    """The simulated customer goes on for up to `turns` turns (the spec's goals and personality,
    the batch's --user model); it may stop sooner, and the playbook then goes on."""

    yaml_body_field = "turns"
    kind: Literal["simulate"] = derived("simulate")
    turns: int

    @field_validator("turns", mode="before")
    @classmethod
    def _a_number_of_turns(cls, value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_SIMULATED_TURNS:
            fail(f"expected how many turns the simulated customer goes on for, 1 to {MAX_SIMULATED_TURNS}, got {describe(value)}")
        return value


class InjectBotResponseStep(_Step):
    yaml_body_field = "text"
    kind: Literal["inject_bot_response"] = derived("inject_bot_response")
    text: Annotated[str, as_text("the assistant message to inject")]


def _arguments(value: Any, reading: Reading) -> dict[str, Any] | None:
    """Tool arguments: a mapping (nothing after `arguments:` is none)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        fail(f"expected a mapping of arguments such as {{name: value}}, got {describe(value)}")
    return {str(k): v for k, v in plain_value(value).items()}


def _result(value: Any, reading: Reading) -> str:
    """A tool's result as text; a mapping or list is written as JSON."""
    if isinstance(value, str):
        return str(value)
    if isinstance(value, (dict, list)):
        return json.dumps(plain_value(value), separators=(",", ":"), ensure_ascii=False)
    fail(f"expected the tool's result as text or a mapping, got {describe(value)}", at_key=value is None)


class InjectToolStep(_Step):
    yaml_what = "a tool call to inject: {name, arguments, result}"
    yaml_entry = True

    kind: Literal["inject_tool"] = derived("inject_tool")
    name: ToolCalled
    arguments: Annotated[dict[str, Any], yaml_only(_arguments)] = Field(default_factory=dict)
    result: Annotated[str, yaml_only(_result)]
    """The text the bot sees as the tool's result (a mapping or list is written as JSON)."""


class ExpectToolStep(_Step):
    yaml_what = "a tool name or {name, arguments}"
    yaml_entry = True
    yaml_body_field = "name"

    kind: Literal["expect_tool"] = derived("expect_tool")
    name: ToolCalled
    arguments: Annotated[dict[str, Any] | None, yaml_only(lambda v, r: _arguments(v, r) or None)] = None
    """When given, the call must also carry these arguments (others may be there too)."""

    @classmethod
    def read_yaml(cls, data: Any, handler: Any, reading: Reading) -> Any:
        if isinstance(data.body, dict):  # {name, arguments}
            return read_mapping(cls, data.body, handler, reading)
        return super().read_yaml(data, handler, reading)

    @property
    def expected(self) -> str:
        if not self.arguments:
            return self.name
        args = ", ".join(f"{k}={v}" for k, v in self.arguments.items())
        return f"{self.name}({args})"


class ExpectBotRegexStep(_Step):
    yaml_body_field = "pattern"
    kind: Literal["expect_bot_regex"] = derived("expect_bot_regex")
    pattern: Annotated[str, as_text("a regular expression")]

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value, re.IGNORECASE)  # matched case-insensitively
        except re.error as exc:
            fail(f"invalid regular expression {value!r}: {exc}")
        return value


def _checkpoint_criteria(value: Any) -> list[str]:
    """A checkpoint's criteria: as `expect.criteria` reads them, and at least one."""
    criteria = read_criteria(value)
    if not criteria:
        fail("a judge checkpoint needs at least one criterion, such as 'The bot asked which order it is'", at_key=True)
    return criteria


class JudgeStep(_Step):
    """A checkpoint in the middle of a conversation: criteria in words, decided by an LLM judge on
    the conversation as it stands at this step (see parley.core.evaluation.checkpoints)."""

    yaml_what = "a judge checkpoint: {criteria: [sentences]}"
    yaml_entry = True

    kind: Literal["judge"] = derived("judge")
    criteria: Annotated[list[str], checked(_checkpoint_criteria)]


PlaybookStep = Annotated[
    UserStep | SimulateStep | InjectBotResponseStep | InjectToolStep | ExpectToolStep | ExpectBotRegexStep | JudgeStep,
    Field(discriminator="kind"),
]
_STEPS = TypeAdapter(list[PlaybookStep])
_STEP_RECORDS: dict[str, type[_Step]] = {
    "user": UserStep,
    "simulate": SimulateStep,
    "inject_bot_response": InjectBotResponseStep,
    "inject_tool": InjectToolStep,
    "expect_tool": ExpectToolStep,
    "expect_bot_regex": ExpectBotRegexStep,
    "judge": JudgeStep,
}
STEP_KINDS = tuple(_STEP_RECORDS)
_AFTER_AN_ANSWER = ("expect_tool", "expect_bot_regex", "judge")
"""Steps about what the bot said: they come after a `user` or `simulate` step."""


def _read_steps(value: Any, reading: Reading) -> list[Any]:
    if not isinstance(value, list):
        fail(f"expected a list of steps such as {{user: ...}}, got {describe(value)}", at_key=value is None)
    if not value:
        fail("must not be empty", at_key=True)
    problems = Problems()
    steps: list[Any] = []
    seen_user = False
    for i, item in enumerate(value):
        step = problems.check(_read_step, item, seen_user, reading, at=(i,))
        if step is not None:
            seen_user |= isinstance(step, (UserStep, SimulateStep))
            steps.append(step.model_copy(update={"line": reading.location(value, (i,)).line}))
    if not problems and not seen_user:
        problems.add("a playbook needs at least one `user` or `simulate` step (nothing would reach the bot)", at_key=True)
    problems.raise_if_any()
    return steps


def _read_step(item: Any, seen_user: bool, reading: Reading) -> _Step:
    if not isinstance(item, dict) or not item:
        fail(f"expected a step such as {{user: 'Where is my order?'}} or {{expect_tool: TOOL}}, got {describe(item)}")
    if len(item) > 1:
        keys = ", ".join(str(k) for k in item)
        fail(f"one step per list item, got {len(item)} keys ({keys}); start each step with '- '")
    ((kind, body),) = item.items()
    if kind not in STEP_KINDS:
        fail(
            f"unknown step kind '{kind}'{did_you_mean(str(kind), STEP_KINDS) or '; steps are ' + ', '.join(STEP_KINDS)}",
            at=(kind,),
            at_key=True,
        )
    if kind in _AFTER_AN_ANSWER and not seen_user:
        fail(f"{kind} comes before any `user` or `simulate` step: the bot has not answered anything yet", at=(kind,), at_key=True)
    step: _Step = below((kind,), _STEP_RECORDS[kind].model_validate, Keyed(kind, body), context=reading)
    return step


class Playbook(YamlRecord):
    """A loaded, valid playbook."""

    yaml_what = "a playbook (name, steps, ...)"

    source: str = derived()
    name: Annotated[str, as_text("the playbook's name", strip=True)]
    description: Annotated[str | None, as_text("a description", allow_empty=True, optional=True)] = None
    world: WorldSpec = WorldSpec()
    """The world it runs on, as a profile's `world:`; the playbook's own `customer_id` and `today`
    are the world's (written beside it, as playbooks always have)."""
    customer_id: Annotated[str | None, as_text("a customer id", strip=True, optional=True)] = None
    today: Annotated[datetime.date | None, date(optional=True)] = None
    steps: Annotated[list[PlaybookStep], yaml_only(_read_steps)]
    expect: ExpectBlock = None

    @classmethod
    def read_yaml(cls, data: Any, handler: Any, reading: Reading) -> Any:
        mapping = expect_mapping(data, cls.yaml_what)
        if "world" not in mapping and any(key in mapping for key in ("customer_id", "today")):
            # the top-level customer and date are the world's: checked against it where they are written
            _, problems = reading.read_world({key: mapping[key] for key in ("customer_id", "today") if key in mapping})
            found = Problems()
            for at, why in problems:
                found.add(why, at=at)
            if found:  # said together with every other problem of the playbook
                found.check(read_mapping, cls, data, handler, reading, extra={"source": reading.file})
                found.raise_if_any()
        elif "world" not in mapping:
            reading.read_world({})
        return read_mapping(cls, data, handler, reading, extra={"source": reading.file})

    @property
    def world_spec(self) -> WorldSpec:
        """The world it runs on, with the top-level customer and date given beside `world:`."""
        return self.world.model_copy(
            update={
                "customer_id": self.customer_id or self.world.customer_id,
                "today": self.today or self.world.today,
            }
        )


PLAYBOOK_KEYS = Playbook.yaml_keys()
INJECT_TOOL_KEYS = InjectToolStep.yaml_keys()
EXPECT_TOOL_KEYS = ExpectToolStep.yaml_keys()


class PlaybookAssertion(BaseModel):
    """One expect_* step's outcome, as stored in `conversation.metadata["assertions"]`."""

    step: int  # 1-based position in `steps`
    kind: AssertionKind
    expected: str
    passed: bool
    reason: str
    ran: bool = True
    """False for a step the conversation never reached (recorded as not checked)."""


class PlaybookCheckpoint(BaseModel):
    """A `judge` step the conversation reached, as stored in `conversation.metadata["checkpoints"]`
    (and, for the judge, in the conversation cut there: `metadata["checkpoint"]`)."""

    step: int  # 1-based position in `steps`
    messages: int = Field(ge=0)
    """How many messages the transcript had when the conversation reached the step: the
    checkpoint's criteria are decided on `conversation.messages[:messages]`."""


# -- loading -------------------------------------------------------------------------------------


def looks_like_playbook(data: Any) -> bool:
    """True for parsed YAML that is a playbook rather than a Sensei profile: it has `steps:` or
    `name:` (so a misspelt `steps` is still reported as a playbook's) and none of a profile's
    `user:`/`test_name:`."""
    if not isinstance(data, dict) or "user" in data or "test_name" in data:
        return False
    return "steps" in data or "name" in data


def check_playbook_text(text: str, *, source: str = "<playbook>") -> tuple[Playbook | None, list[ProfileError]]:
    """(playbook or None, every error in file order) for YAML text."""
    try:
        data = read_yaml(text, source)
    except ProfileError as exc:
        return None, [exc]
    return check_playbook_data(data, source=source)


def check_playbook_data(data: Any, *, source: str) -> tuple[Playbook | None, list[ProfileError]]:
    """As check_playbook_text, from YAML already parsed (round-trip, with positions)."""
    if data is None:
        return None, [ProfileError("the playbook is empty; expected a mapping with name and steps", file=source, line=1, column=1)]
    playbook, errors = YamlReading(source, data).validate(Playbook)
    return playbook, sorted(errors, key=lambda e: (e.line or 0, e.column or 0))


def validate_playbook(path: str | Path) -> list[ProfileError]:
    """Every problem of the playbook at `path`, in file order; empty if it is valid."""
    return _check_file(path)[1]


def load_playbook(path: str | Path) -> Playbook:
    """The validated playbook at `path`; raises InvalidProfile (a ProfileError) listing every problem."""
    playbook, errors = _check_file(path)
    if errors or playbook is None:
        raise InvalidProfile(errors)
    return playbook


def _check_file(path: str | Path) -> tuple[Playbook | None, list[ProfileError]]:
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return None, [ProfileError(f"cannot read playbook: {reason}", file=source)]
    return check_playbook_text(text, source=source)


def steps_problem(steps: Sequence[PlaybookStep]) -> str | None:
    """What is wrong with steps written in code (parley's Python API), as the YAML checker says
    it of a file's; None when they can run."""
    seen_user = False
    for number, step in enumerate(steps, start=1):
        if step.kind in _AFTER_AN_ANSWER and not seen_user:
            return f"step {number}: {step.kind} comes before any `user` or `simulate` step: the bot has not answered anything yet"
        seen_user |= isinstance(step, (UserStep, SimulateStep))
    if not seen_user:
        return "a playbook needs at least one `user` or `simulate` step (nothing would reach the bot)"
    return None


def judge_steps(spec: ConversationSpec) -> list[tuple[int, JudgeStep]]:
    """A spec's `judge` checkpoints with their step numbers (from 1); none for a spec that is not a playbook."""
    if spec.kind != "playbook":
        return []
    return [(number, step) for number, step in enumerate(spec_steps(spec), start=1) if isinstance(step, JudgeStep)]


def simulates(steps: Sequence[PlaybookStep]) -> bool:
    """Whether a playbook's steps hand the conversation to the simulated customer at some point."""
    return any(isinstance(step, SimulateStep) for step in steps)


def playbook_spec(playbook: Playbook, seed: int = 0) -> ConversationSpec:
    """The one conversation a playbook makes. Its steps travel in `extra["steps"]`; its `user`
    lines are the goals a `simulate` step's customer pursues."""
    user_lines = [s.text for s in playbook.steps if isinstance(s, UserStep)]
    return ConversationSpec(
        spec_id=make_spec_id(playbook.name, 0),
        kind="playbook",
        source=playbook.source,
        name=playbook.name,
        index=0,
        seed=derive_seed(seed, playbook.name, 0),
        goals=user_lines,
        role="a scripted customer (playbook)",
        world=playbook.world_spec,
        expect=playbook.expect,
        extra={
            "steps": [step.model_dump() for step in playbook.steps],
            "description": playbook.description,
        },
    )


def spec_steps(spec: ConversationSpec) -> list[PlaybookStep]:
    """The typed steps of a playbook spec."""
    if spec.kind != "playbook":
        raise ValueError(f"{spec.spec_id} is a {spec.kind}, not a playbook")
    return _STEPS.validate_python(spec.extra.get("steps", []))
