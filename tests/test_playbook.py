"""Playbooks: loading with located errors, and running every step kind against the offline bot."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from parley.core.bots.api import BotTurn
from parley.core.bots.world_bot import WorldBot
from parley.core.engine.harness import Limits
from parley.core.engine.playbook_run import run_playbook
from parley.core.engine.spec_worlds import customer_of
from parley.core.errors import ProfileError
from parley.core.specs.playbook import (
    check_playbook_text,
    load_playbook,
    playbook_spec,
    validate_playbook,
)
from parley.worlds.orders.offline_bot import OfflineOrderModel
from tests.order_world_support import order_copy, orders_world, status

OFFLINE = WorldBot(OfflineOrderModel())


def write(tmp_path: Path, text: str, name: str = "playbook.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def spec_of(tmp_path: Path, text: str):
    return playbook_spec(load_playbook(write(tmp_path, text)), seed=7)


@pytest.fixture
def world(today):
    world = order_copy(today)
    yield world
    world.close()


# -- loading ---------------------------------------------------------------------------------------


def test_a_playbook_becomes_one_playbook_spec(tmp_path, today):
    spec = spec_of(
        tmp_path,
        """
        name: track_it
        customer_id: C-200
        today: 2026-11-21
        steps:
          - user: "Where is ORD-2002?"
          - expect_tool: track_order
          - expect_bot_regex: "ORD-2002"
        expect:
          orders: {ORD-2002: shipped}
        """,
    )
    assert (spec.kind, spec.spec_id, spec.index) == ("playbook", "track_it#0", 0)
    assert spec.world.customer_id == "C-200" and spec.world.today == today
    assert spec.expect is not None and spec.expect.records == {"orders/ORD-2002": {"status": "shipped"}}
    assert [s["kind"] for s in spec.extra["steps"]] == ["user", "expect_tool", "expect_bot_regex"]
    assert spec.extra["steps"][0]["text"] == "Where is ORD-2002?"
    assert spec.goals == ["Where is ORD-2002?"]


def test_customer_defaults_to_c100_and_inject_tool_result_mapping_becomes_json(tmp_path):
    spec = spec_of(
        tmp_path,
        """
        name: injected
        steps:
          - inject_tool:
              name: get_order
              arguments: {order_id: ORD-1001}
              result: {id: ORD-1001, status: pending}
          - user: hi
        """,
    )
    assert spec.world.customer_id is None and customer_of(spec, orders_world()) == "C-100"  # the world's default customer
    step = spec.extra["steps"][0]
    assert step["name"] == "get_order" and step["arguments"] == {"order_id": "ORD-1001"}
    assert step["result"] == '{"id":"ORD-1001","status":"pending"}'


def test_every_error_is_reported_with_its_line_and_column(tmp_path):
    path = write(
        tmp_path,
        """
        name: broken
        steps:
          - user: "cancel ORD-1002"
          - expect_tools: check_cancellation
          - expect_bot_regex: "(unclosed"
          - expect_tool: cancel_ordr
          - inject_tool: {name: refund_order, result: "ok"}
        """,
    )
    errors = validate_playbook(path)
    rendered = [e.render() for e in errors]
    assert rendered[0] == f"{path}:4:5: steps[1].expect_tools: unknown step kind 'expect_tools'; did you mean 'expect_tool'?"
    assert rendered[1].startswith(f"{path}:5:23: steps[2].expect_bot_regex: invalid regular expression '(unclosed'")
    assert rendered[2] == f"{path}:6:18: steps[3].expect_tool: unknown tool 'cancel_ordr'; did you mean 'cancel_order'?"
    assert rendered[3].startswith(f"{path}:7:25: steps[4].inject_tool.name: unknown tool 'refund_order'")
    assert len(errors) == 4


def test_load_playbook_raises_one_error_listing_all(tmp_path):
    path = write(tmp_path, "name: x\nsteps:\n  - usr: hello\n  - user: hi\n  - expect_bot_regex: '['\n")
    with pytest.raises(ProfileError) as caught:
        load_playbook(path)
    text = str(caught.value)
    assert f"{path}:3:5: steps[0].usr: unknown step kind 'usr'; did you mean 'user'?" in text
    assert f"{path}:5:23" in text


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("steps:\n  - user: hi\n", "missing required key 'name'"),
        ("name: x\nsteps:\n  - expect_tool: track_order\n  - user: hi\n", "expect_tool comes before any `user` or `simulate` step"),
        ("name: x\nsteps:\n  - inject_bot_response: hello\n", "needs at least one `user` or `simulate` step"),
        ("name: x\nsteps:\n  - user: hi\n    expect_tool: track_order\n", "one step per list item"),
        ("name: x\nsteps:\n  - just text\n", "expected a step such as"),
        ("name: x\ncustomer_id: 100\nsteps:\n  - user: hi\n", "expected a customer id, got 100"),
        ("name: x\ntoday: someday\nsteps:\n  - user: hi\n", "expected a date like 2026-11-21"),
        ("name: x\nsteps:\n  - user: hi\nexpext: {}\n", "unknown key 'expext'; did you mean 'expect'?"),
        ("name: x\nsteps:\n  - inject_tool: {name: get_order}\n  - user: hi\n", "missing required key 'result'"),
        ("name: x\nsteps: [\n", "invalid YAML"),
    ],
)
def test_invalid_playbooks_say_what_is_wrong(text, reason):
    playbook, errors = check_playbook_text(text, source="p.yaml")
    assert playbook is None
    assert any(reason in e.reason for e in errors), [e.render() for e in errors]
    assert all(e.file == "p.yaml" and e.line is not None for e in errors)


# -- running -----------------------------------------------------------------------------------------


async def test_each_step_kind_against_the_offline_bot(tmp_path, world):
    spec = spec_of(
        tmp_path,
        """
        name: all_kinds
        steps:
          - inject_bot_response: "Hello! How can I help?"
          - user: "I want to cancel order ORD-1002."
          - expect_tool: check_cancellation
          - expect_bot_regex: "shall i cancel"
          - user: "yes"
          - expect_tool: {name: cancel_order, arguments: {order_id: ord-1002}}
          - expect_bot_regex: "CANCELLED"
          - inject_tool:
              name: track_order
              arguments: {order_id: ORD-1003}
              result: '{"order_id": "ORD-1003", "status": "shipped"}'
          - user: "thanks"
          - expect_bot_regex: "welcome"
        """,
    )
    conv = await run_playbook(spec, world=world, bot=OFFLINE)

    assertions = conv.metadata["assertions"]
    assert [a["step"] for a in assertions] == [3, 4, 6, 7, 10]
    assert all(a["passed"] for a in assertions), assertions
    assert assertions[2] == {
        "step": 6,
        "kind": "expect_tool",
        "expected": "cancel_order(order_id=ord-1002)",
        "passed": True,
        "reason": "the bot called cancel_order(order_id=ORD-1002) answering step 5",
        "ran": True,
    }
    assert conv.stop_reason == "user_stop" and conv.error is None
    assert conv.user_simulator == "playbook" and conv.bot_model == "offline"
    assert status(conv.final_state, "ORD-1002") == "cancelled"
    # Injected messages are in the transcript, but only the bot's own calls are tool calls.
    assert conv.messages[0].content == "Hello! How can I help?"
    injected = [conv.messages[i] for i in conv.metadata["injected_messages"]]
    assert [m.role for m in injected] == ["assistant", "assistant", "tool"]
    assert injected[1].tool_calls[0].name == "track_order"
    assert [c.name for c in conv.tool_calls] == ["check_cancellation", "cancel_order"]
    assert len(conv.turns) == 3


async def test_failing_assertions_are_recorded_with_reasons_and_the_run_goes_on(tmp_path, world):
    spec = spec_of(
        tmp_path,
        """
        name: failing
        steps:
          - user: "Where is ORD-1003?"
          - expect_tool: cancel_order
          - expect_bot_regex: "delivered yesterday"
          - expect_tool: {name: track_order, arguments: {order_id: ORD-1001}}
          - user: "list my orders"
          - expect_tool: list_my_orders
        """,
    )
    conv = await run_playbook(spec, world=world, bot=OFFLINE)
    a = conv.metadata["assertions"]
    assert [x["passed"] for x in a] == [False, False, False, True]
    assert a[0]["reason"] == "the bot did not call cancel_order answering step 1; it called track_order(order_id=ORD-1003)"
    assert a[1]["kind"] == "expect_bot_regex" and a[1]["expected"] == "delivered yesterday"
    assert a[1]["reason"].startswith("the bot's answer to step 1 does not match: 'Order ORD-1003 has shipped with UPS")
    assert "not with track_order(order_id=ORD-1001)" in a[2]["reason"]
    assert conv.stop_reason == "user_stop"


async def test_expect_tool_looks_only_at_the_answer_to_the_latest_user_step(tmp_path, world):
    spec = spec_of(
        tmp_path,
        """
        name: latest_turn
        steps:
          - user: "track ORD-1003"
          - user: "thanks"
          - expect_tool: track_order
        """,
    )
    conv = await run_playbook(spec, world=world, bot=OFFLINE)
    (only,) = conv.metadata["assertions"]
    assert not only["passed"]
    assert only["reason"] == "the bot did not call track_order answering step 2; it called no tool"


async def test_max_turns_stops_and_marks_later_assertions_not_checked(tmp_path, world):
    spec = spec_of(
        tmp_path,
        """
        name: too_long
        steps:
          - user: "track ORD-1003"
          - expect_tool: track_order
          - user: "list my orders"
          - expect_tool: list_my_orders
        """,
    )
    conv = await run_playbook(spec, world=world, bot=OFFLINE, limits=Limits(max_turns=1))
    assert conv.stop_reason == "max_turns"
    first, second = conv.metadata["assertions"]
    assert first["passed"] and not second["passed"]
    assert second["reason"] == "not checked: the conversation stopped (max_turns) before step 4"
    assert conv.user_texts == ["track ORD-1003"]


async def test_a_bot_that_ends_the_conversation_stops_the_script(tmp_path, world):
    spec = spec_of(
        tmp_path,
        """
        name: goodbye
        steps:
          - user: "bye"
          - expect_bot_regex: "great day"
          - user: "track ORD-1003"
          - expect_tool: track_order
        """,
    )
    conv = await run_playbook(spec, world=world, bot=OFFLINE)
    assert conv.stop_reason == "bot_stop"
    assert [a["passed"] for a in conv.metadata["assertions"]] == [True, False]


class BrokenBot:
    name = "broken"

    async def respond(self, transcript, ctx) -> BotTurn:
        raise RuntimeError("model exploded")


async def test_a_failing_bot_is_recorded_not_raised(tmp_path, world):
    spec = spec_of(tmp_path, "name: boom\nsteps:\n  - user: hi\n  - expect_bot_regex: hello\n")
    conv = await run_playbook(spec, world=world, bot=BrokenBot())
    assert conv.stop_reason == "bot_error" and conv.error == "RuntimeError: model exploded"
    (assertion,) = conv.metadata["assertions"]
    assert not assertion["passed"] and not assertion["ran"] and assertion["reason"].startswith("not checked")


async def test_customer_comes_from_the_playbook(tmp_path, world):
    spec = spec_of(
        tmp_path,
        """
        name: other_customer
        customer_id: C-200
        steps:
          - user: "cancel ORD-2001"
          - expect_bot_regex: "shall i cancel order ORD-2001"
        """,
    )
    conv = await run_playbook(spec, world=world, bot=OFFLINE, metadata={"repeat": 2})
    assert conv.customer_id == "C-200" and conv.metadata["repeat"] == 2
    assert conv.metadata["assertions"][0]["passed"]
