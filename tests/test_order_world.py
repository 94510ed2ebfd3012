"""The order world declared through the world API: the tools a bot is offered are the very ones it
always was (the prompt's tool list byte for byte), and the world's declarations say what parley
needs of it (ids, owners, state-changing tools, identity)."""

from __future__ import annotations

import json

from parley.core.world import load_world

# The order tools exactly as parley offered them before the world API: the generated schemas
# must keep every word and constraint (maxLength for llama.cpp's grammars), so prompts and the
# figures measured on them stay as they were.
OFFERED = json.loads(
    r"""
[
 {
  "name": "get_order",
  "description": "Get the details of one of the signed-in customer's orders: items, status, placed date.",
  "parameters": {
   "type": "object",
   "properties": {
    "order_id": {
     "type": "string",
     "description": "The order id exactly as the customer gave it, e.g. ORD-1003.",
     "maxLength": 24
    }
   },
   "required": [
    "order_id"
   ],
   "additionalProperties": false
  }
 },
 {
  "name": "track_order",
  "description": "Get the shipping status and tracking information of one of the customer's orders.",
  "parameters": {
   "type": "object",
   "properties": {
    "order_id": {
     "type": "string",
     "description": "The order id exactly as the customer gave it, e.g. ORD-1003.",
     "maxLength": 24
    }
   },
   "required": [
    "order_id"
   ],
   "additionalProperties": false
  }
 },
 {
  "name": "list_my_orders",
  "description": "List all orders of the signed-in customer with their status and age.",
  "parameters": {
   "type": "object",
   "properties": {},
   "additionalProperties": false
  }
 },
 {
  "name": "check_cancellation",
  "description": "Check whether one of the customer's orders can be cancelled under the policy (placed at most 10 days ago, not delivered, not already cancelled). Changes nothing.",
  "parameters": {
   "type": "object",
   "properties": {
    "order_id": {
     "type": "string",
     "description": "The order id exactly as the customer gave it, e.g. ORD-1003.",
     "maxLength": 24
    }
   },
   "required": [
    "order_id"
   ],
   "additionalProperties": false
  }
 },
 {
  "name": "cancel_order",
  "description": "Cancel one of the customer's orders. Only call this after check_cancellation said it is eligible AND the customer explicitly confirmed they want it cancelled.",
  "parameters": {
   "type": "object",
   "properties": {
    "order_id": {
     "type": "string",
     "description": "The order id exactly as the customer gave it, e.g. ORD-1003.",
     "maxLength": 24
    },
    "reason": {
     "type": "string",
     "description": "Optional: why the customer cancels.",
     "maxLength": 200
    }
   },
   "required": [
    "order_id"
   ],
   "additionalProperties": false
  }
 }
]
"""
)


def test_the_order_worlds_tools_are_offered_as_they_always_were():
    world = load_world("orders")
    offered = [t.spec.model_dump() for t in world.declared_tools]
    assert json.dumps(offered) == json.dumps(OFFERED)


def test_the_order_world_declares_what_parley_needs_of_it():
    world = load_world("orders")
    assert world.name == "orders" and world.session_bound
    assert [t.name for t in world.state_changing] == ["cancel_order"] and world.action_of("cancel_order") == "cancel"
    assert world.tool("cancel_order").needs_confirmation
    orders = world.table("orders")
    assert orders.id_regex.fullmatch("ORD-1004") and orders.owner_of({"customer_id": "C-100"}) == "C-100"
    assert world.table("audit").log
    staff = load_world("orders-staff")
    assert not staff.session_bound and staff.session_signed_in
