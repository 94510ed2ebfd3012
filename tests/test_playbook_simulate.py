"""Scripted and simulated turns in one conversation: a playbook's `simulate: N` hands it to the
simulated customer for up to N turns, then the script goes on, its assertions about the bot's last
answer; written in YAML or in code (parley.api), run by the same playbook machinery."""

from __future__ import annotations

from pathlib import Path

import pytest

from parley.api import conversation, expect_reply, expect_tool, run_sync, say, simulate
from parley.core.errors import ProfileError
from parley.core.specs.playbook import check_playbook_text
from tests import python_bots
from tests.conftest import PINNED_TODAY


def test_a_yaml_playbook_may_hand_the_conversation_to_the_simulated_customer():
    playbook, errors = check_playbook_text(
        "name: mixed\nsteps:\n  - user: Where is ORD-1003?\n  - simulate: 2\n  - expect_tool: track_order\n", source="p.yaml"
    )
    assert not errors and playbook is not None
    assert [s.kind for s in playbook.steps] == ["user", "simulate", "expect_tool"] and playbook.steps[1].turns == 2  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("name: x\nsteps:\n  - simulate: 0\n", "expected how many turns the simulated customer goes on for, 1 to 100, got 0"),
        ("name: x\nsteps:\n  - simulate: many\n", "expected how many turns the simulated customer goes on for, 1 to 100"),
        ("name: x\nsteps:\n  - simulate: true\n", "expected how many turns"),
    ],
)
def test_a_simulate_step_says_what_is_wrong(text, reason):
    _, errors = check_playbook_text(text, source="p.yaml")
    assert any(reason in e.reason for e in errors), [e.render() for e in errors]


def test_only_simulated_turns_make_a_playbook_too():
    playbook, errors = check_playbook_text("name: x\nsteps:\n  - simulate: 3\n  - expect_tool: track_order\n", source="p.yaml")
    assert not errors and playbook is not None


def test_scripted_then_simulated_then_asserted_in_one_conversation(tmp_path):
    spec = conversation(
        "mixed",
        goals=["track order ORD-1003", "ask when ORD-1003 will arrive"],
        steps=[say("Hi, I have a question about ORD-1003."), simulate(2), expect_tool("track_order"), expect_reply(r"shipped")],
        today=PINNED_TODAY,
    )
    [one] = run_sync(spec, bot=python_bots.order_bot, db=tmp_path / "p.db").conversations
    users = one.conversation.user_texts
    assert users[0] == "Hi, I have a question about ORD-1003." and len(users) >= 2  # the simulated customer took over
    assert one.conversation.user_simulator == "playbook" and len(one.conversation.turns) <= 3
    assertions = one.conversation.metadata["assertions"]
    assert [(a["kind"], a["passed"]) for a in assertions] == [("expect_tool", True), ("expect_bot_regex", True)]
    assert all(" step 2" in a["reason"] for a in assertions)  # about the simulated turn's answer
    assert one.passed, one.explain()


def test_a_simulated_customer_that_stops_early_lets_the_script_go_on(tmp_path):
    spec = conversation(
        "short",
        goals=["track order ORD-1003"],
        steps=[simulate(20), say("One more thing: where is ORD-1003?"), expect_tool("track_order")],
        today=PINNED_TODAY,
    )
    [one] = run_sync(spec, bot=python_bots.order_bot, db=tmp_path / "p.db").conversations
    assert one.conversation.user_texts[-1] == "One more thing: where is ORD-1003?"
    assert len(one.conversation.turns) < 20 and one.passed, one.explain()


def test_steps_in_code_are_checked_as_a_file_is():
    with pytest.raises(ProfileError, match="expect_tool comes before any `user` or `simulate` step"):
        conversation("x", steps=[expect_tool("track_order"), say("hi")])
    with pytest.raises(ProfileError, match="steps: unknown tool 'track_ordr'; did you mean 'track_order'"):
        conversation("x", steps=[say("hi"), expect_tool("track_ordr")])  # the tools of the conversation's world
    with pytest.raises(ProfileError, match="invalid regular expression"):
        expect_reply("(")


def test_the_shipped_playbooks_still_run_as_they_did(tmp_path):
    from parley.api import load_specs

    specs = load_specs(Path(__file__).resolve().parent.parent / "profiles" / "playbooks")
    result = run_sync(specs, db=tmp_path / "p.db")
    assert result.passed, result.explain()
