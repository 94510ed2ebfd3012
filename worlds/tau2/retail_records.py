"""The records of tau2's retail database (db.json: products, users, orders), as tau2 26.3 shapes them.

Each record is read through these models once, when the world's template is built: a db.json whose
schema differs is one line naming the file, the record and the field; and every stored row is the
record as tau2 holds it (its fields in tau2's order, its defaults filled in, its numbers of tau2's
types), so a tool's result reads as tau2's does and tau2's hash of the state can be computed.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "CreditCard",
    "GiftCard",
    "Order",
    "OrderItem",
    "OrderPayment",
    "Paypal",
    "Product",
    "RetailDB",
    "User",
    "UserAddress",
    "Variant",
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore")


class Variant(_Model):
    item_id: str
    options: dict[str, str]
    available: bool
    price: float


class Product(_Model):
    name: str
    product_id: str
    variants: dict[str, Variant]


class UserName(_Model):
    first_name: str
    last_name: str


class UserAddress(_Model):
    address1: str
    address2: str
    city: str
    country: str
    state: str
    zip: str


class CreditCard(_Model):
    source: Literal["credit_card"]
    id: str
    brand: str
    last_four: str


class Paypal(_Model):
    source: Literal["paypal"]
    id: str


class GiftCard(_Model):
    source: Literal["gift_card"]
    id: str
    balance: float


PaymentMethod = Annotated[CreditCard | GiftCard | Paypal, Field(discriminator="source")]


class User(_Model):
    user_id: str
    name: UserName
    address: UserAddress
    email: str
    payment_methods: dict[str, PaymentMethod]
    orders: list[str]


class OrderFulfilment(_Model):
    tracking_id: list[str]
    item_ids: list[str]


class OrderItem(_Model):
    name: str
    product_id: str
    item_id: str
    price: float
    options: dict[str, str]


class OrderPayment(_Model):
    transaction_type: Literal["payment", "refund"]
    amount: float
    payment_method_id: str


OrderStatus = Literal[
    "processed",
    "pending",
    "pending (item modified)",
    "delivered",
    "cancelled",
    "exchange requested",
    "return requested",
]


class Order(_Model):
    order_id: str
    user_id: str
    address: UserAddress
    items: list[OrderItem]
    status: OrderStatus
    fulfillments: list[OrderFulfilment]
    payment_history: list[OrderPayment]
    cancel_reason: Literal["no longer needed", "ordered by mistake"] | None = None
    exchange_items: list[str] | None = None
    exchange_new_items: list[str] | None = None
    exchange_payment_method_id: str | None = None
    exchange_price_difference: float | None = None
    return_items: list[str] | None = None
    return_payment_method_id: str | None = None


class RetailDB(BaseModel):
    """The whole of db.json."""

    model_config = ConfigDict(extra="forbid")

    products: dict[str, Product]
    users: dict[str, User]
    orders: dict[str, Order]
