"""tau2's retail world in parley: its 15 tools (tau2 26.3) over products, users and orders.

Each tool answers as tau2's does on the same data: the same result text, the same refusal (with
tau2's message) under the same condition, the same changes, checked in the same order (so a call
that fails half-way leaves what tau2's leaves). Users, orders and products are read from SOURCE's
db.json (tau2_db); a user's payment methods live in their user record, as in tau2.

The policy asks the agent to authenticate the user (by email, or by name and zip code) before
anything else, to act for that user alone, and to have the user confirm every change: the API
enforces none of that (as tau2's does not); parley records the first two as a rule's violations.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from parley.api import Table, ToolContext, tool
from parley.worlds.tau2.retail_records import UserAddress
from parley.worlds.tau2.shared_tools import calculate, policy, request, save, transfer_to_human_agents
from parley.worlds.tau2.tau2_db import FILE_ORDER, tau2_text

__all__ = ["ACTIONS", "AUTHENTICATE", "TOOLS", "make_tables"]

AUTHENTICATE = ("find_user_id_by_email", "find_user_id_by_name_zip")
CANCEL_REASONS = ("no longer needed", "ordered by mistake")


def make_tables(rows: dict[str, list[dict[str, Any]]]) -> list[Table]:
    """The retail tables, their columns in tau2's order, filled with `rows` (tau2_db.load_rows)."""
    return [
        Table(
            "products",
            key="product_id",
            columns={"name": "text", "product_id": "text", "variants": "json"},
            rows=rows["products"],
            id_pattern=r"[0-9]{10}",
            description="The catalogue (public): each product type and its variants (items), their options, price and availability.",
        ),
        Table(
            "users",
            key="user_id",
            columns={"user_id": "text", "name": "json", "address": "json", "email": "text", "payment_methods": "json", "orders": "json"},
            rows=rows["users"],
            owner="key",
            id_pattern=r"[a-z]+_[a-z]+_[0-9]{4}",
            description="Users: name, address, email, their payment methods (gift cards with their balance) and order ids.",
        ),
        Table(
            "orders",
            key="order_id",
            columns={
                "order_id": "text",
                "user_id": "text",
                "address": "json",
                "items": "json",
                "status": "text",
                "fulfillments": "json",
                "payment_history": "json",
                "cancel_reason": "text",
                "exchange_items": "json",
                "exchange_new_items": "json",
                "exchange_payment_method_id": "text",
                "exchange_price_difference": "json",
                "return_items": "json",
                "return_payment_method_id": "text",
            },
            rows=rows["orders"],
            owner="user_id",
            id_pattern=r"#W[0-9]{7}",
            description="Orders, each its user's: items, status, payments and refunds, and what was asked of it.",
        ),
    ]


def _order(ctx: ToolContext, order_id: str) -> dict[str, Any]:
    order = ctx.db.get("orders", order_id)
    if order is None:
        raise request("Order not found", "order_not_found", 404)
    return order


def _user(ctx: ToolContext, user_id: str) -> dict[str, Any]:
    user = ctx.db.get("users", user_id)
    if user is None:
        raise request("User not found", "user_not_found", 404)
    return user


def _variant(ctx: ToolContext, product_id: str, item_id: str) -> dict[str, Any]:
    product = ctx.db.get("products", product_id)
    if product is None:
        raise request("Product not found", "product_not_found", 404)
    if item_id not in product["variants"]:
        raise request("Variant not found", "variant_not_found", 404)
    return dict(product["variants"][item_id])


def _payment_method(ctx: ToolContext, user_id: str, payment_method_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the user, their payment method) — tau2 looks the user up first."""
    user = _user(ctx, user_id)
    if payment_method_id not in user["payment_methods"]:
        raise request("Payment method not found", "payment_method_not_found", 404)
    return user, user["payment_methods"][payment_method_id]


def _is_gift_card(method: dict[str, Any]) -> bool:
    return method.get("source") == "gift_card"


def _add_to_balance(ctx: ToolContext, user: dict[str, Any], payment_method_id: str, amount: float) -> None:
    method = user["payment_methods"][payment_method_id]
    method["balance"] = round(method["balance"] + amount, 2)
    save(ctx, "users", "user_id", user)


def _check_items_in_order(order: dict[str, Any], item_ids: Sequence[str], message: str) -> None:
    """Every item id at most as many times as the order holds it (the message may name the item: {item_id})."""
    held = [item["item_id"] for item in order["items"]]
    for item_id in item_ids:
        if item_ids.count(item_id) > held.count(item_id):
            raise request(message.format(item_id=item_id), "item_not_in_order")


def _first_item(order: dict[str, Any], item_id: str) -> dict[str, Any]:
    item = next((item for item in order["items"] if item["item_id"] == item_id), None)
    if item is None:
        raise request(f"Item {item_id} not found", "item_not_in_order")
    return item


def _address(address1: str, address2: str, city: str, state: str, country: str, zip: str) -> dict[str, Any]:
    return UserAddress(address1=address1, address2=address2, city=city, state=state, country=country, zip=zip).model_dump()


@tool(changes_state=True, needs_confirmation=True)
def cancel_pending_order(ctx: ToolContext, order_id: str, reason: str) -> str:
    """Cancel a pending order; every payment is refunded (to a gift card at once). Only after the user confirmed.

    Args:
        order_id: The order id, with its '#', e.g. '#W0000000'.
        reason: Why: 'no longer needed' or 'ordered by mistake'.
    """
    order = _order(ctx, order_id)
    if order["status"] != "pending":
        raise policy("Non-pending order cannot be cancelled", "not_pending")
    if reason not in CANCEL_REASONS:
        raise request("Invalid reason", "invalid_reason")
    refunds = []
    for payment in order["payment_history"]:
        refunds.append({"transaction_type": "refund", "amount": payment["amount"], "payment_method_id": payment["payment_method_id"]})
        user, method = _payment_method(ctx, order["user_id"], payment["payment_method_id"])
        if _is_gift_card(method):
            _add_to_balance(ctx, user, payment["payment_method_id"], payment["amount"])
    order["status"] = "cancelled"
    order["cancel_reason"] = reason
    order["payment_history"].extend(refunds)
    save(ctx, "orders", "order_id", order)
    return tau2_text(order)


@tool(changes_state=True, needs_confirmation=True)
def exchange_delivered_order_items(
    ctx: ToolContext, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str
) -> str:
    """Exchange items of a delivered order for other items of the same products (once per order). Only after the user confirmed.

    Args:
        order_id: The order id, with its '#', e.g. '#W0000000'.
        item_ids: The item ids to exchange (an id twice for two such items).
        new_item_ids: The item ids to get instead, position by position, each of the same product.
        payment_method_id: The user's payment method that pays or receives the price difference.
    """
    order = _order(ctx, order_id)
    if order["status"] != "delivered":
        raise policy("Non-delivered order cannot be exchanged", "not_delivered")
    _check_items_in_order(order, item_ids, "Number of {item_id} not found.")
    if len(item_ids) != len(new_item_ids):
        raise request("The number of items to be exchanged should match.", "item_count_mismatch")
    difference: float = 0
    for item_id, new_item_id in zip(item_ids, new_item_ids, strict=True):
        item = _first_item(order, item_id)
        variant = _variant(ctx, item["product_id"], new_item_id)
        if not variant["available"]:
            raise policy(f"New item {new_item_id} not found or available", "item_unavailable")
        difference += variant["price"] - item["price"]
    difference = round(difference, 2)
    _, method = _payment_method(ctx, order["user_id"], payment_method_id)
    if _is_gift_card(method) and method["balance"] < difference:
        raise policy("Insufficient gift card balance to pay for the price difference", "insufficient_balance")
    order["status"] = "exchange requested"
    order["exchange_items"] = sorted(item_ids)
    order["exchange_new_items"] = sorted(new_item_ids)
    order["exchange_payment_method_id"] = payment_method_id
    order["exchange_price_difference"] = difference
    save(ctx, "orders", "order_id", order)
    return tau2_text(order)


@tool
def find_user_id_by_name_zip(ctx: ToolContext, first_name: str, last_name: str, zip: str) -> str:
    """Find a user's id by first name, last name and zip code (when the user cannot give their email).

    Args:
        first_name: The user's first name, e.g. 'John'.
        last_name: The user's last name, e.g. 'Doe'.
        zip: The zip code of the user's address, e.g. '12345'.
    """
    rows = ctx.db.execute(
        "SELECT user_id, json_extract(name, '$.first_name'), json_extract(name, '$.last_name'), json_extract(address, '$.zip')"
        f" FROM users ORDER BY {FILE_ORDER}"
    )
    for user_id, first, last, user_zip in rows:
        if first.lower() == first_name.lower() and last.lower() == last_name.lower() and user_zip == zip:
            return str(user_id)
    raise request("User not found", "user_not_found", 404)


@tool
def find_user_id_by_email(ctx: ToolContext, email: str) -> str:
    """Find a user's id by their email address.

    Args:
        email: The user's email, e.g. 'something@example.com'.
    """
    for user_id, user_email in ctx.db.execute(f"SELECT user_id, email FROM users ORDER BY {FILE_ORDER}"):
        if user_email.lower() == email.lower():
            return str(user_id)
    raise request("User not found", "user_not_found", 404)


@tool
def get_order_details(ctx: ToolContext, order_id: str) -> str:
    """An order's status and details.

    Args:
        order_id: The order id, with its '#', e.g. '#W0000000'.
    """
    return tau2_text(_order(ctx, order_id))


@tool
def get_product_details(ctx: ToolContext, product_id: str) -> str:
    """A product's variants (items) with their options, prices and availability.

    Args:
        product_id: The product id (not an item id), e.g. '6086499569'.
    """
    product = ctx.db.get("products", product_id)
    if product is None:
        raise request("Product not found", "product_not_found", 404)
    return tau2_text(product)


@tool
def get_user_details(ctx: ToolContext, user_id: str) -> str:
    """A user's details: name, address, email, payment methods and orders.

    Args:
        user_id: The user id, e.g. 'sara_doe_496'.
    """
    return tau2_text(_user(ctx, user_id))


@tool
def list_all_product_types(ctx: ToolContext) -> str:
    """Every product type's name and product id (50 of them), as JSON sorted by name."""
    names = {name: product_id for name, product_id in ctx.db.execute(f"SELECT name, product_id FROM products ORDER BY {FILE_ORDER}")}
    return json.dumps(names, sort_keys=True)


@tool(changes_state=True, needs_confirmation=True)
def modify_pending_order_address(
    ctx: ToolContext, order_id: str, address1: str, address2: str, city: str, state: str, country: str, zip: str
) -> str:
    """Change the shipping address of a pending order. Only after the user confirmed.

    Args:
        order_id: The order id, with its '#', e.g. '#W0000000'.
        address1: The address's first line, e.g. '123 Main St'.
        address2: The second line, e.g. 'Apt 1', or ''.
        city: The city, e.g. 'San Francisco'.
        state: The state, e.g. 'CA'.
        country: The country, e.g. 'USA'.
        zip: The zip code, e.g. '12345'.
    """
    order = _order(ctx, order_id)
    if "pending" not in order["status"]:
        raise policy("Non-pending order cannot be modified", "not_pending")
    order["address"] = _address(address1, address2, city, state, country, zip)
    save(ctx, "orders", "order_id", order)
    return tau2_text(order)


@tool(changes_state=True, needs_confirmation=True)
def modify_pending_order_items(
    ctx: ToolContext, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str
) -> str:
    """Change items of a pending order to other items of the same products (once per order). Only after the user confirmed.

    Args:
        order_id: The order id, with its '#', e.g. '#W0000000'.
        item_ids: The item ids to change (an id twice for two such items).
        new_item_ids: The item ids to get instead, position by position, each of the same product.
        payment_method_id: The user's payment method that pays or receives the price difference.
    """
    order = _order(ctx, order_id)
    if order["status"] != "pending":
        raise policy("Non-pending order cannot be modified", "not_pending")
    _check_items_in_order(order, item_ids, "{item_id} not found")
    if len(item_ids) != len(new_item_ids):
        raise request("The number of items to be exchanged should match", "item_count_mismatch")
    difference: float = 0
    variant: dict[str, Any] = {}
    for item_id, new_item_id in zip(item_ids, new_item_ids, strict=True):
        if item_id == new_item_id:
            raise request("The new item id should be different from the old item id", "same_item")
        item = _first_item(order, item_id)
        variant = _variant(ctx, item["product_id"], new_item_id)
        if not variant["available"]:
            raise policy(f"New item {new_item_id} not found or available", "item_unavailable")
        difference += variant["price"] - item["price"]
    user, method = _payment_method(ctx, order["user_id"], payment_method_id)
    if _is_gift_card(method) and method["balance"] < difference:
        raise policy("Insufficient gift card balance to pay for the new item", "insufficient_balance")
    order["payment_history"].append(
        {
            "transaction_type": "payment" if difference > 0 else "refund",
            "amount": float(abs(difference)),
            "payment_method_id": payment_method_id,
        }
    )
    if _is_gift_card(method):
        _add_to_balance(ctx, user, payment_method_id, -difference)
    for item_id, new_item_id in zip(item_ids, new_item_ids, strict=True):
        item = _first_item(order, item_id)
        # As tau2 26.3 does: every changed item takes the price and options of the last new item.
        item["item_id"] = new_item_id
        item["price"] = variant["price"]
        item["options"] = dict(variant["options"])
    order["status"] = "pending (item modified)"
    save(ctx, "orders", "order_id", order)
    return tau2_text(order)


@tool(changes_state=True, needs_confirmation=True)
def modify_pending_order_payment(ctx: ToolContext, order_id: str, payment_method_id: str) -> str:
    """Pay a pending order with another of the user's payment methods. Only after the user confirmed.

    Args:
        order_id: The order id, with its '#', e.g. '#W0000000'.
        payment_method_id: The user's payment method to pay with instead, e.g. 'gift_card_0000000'.
    """
    order = _order(ctx, order_id)
    if "pending" not in order["status"]:
        raise policy("Non-pending order cannot be modified", "not_pending")
    user, method = _payment_method(ctx, order["user_id"], payment_method_id)
    history = order["payment_history"]
    if len(history) != 1 or history[0]["transaction_type"] != "payment":
        raise policy("There should be exactly one payment for a pending order", "not_one_payment")
    old_method_id = history[0]["payment_method_id"]
    if old_method_id == payment_method_id:
        raise request("The new payment method should be different from the current one", "same_payment_method")
    amount = history[0]["amount"]
    if _is_gift_card(method) and method["balance"] < amount:
        raise policy("Insufficient gift card balance to pay for the order", "insufficient_balance")
    history.append({"transaction_type": "payment", "amount": amount, "payment_method_id": payment_method_id})
    history.append({"transaction_type": "refund", "amount": amount, "payment_method_id": old_method_id})
    save(ctx, "orders", "order_id", order)
    if _is_gift_card(method):
        _add_to_balance(ctx, user, payment_method_id, -amount)
    user, old_method = _payment_method(ctx, order["user_id"], old_method_id)
    if _is_gift_card(old_method):
        _add_to_balance(ctx, user, old_method_id, amount)
    return tau2_text(order)


@tool(changes_state=True, needs_confirmation=True)
def modify_user_address(ctx: ToolContext, user_id: str, address1: str, address2: str, city: str, state: str, country: str, zip: str) -> str:
    """Change a user's default address. Only after the user confirmed.

    Args:
        user_id: The user id, e.g. 'sara_doe_496'.
        address1: The address's first line, e.g. '123 Main St'.
        address2: The second line, e.g. 'Apt 1', or ''.
        city: The city, e.g. 'San Francisco'.
        state: The state, e.g. 'CA'.
        country: The country, e.g. 'USA'.
        zip: The zip code, e.g. '12345'.
    """
    user = _user(ctx, user_id)
    user["address"] = _address(address1, address2, city, state, country, zip)
    save(ctx, "users", "user_id", user)
    return tau2_text(user)


@tool(changes_state=True, needs_confirmation=True)
def return_delivered_order_items(ctx: ToolContext, order_id: str, item_ids: list[str], payment_method_id: str) -> str:
    """Return items of a delivered order; the refund goes to the original payment method or a gift card. Only after the user confirmed.

    Args:
        order_id: The order id, with its '#', e.g. '#W0000000'.
        item_ids: The item ids to return (an id twice for two such items).
        payment_method_id: Where the refund goes: the order's original payment method, or one of the user's gift cards.
    """
    order = _order(ctx, order_id)
    if order["status"] != "delivered":
        raise policy("Non-delivered order cannot be returned", "not_delivered")
    _, method = _payment_method(ctx, order["user_id"], payment_method_id)
    if not _is_gift_card(method) and payment_method_id != order["payment_history"][0]["payment_method_id"]:
        raise policy("Payment method should be the original payment method", "not_original_payment_method")
    _check_items_in_order(order, item_ids, "Some item not found")
    order["status"] = "return requested"
    order["return_items"] = sorted(item_ids)
    order["return_payment_method_id"] = payment_method_id
    save(ctx, "orders", "order_id", order)
    return tau2_text(order)


TOOLS = [
    calculate,
    cancel_pending_order,
    exchange_delivered_order_items,
    find_user_id_by_name_zip,
    find_user_id_by_email,
    get_order_details,
    get_product_details,
    get_user_details,
    list_all_product_types,
    modify_pending_order_address,
    modify_pending_order_items,
    modify_pending_order_payment,
    modify_user_address,
    return_delivered_order_items,
    transfer_to_human_agents,
]

ACTIONS = {
    "cancel_pending_order": "cancel",
    "exchange_delivered_order_items": "change",
    "modify_pending_order_address": "change",
    "modify_pending_order_items": "change",
    "modify_pending_order_payment": "change",
    "modify_user_address": "change",
    "return_delivered_order_items": "refund",
}
"""Each state-changing tool -> what a bot claims when it calls it."""
