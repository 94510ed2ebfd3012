"""The order world's five tools, over the conversation's copy of the mock order API's database.

Each tool runs the mock API's own store (parley.mockapi.order_store), which enforces the policy
itself (placed at most 10 days ago, not delivered, not already cancelled; only the owner's
orders), so a bot cannot get past it whatever it asks. Identity is bound by the session: the
customer is `ctx.customer_id`, never an argument. A tool's result is the API's JSON body; a
refusal carries the API's reason and status (`REFUSED [409 too_old] ...`), as the API would
answer it over HTTP.

Arguments are checked here rather than by the schema's constraints, so the bot reads the same
sentences whatever it sent: the schema a model is offered still carries `maxLength` for
llama.cpp's grammars and strict tool modes.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import Field, WithJsonSchema

from parley.core.world import Refused, ToolContext, tool
from parley.mockapi.app import STATUS_OF_REASON
from parley.mockapi.order_store import OrderStore, OrderStoreError
from parley.mockapi.schema import ORDER_ID_PATTERN, CancellationCheck, CancelResult, Order, TrackingInfo, invalid_order_id_message

STORE = "order_store"
"""Where the conversation's OrderStore is kept in ctx.extras (built by the world's open_copy hook)."""

_REFUSALS = frozenset({403, 409})
# Ids go into a store query: anything outside this shape is refused before it is looked up.
_SAFE_ORDER_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
_ORDER_ID = re.compile(ORDER_ID_PATTERN)
REASON_MAX_CHARS = 500

OrderIdArgument = Annotated[
    Any,
    Field(examples=["ORD-1003"]),
    WithJsonSchema(
        {
            "type": "string",
            "description": "The order id exactly as the customer gave it, e.g. ORD-1003.",
            # Ids are short. Servers that constrain generation to the schema (llama.cpp grammars,
            # strict tool modes) stop a rambling model here instead of after hundreds of tokens.
            "maxLength": 24,
        }
    ),
]
ReasonArgument = Annotated[
    Any,
    WithJsonSchema({"type": "string", "description": "Optional: why the customer cancels.", "maxLength": 200}),
]


def _store(ctx: ToolContext) -> OrderStore:
    store: OrderStore = ctx.extras[STORE]
    return store


def _customer(ctx: ToolContext) -> str:
    if ctx.customer_id is None:  # the order world binds the customer by the session
        raise Refused("No customer is signed in.", reason="missing_customer", kind="request", status=401)
    return ctx.customer_id


def refusal(exc: OrderStoreError) -> Refused:
    """The API's refusal as the bot reads it: its reason, and its status (403 and 409 are the policy's)."""
    status = STATUS_OF_REASON[exc.reason]
    return Refused(exc.message, reason=exc.reason, kind="policy" if status in _REFUSALS else "request", status=status)


def order_id_argument(value: Any) -> str:
    """The order id a bot sent, as the API reads it; `Refused` with the sentence it would say."""
    if not isinstance(value, str):
        raise Refused(
            f'order_id must be a string such as "ORD-1003", not {type(value).__name__} {value!r}.',
            reason="invalid_arguments",
            kind="request",
        )
    value = value.strip()
    if not value:
        raise Refused("order_id is empty. Ask the customer for the order id.", reason="invalid_arguments", kind="request")
    if not _SAFE_ORDER_ID.fullmatch(value):
        raise Refused(f"{value!r} is not an order id. Order ids look like ORD-1003.", reason="invalid_arguments", kind="request")
    value = value.upper()
    if not _ORDER_ID.match(value):
        raise Refused(invalid_order_id_message(value), reason="invalid_order_id", kind="request", status=422)
    return value


@tool
def get_order(ctx: ToolContext, order_id: OrderIdArgument) -> Order:
    """Get the details of one of the signed-in customer's orders: items, status, placed date."""
    try:
        return _store(ctx).get_order(order_id_argument(order_id), customer_id=_customer(ctx))
    except OrderStoreError as exc:
        raise refusal(exc) from None


@tool
def track_order(ctx: ToolContext, order_id: OrderIdArgument) -> TrackingInfo:
    """Get the shipping status and tracking information of one of the customer's orders."""
    try:
        return _store(ctx).tracking(order_id_argument(order_id), customer_id=_customer(ctx))
    except OrderStoreError as exc:
        raise refusal(exc) from None


@tool
def list_my_orders(ctx: ToolContext) -> list[Order]:
    """List all orders of the signed-in customer with their status and age."""
    customer = _customer(ctx)
    try:
        return _store(ctx).customer_orders(customer, acting_customer_id=customer)
    except OrderStoreError as exc:
        raise refusal(exc) from None


@tool(
    description=(
        "Check whether one of the customer's orders can be cancelled under the policy "
        "(placed at most 10 days ago, not delivered, not already cancelled). Changes nothing."
    )
)
def check_cancellation(ctx: ToolContext, order_id: OrderIdArgument) -> CancellationCheck:
    """Whether one of the customer's orders may be cancelled now, and why not."""
    try:
        return _store(ctx).cancellation(order_id_argument(order_id), customer_id=_customer(ctx))
    except OrderStoreError as exc:
        raise refusal(exc) from None


@tool(
    changes_state=True,
    needs_confirmation=True,
    description=(
        "Cancel one of the customer's orders. Only call this after check_cancellation said it is "
        "eligible AND the customer explicitly confirmed they want it cancelled."
    ),
)
def cancel_order(ctx: ToolContext, order_id: OrderIdArgument, reason: ReasonArgument = None) -> CancelResult:
    """Cancel one of the caller's orders (policy: placed at most 10 days ago, not delivered)."""
    order = order_id_argument(order_id)
    if reason is not None and not isinstance(reason, str):
        raise Refused("reason must be a string when given.", reason="invalid_arguments", kind="request")
    if reason is not None and len(reason) > REASON_MAX_CHARS:
        raise Refused(
            f"The request body is invalid at reason: String should have at most {REASON_MAX_CHARS} characters.",
            reason="invalid_body",
            kind="request",
            status=422,
        )
    try:
        return _store(ctx).cancel(order, customer_id=_customer(ctx), reason=reason or None)
    except OrderStoreError as exc:
        raise refusal(exc) from None


TOOLS = [get_order, track_order, list_my_orders, check_cancellation, cancel_order]
