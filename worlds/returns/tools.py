"""The returns desk's tools: plain typed functions over the conversation's database, declared with
`@tool`; their schemas are generated from these signatures and docstrings."""

from __future__ import annotations

import datetime
from typing import Annotated, Any

from pydantic import Field

from parley.api import Refused, ToolContext, tool

RETURN_DAYS = 30

Email = Annotated[str, Field(max_length=120, examples=["maya.okafor@example.com"])]
CustomerId = Annotated[str, Field(max_length=24, examples=["CUS-101"])]
OrderId = Annotated[str, Field(max_length=24, examples=["SO-5001"])]
Sku = Annotated[str, Field(max_length=24, examples=["SKU-TEE"])]
Short = Annotated[str, Field(max_length=40)]
PaymentMethodId = Annotated[str, Field(max_length=24, examples=["PM-201"])]


def _order(ctx: ToolContext, order_id: str) -> dict[str, Any]:
    order = ctx.db.get("orders", order_id.strip().upper())
    if order is None:
        raise Refused(f"There is no order {order_id}.", reason="order_not_found", kind="request", status=404)
    return order


def _customer(ctx: ToolContext, customer_id: str) -> dict[str, Any]:
    customer = ctx.db.get("customers", customer_id.strip().upper())
    if customer is None:
        raise Refused(f"There is no customer {customer_id}.", reason="customer_not_found", kind="request", status=404)
    return customer


def _line(order: dict[str, Any], sku: str) -> dict[str, Any]:
    for item in order["items"]:
        if item["sku"] == sku.strip().upper():
            return dict(item)
    raise Refused(f"Order {order['id']} has no item {sku}.", reason="item_not_in_order", kind="request", status=404)


def _days_since_delivery(ctx: ToolContext, order: dict[str, Any]) -> int:
    if order["status"] != "delivered" or not order.get("delivered_date"):
        raise Refused(
            f"Order {order['id']} is {order['status']}: only delivered orders can be returned or exchanged.", reason="not_delivered"
        )
    days = (ctx.today - datetime.date.fromisoformat(order["delivered_date"])).days
    if days > RETURN_DAYS:
        raise Refused(
            f"Order {order['id']} was delivered {days} days ago; returns and exchanges are possible within {RETURN_DAYS} days of delivery.",
            reason="too_late",
        )
    return days


def _final_sale(ctx: ToolContext, sku: str) -> dict[str, Any]:
    product = ctx.db.get("products", sku.strip().upper())
    if product is None:
        raise Refused(f"There is no product {sku}.", reason="product_not_found", kind="request", status=404)
    if product["final_sale"]:
        raise Refused(f"{product['name']} is a final-sale item: it cannot be returned or exchanged.", reason="final_sale")
    return product


def _next_id(ctx: ToolContext, table: str, prefix: str, start: int) -> str:
    return f"{prefix}-{start + ctx.db.count(table)}"


@tool
def find_customer_by_email(ctx: ToolContext, email: Email) -> dict[str, str]:
    """Find a customer by their email address; returns their customer id.

    Args:
        email: The email address the customer gives.
    """
    found = ctx.db.find("customers", email=email.strip().lower())
    if not found:
        raise Refused(f"No customer has the email {email}.", reason="customer_not_found", kind="request", status=404)
    return {"customer_id": found[0]["id"]}


@tool
def find_customer_by_name_zip(
    ctx: ToolContext, first_name: Short, last_name: Short, zip: Annotated[str, Field(max_length=12)]
) -> dict[str, str]:
    """Find a customer by first name, last name and zip code; returns their customer id.

    Args:
        first_name: The customer's first name.
        last_name: The customer's last name.
        zip: The zip code of the customer's address.
    """
    for row in ctx.db.find("customers", zip=zip.strip()):
        if row["first_name"].lower() == first_name.strip().lower() and row["last_name"].lower() == last_name.strip().lower():
            return {"customer_id": row["id"]}
    raise Refused("No customer matches that name and zip code.", reason="customer_not_found", kind="request", status=404)


@tool
def get_customer(ctx: ToolContext, customer_id: CustomerId) -> dict[str, Any]:
    """A customer's details: name, email, payment methods and order ids.

    Args:
        customer_id: The customer id found by authentication, e.g. CUS-101.
    """
    customer = _customer(ctx, customer_id)
    methods = ctx.db.find("payment_methods", customer_id=customer["id"])
    orders = ctx.db.find("orders", customer_id=customer["id"])
    return {
        "customer_id": customer["id"],
        "name": f"{customer['first_name']} {customer['last_name']}",
        "email": customer["email"],
        "payment_methods": [{"id": m["id"], "label": m["label"]} for m in methods],
        "orders": [o["id"] for o in orders],
    }


@tool
def get_order(ctx: ToolContext, order_id: OrderId) -> dict[str, Any]:
    """An order's items, status, delivery date and payment method.

    Args:
        order_id: The order id, e.g. SO-5001.
    """
    order = _order(ctx, order_id)
    return {k: order[k] for k in ("id", "customer_id", "status", "placed_date", "delivered_date", "payment_method_id", "total", "items")}


@tool
def get_product(ctx: ToolContext, sku: Sku) -> dict[str, Any]:
    """A product of the catalogue: its name, price, whether it is final sale, and stock per size.

    Args:
        sku: The product's SKU, e.g. SKU-TEE.
    """
    product = ctx.db.get("products", sku.strip().upper())
    if product is None:
        raise Refused(f"There is no product {sku}.", reason="product_not_found", kind="request", status=404)
    return product


@tool(changes_state=True, needs_confirmation=True)
def start_return(
    ctx: ToolContext, order_id: OrderId, sku: Sku, reason: Annotated[str, Field(max_length=200)], refund_method_id: PaymentMethodId
) -> dict[str, Any]:
    """Start the return of one item of a delivered order and refund it. Only after the customer confirmed.

    Args:
        order_id: The order the item is from.
        sku: The item's SKU.
        reason: Why the customer returns it, in their words.
        refund_method_id: The payment method the refund goes to (a PM- id of the order's customer).
    """
    order = _order(ctx, order_id)
    line = _line(order, sku)
    _final_sale(ctx, line["sku"])
    _days_since_delivery(ctx, order)
    if ctx.db.find("returns", order_id=order["id"], sku=line["sku"]):
        raise Refused(f"{line['sku']} of order {order['id']} is already being returned.", reason="already_returned")
    method = ctx.db.get("payment_methods", refund_method_id.strip().upper())
    if method is None or method["customer_id"] != order["customer_id"]:
        raise Refused(
            f"{refund_method_id} is not a payment method of the order's customer.",
            reason="unknown_payment_method",
            kind="request",
            status=422,
        )
    return_id = _next_id(ctx, "returns", "RT", 9001)
    row = {
        "id": return_id,
        "order_id": order["id"],
        "customer_id": order["customer_id"],
        "sku": line["sku"],
        "variant": line["variant"],
        "reason": reason,
        "refund_method_id": method["id"],
        "amount": line["price"],
        "status": "requested",
        "created_at": ctx.now().isoformat(),
    }
    ctx.db.insert("returns", row)
    return {"return_id": return_id, "refund": line["price"], "refund_to": method["label"], "status": "requested"}


@tool(changes_state=True, needs_confirmation=True)
def exchange_item(ctx: ToolContext, order_id: OrderId, sku: Sku, new_variant: Annotated[str, Field(max_length=12)]) -> dict[str, Any]:
    """Exchange one item of a delivered order for another size of the same product. Only after the customer confirmed.

    Args:
        order_id: The order the item is from.
        sku: The item's SKU.
        new_variant: The size wanted instead, e.g. L.
    """
    order = _order(ctx, order_id)
    line = _line(order, sku)
    product = _final_sale(ctx, line["sku"])
    _days_since_delivery(ctx, order)
    wanted = new_variant.strip().upper() if new_variant.strip().upper() in product["variants"] else new_variant.strip()
    if wanted not in product["variants"]:
        raise Refused(
            f"{product['name']} comes in {', '.join(product['variants'])}, not {new_variant}.",
            reason="unknown_variant",
            kind="request",
            status=422,
        )
    if wanted == line["variant"]:
        raise Refused(f"The item already is size {wanted}.", reason="same_variant", kind="request", status=422)
    if product["variants"][wanted] <= 0:
        raise Refused(f"{product['name']} in size {wanted} is out of stock.", reason="out_of_stock")
    variants = dict(product["variants"])
    variants[wanted] -= 1
    ctx.db.update("products", product["sku"], variants=variants)
    exchange_id = _next_id(ctx, "exchanges", "EX", 7001)
    ctx.db.insert(
        "exchanges",
        {
            "id": exchange_id,
            "order_id": order["id"],
            "customer_id": order["customer_id"],
            "sku": line["sku"],
            "from_variant": line["variant"],
            "to_variant": wanted,
            "status": "requested",
            "created_at": ctx.now().isoformat(),
        },
    )
    return {"exchange_id": exchange_id, "sku": line["sku"], "from": line["variant"], "to": wanted, "status": "requested"}


@tool(changes_state=True)
def cancel_return(ctx: ToolContext, return_id: Annotated[str, Field(max_length=24, examples=["RT-9001"])]) -> dict[str, Any]:
    """Cancel a return that was started and not yet received.

    Args:
        return_id: The return's id, e.g. RT-9001.
    """
    row = ctx.db.get("returns", return_id.strip().upper())
    if row is None:
        raise Refused(f"There is no return {return_id}.", reason="return_not_found", kind="request", status=404)
    if row["status"] != "requested":
        raise Refused(f"Return {row['id']} is {row['status']} and can no longer be cancelled.", reason="not_cancellable")
    ctx.db.update("returns", row["id"], status="cancelled")
    return {"return_id": row["id"], "status": "cancelled"}


TOOLS = [
    find_customer_by_email,
    find_customer_by_name_zip,
    get_customer,
    get_order,
    get_product,
    start_return,
    exchange_item,
    cancel_return,
]
