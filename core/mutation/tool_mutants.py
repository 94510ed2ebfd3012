"""Mutants at the tool boundary: what stands between the bot and its world (WorldTools.boundary),
so a built-in bot, a `python:` bot and a deployed bot calling its served world are mutated alike.
Each changes the bot's state-changing calls only (the world's `changes_state` tools); a call that
reads is run as it is.

- acts without doing: the call's result is computed on a throwaway copy of the world as it is
  now, and the bot gets it; the conversation's world stays unchanged (the record keeps the call
  and its result, with no change).
- acts on the wrong record: the first argument naming a customer's record (an id of a table with
  an owner) is replaced by another record of the same table and the same customer: the first, in
  a seeded order with those in the same state first, that the world lets the call act on (tried
  on throwaway copies), else the first; `wrong_customer_record` takes another customer's record.
- acts twice: the call is run a second time at once; the bot reads the first result. A second
  call the world refuses changes nothing: the act is noted as not visible.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from typing import Any

from parley.core.mutation.notes import seeded
from parley.core.records import ToolCall, ToolCallRecord
from parley.core.world import WorldCopy, WorldTools

__all__ = ["Note", "acts_twice", "acts_without_doing", "wrong_customer_record", "wrong_record"]

Note = Callable[[str, bool], None]
"""How a mutant notes an act: what it did, and whether anything could see it."""


def _changes_state(tools: WorldTools, call: ToolCall) -> bool:
    declared = tools.world.tool(call.name)
    return declared is not None and declared.changes_state


def _scratch(copy: WorldCopy) -> WorldCopy:
    """A throwaway copy of the conversation's world as it is now."""
    connection = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
    with copy.lock:
        connection.deserialize(copy.connection.serialize())
    return WorldCopy(copy.template, connection)


async def acts_without_doing(tools: WorldTools, call: ToolCall, note: Note) -> ToolCallRecord:
    """See the module doc."""
    if not _changes_state(tools, call):
        return await tools.run_call(call)
    scratch = _scratch(tools.copy)
    try:
        shadow = WorldTools(tools.world, scratch, tools.customer_id)
        record = await shadow.run_call(call)
    finally:
        scratch.close()
    note(f"{call.name} answered from a throwaway copy; the world was left unchanged", bool(record.changes))
    record = record.model_copy(update={"changes": [], "violations": []})
    tools.records.append(record)
    return record


def _arguments(call: ToolCall) -> dict[str, Any] | None:
    try:
        value = json.loads(call.arguments or "{}")
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _swapped(tools: WorldTools, call: ToolCall, *, same_customer: bool, name: str) -> tuple[str, str, list[str]] | None:
    """(argument, its record, the records that may take its place, best first: those in the same
    state, each group in a seeded order), or None when the call names no customer's record or
    no other record fits."""
    args = _arguments(call)
    if not args:
        return None
    index = tools.copy.template.key_index()
    customers = tools.world.identity.customers
    for argument, value in args.items():
        if not isinstance(value, str) or value not in index:
            continue
        table_name, owner = next(((t, o) for t, o in index[value] if t != customers), (None, None))
        if table_name is None:
            continue
        table = tools.world.table(table_name)
        candidates = sorted(
            key
            for key, places in index.items()
            if key != value and any(t == table_name and ((o == owner) == same_customer) for t, o in places)
        )
        if not candidates:
            continue
        seeded(name, tools.customer_id, call.name, value).shuffle(candidates)
        field = table.state_field if table is not None else None
        if field:
            state = (tools.copy.db.get(table_name, value) or {}).get(field)
            candidates.sort(key=lambda k: (tools.copy.db.get(table_name, k) or {}).get(field) != state)
        return argument, value, candidates
    return None


TRIED = 5
"""Records tried on a throwaway copy for one that the world lets the call act on."""


async def _on_other_record(tools: WorldTools, call: ToolCall, note: Note, *, same_customer: bool, name: str) -> ToolCallRecord:
    if not _changes_state(tools, call):
        return await tools.run_call(call)
    swap = _swapped(tools, call, same_customer=same_customer, name=name)
    if swap is None:
        return await tools.run_call(call)
    argument, old, candidates = swap
    args = dict(_arguments(call) or {})

    def on(key: str) -> ToolCall:
        return call.model_copy(update={"arguments": json.dumps({**args, argument: key}, ensure_ascii=False)})

    new = candidates[0]
    for key in candidates[:TRIED]:  # the first the world lets it act on, tried where nothing stays
        scratch = _scratch(tools.copy)
        try:
            tried = await WorldTools(tools.world, scratch, tools.customer_id).run_call(on(key))
        finally:
            scratch.close()
        if tried.ok:
            new = key
            break
    note(f"{call.name} on {new} instead of {old}", True)
    return await tools.run_call(on(new))


async def wrong_record(tools: WorldTools, call: ToolCall, note: Note) -> ToolCallRecord:
    """See the module doc: another record of the same customer."""
    return await _on_other_record(tools, call, note, same_customer=True, name="wrong_record")


async def wrong_customer_record(tools: WorldTools, call: ToolCall, note: Note) -> ToolCallRecord:
    """See the module doc: a record of another customer."""
    return await _on_other_record(tools, call, note, same_customer=False, name="wrong_customer_record")


async def acts_twice(tools: WorldTools, call: ToolCall, note: Note) -> ToolCallRecord:
    """See the module doc."""
    first = await tools.run_call(call)
    if first.ok and _changes_state(tools, call):
        second = await tools.run_call(call.model_copy(update={"id": f"{call.id}-again"}))
        seen = bool(second.changes)
        note(
            f"{call.name} called a second time ({'it changed the world again' if seen else 'the world ' + (second.error or 'changed nothing')})",
            seen,
        )
    return first
