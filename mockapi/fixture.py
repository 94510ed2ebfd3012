"""The order fixture: read `fixtures/orders.json`, apply overrides, turn relative ages into dates."""

from __future__ import annotations

import datetime
import functools
import json
import pathlib
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from parley.mockapi.schema import CUSTOMER_ID_PATTERN, ORDER_ID_PATTERN, Item, OrderStatus

DEFAULT_FIXTURE = pathlib.Path(__file__).parent / "fixtures" / "orders.json"
EARLIEST_TODAY = datetime.date(1900, 1, 1)
LATEST_TODAY = datetime.date(9000, 12, 31)
"""The dates the database's `today` may be: order dates are days before and after it, and a
`today` near year 1 or 9999 would put them outside what a date can hold."""


def today_problem(today: datetime.date) -> str | None:
    """Why `today` cannot be the database's date (None when it can)."""
    if EARLIEST_TODAY <= today <= LATEST_TODAY:
        return None
    return f"{today.isoformat()} is outside the dates the order database can count from ({EARLIEST_TODAY} to {LATEST_TODAY})"


class FixtureCustomer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=CUSTOMER_ID_PATTERN)
    name: str
    email: str


class FixtureTracking(BaseModel):
    model_config = ConfigDict(extra="forbid")

    carrier: str
    tracking_number: str
    last_event: str
    estimated_delivery_in_days: int | None = None
    delivered_days_ago: int | None = Field(default=None, ge=0)


class FixtureOrder(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=ORDER_ID_PATTERN)
    customer_id: str = Field(pattern=CUSTOMER_ID_PATTERN)
    placed_days_ago: int = Field(ge=0)
    status: OrderStatus
    currency: str
    total: float = Field(ge=0)
    items: list[Item] = Field(min_length=1)
    tracking: FixtureTracking | None = None
    note: str | None = Field(default=None, max_length=2000)
    """Free text written on the order (by the customer at checkout, or anyone with access)."""

    @model_validator(mode="after")
    def _delivered_after_placed(self) -> FixtureOrder:
        delivered = self.tracking.delivered_days_ago if self.tracking else None
        if delivered is not None and delivered > self.placed_days_ago:
            raise ValueError(f"{self.id} is delivered before it was placed")
        return self


class Fixture(BaseModel):
    model_config = ConfigDict(extra="ignore")  # allows a "_comment" key in the JSON

    customers: list[FixtureCustomer]
    orders: list[FixtureOrder]

    @model_validator(mode="after")
    def _consistent(self) -> Fixture:
        customer_ids = {c.id for c in self.customers}
        seen: set[str] = set()
        for order in self.orders:
            if order.id in seen:
                raise ValueError(f"order {order.id} appears twice")
            seen.add(order.id)
            if order.customer_id not in customer_ids:
                raise ValueError(f"order {order.id} belongs to unknown customer {order.customer_id}")
        return self


def read_fixture(path: pathlib.Path | None = None) -> dict[str, Any]:
    """Return the raw fixture JSON (default: the shipped `fixtures/orders.json`)."""
    path = path or DEFAULT_FIXTURE
    try:
        return json.loads(pathlib.Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"cannot read order fixture {path}: {exc}") from exc


def apply_overrides(raw: Mapping[str, Any], overrides: Sequence[Mapping[str, Any]]) -> Fixture:
    """Merge partial order dicts (keyed by "id") onto the raw fixture and validate the result."""
    orders = {o["id"]: dict(o) for o in raw.get("orders", [])}
    for override in overrides:
        order_id = override.get("id")
        if order_id not in orders:
            known = ", ".join(sorted(orders))
            raise ValueError(f"override names unknown order {order_id!r}; known orders: {known}")
        orders[order_id].update(override)
    try:
        return Fixture.model_validate({"customers": raw.get("customers", []), "orders": list(orders.values())})
    except ValidationError as exc:
        raise ValueError(f"invalid order fixture or override: {exc}") from exc


def order_rows(fixture: Fixture, today: datetime.date) -> list[dict[str, Any]]:
    """Rows for the `orders` table, with relative ages materialized against `today`."""
    rows = []
    for order in fixture.orders:
        tracking = None
        if order.tracking is not None:
            t = order.tracking
            tracking = {
                "carrier": t.carrier,
                "tracking_number": t.tracking_number,
                "last_event": t.last_event,
                "estimated_delivery": _shift(today, t.estimated_delivery_in_days),
                "delivered_date": _shift(today, None if t.delivered_days_ago is None else -t.delivered_days_ago),
            }
        rows.append(
            {
                "id": order.id,
                "customer_id": order.customer_id,
                "placed_date": (today - datetime.timedelta(days=order.placed_days_ago)).isoformat(),
                "status": order.status,
                "total": order.total,
                "currency": order.currency,
                "items": json.dumps([item.model_dump() for item in order.items]),
                "tracking": None if tracking is None else json.dumps(tracking),
                "note": order.note,
            }
        )
    return rows


def date_problem(today: datetime.date, overrides: Sequence[Mapping[str, Any]] = ()) -> str | None:
    """Why the fixture (with `overrides`) cannot be dated at `today`: an order placed, delivered
    or expected a number of days from it that falls outside the calendar (year 1 to 9999). None
    when it can be; None too when the overrides are invalid (that is reported where they are)."""
    try:
        fixture = apply_overrides(_shipped_fixture(), overrides)
    except ValueError:
        return None
    offsets = [0]
    for order in fixture.orders:
        offsets.append(-order.placed_days_ago)
        if order.tracking is not None:
            offsets += [-(order.tracking.delivered_days_ago or 0), order.tracking.estimated_delivery_in_days or 0]
    before, after = -min(offsets), max(offsets)
    span = (datetime.date.max - datetime.date.min).days
    if before + after > span:
        return f"its orders span {before + after} days, more than any calendar holds"
    earliest = datetime.date.min + datetime.timedelta(days=before)
    latest = datetime.date.max - datetime.timedelta(days=after)
    if earliest <= today <= latest:
        return None
    return (
        f"{today.isoformat()} is a date a World cannot hold: its orders are dated up to {before} days before it "
        f"and {after} after; use a date from {earliest.isoformat()} to {latest.isoformat()}"
    )


@functools.cache
def _shipped_fixture() -> dict[str, Any]:
    return read_fixture()


def _shift(today: datetime.date, days: int | None) -> str | None:
    return None if days is None else (today + datetime.timedelta(days=days)).isoformat()
