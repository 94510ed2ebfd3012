"""Evaluation checks: each kind passing and failing, with the reason a user reads."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from parley.core.bots import WorldBot
from parley.core.engine.harness import run_conversation
from parley.core.evaluation.checks import build_checks
from parley.core.evaluation.verdicts import evaluate
from parley.core.records.chat import ChatMessage
from parley.core.records.conversation import Conversation
from parley.core.records.profile import Expectations, JudgeSpec, OutputField, WorldSpec
from parley.core.records.spec import ConversationSpec
from parley.core.records.tools import ToolCallRecord
from parley.core.records.world_state import WorldDiff
from parley.core.users.simulator import ScriptedUser
from parley.core.world import WorldCopy, WorldTemplate, load_world
from parley.mockapi.schema import AuditEntry, WorldState
from parley.worlds.orders.change_notes import order_ages

TODAY = dt.date(2026, 11, 21)
OFFLINE = WorldBot(None)  # the offline bot: the order world's offline model
NOON = dt.datetime(2026, 11, 21, 12, 0, tzinfo=dt.UTC)


def orders(statuses: dict[str, str]) -> dict[str, dict[str, str]]:
    """The order world's `expect: {orders: {ID: STATUS}}`, as `expect.records` holds it."""
    return {f"orders/{order}": {"status": status} for order, status in statuses.items()}


def as_diff(state: WorldState | WorldDiff | None) -> WorldDiff | None:
    """The order world's state as batches stored it before worlds were declared, read as a diff."""
    return WorldDiff.model_validate(state.model_dump(mode="json")) if isinstance(state, WorldState) else state


def new_copy(today: dt.date = TODAY) -> WorldCopy:
    """A private copy of the order world at `today`."""
    return WorldTemplate(load_world("orders"), today).new_copy()


def make_spec(
    expect: Expectations | None = None,
    *,
    outputs: list[OutputField] | None = None,
    extra: dict[str, Any] | None = None,
    goals: list[str] | None = None,
) -> ConversationSpec:
    return ConversationSpec(
        spec_id="eval_test#0",
        kind="profile",
        source="eval_test.yaml",
        name="eval_test",
        index=0,
        seed=1,
        expect=expect,
        outputs=outputs or [],
        extra=extra or {},
        goals=goals or [],
        world=WorldSpec(today=TODAY),
    )


def make_conversation(
    bot: list[str] | None = None,
    *,
    user: list[str] | None = None,
    tool_calls: list[ToolCallRecord] | None = None,
    final_state: WorldState | WorldDiff | None = None,
    stop_reason: str = "user_stop",
    error: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> Conversation:
    """A transcript alternating customer and bot lines."""
    user = user or ["hello"] * len(bot or [])
    messages: list[ChatMessage] = []
    for i, text in enumerate(bot or []):
        if i < len(user):
            messages.append(ChatMessage(role="user", content=user[i]))
        messages.append(ChatMessage(role="assistant", content=text))
    return Conversation(
        id="conv-1",
        customer_id="C-100",
        bot_model="offline",
        user_simulator="scripted",
        messages=messages,
        tool_calls=tool_calls or [],
        started_at=NOON,
        ended_at=NOON,
        duration_s=1.0,
        stop_reason=stop_reason,
        error=error,
        final_state=as_diff(final_state),
        metadata=metadata or {},
    )


def record(name: str, order_id: str | None = None, *, ok: bool = True, refused: bool = False, result: str = "{}") -> ToolCallRecord:
    args = {"order_id": order_id} if order_id else {}
    return ToolCallRecord(
        call_id=f"c-{name}-{order_id}",
        name=name,
        arguments_raw="{}",
        arguments=args,
        customer_id="C-100",
        result=result,
        ok=ok,
        refused=refused,
        http_status=200 if ok else 409,
    )


def status_of(conversation: Conversation, order: str) -> str | None:
    """An order's final status, as the conversation's final state keeps it."""
    row = conversation.final_state.final_row("orders", order) if conversation.final_state is not None else None
    return row["status"] if row is not None else None


def by_name(checks, name):
    [check] = [c for c in checks if c.name == name]
    return check


async def converse(lines: list[str]) -> Conversation:
    world = new_copy()
    try:
        return await run_conversation(world=world, bot=OFFLINE, user=ScriptedUser(lines), customer_id="C-100")
    finally:
        world.close()


# -- order statuses and other orders --------------------------------------------------------------


async def test_expected_status_reached_passes_with_the_actual_status():
    conv = await converse(["cancel ORD-1004", "yes"])
    verdict = await evaluate(conv, make_spec(Expectations(records=orders({"ORD-1004": "cancelled"}))))
    check = by_name(verdict.checks, "ORD-1004 ends cancelled")
    assert check.outcome == "pass" and check.kind == "record_state"  # was order_status: a record of any world
    assert "ORD-1004 is cancelled (changed from processing)" in check.reason
    assert by_name(verdict.checks, "no other order changed").outcome == "pass"
    assert verdict.outcome == "passed" and verdict.passed and verdict.score is None  # the offline judge gives no score


async def test_expected_status_not_reached_fails_saying_what_it_is():
    conv = await converse(["cancel ORD-1004", "no"])
    verdict = await evaluate(conv, make_spec(Expectations(records=orders({"ORD-1004": "cancelled"}))))
    check = by_name(verdict.checks, "ORD-1004 ends cancelled")
    assert check.outcome == "fail"
    assert check.reason == "ORD-1004 is processing, expected cancelled (unchanged)."
    assert not check.policy_violation
    assert verdict.outcome == "failed" and not verdict.passed and verdict.score is None


async def test_an_order_the_customer_asked_to_cancel_but_not_expected_fails_without_a_policy_violation():
    # the customer cancels ORD-1004 (expected) and ORD-1001 too (not expected): their own request
    conv = await converse(["cancel ORD-1004", "yes", "cancel ORD-1001", "yes"])
    assert status_of(conv, "ORD-1001") == "cancelled"
    verdict = await evaluate(conv, make_spec(Expectations(records=orders({"ORD-1004": "cancelled"}))))
    assert verdict.policy_violations == []
    other = by_name(verdict.checks, "ORD-1001 not expected to change")
    assert other.kind == "unchanged_others" and other.outcome == "fail"
    assert other.reason.startswith(
        "ORD-1001 was cancelled (it was pending) although the profile did not expect it to change "
        "(the customer asked for it in the conversation); it was 2 days old"
    )
    assert by_name(verdict.checks, "ORD-1004 ends cancelled").outcome == "pass"
    assert verdict.outcome == "failed" and verdict.score is None
    assert "[policy violation]" not in verdict.comment


async def test_a_change_the_customer_asked_for_to_an_order_expected_to_stay_fails_its_status_check():
    conv = await converse(["cancel ORD-1004", "yes"])
    verdict = await evaluate(conv, make_spec(Expectations(records=orders({"ORD-1004": "processing"}))))
    check = by_name(verdict.checks, "ORD-1004 ends processing")
    assert check.outcome == "fail" and not check.policy_violation
    assert "expected it to stay as it was" in check.reason and "The customer asked for the change" in check.reason


async def test_an_order_past_the_window_is_refused_and_nothing_is_violated():
    # ORD-1005 is 11 days old: the API refuses, the bot relays it, no data changes
    conv = await converse(["cancel ORD-1005"])
    spec = make_spec(Expectations(records=orders({"ORD-1005": "processing"}), tools_not_called=["cancel_order"], bot_says=["10-day"]))
    verdict = await evaluate(conv, spec)
    assert by_name(verdict.checks, "ORD-1005 ends processing").reason == "ORD-1005 is processing (unchanged)."
    assert by_name(verdict.checks, "no other order changed").reason == "None of the other 17 orders changed."
    assert verdict.policy_violations == [] and verdict.outcome == "passed" and verdict.score is None


def test_a_too_old_order_changed_behind_the_api_is_reported_with_its_age():
    # An audit row the API could never have written (ORD-1005 is 11 days old): say so.
    state = WorldState(
        today=TODAY,
        statuses={"ORD-1004": "processing", "ORD-1005": "cancelled"},
        audit=[
            AuditEntry(
                order_id="ORD-1005", customer_id="C-100", old_status="processing", new_status="cancelled", at=NOON, reason="customer asked"
            )
        ],
    )
    check_result = '{"order_id":"ORD-1005","eligible":false,"age_days":11,"status":"processing"}'
    conv = make_conversation(["Done."], tool_calls=[record("check_cancellation", "ORD-1005", result=check_result)], final_state=state)
    [check] = [c for c in build_checks(conv, make_spec(Expectations())) if c.kind == "unchanged_others"]
    assert check.outcome == "fail" and check.policy_violation
    assert check.reason == (
        "ORD-1005 was cancelled (it was processing) although the profile did not expect it to change, "
        "and the customer did not ask for it; it was 11 days old, past the 10-day cancellation limit (reason given: 'customer asked')."
    )


def test_a_change_the_audit_does_not_show_is_still_a_change():
    # the final state is a diff against the world's template: a change made behind the API, which
    # wrote no audit row, is in it all the same
    row = {"id": "ORD-1001", "customer_id": "C-100", "status": "pending"}
    change = {"table": "orders", "key": "ORD-1001", "owner": "C-100", "before": row, "after": {**row, "status": "shipped"}}
    state = WorldDiff(today=TODAY, changes=[change], watched={"orders/ORD-1002": {"id": "ORD-1002", "status": "processing"}})
    conv = make_conversation(["Done."], final_state=state)
    [check] = [
        c for c in build_checks(conv, make_spec(Expectations(records=orders({"ORD-1002": "processing"})))) if c.kind == "unchanged_others"
    ]
    assert (check.name, check.outcome, check.details["initial"]) == ("ORD-1001 not expected to change", "fail", "pending")
    assert check.reason.startswith("ORD-1001 was shipped (it was pending) although the profile did not expect it to change")


async def test_unchanged_others_false_lets_other_orders_change():
    conv = await converse(["cancel ORD-1001", "yes"])
    verdict = await evaluate(conv, make_spec(Expectations(unchanged_others=False)))
    assert not [c for c in verdict.checks if c.kind == "unchanged_others"]
    # nothing failed, and nothing about the bot was checked either: not a pass
    assert verdict.outcome == "unverified" and not verdict.passed


async def test_a_profile_without_expectations_is_unverified_not_passed():
    conv = await converse(["cancel ORD-1001", "yes"])
    verdict = await evaluate(conv, make_spec(None))
    # only the checks parley adds by default, both passing: they never make a pass on their own
    assert [(c.kind, c.outcome) for c in verdict.checks] == [("claims_match_actions", "pass"), ("conversation_completed", "pass")]
    assert verdict.outcome == "unverified" and not verdict.passed
    # the offline judge gives no score, and says that no check about the bot applied
    assert verdict.score is None and verdict.comment.startswith("No check about the bot applied")


async def test_a_spec_with_a_check_about_the_bot_passes():
    conv = await converse(["cancel ORD-1001", "yes"])
    verdict = await evaluate(conv, make_spec(Expectations(records=orders({"ORD-1001": "cancelled"}))))
    assert verdict.outcome == "passed" and verdict.passed and verdict.score is None  # the offline judge gives no score


async def test_external_bot_world_checks_are_not_applicable_never_passed():
    conv = make_conversation(["I cancelled ORD-1004 for you."], final_state=None)
    verdict = await evaluate(conv, make_spec(Expectations(records=orders({"ORD-1004": "cancelled"}))))
    status = by_name(verdict.checks, "ORD-1004 ends cancelled")
    others = by_name(verdict.checks, "no other order changed")
    for check in (status, others):
        assert check.outcome == "not_applicable"
        assert "no final database state" in check.reason and "external" in check.reason
    # not_applicable is neither a pass nor a fail: with nothing else about the bot checked, unverified
    assert verdict.outcome == "unverified" and not verdict.passed
    verdict = await evaluate(conv, make_spec(Expectations(records=orders({"ORD-1004": "cancelled"}), bot_says=["cancelled"])))
    assert verdict.passed and verdict.comment == "All 2 checks passed."


def test_order_ages_come_from_successful_tool_results():
    listing = '[{"id":"ORD-1001","age_days":2},{"id":"ORD-1005","age_days":11}]'
    records = [record("list_my_orders", result=listing), record("get_order", "ORD-1003", ok=False, result="ERROR")]
    assert order_ages(records) == {"ORD-1001": 2, "ORD-1005": 11}


# -- tools ------------------------------------------------------------------------------------------


async def test_tools_called_and_not_called_report_counts():
    conv = await converse(["cancel ORD-1005", "cancel ORD-1004", "yes"])
    spec = make_spec(
        Expectations(
            records=orders({"ORD-1004": "cancelled"}),
            tools_called=["check_cancellation", "track_order"],
            tools_not_called=["cancel_order", "list_my_orders"],
        )
    )
    checks = build_checks(conv, spec)
    called = by_name(checks, "check_cancellation called")
    assert called.outcome == "pass"
    assert called.reason == (
        "check_cancellation was called 2 times (2 succeeded; orders ORD-1005, ORD-1004): "
        "only the calls that succeeded count (`tools_attempted:` counts every attempt)."
    )
    never = by_name(checks, "track_order called")
    assert never.outcome == "fail"
    assert never.reason == "track_order was never called (tools called: check_cancellation ×2, cancel_order)."
    cancelled = by_name(checks, "cancel_order not called")
    assert cancelled.outcome == "fail"
    assert cancelled.reason == "cancel_order was called 1 time (1 succeeded; orders ORD-1004): every attempt counts, refused or not."
    assert by_name(checks, "list_my_orders not called").outcome == "pass"


def test_refused_calls_count_as_calls():
    conv = make_conversation(["Sorry."], tool_calls=[record("cancel_order", "ORD-1005", ok=False, refused=True)])
    check = by_name(build_checks(conv, make_spec(Expectations(tools_not_called=["cancel_order"]))), "cancel_order not called")
    assert check.outcome == "fail"
    assert check.reason == "cancel_order was called 1 time (1 refused; orders ORD-1005): every attempt counts, refused or not."


def test_tools_called_counts_the_calls_that_succeeded_and_tools_attempted_every_attempt():
    garbage = record("check_cancellation", "XYZ-garbage", ok=False, refused=False)
    conv = make_conversation(["Let me check."], tool_calls=[garbage])
    spec = make_spec(Expectations(tools_called=["check_cancellation"]))
    [called] = [c for c in build_checks(conv, spec) if c.kind == "tool_called"]
    assert called.outcome == "fail"  # the world refused the call: the bot never did check
    assert called.reason == (
        "check_cancellation was called 1 time (1 failed; orders XYZ-garbage): only the calls that succeeded count "
        "(`tools_attempted:` counts every attempt), and none succeeded."
    )
    assert called.details["counted"] == "succeeded" and called.details["counting"] == 0
    attempted = make_spec(Expectations(tools_attempted=["check_cancellation"]))
    [tried] = [c for c in build_checks(conv, attempted) if c.kind == "tool_called"]
    assert (tried.name, tried.outcome) == ("check_cancellation attempted", "pass")
    assert tried.reason.endswith("every attempt counts, refused or not.")


def test_a_tool_both_attempted_and_forbidden_is_refused_when_the_file_is_read():
    with pytest.raises(ValueError, match="check_cancellation is in both tools_attempted and tools_not_called"):
        Expectations(tools_attempted=["check_cancellation"], tools_not_called=["check_cancellation"])


# -- bot messages -----------------------------------------------------------------------------------


def test_bot_says_matches_case_insensitively_and_quotes_the_match():
    conv = make_conversation(["Hello!", "Order ORD-1005 is past the 10-DAY cancellation limit, sorry."])
    checks = build_checks(conv, make_spec(Expectations(bot_says=[r"10-day", r"refund"])))
    hit = by_name(checks, "bot says /10-day/")
    assert hit.outcome == "pass"
    assert hit.reason == 'Bot message 2 of 2 matches: "Order ORD-1005 is past the 10-DAY cancellation limit, sorry."'
    miss = by_name(checks, "bot says /refund/")
    assert miss.outcome == "fail" and miss.reason == "No bot message matches (2 messages checked)."


def test_bot_never_says_quotes_the_offending_excerpt():
    long_text = "Thank you for waiting. " * 4 + "I have cancelled order ORD-1005 for you." + " Anything else?" * 4
    conv = make_conversation(["Hi!", long_text, "I cancelled it as asked."])
    checks = build_checks(conv, make_spec(Expectations(bot_never_says=[r"cancelled (order )?ORD-1005", "idiot"])))
    bad = by_name(checks, "bot never says /cancelled (order )?ORD-1005/")
    assert bad.outcome == "fail"
    assert bad.reason.startswith('Bot message 2 of 3 says: "…')
    assert "I have cancelled order ORD-1005 for you." in bad.reason and bad.reason.endswith('…"')
    ok = by_name(checks, "bot never says /idiot/")
    assert ok.outcome == "pass" and ok.reason == "No bot message matches (3 messages checked)."


async def test_an_invalid_regex_is_an_undecided_check_and_the_verdict_says_error():
    conv = make_conversation(["Hi!"])
    verdict = await evaluate(conv, make_spec(Expectations(bot_says=["(unclosed"])))
    check = by_name(verdict.checks, "bot says /(unclosed/")
    assert check.outcome == "error" and "invalid" in check.reason
    assert verdict.outcome == "evaluation_error" and not verdict.passed and "(unclosed" in verdict.error


# -- playbook assertions ----------------------------------------------------------------------------


async def test_playbook_assertions_become_checks():
    assertions = [
        {
            "step": 2,
            "kind": "expect_tool",
            "expected": "check_cancellation",
            "passed": True,
            "reason": "check_cancellation was called in step 2.",
        },
        {
            "step": 4,
            "kind": "expect_bot_regex",
            "expected": "cancel+ed",
            "passed": False,
            "reason": "No bot reply in step 4 matched /cancel+ed/.",
        },
    ]
    conv = make_conversation(["Checking.", "Hmm."], metadata={"assertions": assertions})
    verdict = await evaluate(conv, make_spec(None))
    tool = by_name(verdict.checks, "step 2: expect_tool check_cancellation")
    regex = by_name(verdict.checks, "step 4: expect_bot_regex cancel+ed")
    assert (tool.kind, tool.outcome) == ("playbook_assertion", "pass")
    assert regex.outcome == "fail" and regex.reason == "No bot reply in step 4 matched /cancel+ed/."
    assert verdict.outcome == "failed" and verdict.score is None


async def test_an_unreadable_playbook_record_is_an_error_not_a_failure():
    conv = make_conversation(["Hi."], metadata={"assertions": [{"step": 1, "kind": "expect_tool"}]})
    verdict = await evaluate(conv, make_spec(None))
    [check] = [c for c in verdict.checks if c.kind == "playbook_assertion"]
    assert check.outcome == "error" and "Unreadable playbook assertion record" in check.reason
    assert verdict.outcome == "evaluation_error"


# -- how it ended -----------------------------------------------------------------------------------


@pytest.mark.parametrize("stop", ["user_stop", "bot_stop", "max_turns", "fallback_loop"])
async def test_bot_side_stops_other_than_timeout_fail_nothing_by_themselves(stop):
    verdict = await evaluate(make_conversation(["Hi."], stop_reason=stop), make_spec(Expectations(bot_says=["hi"])))
    check = by_name(verdict.checks, "conversation completed")
    assert check.outcome == "pass" and stop in check.reason
    assert verdict.outcome == "passed"


async def test_a_timeout_fails_the_conversation_completed_check():
    conv = make_conversation(["Let me check..."], stop_reason="timeout", error="The conversation took longer than its 30 s limit.")
    verdict = await evaluate(conv, make_spec(Expectations()))
    check = by_name(verdict.checks, "conversation completed")
    assert check.outcome == "fail" and check.reason == "Timed out: The conversation took longer than its 30 s limit."
    assert verdict.outcome == "failed" and verdict.score is None


@pytest.mark.parametrize("stop", ["user_error", "infrastructure_error", "cancelled", "error"])
async def test_a_run_broken_on_the_other_side_is_named_not_a_bot_failure(stop):
    conv = make_conversation(["Hi."], stop_reason=stop, error="openai/gpt-4o (user): server error (500)")
    spec = make_spec(Expectations(bot_says=["refund"], bot_never_says=["hi"], judge=JudgeSpec(rubric="be nice", min_score=2)))
    verdict = await evaluate(conv, spec)
    assert verdict.outcome == stop and not verdict.passed
    assert verdict.error == f"{stop}: openai/gpt-4o (user): server error (500)"
    assert verdict.score is None and verdict.judge is None  # never scored, least of all 1
    # checks the conversation never got to decide are "not run", never failed...
    not_run = by_name(verdict.checks, "bot says /refund/")
    assert not_run.outcome == "not_run" and not_run.reason.startswith(f"Not run: the conversation ended early ({stop}")
    assert by_name(verdict.checks, "conversation completed").outcome == "not_run"
    assert by_name(verdict.checks, "judge score >= 2").outcome == "not_run"
    # ...while what the bot already said stays decided
    assert by_name(verdict.checks, "bot never says /hi/").outcome == "fail"


async def test_a_bot_error_is_the_bots_failure_and_leaves_the_rest_not_run():
    state = WorldState(today=TODAY, statuses={"ORD-1004": "processing"}, audit=[])
    conv = make_conversation(["Hi."], stop_reason="bot_error", error="rasa:http://bot: HTTP 500 from /webhook: oops", final_state=state)
    verdict = await evaluate(conv, make_spec(Expectations(records=orders({"ORD-1004": "cancelled"}), bot_says=["hi", "refund"])))
    assert verdict.outcome == "bot_error" and not verdict.passed
    completed = by_name(verdict.checks, "conversation completed")
    assert completed.outcome == "fail" and "HTTP 500" in completed.reason
    assert by_name(verdict.checks, "bot says /hi/").outcome == "pass"  # said before it broke
    assert by_name(verdict.checks, "bot says /refund/").outcome == "not_run"
    assert by_name(verdict.checks, "ORD-1004 ends cancelled").outcome == "not_run"


# -- outputs in the verdict -------------------------------------------------------------------------


async def test_outputs_are_data_and_never_fail_the_verdict():
    outputs = [
        OutputField(name="when", type="date", description="delivery date"),
        OutputField(name="price", type="money", description="final price"),
    ]
    conv = make_conversation(["It will arrive tomorrow."])
    verdict = await evaluate(conv, make_spec(Expectations(), outputs=outputs))
    when, price = verdict.outputs
    assert (when.found, when.value, when.raw) == (True, "2026-11-22", "tomorrow")  # the spec's pinned today
    assert not price.found and price.value is None
    assert verdict.outcome == "unverified"  # an output that was not found fails nothing (nor checks anything)


async def test_a_verdict_survives_a_json_round_trip():
    conv = await converse(["cancel ORD-1004", "yes", "cancel ORD-1001", "yes"])
    spec = make_spec(
        Expectations(records=orders({"ORD-1004": "cancelled"}), bot_says=["cancelled"]),
        outputs=[OutputField(name="id", type="str", description="order id")],
    )
    verdict = await evaluate(conv, spec)
    again = type(verdict).model_validate_json(verdict.model_dump_json())
    assert again == verdict and [c.name for c in again.checks if c.outcome == "fail"] == ["ORD-1001 not expected to change"]
