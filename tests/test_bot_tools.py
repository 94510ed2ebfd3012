"""The order world's tools on a conversation's copy: identity bound by the session, errors as text, every call recorded."""

from __future__ import annotations

import json

import pytest

from parley.core.records.chat import ToolCall
from parley.core.world.serving import ServedWorldTools
from tests.order_world_support import order_copy, order_tools, orders_world


@pytest.fixture
async def world(today):
    copy = order_copy(today)
    yield copy
    copy.close()


@pytest.fixture
async def tools(world):
    return order_tools(world, "C-100")


def status(copy, order_id: str) -> str:
    return copy.db.get("orders", order_id)["status"]


def call(name: str, arguments: str | dict = "{}", call_id: str = "c1") -> ToolCall:
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return ToolCall(id=call_id, name=name, arguments=raw)


def test_specs_offer_five_tools_none_taking_a_customer():
    specs = [t.spec for t in orders_world().declared_tools]
    assert [s.name for s in specs] == [
        "get_order",
        "track_order",
        "list_my_orders",
        "check_cancellation",
        "cancel_order",
    ]
    for spec in specs:
        props = spec.parameters["properties"]
        assert not any("customer" in key for key in props), spec.name
        assert spec.to_openai()["function"]["parameters"]["type"] == "object"


async def test_track_returns_the_api_body_and_records_the_call(tools):
    record = await tools.execute(call("track_order", {"order_id": "ORD-1003"}))
    body = json.loads(record.result)
    assert body["tracking"]["carrier"] == "UPS"
    assert record.ok and record.http_status == 200 and not record.refused
    assert record.arguments == {"order_id": "ORD-1003"} and record.arguments_raw == '{"order_id": "ORD-1003"}'
    assert record.customer_id == "C-100" and record.latency_s > 0
    assert tools.records == [record]


async def test_list_my_orders_lists_only_the_session_customer(tools):
    record = await tools.execute(call("list_my_orders"))
    ids = [o["id"] for o in json.loads(record.result)]
    assert ids == [f"ORD-100{i}" for i in range(1, 8)]


async def test_customer_argument_is_ignored_and_cannot_reach_other_orders(tools, world):
    record = await tools.execute(call("cancel_order", {"order_id": "ORD-2001", "customer_id": "C-200"}))
    assert not record.ok and record.refused and record.http_status == 403
    assert record.error == "not_your_order"
    assert record.result.startswith("REFUSED [403 not_your_order]")
    assert "does not belong" in record.result
    assert record.ignored_arguments == ["customer_id"] and record.customer_id == "C-100"
    assert status(world, "ORD-2001") == "pending"

    listing = await tools.execute(call("list_my_orders", {"customer_id": "C-200"}))
    assert all(o["customer_id"] == "C-100" for o in json.loads(listing.result))


async def test_policy_refusal_relays_the_api_reason(tools, world):
    record = await tools.execute(call("cancel_order", {"order_id": "ORD-1005"}))
    assert record.refused and record.http_status == 409 and record.error == "too_old"
    assert "10-day cancellation limit" in record.result
    assert status(world, "ORD-1005") == "processing"


async def test_successful_cancel_changes_the_world(tools, world):
    record = await tools.execute(call("cancel_order", {"order_id": "ord-1004", "reason": "changed my mind"}))
    assert record.ok and json.loads(record.result)["status"] == "cancelled"
    assert status(world, "ORD-1004") == "cancelled"
    audit = [(c.after or {}) for c in world.diff().changes if c.table == "audit"]
    assert [(a["order_id"], a["customer_id"], a["reason"]) for a in audit] == [("ORD-1004", "C-100", "changed my mind")]


@pytest.mark.parametrize(
    ("name", "raw", "error", "says"),
    [
        ("track_order", '{"order_id": "ORD-1003"', "invalid_json", "not valid JSON"),
        ("track_order", '["ORD-1003"]', "invalid_arguments", "JSON object"),
        ("track_order", '{"order_id": 1003}', "invalid_arguments", "must be a string"),
        ("track_order", "{}", "invalid_arguments", "needs an order_id"),
        ("cancel_order", '{"order_id": "../admin/orders"}', "invalid_arguments", "not an order id"),
        ("cancel_order", '{"order_id": "ORD-1004", "reason": 5}', "invalid_arguments", "reason must be a string"),
        ("refund_order", '{"order_id": "ORD-1003"}', "unknown_tool", "no tool named 'refund_order'"),
    ],
)
async def test_malformed_calls_become_error_text_not_exceptions(tools, world, name, raw, error, says):
    record = await tools.execute(call(name, raw))
    assert not record.ok and record.error == error and record.http_status is None
    assert record.result.startswith(f"ERROR [{error}]") and says in record.result
    assert status(world, "ORD-1004") == "processing"


async def test_hallucinated_and_malformed_ids_come_back_from_the_api(tools):
    missing = await tools.execute(call("get_order", {"order_id": "ORD-9999"}))
    assert missing.http_status == 404 and missing.error == "order_not_found" and not missing.refused
    assert missing.result == "ERROR [404 order_not_found] There is no order ORD-9999."
    odd = await tools.execute(call("get_order", {"order_id": "ABC-12"}))
    assert odd.http_status == 422 and odd.error == "invalid_order_id"


async def test_an_unreachable_served_world_is_an_error_text():
    tools = ServedWorldTools(orders_world(), "http://127.0.0.1:9/worlds/gone", "C-100", timeout_s=2)
    record = await tools.execute(call("track_order", {"order_id": "ORD-1003"}))
    assert not record.ok and record.error == "unavailable" and "could not be reached" in record.result


async def test_the_tools_act_for_the_customer_they_are_bound_to(world):
    record = await order_tools(world, "C-200").execute(call("get_order", {"order_id": "ORD-2002"}))
    assert record.ok and json.loads(record.result)["customer_id"] == "C-200"
