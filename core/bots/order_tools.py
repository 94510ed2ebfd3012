"""The order-service tools the built-in bot may call, and their execution against an order API.

The customer's identity is bound here, by the session: every request carries the session's
`X-Customer-Id`, and no tool takes a customer argument the model could use to act for someone
else (one passed anyway is ignored and noted in the record). Execution never raises: API
refusals, unknown orders, malformed arguments and unreachable services all come back as a text
the model can relay, and every executed call is recorded.

Result texts the model sees:
- success: the API's JSON body, compact;
- an API refusal (403, 409): ``REFUSED [409 too_old] <the API's message>``;
- any other failure: ``ERROR [404 order_not_found] <message>`` or ``ERROR [invalid_arguments] <message>``.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

import httpx

from parley.core.records import ORDER_TOOL_SPECS, TOOL_NAMES, ToolCall, ToolCallRecord, ToolSpec

# Arguments a model might add to act for another customer; never forwarded.
_IDENTITY_ARGUMENTS = frozenset({"customer_id", "customer", "customerid", "user_id", "x-customer-id", "as_customer"})
# Ids go into a URL path: anything outside this shape could reach another route ("../admin").
_SAFE_ORDER_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
_REFUSAL_STATUSES = frozenset({403, 409})


class _ArgumentError(Exception):
    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


def _error_text(reason: str, message: str, status: int | None = None, *, refused: bool = False) -> str:
    head = "REFUSED" if refused else "ERROR"
    code = f"{status} {reason}" if status is not None else reason
    return f"{head} [{code}] {message}"


def _parse_arguments(raw: str) -> dict[str, Any]:
    text = (raw or "").strip() or "{}"
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _ArgumentError(
            "invalid_json", f'The arguments are not valid JSON ({exc.msg}). Send a JSON object such as {{"order_id": "ORD-1003"}}.'
        ) from None
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _ArgumentError("invalid_arguments", 'The arguments must be a JSON object such as {"order_id": "ORD-1003"}.')
    return value


def _order_id(args: dict[str, Any], tool: str) -> str:
    if "order_id" not in args:
        raise _ArgumentError(
            "invalid_arguments",
            f'{tool} needs an order_id, e.g. {{"order_id": "ORD-1003"}}. Ask the customer for it if you do not know it.',
        )
    value = args["order_id"]
    if not isinstance(value, str):
        raise _ArgumentError("invalid_arguments", f'order_id must be a string such as "ORD-1003", not {type(value).__name__} {value!r}.')
    value = value.strip()
    if not value:
        raise _ArgumentError("invalid_arguments", "order_id is empty. Ask the customer for the order id.")
    if not _SAFE_ORDER_ID.fullmatch(value):
        raise _ArgumentError("invalid_arguments", f"{value!r} is not an order id. Order ids look like ORD-1003.")
    return value.upper()


def _api_error(response: httpx.Response) -> tuple[str, str]:
    """The API's reason code and sentence from an error response, whatever its shape."""
    try:
        body = response.json()
    except ValueError:
        return f"http_{response.status_code}", response.text.strip()[:300] or f"The order service answered {response.status_code}."
    detail = body.get("detail") if isinstance(body, dict) else None
    if isinstance(detail, dict):
        reason = str(detail.get("reason") or f"http_{response.status_code}")
        message = str(detail.get("message") or reason)
        return reason, message
    if isinstance(detail, str):
        return f"http_{response.status_code}", detail
    if isinstance(detail, list):  # FastAPI's own validation errors
        return "malformed", "The request was malformed: " + "; ".join(
            str(d.get("msg", d)) if isinstance(d, dict) else str(d) for d in detail
        )
    return f"http_{response.status_code}", f"The order service answered {response.status_code}."


class OrderTools:
    """Executes the order tools for one session's customer over an httpx client.

    `records` lists every executed call in order, so a caller keeps them even when a
    conversation is cut short mid-turn. `customer_id` may be changed between turns (the live
    chat's /customer); it is never taken from a tool's arguments.
    """

    specs: list[ToolSpec] = ORDER_TOOL_SPECS

    def __init__(self, client: httpx.AsyncClient, customer_id: str) -> None:
        self.client = client
        self.customer_id = customer_id
        self.records: list[ToolCallRecord] = []

    async def execute(self, call: ToolCall) -> ToolCallRecord:
        """Run one tool call; never raises (except cancellation). The record is also appended to `records`."""
        started = time.perf_counter()
        customer_id = self.customer_id
        args: dict[str, Any] | None = None
        ignored: list[str] = []
        status: int | None = None
        try:
            args = _parse_arguments(call.arguments)
            ignored = sorted(k for k in args if k.lower() in _IDENTITY_ARGUMENTS)
            if call.name not in TOOL_NAMES:
                raise _ArgumentError(
                    "unknown_tool",
                    f"There is no tool named {call.name!r}. The tools are: {', '.join(sorted(TOOL_NAMES))}.",
                )
            response = await self._request(call.name, args, customer_id)
            status = response.status_code
            if response.is_success:
                ok, error, refused = True, None, False
                result = response.text if response.content else "{}"
                try:  # compact, stable text for the model
                    result = json.dumps(response.json(), separators=(",", ":"), ensure_ascii=False)
                except ValueError:
                    pass
            else:
                reason, message = _api_error(response)
                refused = status in _REFUSAL_STATUSES
                ok, error = False, reason
                result = _error_text(reason, message, status, refused=refused)
        except _ArgumentError as exc:
            ok, error, refused = False, exc.reason, False
            result = _error_text(exc.reason, exc.message)
        except httpx.HTTPError as exc:
            ok, error, refused = False, "unavailable", False
            result = _error_text("unavailable", f"The order service could not be reached ({type(exc).__name__}). Please try again later.")
        record = ToolCallRecord(
            call_id=call.id,
            name=call.name,
            arguments_raw=call.arguments,
            arguments=args,
            customer_id=customer_id,
            result=result,
            ok=ok,
            error=error,
            refused=refused,
            http_status=status,
            latency_s=time.perf_counter() - started,
            ignored_arguments=ignored,
        )
        self.records.append(record)
        return record

    async def _request(self, name: str, args: dict[str, Any], customer_id: str) -> httpx.Response:
        headers = {"X-Customer-Id": customer_id}
        if name == "list_my_orders":
            return await self.client.get(f"/customers/{customer_id}/orders", headers=headers)
        order_id = _order_id(args, name)
        if name == "get_order":
            return await self.client.get(f"/orders/{order_id}", headers=headers)
        if name == "track_order":
            return await self.client.get(f"/orders/{order_id}/tracking", headers=headers)
        if name == "check_cancellation":
            return await self.client.get(f"/orders/{order_id}/cancellation", headers=headers)
        # cancel_order
        reason = args.get("reason")
        if reason is not None and not isinstance(reason, str):
            raise _ArgumentError("invalid_arguments", "reason must be a string when given.")
        body = {"reason": reason} if reason else None
        return await self.client.post(f"/orders/{order_id}/cancel", headers=headers, json=body)
