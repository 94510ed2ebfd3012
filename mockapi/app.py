"""The FastAPI app: routes, error shapes and the per-request choice of OrderStore.

`create_app(store)` serves one store. `create_app()` without a store serves whichever store
the ASGI scope carries in `scope["state"]["mockapi_store"]`: that is how one shared app
serves many worlds (see `parley.mockapi.worlds.WorldApp`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from fastapi import Body, FastAPI, Header, Path, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from parley.mockapi.order_store import OrderStore, OrderStoreError
from parley.mockapi.schema import (
    CUSTOMER_ID_PATTERN,
    ORDER_ID_PATTERN,
    AdminOrder,
    CancellationCheck,
    CancelRequest,
    CancelResult,
    ErrorReason,
    ErrorResponse,
    Health,
    Order,
    TrackingInfo,
    invalid_customer_id_message,
    invalid_order_id_message,
)

STORE_STATE_KEY = "mockapi_store"
CUSTOMER_HEADER = "X-Customer-Id"

STATUS_OF_REASON: dict[str, int] = {
    "missing_customer": 401,
    "not_your_order": 403,
    "order_not_found": 404,
    "customer_not_found": 404,
    "too_old": 409,
    "delivered": 409,
    "already_cancelled": 409,
}
_ERROR_DESCRIPTIONS = {
    401: f"No `{CUSTOMER_HEADER}` header (reason `missing_customer`).",
    403: "The order or customer is not the caller's (reason `not_your_order`).",
    404: "No such order or customer (`order_not_found` / `customer_not_found`).",
    409: "Cancellation refused by policy (`too_old`, `delivered`, `already_cancelled`).",
    422: "Malformed order id, customer id or body (`invalid_order_id`, `invalid_customer_id`, `invalid_body`).",
}

OrderId = Annotated[str, Path(pattern=ORDER_ID_PATTERN, description="An order id such as ORD-1001.", examples=["ORD-1001"])]
CustomerId = Annotated[str, Path(pattern=CUSTOMER_ID_PATTERN, description="A customer id such as C-100.", examples=["C-100"])]
ActingCustomer = Annotated[
    str,
    Header(
        alias=CUSTOMER_HEADER,
        pattern=CUSTOMER_ID_PATTERN,
        description="The customer the caller acts for; the API checks ownership against it.",
        examples=["C-100"],
    ),
]

T = TypeVar("T")


def _errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    return {code: {"model": ErrorResponse, "description": _ERROR_DESCRIPTIONS[code]} for code in codes}


def _error(status: int, reason: ErrorReason, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"detail": {"reason": reason, "message": message}}, status_code=status, headers=headers)


def _describe_validation(errors: list[dict[str, Any]]) -> tuple[ErrorReason, str]:
    """One code and one sentence for FastAPI's list of validation errors (first one wins)."""
    error = errors[0] if errors else {}
    loc = tuple(error.get("loc", ()))
    where = loc[0] if loc else ""
    field = str(loc[1]) if len(loc) > 1 else ""
    if where == "path" and field == "order_id":
        return "invalid_order_id", invalid_order_id_message(error.get("input"))
    if (where == "path" and field == "customer_id") or (where == "header" and field.lower() == CUSTOMER_HEADER.lower()):
        return "invalid_customer_id", invalid_customer_id_message(error.get("input"))
    if where == "body":
        if error.get("type") == "json_invalid":
            return "invalid_body", "The request body is not valid JSON."
        if len(loc) == 1:
            return "invalid_body", ('The request body must be a JSON object such as {"reason": "changed my mind"}, or empty.')
        path = ".".join(str(part) for part in loc[1:])
        return "invalid_body", f"The request body is invalid at {path}: {error.get('msg', 'invalid value')}."
    return "invalid_request", f"The request is invalid: {error.get('msg', 'invalid value')}."


def create_app(store: OrderStore | None = None) -> FastAPI:
    """Build the order API over `store`, or over the store each request's scope carries."""
    app = FastAPI(
        title="parley mock order API",
        version="1.0.0",
        description=(
            "Orders of a small shop. Cancellation is allowed up to 10 days after the order "
            "was placed, unless it is delivered or already cancelled. Customer routes act for "
            f"the customer named in the `{CUSTOMER_HEADER}` header."
        ),
    )

    def store_of(request: Request) -> OrderStore:
        if store is not None:
            return store
        try:
            return request.scope["state"][STORE_STATE_KEY]
        except KeyError:
            raise RuntimeError("an app built without a store must be reached through a WorldApp") from None

    async def call(request: Request, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run a store call: inline for in-memory stores (microseconds), in the threadpool for files."""
        target = store_of(request)
        if target.blocking:
            return await run_in_threadpool(fn, target, *args, **kwargs)
        return fn(target, *args, **kwargs)

    @app.exception_handler(OrderStoreError)
    async def _store_error(request: Request, exc: OrderStoreError) -> JSONResponse:
        return _error(STATUS_OF_REASON[exc.reason], exc.reason, exc.message)

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = list(exc.errors())
        for error in errors:
            loc = tuple(error.get("loc", ()))
            if error.get("type") == "missing" and loc[:1] == ("header",):
                return _error(
                    401,
                    "missing_customer",
                    f"The {CUSTOMER_HEADER} header is missing; say which customer you act for, e.g. C-100.",
                )
        reason, message = _describe_validation(errors)
        return _error(422, reason, message)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 400:  # FastAPI's "error parsing the body" (e.g. not UTF-8): a malformed body
            return _error(422, "invalid_body", "The request body could not be read as JSON.")
        reasons: dict[int, ErrorReason] = {404: "not_found", 405: "method_not_allowed"}
        reason: ErrorReason = reasons.get(exc.status_code, "http_error")
        message = {
            404: f"There is no route {request.url.path}.",
            405: f"{request.method} is not allowed on {request.url.path}.",
        }.get(exc.status_code, str(exc.detail))
        return _error(exc.status_code, reason, message, headers=getattr(exc, "headers", None))

    @app.get("/health", response_model=Health, tags=["service"])
    async def health(request: Request) -> Health:
        """Liveness, the database's `today` and how many orders it holds."""
        s = store_of(request)
        return Health(status="ok", today=s.today, orders=await call(request, OrderStore.count_orders))

    @app.get("/orders/{order_id}", response_model=Order, responses=_errors(401, 403, 404, 422), tags=["orders"])
    async def get_order(request: Request, order_id: OrderId, customer: ActingCustomer) -> Order:
        """One of the caller's orders."""
        return await call(request, OrderStore.get_order, order_id, customer_id=customer)

    @app.get(
        "/orders/{order_id}/tracking",
        response_model=TrackingInfo,
        responses=_errors(401, 403, 404, 422),
        tags=["orders"],
    )
    async def track_order(request: Request, order_id: OrderId, customer: ActingCustomer) -> TrackingInfo:
        """Tracking of one of the caller's orders; 200 with `tracking: null` before it ships."""
        return await call(request, OrderStore.tracking, order_id, customer_id=customer)

    @app.get(
        "/orders/{order_id}/cancellation",
        response_model=CancellationCheck,
        responses=_errors(401, 403, 404, 422),
        tags=["orders"],
    )
    async def check_cancellation(request: Request, order_id: OrderId, customer: ActingCustomer) -> CancellationCheck:
        """Whether one of the caller's orders may be cancelled now, and why not."""
        return await call(request, OrderStore.cancellation, order_id, customer_id=customer)

    @app.post(
        "/orders/{order_id}/cancel",
        response_model=CancelResult,
        responses=_errors(401, 403, 404, 409, 422),
        tags=["orders"],
    )
    async def cancel_order(
        request: Request,
        order_id: OrderId,
        customer: ActingCustomer,
        body: Annotated[CancelRequest | None, Body()] = None,
    ) -> CancelResult:
        """Cancel one of the caller's orders (policy: placed at most 10 days ago, not delivered)."""
        reason = body.reason if body is not None else None
        return await call(request, OrderStore.cancel, order_id, customer_id=customer, reason=reason)

    @app.get(
        "/customers/{customer_id}/orders",
        response_model=list[Order],
        responses=_errors(401, 403, 404, 422),
        tags=["customers"],
    )
    async def list_customer_orders(request: Request, customer_id: CustomerId, customer: ActingCustomer) -> list[Order]:
        """Every order of the caller (the header must name the same customer)."""
        return await call(request, OrderStore.customer_orders, customer_id, acting_customer_id=customer)

    @app.get("/admin/orders", response_model=list[AdminOrder], tags=["admin"])
    async def admin_orders(request: Request) -> list[AdminOrder]:
        """Every order with its cancellation eligibility (no customer header needed)."""
        return await call(request, OrderStore.admin_orders)

    return app


@functools.cache
def shared_app() -> FastAPI:
    """The one app that serves every world; built once per process."""
    return create_app()
