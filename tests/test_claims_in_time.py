"""Claims are held in time: a claim is backed only by what the bot did before it or in its turn,
and the evidence names the turn of the action it cites."""

from __future__ import annotations

from parley.api import conversation, run_sync, say
from parley.core.evaluation.claims import claims_check
from parley.core.records import WorldDiff
from parley.mockapi.schema import AuditEntry
from tests import python_bots
from tests.conftest import PINNED_TODAY
from tests.test_eval_claims import NOON, bot, cancel_record, user
from tests.test_eval_claims import conversation as made


def test_a_cancellation_claimed_a_turn_before_the_call_is_not_backed(tmp_path):
    spec = conversation(
        "late", steps=[say("Please cancel ORD-1002."), say("Thanks.")], today=PINNED_TODAY, orders={"ORD-1002": "cancelled"}
    )
    result = run_sync(spec, bot=python_bots.cancels_a_turn_late, db=tmp_path / "p.db")
    [one] = result.conversations
    [claims] = [c for c in one.checks if c.name == "claims match actions"]
    assert claims.outcome == "fail", claims.reason
    assert (
        'Turn 1 (bot message 1 of 2) says "I have cancelled your order ORD-1002.", but no cancel_order for ORD-1002 succeeded by then: '
        "cancel_order ORD-1002 came only in turn 2, 1 turn later, and ORD-1002 was processing until then" in claims.reason
    )
    assert one.outcome == "failed"


def test_a_claim_after_the_call_names_the_turn_of_the_call():
    call = python_bots_call("ORD-1004")
    conv = made(
        [user("Cancel ORD-1004."), call[0], call[1], bot("Checking."), user("And?"), bot("I have cancelled your order ORD-1004.")],
        calls=[cancel_record("ORD-1004")],
        statuses={"ORD-1004": "cancelled"},
    )
    check = claims_check(conv)
    assert check.outcome == "pass"
    assert check.reason.endswith("Turn 2 (bot message 2 of 2): cancel_order ORD-1004 succeeded in turn 1.")


def test_the_final_state_backs_a_claim_only_when_parley_does_not_see_the_calls():
    # a bot whose calls parley records: the order became cancelled only later, by a call after the claim
    call = python_bots_call("ORD-1004")
    seen = made(
        [user("Cancel ORD-1004."), bot("ORD-1004 is now cancelled."), user("Really?"), call[0], call[1], bot("Now it is.")],
        calls=[cancel_record("ORD-1004")],
        statuses={"ORD-1004": "cancelled"},
    )
    audit = [AuditEntry(order_id="ORD-1004", customer_id="C-100", old_status="processing", new_status="cancelled", at=NOON, reason=None)]
    state = WorldDiff.model_validate(
        {"today": PINNED_TODAY, "statuses": {"ORD-1004": "cancelled"}, "audit": [a.model_dump(mode="json") for a in audit]}
    )
    seen = seen.model_copy(update={"final_state": state})
    check = claims_check(seen)
    assert check.outcome == "fail"
    assert "cancel_order ORD-1004 came only in turn 2, 1 turn later, and ORD-1004 was processing until then" in check.reason
    # one already cancelled before the conversation: the state as it stood backs it
    already = made(
        [user("Cancel ORD-1007."), call[0], call[1], bot("ORD-1007 is already cancelled.")],
        calls=[cancel_record("ORD-1007", ok=False)],
        statuses={"ORD-1007": "cancelled"},
    )
    assert claims_check(already).reason.endswith("ORD-1007 was cancelled from the start.")


def python_bots_call(order: str):
    from parley.core.records import ChatMessage, ToolCall

    return (
        ChatMessage(role="assistant", tool_calls=[ToolCall(id="c1", name="cancel_order", arguments=f'{{"order_id": "{order}"}}')]),
        ChatMessage(role="tool", content="{}", tool_call_id="c1", name="cancel_order"),
    )
