"""Customer and order ids a file names, checked against the order world it will run in.

A conversation's world is always the shipped fixture (parley.mockapi's `fixtures/orders.json`):
a profile's `world.orders` changes orders of it, and cannot add one. An id the world does not
hold makes a check that cannot hold (an expected status of an order that is not there) or a
world that cannot be built, and the bot would be blamed for the setup's typo; so each one is an
error at its place, with did-you-mean:
- a profile: `world.customer_id`, `world.orders[i].id` and `.customer_id`, the keys of
  `expect.orders`;
- a playbook: `customer_id`, the keys of `expect.orders`, the `order_id` of an `expect_tool`
  step's arguments unless a `user` step names that order (a bot may be expected to look up an
  order the customer asks about that does not exist);
- a scenario file: `CUSTOMER_ID`, and any variable whose whole value is an order id.
What a customer only says (a goal, a `user` step, an ORDER_GOAL sentence) is not checked: asking
about an order that does not exist is a test of its own (profiles/unknown_order_id.yaml).

`world_id_errors(data, source, kind)` reads the file's parsed data (ruamel's round-trip data or
parley.core.specs.json_positions', which carry each value's line and column) once its own
checks passed.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Any, Literal

from parley.core.errors import ProfileError
from parley.core.specs.profile_validation import ORDER_ID_RE, did_you_mean
from parley.core.specs.yaml_validation import Node
from parley.mockapi.fixture import read_fixture

__all__ = ["WorldIds", "shipped_world_ids", "world_id_errors"]

IdFileKind = Literal["profile", "playbook", "scenario"]

_WORLD = "the order world (the shipped fixture, mockapi/fixtures/orders.json)"


class WorldIds:
    """The customers and orders of a world, and the error for an id it does not hold."""

    def __init__(self, customers: Iterable[str], orders: Iterable[str]) -> None:
        self.customers = tuple(customers)
        self.orders = tuple(orders)

    def unknown_customer(self, value: Any) -> str | None:
        """Why `value` is not a customer of this world (None: it is, or it is not an id at all,
        which the file's own checks report)."""
        if not isinstance(value, str) or value.strip() in self.customers:
            return None
        text = value.strip()
        hint = did_you_mean(text, self.customers) or f"; its customers are {', '.join(self.customers)}"
        return f"customer '{text}' is not in {_WORLD}{hint}"

    def unknown_order(self, value: Any, *, note: str = "") -> str | None:
        """Why `value` is not an order of this world (None: it is, or it is not text)."""
        if not isinstance(value, str) or value.strip().upper() in self.orders:
            return None
        text = value.strip()
        hint = did_you_mean(text, self.orders) or f"; its orders are {', '.join(self.orders)}"
        return f"order '{text}' is not in {_WORLD}{note}{hint}"


@functools.cache
def shipped_world_ids() -> WorldIds:
    """The ids of the shipped fixture, read once."""
    raw = read_fixture()
    return WorldIds(
        customers=[str(c.get("id")) for c in raw.get("customers", [])],
        orders=[str(o.get("id")) for o in raw.get("orders", [])],
    )


def world_id_errors(data: Any, source: str, kind: IdFileKind, world: WorldIds | None = None) -> list[ProfileError]:
    """Every id the file names that `world` (default: the shipped fixture's) does not hold, in
    file order. `data` is the file's parsed, already valid, content."""
    world = world or shipped_world_ids()
    found = _Found(source)
    root = Node.root(data)
    if kind == "profile":
        _profile(root, world, found)
    elif kind == "playbook":
        _playbook(root, world, found)
    else:
        _scenarios(root, world, found)
    return sorted(found.errors, key=lambda e: (e.line or 0, e.column or 0))


class _Found:
    def __init__(self, source: str) -> None:
        self.source = source
        self.errors: list[ProfileError] = []

    def add(self, node: Node, reason: str | None, *, at_key: bool = False) -> None:
        if reason is None:
            return
        line, column = (node.key_line, node.key_column) if at_key else (node.line, node.column)
        self.errors.append(ProfileError(reason, file=self.source, line=line, column=column, field_path=node.path or None))


def _mapping(node: Node, key: str) -> Node | None:
    if not node.has(key) or node.value[key] is None:
        return None
    return node.child(key)


def _expected_orders(root: Node, world: WorldIds, found: _Found) -> None:
    expect = _mapping(root, "expect")
    orders = _mapping(expect, "orders") if expect is not None and expect.is_map else None
    if orders is None:
        return
    for order_id, child in orders.entries():
        # The key names the order: point at it (its value is the status).
        found.add(child, world.unknown_order(order_id, note=", so its expected status can never hold"), at_key=True)


def _profile(root: Node, world: WorldIds, found: _Found) -> None:
    world_node = _mapping(root, "world")
    if world_node is not None and world_node.is_map:
        customer = _mapping(world_node, "customer_id")
        if customer is not None:
            found.add(customer, world.unknown_customer(customer.value))
        orders = _mapping(world_node, "orders")
        for item in orders.items() if orders is not None else []:
            if not item.is_map:
                continue
            if item.has("id"):
                found.add(
                    item.child("id"),
                    world.unknown_order(item.value["id"], note=": world.orders changes the fixture's orders, it cannot add one"),
                )
            if _mapping(item, "customer_id") is not None:
                found.add(item.child("customer_id"), world.unknown_customer(item.value["customer_id"]))
    _expected_orders(root, world, found)


def _playbook(root: Node, world: WorldIds, found: _Found) -> None:
    customer = _mapping(root, "customer_id")
    if customer is not None:
        found.add(customer, world.unknown_customer(customer.value))
    steps = _mapping(root, "steps")
    items = steps.items() if steps is not None else []
    said = [str(item.value["user"]) for item in items if item.is_map and isinstance(item.value.get("user"), str)]
    for item in items:
        expected = _mapping(item, "expect_tool") if item.is_map else None
        arguments = _mapping(expected, "arguments") if expected is not None and expected.is_map else None
        order = _mapping(arguments, "order_id") if arguments is not None and arguments.is_map else None
        if order is None or not isinstance(order.value, str):
            continue
        if any(_names_order(text, order.value) for text in said):
            continue  # the customer asks about it: an order that does not exist may be the test
        found.add(order, world.unknown_order(order.value, note=" and no user step names it"))
    _expected_orders(root, world, found)


def _names_order(text: str, order_id: str) -> bool:
    """Does `text` name the order (its number, however written: "ORD-1004", "order 1004")?
    (The readers of parley.core.reading sit on this layer's side, not below it.)"""
    digits = order_id.strip().upper().removeprefix("ORD-").lstrip("0") or "0"
    return re.search(rf"(?<![0-9])0*{re.escape(digits)}(?![0-9])", text) is not None


def _scenarios(root: Node, world: WorldIds, found: _Found) -> None:
    listing = _mapping(root, "scenarios") if root.is_map else root
    for item in listing.items() if listing is not None else []:
        variables = _mapping(item, "variables") if item.is_map else None
        if variables is None or not variables.is_map:
            continue
        for name, child in variables.entries():
            if name == "CUSTOMER_ID":
                found.add(child, world.unknown_customer(child.value))
            elif isinstance(child.value, str) and ORDER_ID_RE.match(child.value.strip()):
                found.add(child, world.unknown_order(child.value))
