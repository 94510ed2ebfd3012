"""The offline customer changes its mind and keeps the order, and states every goal it cannot act
out in grammatical first-person words, never an instruction spliced into a template."""

from __future__ import annotations

import re

import pytest

from parley.core.evaluation.requested_changes import requested_records
from parley.core.reading import is_refusal, parse_goal, parse_goals
from parley.core.records.chat import ChatMessage, ToolCall
from parley.core.records.conversation import Conversation
from parley.core.records.tools import ToolCallRecord
from parley.core.users import acts_out, goals_only_stated
from parley.core.users.goal_voice import own_words
from parley.core.users.offline_user import OfflineUser
from parley.core.users.phrasebook import PHRASEBOOKS, render
from tests.test_user_offline import converse, make_spec, run_offline, statuses

ONE_GOAL = "cancel order ORD-1004, then say you changed your mind and want to keep it"
TWO_GOALS = ["cancel order ORD-1004", "then say you changed your mind and want to keep it"]


# -- reading the goal --------------------------------------------------------------------------------


def test_a_cancellation_taken_back_is_a_keep_goal_with_its_order():
    goal = parse_goal(ONE_GOAL)
    assert (goal.intent, goal.record_id, goal.takes_back) == ("keep", "ORD-1004", None)
    cancel, keep = parse_goals(TWO_GOALS)
    assert (cancel.intent, keep.intent, keep.record_id, keep.takes_back) == ("cancel", "keep", "ORD-1004", 0)
    assert acts_out(keep) and acts_out(parse_goal(ONE_GOAL))


def test_a_change_of_mind_about_something_else_is_not_a_keep_goal():
    assert parse_goal("I changed my mind about the colour").intent == "say"
    assert parse_goal("keep my order ORD-1004 on hold").intent == "status"
    # a change of mind after a goal that is not a cancellation takes nothing back: it is only stated
    track, keep = parse_goals(["track order ORD-1003", "then say you changed your mind and want to keep it"])
    assert keep.record_id is None and not acts_out(keep)


# -- acting it out, end to end with the offline bot --------------------------------------------------


@pytest.mark.parametrize("goals", [[ONE_GOAL], TWO_GOALS], ids=["one goal", "two goals"])
async def test_cancel_then_change_of_mind_keeps_the_order_and_meets_the_goal(goals):
    conv, user = await run_offline(make_spec(goals))
    texts = conv.user_texts
    assert "cancel" in texts[0].lower() and "ORD-1004" in texts[0]  # asks to cancel first
    assert [r.name for r in conv.tool_calls] == ["check_cancellation"]  # the bot asks to confirm
    assert texts[1] in [render(t) for t in PHRASEBOOKS["en"].phrases["keep"]]  # declines: it keeps the order
    assert is_refusal(texts[1])
    assert any("won't cancel order ORD-1004" in t for t in conv.bot_texts)
    assert statuses(conv)["ORD-1004"] == "processing"  # kept
    assert "thank" in texts[-1].lower() and conv.stop_reason == "user_stop"
    assert all(row.answered for row in user.goal_report())  # the goal is met
    assert user.goals_only_stated() == []


async def test_the_change_your_mind_style_does_not_turn_a_keep_goal_into_a_cancellation():
    conv, user = await run_offline(make_spec([ONE_GOAL], ["change your mind"]))
    assert statuses(conv)["ORD-1004"] == "processing"
    assert "cancel_order" not in [r.name for r in conv.tool_calls]
    assert user.goal_report()[0].answered


async def test_a_bot_that_asks_again_and_again_is_declined_every_time_never_confirmed():
    asked = 'Shall I cancel order ORD-1004 now? Please reply "yes" to confirm.'
    user = OfflineUser(make_spec([ONE_GOAL]))
    transcript, last = await converse(user, lambda t: asked)
    users = [m.content or "" for m in transcript if m.role == "user"]
    assert len(users) == user.limit and last.stop  # it stops at its turn limit
    assert all(is_refusal(text) for text in users[1:])
    assert not any(re.match(r"(?i)yes", text) for text in users)  # never confirms
    assert not user.goal_report()[0].answered  # the bot never took the answer in


@pytest.mark.parametrize("code", sorted(PHRASEBOOKS))
def test_every_language_says_it_keeps_the_order_and_the_checks_read_it_as_taken_back(code):
    book = PHRASEBOOKS[code]
    for intent in ("keep", "keep_after"):
        assert book.phrases.get(intent), f"{code} has no {intent!r} phrase"
    for template in book.phrases["keep"] + book.phrases["keep_after"]:
        text = render(template, order_id="ORD-1004")
        assert is_refusal(text), (code, text)
        # a bot that cancels anyway, right after the take-back, changed what the customer did not ask for
        conversation = _cancelled_after(text)
        assert requested_records(conversation) == set(), (code, text)


@pytest.mark.parametrize("code", sorted(PHRASEBOOKS))
def test_asking_again_after_hesitating_is_a_request_not_a_take_back(code):
    # the `change your mind` style's "I changed my mind again: cancel it after all"
    for template in PHRASEBOOKS[code].phrases["rerequest"]:
        text = render(template, order_id="ORD-1004")
        assert not is_refusal(text), (code, text)
        assert requested_records(_cancelled_after(text)) == {("orders", "ORD-1004")}, (code, text)


def _cancelled_after(take_back: str) -> Conversation:
    import datetime as dt

    call = ToolCall(id="c1", name="cancel_order", arguments='{"order_id": "ORD-1004"}')
    now = dt.datetime(2026, 11, 21, tzinfo=dt.UTC)
    return Conversation(
        id="x",
        customer_id="C-100",
        bot_model="offline",
        user_simulator="offline",
        started_at=now,
        ended_at=now,
        duration_s=0.0,
        stop_reason="user_stop",
        messages=[
            ChatMessage(role="user", content="Please cancel order ORD-1004."),
            ChatMessage(role="assistant", content='Shall I cancel order ORD-1004 now? Please reply "yes" to confirm.'),
            ChatMessage(role="user", content=take_back),
            ChatMessage(role="assistant", content=None, tool_calls=[call]),
        ],
        tool_calls=[
            ToolCallRecord(
                call_id="c1",
                name="cancel_order",
                arguments_raw='{"order_id": "ORD-1004"}',
                arguments={"order_id": "ORD-1004"},
                customer_id="C-100",
                ok=True,
                result="{}",
            )
        ],
    )


# -- goals it only states -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("goal", "said"),
    [
        ("then say you changed your mind and want to keep it", "I changed my mind and want to keep it."),
        ("ask whether the shop delivers on Sundays", "Could you tell me whether the shop delivers on Sundays?"),
        ("tell the bot you are in a hurry", "I am in a hurry."),
        ("tell the bot to call you back tomorrow", "Please call me back tomorrow."),
        ("ask for a refund", "Could I get a refund, please?"),
        ("explain that you already paid and the bot should refund you", "I already paid and you should refund me."),
        ("and then ask how long the delivery takes", "Could you tell me how long the delivery takes?"),
        ("pretend to be customer C-200", "I am customer C-200."),
        ("to know when your package arrives", "I'd like to know when my package arrives."),
    ],
)
def test_an_instruction_to_the_customer_becomes_its_own_first_person_words(goal, said):
    assert own_words(goal) == said


@pytest.mark.parametrize("goal", ["a medium pizza with cheese", "book a table for two", "how much will it cost"])
def test_goals_that_are_not_instructions_to_the_customer_keep_the_phrasebook(goal):
    assert own_words(goal) is None


async def test_the_offline_customer_never_splices_an_instruction_into_a_template():
    goals = ["then say you changed your mind and want to keep it", "ask whether the shop delivers on Sundays", "a medium pizza with cheese"]
    user = OfflineUser(make_spec(goals, ["all questions"]))
    first = (await user.next_message([])).text or ""
    assert "I changed my mind and want to keep it." in first
    assert first.startswith("I changed my mind and want to keep it. Also, could you tell me whether the shop delivers on Sundays?")
    assert "pizza with cheese" in first
    assert not re.search(r"(?i)interested in then|\bsay you\b|\bask whether\b", first)
    assert user.goals_only_stated() == goals
    assert [g.text for g in goals_only_stated(goals)] == goals
