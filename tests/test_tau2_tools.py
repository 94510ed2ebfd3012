"""Each tool of tau2 26.3's retail (15) and airline (14) worlds answers as tau2's own does: the
result text, the refusal with its condition, the changes, checked against what tau2's environment
answered to the same calls (tests/tau2_recorded.py, recorded by tests/tau2_recorder.py)."""

from __future__ import annotations

import time

import pytest

from parley.core.world import WorldTools
from parley.worlds.tau2.arithmetic import CalculationError, calculate
from parley.worlds.tau2.tau2_db import tau2_hash
from tests.tau2_recorded import PROBES, PROBES_DB_HASH
from tests.tau2_support import call, message_of, tau2_outcome, world_and_template

RETAIL_TOOLS = {
    "calculate",
    "cancel_pending_order",
    "exchange_delivered_order_items",
    "find_user_id_by_name_zip",
    "find_user_id_by_email",
    "get_order_details",
    "get_product_details",
    "get_user_details",
    "list_all_product_types",
    "modify_pending_order_address",
    "modify_pending_order_items",
    "modify_pending_order_payment",
    "modify_user_address",
    "return_delivered_order_items",
    "transfer_to_human_agents",
}
AIRLINE_TOOLS = {
    "book_reservation",
    "calculate",
    "cancel_reservation",
    "get_reservation_details",
    "get_user_details",
    "list_all_airports",
    "search_direct_flight",
    "search_onestop_flight",
    "send_certificate",
    "transfer_to_human_agents",
    "update_reservation_baggages",
    "update_reservation_flights",
    "update_reservation_passengers",
    "get_flight_status",
}

# Every refusal each tool can give on tau2's data (its own and those of the lookups it makes first),
# by the start of tau2's text; the probes must reach each one.
RETAIL_REFUSALS = {
    "calculate": ["Invalid characters in expression", "division by zero", "invalid syntax"],
    "find_user_id_by_email": ["User not found"],
    "find_user_id_by_name_zip": ["User not found"],
    "get_user_details": ["User not found"],
    "get_order_details": ["Order not found"],
    "get_product_details": ["Product not found"],
    "cancel_pending_order": ["Non-pending order cannot be cancelled", "Invalid reason"],
    "modify_pending_order_address": ["Non-pending order cannot be modified"],
    "modify_pending_order_payment": [
        "Non-pending order cannot be modified",
        "Payment method not found",
        "The new payment method should be different from the current one",
        "Insufficient gift card balance to pay for the order",
        "There should be exactly one payment for a pending order",
    ],
    "modify_pending_order_items": [
        "Non-pending order cannot be modified",
        "0000000000 not found",
        "The number of items to be exchanged should match",
        "The new item id should be different from the old item id",
        "Variant not found",
        "New item",
        "Payment method not found",
        "Insufficient gift card balance to pay for the new item",
    ],
    "exchange_delivered_order_items": [
        "Non-delivered order cannot be exchanged",
        "Number of 0000000000 not found.",
        "The number of items to be exchanged should match.",
        "Variant not found",
        "New item",
        "Payment method not found",
        "Insufficient gift card balance to pay for the price difference",
    ],
    "return_delivered_order_items": [
        "Non-delivered order cannot be returned",
        "Payment method not found",
        "Payment method should be the original payment method",
        "Some item not found",
    ],
    "modify_user_address": ["User not found"],
}
AIRLINE_REFUSALS = {
    "calculate": ["division by zero"],
    "get_user_details": ["User nobody_0000 not found"],
    "get_reservation_details": ["Reservation ZZZZZZ not found"],
    "get_flight_status": ["Flight HAT999 not found", "Flight HAT001 not found on date"],
    "send_certificate": ["User nobody_0000 not found", "Too many certificates"],
    "book_reservation": [
        "User nobody_0000 not found",
        "Flight HAT001 not available on date",
        "Flight HAT999 not found",
        "Flight HAT002 not found on date",
        "Not enough seats on flight",
        "Payment method credit_card_0000000 not found",
        "Not enough balance in payment method",
        "Payment amount does not add up",
        "Too many reservations",
    ],
    "update_reservation_baggages": [
        "Reservation ZZZZZZ not found",
        "Payment method not found",
        "Certificate cannot be used to update reservation",
        "Gift card balance is not enough",
    ],
    "update_reservation_flights": ["Flight HAT999 not found", "Flight HAT001 not available on date", "Certificate cannot be used"],
    "update_reservation_passengers": ["Number of passengers does not match"],
    "cancel_reservation": ["Reservation ZZZZZZ not found"],
}


@pytest.fixture(scope="module")
def retail():
    return world_and_template("retail")


@pytest.fixture(scope="module")
def airline():
    return world_and_template("airline")


def test_the_worlds_have_tau2_26_3s_tools(retail, airline):
    assert set(retail[0].tool_names) == RETAIL_TOOLS and len(retail[0].tool_names) == 15
    assert set(airline[0].tool_names) == AIRLINE_TOOLS and len(airline[0].tool_names) == 14


@pytest.mark.parametrize("domain", ["retail", "airline"])
def test_the_probes_reach_every_tools_result_and_every_refusal(domain):
    tools = RETAIL_TOOLS if domain == "retail" else AIRLINE_TOOLS
    refusals = RETAIL_REFUSALS if domain == "retail" else AIRLINE_REFUSALS
    probes = PROBES[domain]
    assert {name for name, _, outcome in probes if outcome.startswith("ok:")} == tools
    for tool, messages in refusals.items():
        given = [outcome for name, _, outcome in probes if name == tool and not outcome.startswith("ok:")]
        for message in messages:
            assert any(text.startswith(f"Error: {message}") for text in given), f"{tool}: no probe refused with {message!r}"


@pytest.mark.parametrize("domain", ["retail", "airline"])
async def test_every_probe_answers_as_tau2s_own_environment_did(domain, request):
    world, template = request.getfixturevalue(domain)
    with template.new_copy() as copy:
        tools = WorldTools(world, copy, customer_id="")
        for number, (name, arguments, expected) in enumerate(PROBES[domain]):
            record = await call(tools, name, **arguments)
            assert tau2_outcome(record) == expected, f"probe {number}: {name}({arguments}) -> {record.result[:200]}"
        assert tau2_hash(copy) == PROBES_DB_HASH[domain]


async def test_a_refusal_says_whether_the_policy_or_the_request_is_wrong(retail):
    world, template = retail
    with template.new_copy() as copy:
        tools = WorldTools(world, copy, customer_id="")
        processed = copy.db.find("orders", status="processed")[0]["order_id"]
        refused = await call(tools, "cancel_pending_order", order_id=processed, reason="no longer needed")
        unknown = await call(tools, "get_order_details", order_id="W0000000")
    assert refused.result == "REFUSED [409 not_pending] Non-pending order cannot be cancelled"
    assert refused.refused and not refused.changes
    assert unknown.result == "ERROR [404 order_not_found] Order not found" and not unknown.refused


async def test_a_cancelled_order_paid_by_gift_card_is_refunded_to_the_card_at_once(retail):
    world, template = retail
    with template.new_copy() as copy:
        tools = WorldTools(world, copy, customer_id="")
        order = next(
            o
            for o in copy.db.find("orders", status="pending")
            if o["payment_history"][0]["payment_method_id"].startswith("gift_card_") and len(o["payment_history"]) == 1
        )
        payment = order["payment_history"][0]
        before = copy.db.get("users", order["user_id"])["payment_methods"][payment["payment_method_id"]]["balance"]
        record = await call(tools, "cancel_pending_order", order_id=order["order_id"], reason="ordered by mistake")
        after = copy.db.get("users", order["user_id"])["payment_methods"][payment["payment_method_id"]]["balance"]
    assert record.ok
    assert after == round(before + payment["amount"], 2)
    assert {(c.table, c.key) for c in record.changes} == {("orders", order["order_id"]), ("users", order["user_id"])}


async def test_changed_items_all_take_the_last_new_items_price_as_in_tau2(retail):
    world, template = retail
    with template.new_copy() as copy:
        tools = WorldTools(world, copy, customer_id="")
        name, arguments, _ = next(p for p in PROBES["retail"] if p[0] == "modify_pending_order_items" and len(p[1]["item_ids"]) == 2)
        record = await call(tools, name, **arguments)
        order = copy.db.get("orders", arguments["order_id"])
        last = arguments["new_item_ids"][-1]
        last_price = next(
            variant["price"] for p in copy.db.select("products") for item_id, variant in p["variants"].items() if item_id == last
        )
    assert record.ok and order["status"] == "pending (item modified)"
    changed = [item for item in order["items"] if item["item_id"] in arguments["new_item_ids"]]
    assert len(changed) == 2 and all(item["price"] == last_price for item in changed)


async def test_an_airline_cancellation_releases_no_seat_and_a_second_one_reverses_the_refunds(airline):
    world, template = airline
    with template.new_copy() as copy:
        tools = WorldTools(world, copy, customer_id="")
        reservation = next(r for r in copy.db.select("reservations") if r["status"] is None)
        flights_before = {f["flight_number"]: copy.db.get("flights", f["flight_number"]) for f in reservation["flights"]}
        first = await call(tools, "cancel_reservation", reservation_id=reservation["reservation_id"])
        second = await call(tools, "cancel_reservation", reservation_id=reservation["reservation_id"])
        after = copy.db.get("reservations", reservation["reservation_id"])
        flights_after = {number: copy.db.get("flights", number) for number in flights_before}
    paid = len(reservation["payment_history"])
    assert first.ok and second.ok and after["status"] == "cancelled"
    # tau2 negates every payment of the history: the second time, the refunds too.
    assert len(after["payment_history"]) == 4 * paid
    assert sum(p["amount"] for p in after["payment_history"]) == 0
    assert flights_after == flights_before


async def test_the_airports_are_read_from_sources_tools_py(airline):
    world, template = airline
    with template.new_copy() as copy:
        record = await call(WorldTools(world, copy, customer_id=""), "list_all_airports")
    assert record.ok and '"iata": "SFO"' in record.result and record.result.count('"iata"') == 20


def test_calculate_answers_as_tau2s_and_never_runs_code():
    assert calculate("(1 + 2) * 3") == "9.0"
    assert calculate(" 2 ** 0.5") == "1.41"
    assert calculate("10 // 4 - 7 / 2") == "-1.5"
    for expression, message in [
        ("__import__('os').system('true')", "Invalid characters in expression"),
        ("1 / 0", "division by zero"),
        ("2 3", "invalid syntax (<string>, line 1)"),
        ("()", "Invalid expression"),
    ]:
        with pytest.raises(CalculationError) as caught:
            calculate(expression)
        assert str(caught.value).startswith(message)


def test_calculate_refuses_a_power_too_large_to_compute_at_once():
    started = time.perf_counter()
    with pytest.raises(CalculationError, match="too large"):
        calculate("9 ** 9 ** 9")
    assert time.perf_counter() - started < 1.0


async def test_a_tools_refusal_names_tau2s_condition_not_parleys_own(retail):
    world, template = retail
    with template.new_copy() as copy:
        record = await call(WorldTools(world, copy, customer_id=""), "calculate", expression="2 + x")
    assert record.result == "ERROR [422 invalid_expression] Invalid characters in expression"
    assert message_of(record) == "Invalid characters in expression"
