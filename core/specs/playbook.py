"""Playbooks: scripted conversations with assertions (the experiments of CustomerBotBlitz).

A playbook is a YAML file:

    name: cancel_recent_order          # required; the spec id is `<name>#0`
    description: free text             # optional
    customer_id: C-100                 # optional, the signed-in customer (default C-100)
    today: 2026-11-21                  # optional, the date order ages count from
    steps:                             # required, run in order
      - user: "Please cancel ORD-1002"             # the customer says this; the bot answers it
      - inject_bot_response: "text"                # an assistant message put in the transcript
                                                   #   as context; no model is called
      - inject_tool:                               # a tool call and its result, as if the bot
          name: check_cancellation                 #   had made it (the tools are not run)
          arguments: {order_id: ORD-1002}          #   optional, default {}
          result: {eligible: true}                 #   text, or a mapping/list sent as JSON
      - expect_tool: check_cancellation            # the bot called this tool while answering
      - expect_tool:                               #   the most recent `user` step; the long
          name: cancel_order                       #   form also checks arguments (those
          arguments: {order_id: ORD-1002}          #   given must match, case-insensitively)
      - expect_bot_regex: "(?i)cancell?ed"         # the bot's answer to the most recent `user`
                                                   #   step matches (re.search, case-insensitive)
    expect:                            # optional: parley's `expect:` block, as in profiles
      orders: {ORD-1002: cancelled}    #   (final order statuses, tools, bot_says, ...)

Assertions never stop a playbook: each is recorded in `conversation.metadata["assertions"]` as
`{"step": n, "kind", "expected", "passed", "reason", "ran"}` (n counts steps from 1) and the run
goes on. An injected tool call is not one the bot made: it is in the transcript but not in
`conversation.tool_calls`, and expect_tool does not see it. A playbook runs on the conversation
harness: parley.core.engine.playbook_run.
"""

from __future__ import annotations

import datetime
import json
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from parley.core.errors import ProfileError
from parley.core.records import DEFAULT_CUSTOMER_ID, TOOL_NAMES, ConversationSpec, Expectations, WorldSpec, derive_seed, make_spec_id
from parley.core.specs.profile_loader import InvalidProfile
from parley.core.specs.profile_validation import (
    CUSTOMER_ID_RE,
    Checker,
    Node,
    SectionParser,
    describe,
    did_you_mean,
    plain_value,
)
from parley.core.specs.yaml_reading import read_yaml
from parley.mockapi.fixture import date_problem

PLAYBOOK_KEYS = ("name", "description", "customer_id", "today", "steps", "expect")
STEP_KINDS = ("user", "inject_bot_response", "inject_tool", "expect_tool", "expect_bot_regex")
INJECT_TOOL_KEYS = ("name", "arguments", "result")
EXPECT_TOOL_KEYS = ("name", "arguments")
PLAYBOOK_USER = "playbook"

AssertionKind = Literal["expect_tool", "expect_bot_regex"]


# -- the model ----------------------------------------------------------------------------------


class _Step(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    line: int | None = None
    """Where the step was written, for messages that point back at the playbook."""


class UserStep(_Step):
    kind: Literal["user"] = "user"
    text: str


class InjectBotResponseStep(_Step):
    kind: Literal["inject_bot_response"] = "inject_bot_response"
    text: str


class InjectToolStep(_Step):
    kind: Literal["inject_tool"] = "inject_tool"
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    result: str
    """The text the bot sees as the tool's result (a mapping or list is written as JSON)."""


class ExpectToolStep(_Step):
    kind: Literal["expect_tool"] = "expect_tool"
    name: str
    arguments: dict[str, Any] | None = None
    """When given, the call must also carry these arguments (others may be there too)."""

    @property
    def expected(self) -> str:
        if not self.arguments:
            return self.name
        args = ", ".join(f"{k}={v}" for k, v in self.arguments.items())
        return f"{self.name}({args})"


class ExpectBotRegexStep(_Step):
    kind: Literal["expect_bot_regex"] = "expect_bot_regex"
    pattern: str


PlaybookStep = Annotated[
    UserStep | InjectBotResponseStep | InjectToolStep | ExpectToolStep | ExpectBotRegexStep,
    Field(discriminator="kind"),
]
_STEPS = TypeAdapter(list[PlaybookStep])


class Playbook(BaseModel):
    """A loaded, valid playbook."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: str
    name: str
    description: str | None = None
    customer_id: str = DEFAULT_CUSTOMER_ID
    today: datetime.date | None = None
    steps: list[PlaybookStep]
    expect: Expectations | None = None


class PlaybookAssertion(BaseModel):
    """One expect_* step's outcome, as stored in `conversation.metadata["assertions"]`."""

    step: int  # 1-based position in `steps`
    kind: AssertionKind
    expected: str
    passed: bool
    reason: str
    ran: bool = True
    """False for a step the conversation never reached (recorded as not checked)."""


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
    builder = _PlaybookBuilder(source)
    playbook = builder.build(data)
    errors = sorted(builder.checker.errors, key=lambda e: (e.line or 0, e.column or 0))
    return (None if errors else playbook), errors


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


def playbook_spec(playbook: Playbook, seed: int = 0) -> ConversationSpec:
    """The one conversation a playbook makes. Its steps travel in `extra["steps"]`."""
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
        world=WorldSpec(customer_id=playbook.customer_id, today=playbook.today),
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


class _PlaybookBuilder(SectionParser):
    def __init__(self, source: str) -> None:
        self.source = source
        self.checker = Checker(source)

    def build(self, data: Any) -> Playbook | None:
        c = self.checker
        root = Node.root(data)
        if data is None:
            c.error(root, "the playbook is empty; expected a mapping with name and steps")
            return None
        if not c.mapping(root, PLAYBOOK_KEYS, required=("name", "steps"), what="a playbook (name, steps, ...)"):
            return None
        fields: dict[str, Any] = {"source": self.source}
        ok = True
        if root.has("name"):
            fields["name"] = c.string(root.child("name"), what="the playbook's name")
            ok &= fields["name"] is not None
            if fields["name"] is not None:
                fields["name"] = fields["name"].strip()
        if root.has("description") and root.value["description"] is not None:
            fields["description"] = c.string(root.child("description"), allow_empty=True, what="a description")
        if root.has("customer_id") and root.value["customer_id"] is not None:
            fields["customer_id"] = self._pattern(root.child("customer_id"), CUSTOMER_ID_RE, "a customer id like C-100")
            ok &= fields["customer_id"] is not None
        if root.has("today") and root.value["today"] is not None:
            fields["today"] = c.date(root.child("today"))
            ok &= fields["today"] is not None
            problem = date_problem(fields["today"]) if fields["today"] is not None else None
            if problem is not None:
                c.error(root.child("today"), problem)
                ok = False
        if root.has("steps"):
            fields["steps"] = self._steps(root.child("steps"))
            ok &= fields["steps"] is not None
        if root.has("expect"):
            fields["expect"] = self._expect(root.child("expect"))
            ok &= fields["expect"] is not None
        if not ok or c.errors:
            return None
        return Playbook(**fields)

    def _steps(self, node: Node) -> list[Any] | None:
        c = self.checker
        if not c.sequence(node, what="a list of steps such as {user: ...}"):
            return None
        steps: list[Any] = []
        ok = True
        seen_user = False
        for item in node.items():
            step = self._step(item, seen_user)
            if step is None:
                ok = False
                continue
            seen_user |= isinstance(step, UserStep)
            steps.append(step)
        if ok and not seen_user:
            c.error(node, "a playbook needs at least one `user` step (nothing would reach the bot)", at_key=True)
            ok = False
        return steps if ok else None

    def _step(self, item: Node, seen_user: bool) -> Any:
        c = self.checker
        example = "a step such as {user: 'Where is ORD-1003?'} or {expect_tool: track_order}"
        if not item.is_map or not item.value:
            c.error(item, f"expected {example}, got {describe(item.value)}")
            return None
        if len(item.value) > 1:
            keys = ", ".join(str(k) for k in item.value)
            c.error(item, f"one step per list item, got {len(item.value)} keys ({keys}); start each step with '- '")
            return None
        ((kind, child),) = item.entries()
        if kind not in STEP_KINDS:
            hint = did_you_mean(str(kind), STEP_KINDS) or f"; steps are {', '.join(STEP_KINDS)}"
            c.error(child, f"unknown step kind '{kind}'{hint}", at_key=True)
            return None
        line = item.line
        if kind in ("expect_tool", "expect_bot_regex") and not seen_user:
            c.error(child, f"{kind} comes before any `user` step: the bot has not answered anything yet", at_key=True)
            return None
        if kind == "user":
            text = c.string(child, what="what the customer says")
            return None if text is None else UserStep(text=text, line=line)
        if kind == "inject_bot_response":
            text = c.string(child, what="the assistant message to inject")
            return None if text is None else InjectBotResponseStep(text=text, line=line)
        if kind == "inject_tool":
            return self._inject_tool(child, line)
        if kind == "expect_tool":
            return self._expect_tool(child, line)
        pattern = c.string(child, what="a regular expression")
        if pattern is None:
            return None
        try:
            re.compile(pattern, re.IGNORECASE)
        except re.error as exc:
            c.error(child, f"invalid regular expression {pattern!r}: {exc}")
            return None
        return ExpectBotRegexStep(pattern=pattern, line=line)

    def _tool_name(self, node: Node) -> str | None:
        c = self.checker
        text = c.string(node, what="a tool name")
        if text is None:
            return None
        name = text.strip()
        if name not in TOOL_NAMES:
            hint = did_you_mean(name, TOOL_NAMES) or f"; tools are {', '.join(TOOL_NAMES)}"
            c.error(node, f"unknown tool '{name}'{hint}")
            return None
        return name

    def _arguments(self, node: Node) -> dict[str, Any] | None:
        if node.value is None:
            return {}
        if not node.is_map:
            self.checker.error(node, f"expected a mapping of arguments such as {{order_id: ORD-1003}}, got {describe(node.value)}")
            return None
        return {str(k): v for k, v in plain_value(node.value).items()}

    def _inject_tool(self, node: Node, line: int | None) -> InjectToolStep | None:
        c = self.checker
        what = "a tool call to inject: {name, arguments, result}"
        if not c.mapping(node, INJECT_TOOL_KEYS, required=("name", "result"), what=what):
            return None
        if "name" not in node.value or "result" not in node.value:
            return None
        name = self._tool_name(node.child("name"))
        arguments = self._arguments(node.child("arguments")) if node.has("arguments") else {}
        result_node = node.child("result")
        result: str | None
        if isinstance(result_node.value, str):
            result = str(result_node.value)
        elif isinstance(result_node.value, (dict, list)):
            result = json.dumps(plain_value(result_node.value), separators=(",", ":"), ensure_ascii=False)
        else:
            c.error(
                result_node,
                f"expected the tool's result as text or a mapping, got {describe(result_node.value)}",
                at_key=result_node.value is None,
            )
            result = None
        if name is None or arguments is None or result is None:
            return None
        return InjectToolStep(name=name, arguments=arguments, result=result, line=line)

    def _expect_tool(self, node: Node, line: int | None) -> ExpectToolStep | None:
        if not node.is_map:
            name = self._tool_name(node)
            return None if name is None else ExpectToolStep(name=name, line=line)
        c = self.checker
        if not c.mapping(node, EXPECT_TOOL_KEYS, required=("name",), what="a tool name or {name, arguments}"):
            return None
        if "name" not in node.value:
            return None
        name = self._tool_name(node.child("name"))
        arguments = self._arguments(node.child("arguments")) if node.has("arguments") else None
        if name is None or (node.has("arguments") and arguments is None):
            return None
        return ExpectToolStep(name=name, arguments=arguments or None, line=line)
