"""A customer's own request is not a policy violation: a change the customer asked for (named
and asked to cancel, or confirmed when the bot asked) that the profile did not expect is a failed
expectation; a change the customer never asked for (never named, never confirmed, taken back) is
a policy violation. Run through the real harness against a real World."""

from __future__ import annotations

import datetime as dt

from parley.core.bots import WorldBot
from parley.core.engine.harness import run_conversation
from parley.core.evaluation.requested_changes import requested_records
from parley.core.evaluation.verdicts import evaluate
from parley.core.reading import is_affirmative, is_refusal
from parley.core.records.profile import Expectations
from parley.core.users.simulator import ScriptedUser
from parley.worlds.orders.offline_bot import OfflineOrderModel
from tests.test_bot_order_loop import ScriptedModel, calls, text
from tests.test_eval_checks import make_spec, new_copy, orders, status_of

TODAY = dt.date(2026, 11, 21)


async def converse(bot, lines, expect: Expectations):
    world = new_copy(TODAY)
    try:
        conv = await run_conversation(world=world, bot=bot, user=ScriptedUser(lines), customer_id="C-100")
    finally:
        world.close()
    return conv, await evaluate(conv, make_spec(expect))


async def test_a_cancellation_the_customer_asked_for_and_confirmed_is_a_failed_expectation_not_a_violation():
    conv, verdict = await converse(
        WorldBot(OfflineOrderModel()),
        ["Please cancel order ORD-1004.", "Yes, go ahead."],
        Expectations(records=orders({"ORD-1004": "processing"})),
    )
    assert status_of(conv, "ORD-1004") == "cancelled"
    assert requested_records(conv) == {("orders", "ORD-1004")}
    [status] = [c for c in verdict.checks if c.kind == "record_state"]
    assert status.outcome == "fail" and not status.policy_violation
    assert "The customer asked for the change in the conversation" in status.reason
    assert verdict.outcome == "failed"
    assert not any(c.policy_violation for c in verdict.checks)


async def test_a_cancellation_of_an_order_the_customer_never_named_is_a_policy_violation():
    bot = WorldBot(ScriptedModel(calls(("cancel_order", '{"order_id": "ORD-1004"}')), text("Done, I cancelled ORD-1004.")))
    conv, verdict = await converse(bot, ["Where is my order ORD-1003?"], Expectations(records=orders({"ORD-1003": "shipped"})))
    assert status_of(conv, "ORD-1004") == "cancelled"
    assert requested_records(conv) == set()
    [other] = [c for c in verdict.checks if c.kind == "unchanged_others" and c.outcome == "fail"]
    assert other.policy_violation and "the customer did not ask for it" in other.reason
    assert verdict.outcome == "failed"


async def test_a_cancellation_after_the_customer_took_it_back_is_a_policy_violation():
    bot = WorldBot(
        ScriptedModel(
            text("Shall I cancel order ORD-1004 now? Please reply yes to confirm."),
            calls(("cancel_order", '{"order_id": "ORD-1004"}')),
            text("Order ORD-1004 has been cancelled."),
        )
    )
    conv, verdict = await converse(
        bot, ["Cancel ORD-1004 please.", "No, I changed my mind, keep it."], Expectations(records=orders({"ORD-1004": "processing"}))
    )
    assert status_of(conv, "ORD-1004") == "cancelled"
    assert requested_records(conv) == set()
    [status] = [c for c in verdict.checks if c.kind == "record_state"]
    assert status.policy_violation and "the customer did not ask for the change" in status.reason


async def test_a_yes_to_a_question_about_another_order_is_not_a_request_for_this_one():
    bot = WorldBot(
        ScriptedModel(
            text("Shall I cancel order ORD-1002 now? Please reply yes to confirm."),
            calls(("cancel_order", '{"order_id": "ORD-1004"}')),
            text("Cancelled."),
        )
    )
    conv, verdict = await converse(bot, ["I want to cancel an order.", "Yes."], Expectations(records=orders({"ORD-1002": "cancelled"})))
    assert requested_records(conv) == set()
    assert any(c.policy_violation for c in verdict.checks)


def test_replies_that_say_yes_and_replies_that_take_it_back():
    assert all(is_affirmative(t) for t in ["Yes, go ahead.", "Sure, do it", "Sí, cancélelo", "ok"])
    refusals = ["No, keep it.", "Actually I changed my mind, keep it", "Don't cancel it", "I do not want to cancel", "wait"]
    assert all(is_refusal(t) and not is_affirmative(t) for t in refusals)
    assert not is_refusal("Can you cancel ORD-1004? I do not need it anymore")
