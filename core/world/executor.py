"""A conversation's tools: each call a bot makes on its world, run and recorded.

`WorldTools` is what a bot holds for one conversation (the built-in bot, a `python:` bot, a deployed
bot through the served world): the world's tool specs, and `execute(call)`, which never raises
(but for cancellation). Arguments that are not JSON, an unknown tool, a missing or mistyped
argument, the world's refusals and a world's own bug all come back as a text the bot reads, and
every call is recorded with what it changed in the world, which records its result showed, and
the world's rules it broke.

Result texts the bot sees:
- success: the tool's result as compact JSON (a string result as it is);
- a refusal the policy decides: ``REFUSED [409 too_old] <the world's message>``;
- a wrong request: ``ERROR [404 order_not_found] <message>`` or ``ERROR [invalid_arguments] <message>``.

On a world whose identity is bound by the session, arguments a bot adds to act for someone else
(`customer_id`, `user_id`, ...) that the tool does not declare are never passed on, and are noted in
the record.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from pydantic import BaseModel

from parley.core.records import RecordRef, RuleViolation, ToolCall, ToolCallRecord, ToolSpec
from parley.core.world.database import WorldCopy
from parley.core.world.declaration import RuleCall, WorldDefinition
from parley.core.world.tool_declaration import Refused, ToolContext, WorldTool

__all__ = ["IDENTITY_ARGUMENTS", "ToolBoundary", "WorldTools", "result_text"]

log = logging.getLogger("parley.world.executor")

IDENTITY_ARGUMENTS = frozenset({"customer_id", "customer", "customerid", "user_id", "x-customer-id", "as_customer"})
"""Arguments a model might add to act for another customer; never forwarded on a session-bound world."""

ToolBoundary = Callable[["WorldTools", ToolCall], Awaitable[ToolCallRecord]]
"""Something between a bot and its world: given the tools and a call, returns the call's record
(running it, or not, with `WorldTools.run_call`)."""

_TOKENS = re.compile(r"[A-Za-z0-9#@._+-]+")


def result_text(value: Any) -> str:
    """A tool's result as the bot reads it: compact JSON, or a string as it is."""
    if isinstance(value, str):
        return value
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    elif isinstance(value, list):
        value = [v.model_dump(mode="json") if isinstance(v, BaseModel) else v for v in value]
    if value is None:
        return "{}"
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


def _error_text(reason: str, message: str, status: int | None = None, *, refused: bool = False) -> str:
    head = "REFUSED" if refused else "ERROR"
    code = f"{status} {reason}" if status is not None else reason
    return f"{head} [{code}] {message}"


def _example_arguments(tool: WorldTool | None) -> str:
    """An example of a tool's arguments for messages: its required ones, with their declared examples."""
    if tool is not None and tool.required:
        return json.dumps({name: tool.examples.get(name, "...") for name in tool.required})
    return "{}"


class _ArgumentError(Exception):
    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


def _parse_arguments(raw: str, tool: WorldTool | None) -> dict[str, Any]:
    text = (raw or "").strip() or "{}"
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _ArgumentError(
            "invalid_json", f"The arguments are not valid JSON ({exc.msg}). Send a JSON object such as {_example_arguments(tool)}."
        ) from None
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _ArgumentError("invalid_arguments", f"The arguments must be a JSON object such as {_example_arguments(tool)}.")
    return value


class WorldTools:
    """The tools of one conversation on its private world copy (see the module doc).

    `customer_id` is the customer the session binds (it may be changed between turns, as the live
    chat's /customer does; it is never taken from a tool's arguments); `records` lists every call
    in order, so a conversation cut short mid-turn keeps them.
    """

    def __init__(self, world: WorldDefinition, copy: WorldCopy, customer_id: str) -> None:
        self.world = world
        self.copy = copy
        self.customer_id = customer_id
        self.records: list[ToolCallRecord] = []
        self.specs: list[ToolSpec] = [t.spec for t in world.declared_tools]
        self.boundary: ToolBoundary | None = None
        """What stands between the bot and the world, when something does (a mutant of the bot's
        behaviour, parley.core.mutation): every call, the built-in bot's and a served world's, goes
        through it; it runs the call itself with `run_call`."""
        if not copy.extras and world.open_copy is not None:
            copy.extras.update(world.open_copy(copy.db, copy.today, copy.clock))

    @property
    def tool_names(self) -> list[str]:
        return self.world.tool_names

    def context(self) -> ToolContext:
        return ToolContext(
            db=self.copy.db,
            today=self.copy.today,
            customer_id=self.customer_id if self.world.session_signed_in else None,
            clock=self.copy.clock,
            extras=self.copy.extras,
        )

    async def execute(self, call: ToolCall) -> ToolCallRecord:
        """Run one tool call; never raises (but for cancellation). The record is also appended to `records`."""
        if self.boundary is not None:
            return await self.boundary(self, call)
        return await self.run_call(call)

    async def run_call(self, call: ToolCall) -> ToolCallRecord:
        """Run one tool call on the world, whatever stands at its boundary (see `execute`)."""
        started = time.perf_counter()
        customer_id = self.customer_id
        tool = self.world.tool(call.name)
        args: dict[str, Any] | None = None
        ignored: list[str] = []
        status: int | None = None
        changes = []
        violations: list[RuleViolation] = []
        try:
            args = _parse_arguments(call.arguments, tool)
            if tool is None:
                raise _ArgumentError(
                    "unknown_tool", f"There is no tool named {call.name!r}. The tools are: {', '.join(sorted(self.tool_names))}."
                )
            passed = dict(args)
            if self.world.session_bound:
                ignored = sorted(k for k in args if k.lower() in IDENTITY_ARGUMENTS and k not in tool.parameter_names)
                for name in ignored:
                    passed.pop(name, None)
            values = tool.validate(passed)
            mark = self.copy.mark()
            ctx = self.context()
            value = await self._run(tool, ctx, values)
            changes = self.copy.changes_since(mark)
            ok, error, refused, status = True, None, False, 200
            result = result_text(value)
            if tool.changes_state and self.world.rules:
                violations = self._rules(tool, call, args, result, changes)
        except _ArgumentError as exc:
            ok, error, refused = False, exc.reason, False
            result = _error_text(exc.reason, exc.message)
        except Refused as exc:
            ok, error, refused, status = False, exc.reason, exc.kind == "policy", exc.status
            result = _error_text(exc.reason, exc.message, exc.status, refused=refused)
        except Exception as exc:  # noqa: BLE001 - a world's own bug: the bot reads an error, the log keeps the trace
            log.exception("world %s: tool %s failed on %r", self.world.name, call.name, call.arguments)
            ok, error, refused = False, "world_error", False
            result = _error_text("world_error", f"The {call.name} tool failed ({type(exc).__name__}). Please try again later.")
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
            changes=changes,
            reads=self._reads(result) if ok else [],
            violations=violations,
        )
        self.records.append(record)
        return record

    async def _run(self, tool: WorldTool, ctx: ToolContext, values: Mapping[str, Any]) -> Any:
        call_args = (ctx,) if tool.takes_context else ()
        if tool.is_async:
            return await tool.fn(*call_args, **values)
        with self.copy.lock:
            return tool.fn(*call_args, **values)

    def _rules(self, tool: WorldTool, call: ToolCall, args: dict[str, Any], result: str, changes: list[Any]) -> list[RuleViolation]:
        probe = ToolCallRecord(
            call_id=call.id,
            name=call.name,
            arguments_raw=call.arguments,
            arguments=args,
            customer_id=self.customer_id,
            result=result,
            ok=True,
            changes=changes,
        )
        shown = RuleCall(
            record=probe, changes=changes, db=self.copy.db, customer_id=self.customer_id, earlier=list(self.records), today=self.copy.today
        )
        found: list[RuleViolation] = []
        for rule in self.world.rules:
            try:
                why = rule.check(shown)
            except Exception:  # noqa: BLE001 - a rule's bug is logged and named, never a verdict
                log.exception("world %s: rule %s failed on %s", self.world.name, rule.name, call.name)
                found.append(
                    RuleViolation(rule=rule.name, message=f"the rule {rule.name} could not be checked (see parley.log)", undecided=True)
                )
                continue
            if why:
                found.append(RuleViolation(rule=rule.name, message=why))
        return found

    def _reads(self, result: str) -> list[RecordRef]:
        """The records whose key the result shows (each once, in the order first shown); a key
        quoted in a free-text field (an order's note) shows no record."""
        index = self.copy.template.key_index()
        seen: dict[tuple[str, str], RecordRef] = {}
        free_text = {column for table in self.copy.world.tables for column in table.free_text}
        if free_text:
            result = _without_fields(result, free_text)
        for token in _TOKENS.findall(result):
            for table, owner in index.get(token, ()):
                seen.setdefault((table, token), RecordRef(table=table, key=token, owner=owner))
        return list(seen.values())


def _without_fields(result: str, fields: set[str]) -> str:
    """A JSON result with the fields named `fields` left out, wherever they are (the text as it is
    when it is not JSON)."""
    try:
        data = json.loads(result)
    except ValueError:
        return result

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in fields}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return json.dumps(strip(data), ensure_ascii=False)
