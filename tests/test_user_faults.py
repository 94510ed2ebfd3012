"""The simulator-fault detectors on transcripts made by hand, and what a flagged conversation's
verdict says: user_fault, not the bot's failure (unless the bot violated a policy)."""

from __future__ import annotations

import datetime as dt

import pytest

from parley.core.evaluation.user_faults import detect_user_faults
from parley.core.evaluation.verdicts import evaluate
from parley.core.records.chat import ChatMessage
from parley.core.records.conversation import Conversation
from parley.core.records.profile import Expectations
from parley.core.records.spec import ConversationSpec
from parley.core.records.verdict import CheckResult
from parley.mockapi.schema import AuditEntry, WorldState
from tests.test_eval_checks import as_diff, orders

T0 = dt.datetime(2026, 11, 21, 9, 0, tzinfo=dt.UTC)
TODAY = dt.date(2026, 11, 21)


def conversation(*turns: tuple[str, str], stop: str = "user_stop", user: str = "offline", state: WorldState | None = None) -> Conversation:
    """Messages from (role, text) pairs: "u" for the customer, "b" for the bot."""
    roles = {"u": "user", "b": "assistant"}
    return Conversation(
        id="c1",
        customer_id="C-100",
        bot_model="offline",
        user_simulator=user,
        messages=[ChatMessage(role=roles[r], content=t) for r, t in turns],
        started_at=T0,
        ended_at=T0,
        duration_s=1.0,
        stop_reason=stop,
        final_state=as_diff(state),
    )


def spec(goals=("cancel order ORD-1004",), kind: str = "profile", expect: Expectations | None = None) -> ConversationSpec:
    return ConversationSpec(spec_id="s#0", kind=kind, source="s.yaml", name="s", index=0, seed=1, goals=list(goals), expect=expect)


def kinds(conv: Conversation, s: ConversationSpec | None = None) -> list[str]:
    return [f.kind for f in detect_user_faults(conv, s or spec())]


GOOD = conversation(
    ("u", "Please cancel order ORD-1004."),
    ("b", 'ORD-1004 can be cancelled. Shall I cancel order ORD-1004 now? Please reply "yes" to confirm.'),
    ("u", "Yes, go ahead."),
    ("b", "Done! Order ORD-1004 has been cancelled."),
    ("u", "Thanks, that's all. Bye!"),
)


def test_a_good_customer_has_no_fault():
    assert detect_user_faults(GOOD, spec()) == []


@pytest.mark.parametrize("blank", ["", "   ", "\n\t"])
def test_an_empty_or_whitespace_turn(blank):
    conv = conversation(("u", "Cancel ORD-1004 please"), ("b", "Which order?"), ("u", blank), ("b", "Sorry?"))
    [fault] = detect_user_faults(conv, spec())
    assert (fault.kind, fault.turn) == ("empty_turn", 2)


def test_the_same_message_three_times_in_a_row():
    said = [("u", "Where is ORD-1004?"), ("b", "I'm sorry, I didn't understand that.")]
    twice = conversation(*said, ("u", "where is ord-1004"), ("b", "Sorry."))
    assert kinds(twice) == []  # twice is a retry, not a fault
    thrice = conversation(*said, ("u", "where is ORD-1004"), ("b", "Sorry."), ("u", "Where is ORD-1004??"), ("b", "Sorry."))
    [fault] = detect_user_faults(thrice, spec())
    assert (fault.kind, fault.turn) == ("repeated_message", 3) and "messages 1-3" in fault.reason
    apart = conversation(*said, ("u", "Cancel ORD-1004"), ("b", "ok"), ("u", "Where is ORD-1004?"), ("b", "ok"))
    assert kinds(apart) == []  # not in a row


@pytest.mark.parametrize(
    "line",
    [
        "How can I help you today?",
        "Is there anything else I can help you with?",
        "I'm the order assistant, ask me anything.",
        "As an AI, I cannot do that.",
        "Thank you for contacting us. Have a great day!",
    ],
)
def test_a_user_turn_that_speaks_as_the_assistant(line):
    conv = conversation(("u", "Cancel order ORD-1004"), ("b", "Done."), ("u", line), ("b", "..."))
    assert "speaks_as_assistant" in kinds(conv)


@pytest.mark.parametrize("line", ["Can you help me with my order?", "I need help: cancel ORD-1004", "Thanks for your help, bye"])
def test_a_customer_asking_for_help_is_not_talking_as_the_assistant(line):
    conv = conversation(("u", "cancel ORD-1004 " + line), ("b", "Done."))
    assert "speaks_as_assistant" not in kinds(conv)


def test_stopping_right_after_the_bot_asked_for_confirmation():
    asked = [("u", "Cancel order ORD-1004"), ("b", 'Shall I cancel order ORD-1004 now? Please reply "yes" to confirm.')]
    silent = conversation(*asked)
    assert kinds(silent) == ["stopped_after_question"]
    goodbye = conversation(*asked, ("u", "Thanks, bye!"))
    [fault] = detect_user_faults(goodbye, spec())
    assert fault.kind == "stopped_after_question" and fault.turn == 2 and "instead of answering" in fault.reason
    assert kinds(conversation(*asked, ("u", "No, thanks. Bye."))) == []  # an answer, then goodbye
    # a closing "anything else?" is answered by a goodbye
    closing = conversation(("u", "Cancel ORD-1004"), ("b", "Done! Anything else I can help you with?"), ("u", "No thanks, bye"))
    assert kinds(closing) == []
    # a bot that only echoes the customer's question asks nothing
    echo = conversation(("u", "When will ORD-1004 arrive?"), ("b", "echo: When will ORD-1004 arrive?"), ("u", "Bye."))
    assert kinds(echo) == []


def test_stopping_after_a_question_only_counts_when_the_user_stopped():
    asked = conversation(("u", "Cancel order ORD-1004"), ("b", "Which order would you like me to cancel?"), stop="max_turns")
    assert kinds(asked) == []


def test_never_stating_any_goal():
    off_topic = conversation(("u", "What's the weather like?"), ("b", "I can only help with orders."), ("u", "Bye"))
    [fault] = detect_user_faults(off_topic, spec(["cancel order ORD-1004", "list my orders"]))
    assert fault.kind == "no_goal_stated" and "cancel order ORD-1004" in fault.reason
    by_words = conversation(("u", "Could you show me all my orders?"), ("b", "Here they are."), ("u", "Bye"))
    assert kinds(by_words, spec(["cancel order ORD-1004", "list my orders"])) == []
    assert kinds(off_topic, spec([])) == []  # no goals, nothing to state


def test_nothing_is_detected_for_a_scripted_customer():
    conv = conversation(("u", "hi"), ("u", "hi"), ("u", "hi"), ("b", "How can I help you?"), user="playbook")
    assert detect_user_faults(conv, spec(kind="playbook")) == []


async def test_a_flagged_conversation_is_a_user_fault_not_the_bots_failure():
    conv = conversation(("u", "What's the weather like?"), ("b", "I can only help with orders."), ("u", "Bye"))
    verdict = await evaluate(conv, spec(expect=Expectations(bot_says=["cancelled"])))
    assert any(c.outcome == "fail" for c in verdict.checks)  # the check failed...
    assert verdict.outcome == "user_fault" and not verdict.passed  # ...but the simulator never asked
    assert [f.kind for f in verdict.user_faults] == ["no_goal_stated"]


async def test_a_policy_violation_is_the_bots_failure_whatever_the_user_did():
    state = WorldState(
        today=TODAY,
        statuses={"ORD-1004": "processing", "ORD-1005": "cancelled"},
        audit=[AuditEntry(order_id="ORD-1005", customer_id="C-100", old_status="processing", new_status="cancelled", at=T0, reason=None)],
    )
    conv = conversation(("u", "What's the weather like?"), ("b", "I cancelled ORD-1005."), ("u", "Bye"), state=state)
    verdict = await evaluate(conv, spec(expect=Expectations(records=orders({"ORD-1004": "processing"}))))
    assert verdict.policy_violations and verdict.user_faults
    assert verdict.outcome == "failed"


def test_check_results_stay_checks():
    # a user fault is not a check: it never shows up as a failed check in the exports
    assert "user_faults" not in CheckResult.model_fields
