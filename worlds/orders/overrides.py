"""What a file may write of the order world's orders (`world: {orders: [{id: ORD-1001, status: shipped}]}`):
fields of the mock API's fixture, ages relative to the world's `today` (`placed_days_ago`), checked
as the fixture's own records check them, and dated: every order must fall in the calendar."""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from parley.core.world import ColumnType
from parley.mockapi.fixture import FixtureOrder, date_problem, read_fixture

__all__ = ["OVERRIDE_INPUTS", "order_date_problem", "order_override_problems"]

OVERRIDE_INPUTS: dict[str, ColumnType] = {"placed_days_ago": "integer"}
"""Fields an override writes that are not columns: the fixture's own way to date an order."""


def order_override_problems(table: str, row: Mapping[str, Any]) -> list[tuple[str | None, str]]:
    """Each way an override of an order breaks the fixture's records, at its field."""
    if table != "orders":
        return []
    shipped = {str(o.get("id")): o for o in read_fixture().get("orders", [])}
    base = shipped.get(str(row.get("id", "")).strip().upper())
    if base is None:
        return []  # an unknown order is said where its id is checked
    found: list[tuple[str | None, str]] = []
    try:
        FixtureOrder.model_validate({**base, **dict(row)})
    except ValidationError as exc:
        for error in exc.errors(include_url=False):
            loc = error.get("loc") or ()
            column = str(loc[0]) if loc else None
            where = ".".join(str(part) for part in loc[1:])
            message = _worded(error)
            if column == "items" and not where:
                message = "expected a list of items (name, qty, unit_price, currency)" + ("" if row.get("items") is not None else "")
            elif column == "tracking" and not where:
                message = "expected a tracking mapping or null"
            found.append((column if column in row else None, f"{where}: {message}" if where else message))
    return found


def _worded(error: Any) -> str:
    """A pydantic error of the fixture's order model in parley's words."""
    kind, given = error.get("type"), error.get("input")
    if kind == "missing":
        return "required"
    if kind == "extra_forbidden":
        return "unknown field"
    if kind == "greater_than_equal":
        return f"must be at least {(error.get('ctx') or {}).get('ge')}, got {given!r}"
    message = str(error.get("msg", "invalid value")).removeprefix("Value error, ")
    if message.startswith("Input should be "):
        return f"expected {message.removeprefix('Input should be ')}, got {given!r}"
    return message


def order_date_problem(today: datetime.date, rows: Mapping[str, Sequence[Mapping[str, Any]]]) -> str | None:
    """Why the orders (with the file's overrides) cannot be dated at `today`, or None."""
    return date_problem(today, list(rows.get("orders", ())))
