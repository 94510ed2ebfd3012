"""One profile schema: the records declare the YAML formats.

A record built in code refuses what a profile file would, in the same words; every problem any
document can have is worded by parley (never pydantic's generic words) and located in the file;
a spec read back from its JSON (as the store and `--resume` read it) is the spec that was written.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from ruamel.yaml import YAML

from parley.core.errors import ProfileError
from parley.core.records.profile import (
    ConversationNumber,
    Expectations,
    GoalStyle,
    InteractionStyle,
    JudgeSpec,
    LlmSettings,
    UserSection,
    WorldSpec,
)
from parley.core.records.spec import ConversationSpec
from parley.core.specs.playbook import check_playbook_text
from parley.core.specs.profile_loader import FLAT_LAYOUT_HINT, check_profile_text
from parley.core.specs.sources import load_specs

SHIPPED = Path(__file__).resolve().parent.parent / "profiles"

IN_CODE: dict[str, tuple[Callable[[], Any], str]] = {
    "temperature out of range": (lambda: LlmSettings(temperature=3), "must be between 0.0 and 2.0, got 3.0"),
    "blank customer id": (lambda: WorldSpec(customer_id=" "), "expected a customer id, got an empty string"),
    "tool both called and not": (
        lambda: Expectations(tools_called=["cancel_order"], tools_not_called=["cancel_order"]),
        "cancel_order is in both tools_called and tools_not_called",
    ),
    "judge score": (lambda: JudgeSpec(rubric="polite", min_score=4), "must be between 1 and 3, got 4"),
    "steps above Sensei's limit": (lambda: GoalStyle(kind="steps", steps=25), "must be between 1 and 19, got 25"),
    "steps without a number": (lambda: GoalStyle(kind="steps"), "'steps' needs a number"),
    "change language without languages": (lambda: InteractionStyle(name="change language"), "change language needs a list of languages"),
    "zero conversations": (lambda: ConversationNumber(kind="count", count=0), "must be at least 1 conversation, got 0"),
    "blank role": (lambda: UserSection(role=" ", goals=["hi"]), "expected a role prompt, got an empty string"),
    "criterion repeated": (
        lambda: Expectations(criteria=["The bot apologises", "the bot  apologises"]),
        "criterion 2 repeats criterion 1: each is its own check, named by its text",
    ),
    "criterion too long": (lambda: Expectations(criteria=["word " * 101]), "a criterion is a sentence or two, at most 500 characters"),
}


@pytest.mark.parametrize("case", sorted(IN_CODE))
def test_a_record_built_in_code_refuses_what_a_file_would_in_the_same_words(case: str) -> None:
    build, words = IN_CODE[case]
    with pytest.raises(ValidationError) as caught:
        build()
    assert words in str(caught.value)


def test_a_record_built_in_code_takes_its_own_shape() -> None:
    goal_style = GoalStyle(kind="random_steps", max_steps=5, steps=3)  # a spec carries the drawn number
    assert (goal_style.max_steps, goal_style.steps, goal_style.limit) == (5, 3, 30)
    assert WorldSpec(rows={"orders": [{"id": "ORD-1001", "tracking": None}]}).rows == {"orders": [{"id": "ORD-1001", "tracking": None}]}
    assert Expectations(tools_called=["track_order", "track_order"]).tools_called == ["track_order"]
    assert Expectations(criteria=["  The bot\n apologises "]).criteria == ["The bot apologises"]
    assert Expectations().unchanged_others is None  # not written: parley's default check, which never makes a pass


# -- any document: every problem worded by parley, and located ---------------------------------------------

# A profile and a playbook that use every key of their formats; the property below puts any value
# at any place in them.
PROFILE: dict[str, Any] = {
    "test_name": "t",
    "llm": {"model": "gpt-4o", "temperature": 0.5, "format": {"type": "text", "config": "c.yml"}},
    "world": {
        "customer_id": "C-100",
        "today": "2026-11-21",
        "orders": [{"id": "ORD-1001", "customer_id": "C-100", "placed_days_ago": 3, "status": "shipped",
                    "currency": "USD", "total": 9.5, "items": [{"name": "mug", "qty": 1, "unit_price": 9.5, "currency": "USD"}], "tracking": {"carrier": "x", "tracking_number": "1Z", "last_event": "left the depot"}}],
    },
    "user": {
        "language": "English",
        "role": "a customer",
        "context": ["polite"],
        "goals": [
            "{{n}} {{d}} {{s}} {{w}}",
            {"n": {"function": "forward(d)", "type": "int", "data": {"min": 1, "max": 4, "step": 1}}},
            {"d": {"function": "forward()", "type": "float", "data": {"min": 0.0, "max": 1.0, "linspace": 3}}},
            {"s": {"function": "random(2)", "type": "string", "data": {"date": {"set": ">today(2)", "custom": ["1/1/2026"]}}}},
            {"w": {"function": "another()", "type": "string", "data": ["a", "b"]}},
        ],
    },
    "chatbot": {"is_starter": False, "fallback": "sorry", "output": [{"price": {"type": "money", "description": "p"}}]},
    "conversation": {
        "number": "all_combinations",
        "goal_style": {"all_answered": {"export": True, "limit": 5}},
        "interaction_style": ["long phrases", {"random": ["single question", {"change language": ["it"]}]}],
    },
    "expect": {
        "orders": {"ORD-1001": "cancelled"},
        "unchanged_others": True,
        "tools_called": ["cancel_order"],
        "tools_not_called": ["track_order"],
        "bot_says": ["ok"],
        "bot_never_says": ["no"],
        "judge": {"rubric": "polite", "min_score": 2},
        "criteria": ["The bot confirms the cancellation"],
    },
}  # fmt: skip
PLAYBOOK: dict[str, Any] = {
    "name": "p",
    "description": "d",
    "customer_id": "C-100",
    "today": "2026-11-21",
    "steps": [
        {"inject_tool": {"name": "get_order", "arguments": {"order_id": "ORD-1001"}, "result": {"id": "ORD-1001"}}},
        {"user": "hi"},
        {"inject_bot_response": "hello"},
        {"expect_tool": {"name": "track_order", "arguments": {"order_id": "ORD-1001"}}},
        {"expect_bot_regex": "ORD"},
    ],
    "expect": {"orders": {"ORD-1001": "cancelled"}, "criteria": ["The bot is polite"]},
}


def places(value: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value in `value` (keys and list indexes)."""
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else []
    return [at, *(place for key, child in children for place in places(child, (*at, key)))]


def put(document: Any, at: tuple[Any, ...], value: Any) -> Any:
    """A copy of `document` with `value` at `at`."""
    if not at:
        return value
    head, *rest = at
    copy = dict(document) if isinstance(document, dict) else list(document)
    copy[head] = put(document[head], tuple(rest), value)
    return copy


# One value of each kind YAML gives (each wrong somewhere), tried at every place: a sweep, not a
# sample, so no field is left out.
WRONG = [None, True, -1, 25, 2.5, "", "x(", [], ["x"], {"x": 1}]
PYDANTIC_WORDS = ("Input should", "Field required", "validation error", "type=", "Value error", "Extra inputs")


def yaml_text(document: object) -> str:
    buffer = io.StringIO()
    YAML(typ="safe", pure=True).dump(document, buffer)
    return buffer.getvalue()


def assert_worded_and_located(errors: list[ProfileError]) -> None:
    for error in errors:
        assert not any(words in error.reason for words in PYDANTIC_WORDS), error.render()
        assert error.file == "p.yaml", error.render()
        assert error.line is not None or error.reason == FLAT_LAYOUT_HINT, error.render()  # that hint is about the whole file


def test_the_complete_profile_and_playbook_are_valid() -> None:
    profile, errors = check_profile_text(yaml_text(PROFILE), source="p.yaml", personality_dirs=[])
    assert errors == [] and profile is not None
    playbook, errors = check_playbook_text(yaml_text(PLAYBOOK), source="p.yaml")
    assert errors == [] and playbook is not None


@pytest.mark.parametrize("at", places(PROFILE), ids=lambda at: ".".join(map(str, at)) or "root")
def test_any_value_anywhere_in_a_profile_is_worded_by_parley_and_located(at: tuple[Any, ...]) -> None:
    for value in WRONG:
        _, errors = check_profile_text(yaml_text(put(PROFILE, at, value)), source="p.yaml", personality_dirs=[])
        assert_worded_and_located(errors)


@pytest.mark.parametrize("at", places(PLAYBOOK), ids=lambda at: ".".join(map(str, at)) or "root")
def test_any_value_anywhere_in_a_playbook_is_worded_by_parley_and_located(at: tuple[Any, ...]) -> None:
    for value in WRONG:
        _, errors = check_playbook_text(yaml_text(put(PLAYBOOK, at, value)), source="p.yaml")
        assert_worded_and_located(errors)


# -- specs read back -------------------------------------------------------------------------------------


def test_the_shipped_suites_specs_read_back_from_json_are_the_specs_written() -> None:
    specs = load_specs([SHIPPED], seed=3).specs
    assert {spec.kind for spec in specs} == {"profile", "playbook", "scenario"}
    for spec in specs:
        assert ConversationSpec.model_validate_json(spec.model_dump_json()) == spec
