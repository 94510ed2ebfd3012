"""A world's tools as a Python bot holds them (`--bot python:MODULE:NAME` declaring a `tools`
parameter): bound to the conversation's world and its customer, each call run and recorded exactly
as the built-in bot's are (parley.core.world.WorldTools), so world checks, tool checks and
claims-against-actions apply to a Python bot as to parley's own.

Every tool of the world is a method: `await tools.track_order("ORD-1003")` (an async bot gets
`AsyncTools`, whose calls, made on the bot's own loop, run on the conversation's),
`tools.track_order(order_id="ORD-1003")` (a sync bot, which runs in a worker thread of its own,
gets `Tools`, whose calls run on the conversation's event loop and wait for it), or by name:
`tools.call("track_order", order_id="ORD-1003")`; positional arguments follow the tool's
declared parameters. `tools.names` lists them, `tools.specs` gives their schemas. Every call
returns the call's `ToolCallRecord`: `ok`, `result` (the text a model would see), `data` (a
successful call's JSON), `refused` and `error` (a refusal's reason: too_old...). Once the bot's
turn is over (answered, or past its time limit) its tools answer no more: a thread left running
cannot change the world afterwards.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from parley.core.errors import ParleyError
from parley.core.records import ToolCall, ToolCallRecord, ToolSpec
from parley.core.world import ServedWorldTools, WorldDefinition, WorldTools

__all__ = ["AsyncTools", "Tools", "ToolsClosed"]


class ToolsClosed(ParleyError):
    """A tool called after the bot's turn ended (a thread that outlived its time limit)."""


def _arguments(tools: WorldTools | ServedWorldTools, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """Positional arguments named by the tool's declared parameters, then the keywords."""
    if not args:
        return kwargs
    declared = tools.world.tool(name)
    params = declared.parameter_names if declared is not None else []
    if len(args) > len(params):
        raise TypeError(f"{name} takes {len(params)} argument(s) ({', '.join(params) or 'none'}), {len(args)} given")
    named = dict(zip(params, args, strict=False))
    clash = set(named) & set(kwargs)
    if clash:
        raise TypeError(f"{name}: {', '.join(sorted(clash))} given twice")
    return {**named, **kwargs}


class AsyncTools:
    """The tools of one conversation for an async bot (see the module doc)."""

    def __init__(
        self,
        tools: WorldTools | ServedWorldTools,
        on_call: Callable[[ToolCall, ToolCallRecord], None] | None = None,
        home: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        self._tools = tools
        self._on_call = on_call
        self._home = home
        self.closed = False
        self.customer_id = tools.customer_id
        """The customer the conversation runs as (on a session-bound world, every call acts for them)."""

    @property
    def names(self) -> list[str]:
        """The world's tools, by name."""
        return list(self._tools.tool_names)

    @property
    def world(self) -> WorldDefinition:
        """The world the tools act on (its declarations and hooks)."""
        return self._tools.world

    @property
    def specs(self) -> list[ToolSpec]:
        """Each tool's name, description and JSON schema, as a model is offered them."""
        return list(self._tools.specs)

    async def call(self, name: str, *args: Any, **arguments: Any) -> ToolCallRecord:
        """Run the tool `name`; its record (it never raises for the world's refusals)."""
        if self.closed:
            raise ToolsClosed(f"{name}: the bot's turn is over, its tools no longer answer")
        values = _arguments(self._tools, name, args, arguments)
        if (
            self._home is not None and asyncio.get_running_loop() is not self._home
        ):  # the bot's own loop: the call runs on the conversation's
            return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self._call(name, values), self._home))
        return await self._call(name, values)

    async def _call(self, name: str, values: dict[str, Any]) -> ToolCallRecord:
        if self.closed:
            raise ToolsClosed(f"{name}: the bot's turn is over, its tools no longer answer")
        call = ToolCall(id=f"py_{len(self._tools.records) + 1}", name=name, arguments=json.dumps(values, default=str))
        record = await self._tools.execute(call)
        if self._on_call is not None:
            self._on_call(call, record)
        return record

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("_") or name not in self._tools.tool_names:
            raise AttributeError(f"no tool {name!r} in this world (its tools: {', '.join(self._tools.tool_names)})")

        async def bound(*args: Any, **arguments: Any) -> ToolCallRecord:
            return await self.call(name, *args, **arguments)

        return bound


class Tools:
    """The tools of one conversation for a sync bot, called from its worker thread: each call runs
    on the conversation's event loop and waits for it (see the module doc)."""

    def __init__(self, inner: AsyncTools, loop: asyncio.AbstractEventLoop) -> None:
        self._inner = inner
        self._loop = loop
        self.customer_id = inner.customer_id

    @property
    def names(self) -> list[str]:
        return self._inner.names

    @property
    def world(self) -> WorldDefinition:
        """The world the tools act on (its declarations and hooks)."""
        return self._inner.world

    @property
    def specs(self) -> list[ToolSpec]:
        return self._inner.specs

    def call(self, name: str, *args: Any, **arguments: Any) -> ToolCallRecord:
        """Run the tool `name` and wait for its record."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:  # waiting here would block the very loop that runs the call
            raise RuntimeError(
                f"{name}: the sync tools are for a sync bot's thread; an async bot gets AsyncTools (await tools.{name}(...))"
            )
        if self._inner.closed:
            raise ToolsClosed(f"{name}: the bot's turn is over, its tools no longer answer")
        return asyncio.run_coroutine_threadsafe(self._inner.call(name, *args, **arguments), self._loop).result()

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("_") or name not in self._inner.names:
            raise AttributeError(f"no tool {name!r} in this world (its tools: {', '.join(self._inner.names)})")

        def bound(*args: Any, **arguments: Any) -> ToolCallRecord:
            return self.call(name, *args, **arguments)

        return bound
