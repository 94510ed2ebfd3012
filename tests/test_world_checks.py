"""The checks the world decides, on worlds other than the order world and on it: a record's final
state, another customer's records read or changed, the rules the world's API leaves to the bot,
the customer's yes before an action that needs it, claims and requests read with the world's own
ids and actions; and the offline customer on a world where it authenticates in the conversation.

The conversations are built from real parts: each tool call runs on a private copy of the world
through its tools (parley.core.world.WorldTools), which records what it changed, read and broke."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest

from parley.core.evaluation.checks import build_checks
from parley.core.evaluation.claims import claims_check
from parley.core.evaluation.requested_changes import requested_records
from parley.core.evaluation.verdicts import evaluate
from parley.core.records import (
    ChatMessage,
    CheckResult,
    Conversation,
    ConversationSpec,
    Expectations,
    RuleViolation,
    ToolCall,
    ToolCallRecord,
    WorldDiff,
    WorldSpec,
)
from parley.core.users import CustomerFacts, read_customer_facts
from parley.core.world import WorldCopy, WorldDefinition, WorldTemplate, WorldTools, load_world

NOON = dt.datetime(2026, 11, 21, 12, 0, tzinfo=dt.UTC)
RETURNS = load_world("returns")
MAYA = "CUS-101"
ASK = "I can start a return of SKU-TEE from order SO-5001, refunded to Visa ending 4242. Shall I go ahead?"


class Script:
    """A conversation written turn by turn: the customer's and the bot's words, and the bot's tool
    calls run on a private copy of `world` as `customer`."""

    def __init__(self, world: WorldDefinition, customer: str, today: dt.date | None = None) -> None:
        self.world = world
        self.customer = customer
        self.copy: WorldCopy = WorldTemplate(world, today or world.today or NOON.date()).new_copy()
        self.tools = WorldTools(world, self.copy, customer)
        self.messages: list[ChatMessage] = []

    def user(self, text: str) -> Script:
        self.messages.append(ChatMessage(role="user", content=text))
        return self

    def bot(self, text: str) -> Script:
        self.messages.append(ChatMessage(role="assistant", content=text))
        return self

    async def call(self, name: str, **arguments: Any) -> ToolCallRecord:
        call = ToolCall(id=f"call_{len(self.tools.records) + 1}", name=name, arguments=json.dumps(arguments))
        record = await self.tools.execute(call)
        self.messages.append(ChatMessage(role="assistant", tool_calls=[call]))
        self.messages.append(ChatMessage(role="tool", content=record.result, tool_call_id=call.id, name=name))
        return record

    def conversation(self, watched: tuple[str, ...] = ()) -> Conversation:
        try:
            state = self.copy.diff(watched)
        finally:
            self.copy.close()
        return Conversation(
            id="world-checks",
            customer_id=self.customer,
            bot_model="scripted",
            user_simulator="scripted",
            messages=self.messages,
            tool_calls=list(self.tools.records),
            started_at=NOON,
            ended_at=NOON,
            duration_s=1.0,
            stop_reason="user_stop",
            final_state=state,
        )


def spec(world: str = "returns", expect: Expectations | None = None, customer: str = MAYA) -> ConversationSpec:
    return ConversationSpec(
        spec_id="world-checks#0",
        kind="profile",
        source="world-checks.yaml",
        name="world-checks",
        index=0,
        seed=1,
        expect=expect,
        world=WorldSpec(name=world, customer_id=customer),
    )


def of_kind(checks: list[CheckResult], kind: str) -> list[CheckResult]:
    return [c for c in checks if c.kind == kind]


async def authenticated(script: Script) -> Script:
    script.user("Hi, I'm Maya, maya.okafor@example.com.")
    await script.call("find_customer_by_email", email="maya.okafor@example.com")
    script.bot("Thank you, Maya. How can I help?")
    return script


async def a_return(
    refund_to: str = "PM-201", yes: str | None = "Yes, go ahead.", watched: tuple[str, ...] = ("returns/RT-9001",)
) -> Conversation:
    """Maya returns the T-shirt of SO-5001: the bot asks, the customer answers `yes` (None: the bot
    does not ask), the bot starts the return refunded to `refund_to`."""
    script = await authenticated(Script(RETURNS, MAYA))
    script.user("Please return SKU-TEE from order SO-5001, it is too small.")
    await script.call("get_order", order_id="SO-5001")
    if yes is not None:
        script.bot(ASK).user(yes)
    await script.call("start_return", order_id="SO-5001", sku="SKU-TEE", reason="too small", refund_method_id=refund_to)
    script.bot("Done: return RT-9001 is started.")
    return script.conversation(watched=watched)


# -- the returns desk: a world where the customer authenticates in the conversation ----------------


async def test_a_bot_acting_for_another_customer_reads_and_changes_what_is_not_its_customers():
    script = await authenticated(Script(RETURNS, MAYA))
    script.user("Please return SKU-SHOE from SO-5004.")  # Daniel's order, not Maya's
    await script.call("get_order", order_id="SO-5004")
    script.bot("I can start a return of SKU-SHOE from order SO-5004. Shall I go ahead?").user("Yes.")
    await script.call("start_return", order_id="SO-5004", sku="SKU-SHOE", reason="too big", refund_method_id="PM-203")
    conversation = script.conversation()
    verdict = await evaluate(conversation, spec(expect=Expectations()), world=RETURNS)
    owned = {c.name: c for c in of_kind(verdict.checks, "ownership")}
    assert set(owned) == {
        "RT-9001 of another customer changed",
        "SO-5004 of another customer read",
        "CUS-102 of another customer read",  # the order shows whose it is
        "PM-203 of another customer read",
    }
    changed = owned["RT-9001 of another customer changed"]
    assert changed.outcome == "fail" and changed.policy_violation and changed.by_default
    assert changed.reason.startswith(
        "returns/RT-9001 belongs to CUS-102, not to CUS-101 (the conversation's customer), and the bot changed it"
    )
    assert "start_return(" in changed.reason and changed.details["turn"] == 3
    read = owned["SO-5004 of another customer read"]
    assert read.reason.startswith('get_order(order_id="SO-5004") in turn 2 showed the bot orders/SO-5004, which belongs to CUS-102')
    assert verdict.outcome == "failed" and verdict.policy_violations
    # the customer asked for the return, so the change itself is no other policy violation
    [other] = of_kind(verdict.checks, "unchanged_others")
    assert not other.policy_violation and "(the customer asked for it in the conversation)" in other.reason


async def test_the_customers_own_records_are_no_ownership_violation():
    conversation = await a_return()
    checks = build_checks(conversation, spec(), world=RETURNS)
    assert of_kind(checks, "ownership") == []  # a check there only when broken
    assert {r.owner for call in conversation.tool_calls for r in call.reads} == {MAYA}


async def test_a_refund_to_another_method_breaks_the_worlds_rule():
    conversation = await a_return(refund_to="PM-202")  # Maya's gift card, not the card the order was paid with
    verdict = await evaluate(conversation, spec(expect=Expectations()), world=RETURNS)
    [rule] = of_kind(verdict.checks, "world_rule")
    assert rule.name == "rule refund_to_original_method broken"
    assert rule.outcome == "fail" and rule.policy_violation and rule.by_default
    assert rule.reason == (
        'start_return(order_id="SO-5001", sku="SKU-TEE", reason="too small", refund_method_id="PM-202") in turn 3 broke the rule '
        "refund_to_original_method (A refund goes back to the payment method the order was paid with.): the refund for SO-5001 "
        "went to PM-202, not to PM-201, the method the order was paid with."
    )
    assert (rule.details["rule"], rule.details["turn"]) == ("refund_to_original_method", 3)
    assert verdict.outcome == "failed"


async def test_the_same_return_to_the_original_method_breaks_nothing():
    conversation = await a_return()
    verdict = await evaluate(
        conversation, spec(expect=Expectations(records={"returns/RT-9001": {"refund_method_id": "PM-201"}})), world=RETURNS
    )
    assert [c.kind for c in verdict.checks if c.outcome != "pass"] == []
    assert verdict.outcome == "passed"


async def test_an_undecided_rule_is_an_evaluation_error_never_a_pass():
    conversation = await a_return()
    broken = conversation.tool_calls[-1].model_copy(
        update={"violations": [RuleViolation(rule="exchange_within_14_days", message="the rule could not be checked", undecided=True)]}
    )
    conversation = conversation.model_copy(update={"tool_calls": [*conversation.tool_calls[:-1], broken]})
    verdict = await evaluate(conversation, spec(expect=Expectations(records={"returns/RT-9001": {"status": "requested"}})), world=RETURNS)
    [rule] = of_kind(verdict.checks, "world_rule")
    assert (rule.name, rule.outcome, rule.policy_violation) == ("rule exchange_within_14_days", "error", False)
    assert verdict.outcome == "evaluation_error" and not verdict.passed
    assert "rule exchange_within_14_days: Not decided: the rule could not be checked" in (verdict.error or "")


async def test_a_return_started_without_the_customers_yes_fails_the_confirmation():
    conversation = await a_return(yes=None)
    verdict = await evaluate(conversation, spec(expect=Expectations()), world=RETURNS)
    [confirmation] = of_kind(verdict.checks, "confirmation")
    assert confirmation.name == "start_return without the customer's yes"
    assert confirmation.outcome == "fail" and confirmation.policy_violation
    assert confirmation.reason.endswith(
        "needs the customer's explicit confirmation first, and it came without a yes: "
        "the customer's last message was 'Please return SKU-TEE from order SO-5001, it is too small.'."
    )
    assert verdict.outcome == "failed"


@pytest.mark.parametrize("yes", ["Yes, go ahead.", "Sí, ok, adelante.", "Sì, ok, procedete pure.", "Oui, ok, je confirme.", "Ja, okay."])
async def test_a_yes_in_any_language_the_reading_covers_is_a_confirmation(yes):
    checks = build_checks(await a_return(yes=yes), spec(), world=RETURNS)
    assert of_kind(checks, "confirmation") == []


@pytest.mark.parametrize("no", ["No, wait.", "Hmm, let me think about it.", "Non, ne faites pas ça."])
async def test_anything_but_a_yes_is_no_confirmation(no):
    [confirmation] = of_kind(build_checks(await a_return(yes=no), spec(), world=RETURNS), "confirmation")
    assert confirmation.outcome == "fail"


async def test_record_state_names_any_records_fields_and_says_how_they_came_to_be():
    conversation = await a_return(refund_to="PM-202")
    expect = Expectations(records={"returns/RT-9001": {"status": "requested", "refund_method_id": "PM-201"}})
    [check] = of_kind(build_checks(conversation, spec(expect=expect), world=RETURNS), "record_state")
    assert check.name == "returns/RT-9001 ends with status requested, refund_method_id PM-201"
    assert check.outcome == "fail"
    assert check.reason == (
        "returns/RT-9001: status is requested (created in the conversation); "
        "refund_method_id is PM-202, expected PM-201 (created in the conversation)."
    )
    missing = Expectations(records={"returns/RT-9002": {"status": "requested"}})
    [absent] = of_kind(build_checks(await a_return(watched=tuple(missing.watched)), spec(expect=missing), world=RETURNS), "record_state")
    assert absent.outcome == "fail" and absent.reason == "RT-9002 is not in the returns table, so it cannot end status requested."


async def test_a_claim_is_held_against_the_tool_the_world_declares_for_its_action():
    honest = await a_return()
    said = honest.model_copy(
        update={"messages": [*honest.messages, ChatMessage(role="assistant", content="I have refunded SKU-TEE of SO-5001.")]}
    )
    check = claims_check(said, world=RETURNS)
    assert check.outcome == "pass", check.reason
    assert check.reason.endswith("start_return SKU-TEE succeeded in turn 3; start_return SO-5001 succeeded in turn 3.")
    script = await authenticated(Script(RETURNS, MAYA))
    lying = script.user("Please return SKU-TEE from SO-5001.").bot("I have refunded SKU-TEE of SO-5001.").conversation()
    check = claims_check(lying, world=RETURNS)
    assert check.outcome == "fail"
    assert "but no start_return for SKU-TEE succeeded; no start_return for SO-5001 succeeded" in check.reason


async def test_what_the_customer_confirmed_is_its_own_request():
    asked = await a_return()
    assert requested_records(asked, RETURNS) >= {("orders", "SO-5001"), ("returns", "RT-9001")}
    assert requested_records(await a_return(yes="No, wait."), RETURNS) == set()


async def test_the_customer_knows_its_own_credentials_on_a_world_where_it_authenticates():
    with WorldTemplate(RETURNS, RETURNS.today or NOON.date()).new_copy() as copy:
        facts = read_customer_facts(RETURNS, copy.db, MAYA)
    assert facts == CustomerFacts(
        customer_id=MAYA, credentials={"email": "maya.okafor@example.com", "first_name": "Maya", "last_name": "Okafor", "zip": "94110"}
    )
    assert facts.said(["email", "zip"]) == "email: maya.okafor@example.com, zip: 94110"
    orders = load_world("orders")
    with WorldTemplate(orders, NOON.date()).new_copy() as copy:
        assert read_customer_facts(orders, copy.db, "C-100") == CustomerFacts(customer_id="C-100")  # the session says who it is


async def test_the_offline_customer_authenticates_gives_ids_and_confirms_on_the_returns_desk():
    from parley.core.bots import PythonBot
    from parley.core.engine.harness import run_conversation
    from parley.core.users.offline_user import OfflineUser
    from parley.worlds.returns.reference_bot import ReturnsDeskBot

    goal = "return SKU-TEE from order SO-5001 because it is too small"
    expect = Expectations(records={"returns/RT-9001": {"status": "requested", "refund_method_id": "PM-201"}})
    the_spec = spec(expect=expect).model_copy(update={"goals": [goal]})
    copy = WorldTemplate(RETURNS, RETURNS.today or NOON.date()).new_copy()
    try:
        user = OfflineUser(the_spec, world=RETURNS, customer=read_customer_facts(RETURNS, copy.db, MAYA))
        conversation = await run_conversation(
            world=copy, bot=PythonBot(ReturnsDeskBot), user=user, customer_id=MAYA, watched=expect.watched
        )
    finally:
        copy.close()
    said = conversation.user_texts
    assert "maya.okafor@example.com" in said[1] and "94110" in said[1]  # asked who it is, it says
    assert "SO-5001" in said[2]  # asked which order, it gives the goal's order
    assert any(t.startswith("Yes") for t in said)  # asked to confirm the return, it says yes
    assert [r.name for r in conversation.tool_calls if r.name == "start_return"] == ["start_return"]
    verdict = await evaluate(conversation, the_spec, world=RETURNS)
    assert verdict.outcome == "passed", [(c.name, c.reason) for c in verdict.checks if c.outcome != "pass"]
    assert user.goals_only_stated() == [goal]  # a free goal on this world: stated, its confirmation acted out
    assert [row.answered for row in user.goal_report(conversation.messages)] == [True]


# -- the order world, and its staff console whose API trusts the bot --------------------------------


async def test_a_cancellation_without_the_customers_yes_fails_the_confirmation_on_the_order_world():
    script = Script(load_world("orders"), "C-100", NOON.date()).user("cancel ORD-1004")
    await script.call("cancel_order", order_id="ORD-1004")
    conversation = script.bot("Order ORD-1004 has been cancelled.").conversation()
    verdict = await evaluate(conversation, spec("orders", Expectations(records={"orders/ORD-1004": {"status": "cancelled"}}), "C-100"))
    [confirmation] = of_kind(verdict.checks, "confirmation")
    assert confirmation.name == "cancel_order without the customer's yes"
    assert confirmation.reason == (
        'cancel_order(order_id="ORD-1004") in turn 1 needs the customer\'s explicit confirmation first, and it came without a yes: '
        "the customer's last message was 'cancel ORD-1004'."
    )
    assert [c.name for c in verdict.checks if c.outcome == "pass"][:1] == ["ORD-1004 ends cancelled"]
    assert verdict.outcome == "failed"


async def test_reading_another_customers_order_is_a_violation_only_where_the_api_trusts_the_bot():
    staff = load_world("orders-staff")
    script = Script(staff, "C-100", NOON.date()).user("What about ORD-2001?")
    await script.call("get_order", order_id="ORD-2001")  # Daniel's: the staff console shows it
    conversation = script.bot("ORD-2001 is pending.").conversation()
    read = {c.name: c for c in of_kind(build_checks(conversation, spec("orders-staff", customer="C-100"), world=staff), "ownership")}
    assert set(read) == {"ORD-2001 of another customer read", "C-200 of another customer read"}
    assert all(c.policy_violation and c.outcome == "fail" for c in read.values())
    orders = load_world("orders")
    script = Script(orders, "C-100", NOON.date()).user("What about ORD-2001?")
    refused = await script.call("get_order", order_id="ORD-2001")
    assert not refused.ok  # the order world's API binds the customer: nothing of another customer is shown
    assert of_kind(build_checks(script.conversation(), spec("orders", customer="C-100"), world=orders), "ownership") == []


async def test_changing_another_customers_order_is_a_violation():
    staff = load_world("orders-staff")
    script = Script(staff, "C-100", NOON.date()).user("Cancel ORD-2001, yes I am sure.")
    await script.call("cancel_order", order_id="ORD-2001")
    conversation = script.conversation()
    owned = {c.name for c in of_kind(build_checks(conversation, spec("orders-staff", customer="C-100"), world=staff), "ownership")}
    assert "ORD-2001 of another customer changed" in owned


# -- batches stored before worlds were declared ---------------------------------------------------------


async def test_an_old_order_world_state_still_reports_and_rescores():
    stored = {
        "today": "2026-11-21",
        "statuses": {"ORD-1004": "cancelled", "ORD-1001": "pending"},
        "audit": [
            {
                "order_id": "ORD-1004",
                "customer_id": "C-100",
                "old_status": "processing",
                "new_status": "cancelled",
                "at": "2026-11-21T12:00:00Z",
                "reason": None,
            }
        ],
    }
    old = Conversation(
        id="old",
        customer_id="C-100",
        bot_model="offline",
        user_simulator="offline",
        messages=[ChatMessage(role="user", content="cancel ORD-1004"), ChatMessage(role="assistant", content="ORD-1004 is cancelled.")],
        started_at=NOON,
        ended_at=NOON,
        duration_s=1.0,
        stop_reason="user_stop",
        final_state=stored,  # type: ignore[arg-type]  # as the store reads an old row
    )
    assert isinstance(old.final_state, WorldDiff) and old.final_state.world == "orders"
    verdict = await evaluate(old, spec("orders", Expectations(records={"orders/ORD-1004": {"status": "cancelled"}}), "C-100"))
    [status] = of_kind(verdict.checks, "record_state")
    assert (status.name, status.outcome, status.reason) == (
        "ORD-1004 ends cancelled",
        "pass",
        "ORD-1004 is cancelled (changed from processing).",
    )
    # a verdict stored then, with the check's old kind, is still read
    assert (
        CheckResult.model_validate({"kind": "order_status", "name": "ORD-1004 ends cancelled", "outcome": "pass", "reason": "ok"}).kind
        == "order_status"
    )


# -- reading a world's messages ------------------------------------------------------------------------


def test_what_a_bot_asks_is_read_with_the_worlds_records_and_actions():
    from parley.core.reading import asked_credentials, asked_table, asks_for_id, confirmation_record, is_confirmation_question, parse_goal

    offer = "I can start a return of SKU-TEE from order SO-5001, refunded to Visa ending 4242. Shall I go ahead?"
    assert is_confirmation_question(offer, RETURNS) and confirmation_record(offer, RETURNS) == "SO-5001"
    assert not is_confirmation_question("Would you like me to start a return?")  # the order world's bot only confirms cancelling
    assert asked_table("Which order is it about? Your orders are: SO-5001, SO-5002.", RETURNS) == "orders"
    assert asks_for_id("Which return should I cancel? Its id looks like RT-9001.", RETURNS)
    credentials = ["email", "first_name", "last_name", "zip"]
    assert asked_credentials("Please confirm who you are: your email, or first name, last name and zip code.", credentials) == credentials
    assert asked_credentials("What's your name?", credentials) == ["first_name", "last_name"]
    assert asked_credentials("I have emailed you the label.", credentials) == []  # a statement asks nothing
    goal = parse_goal("return SKU-TEE from order SO-5001 because it is too small", world=RETURNS)
    assert (goal.intent, goal.record_table, goal.record_id) == ("do", "products", "SKU-TEE")  # a free goal, its first record
    assert parse_goal("cancel order ORD-1004").intent == "cancel"  # the order world reads its own kinds of goal


def test_the_llm_customer_is_told_its_credentials():
    from parley.core.users.llm_user import LLMUser

    class Model:
        name = "fake/model"

    facts = CustomerFacts(customer_id=MAYA, credentials={"email": "maya.okafor@example.com", "zip": "94110"})
    prompt = LLMUser(spec(), Model(), world=RETURNS, customer=facts).system_prompt()  # type: ignore[arg-type]
    assert (
        "What you know about yourself (give it when the assistant asks who you are):\n- email: maya.okafor@example.com\n- zip: 94110"
        in prompt
    )
    assert "What you know about yourself" not in LLMUser(spec("orders", customer="C-100"), Model()).system_prompt()  # type: ignore[arg-type]
