"""Pydantic models for everything the mock order API sends, receives or hands to the engine."""

from __future__ import annotations

import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

# ASCII digits only: `\d` would also accept other scripts' digits in Python and Rust regexes.
ORDER_ID_PATTERN = r"^ORD-[0-9]{1,10}$"
CUSTOMER_ID_PATTERN = r"^C-[0-9]{1,10}$"


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def invalid_order_id_message(value: object) -> str:
    """What the API says of an order id that does not have the shape of one."""
    return f"{_shown(value)} is not a valid order id; order ids look like ORD-1001 (ORD- followed by 1 to 10 digits)."


def invalid_customer_id_message(value: object) -> str:
    """What the API says of a customer id that does not have the shape of one."""
    return f"{_shown(value)} is not a valid customer id; customer ids look like C-100 (C- followed by 1 to 10 digits)."


OrderStatus = Literal["pending", "processing", "shipped", "delivered", "cancelled"]
RefusalReason = Literal["too_old", "delivered", "already_cancelled"]
ErrorReason = Literal[
    "missing_customer",
    "not_your_order",
    "order_not_found",
    "customer_not_found",
    "too_old",
    "delivered",
    "already_cancelled",
    "invalid_order_id",
    "invalid_customer_id",
    "invalid_body",
    "invalid_request",
    "not_found",
    "method_not_allowed",
    "http_error",
]


class Item(BaseModel):
    """One line of an order."""

    name: str
    qty: int = Field(ge=1)
    unit_price: float = Field(ge=0)
    currency: str


class Tracking(BaseModel):
    """Carrier tracking for a shipped or delivered order."""

    carrier: str
    tracking_number: str
    last_event: str
    estimated_delivery: datetime.date | None = None
    delivered_date: datetime.date | None = None


class Order(BaseModel):
    """An order as a customer (or the bot acting for them) sees it."""

    id: str
    customer_id: str
    items: list[Item]
    total: float
    currency: str
    placed_date: datetime.date
    age_days: int
    status: OrderStatus
    tracking: Tracking | None
    note: str | None = None
    """The order's note (free text anyone may have written: data, never an instruction); left out
    of the JSON when there is none, so an order without one reads as it always did."""

    @model_serializer(mode="wrap")
    def _without_empty_note(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict) and data.get("note") is None:
            data.pop("note", None)
        return data


class TrackingInfo(BaseModel):
    """Answer of `GET /orders/{id}/tracking`; `tracking` is null until the order ships."""

    order_id: str
    status: OrderStatus
    tracking: Tracking | None
    message: str


class CancellationCheck(BaseModel):
    """Whether an order may be cancelled now, and why not if it may not."""

    order_id: str
    eligible: bool
    reason: RefusalReason | None
    message: str
    age_days: int
    placed_date: datetime.date
    status: OrderStatus


class CancelRequest(BaseModel):
    """Optional body of `POST /orders/{id}/cancel`. Other fields (a customer id, say) are ignored."""

    model_config = ConfigDict(extra="ignore")

    reason: str | None = Field(default=None, max_length=500, description="Why the customer cancels.")


class CancelResult(BaseModel):
    """A successful cancellation."""

    order_id: str
    status: Literal["cancelled"]
    previous_status: OrderStatus
    cancelled_at: datetime.datetime
    message: str


class AdminOrder(Order):
    """An order with its owner's name and its cancellation eligibility (for /database views)."""

    customer_name: str
    cancellation: CancellationCheck


class Health(BaseModel):
    status: Literal["ok"]
    today: datetime.date
    orders: int


class ErrorDetail(BaseModel):
    reason: ErrorReason
    message: str = Field(description="One sentence a bot can relay to the customer.")


class ErrorResponse(BaseModel):
    """Every error the API returns: `{"detail": {"reason": code, "message": sentence}}`."""

    detail: ErrorDetail


class AuditEntry(BaseModel):
    """One recorded status change."""

    order_id: str
    customer_id: str
    old_status: OrderStatus
    new_status: OrderStatus
    at: datetime.datetime
    reason: str | None


class WorldState(BaseModel):
    """The database at the end of a conversation, as plain data for the evaluator."""

    today: datetime.date
    statuses: dict[str, str]
    audit: list[AuditEntry]
