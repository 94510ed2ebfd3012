"""The order API's tools as a Python bot holds them (`--bot python:MODULE:NAME` declaring a `tools`
parameter): bound to the conversation's World and its signed-in customer, each call run and
recorded exactly as the order bot's are (parley.core.bots.order_tools), so world checks, tool
checks and claims-against-actions apply to a Python bot as to parley's own.

An async bot gets `AsyncTools` (`await tools.get_order("ORD-1004")`), whose calls, made on the
bot's own loop, run on the conversation's; a sync bot, which runs in a worker thread of its own,
gets `Tools`, whose calls run on the conversation's event loop and wait for it. Every call returns the call's `ToolCallRecord`: `ok`, `result` (the text the order
bot's model would see), `data` (a successful call's JSON body), `refused` and `error` (a policy
refusal's reason: too_old, delivered...). Once the bot's turn is over (answered, or past its
time limit) its tools answer no more: a thread left running cannot change the World afterwards.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from parley.core.bots.order_tools import OrderTools
from parley.core.errors import ParleyError
from parley.core.records import ToolCall, ToolCallRecord

__all__ = ["AsyncTools", "Tools", "ToolsClosed"]


class ToolsClosed(ParleyError):
    """A tool called after the bot's turn ended (a thread that outlived its time limit)."""


class AsyncTools:
    """The order tools of one conversation for an async bot (see the module doc)."""

    def __init__(
        self,
        tools: OrderTools,
        on_call: Callable[[ToolCall, ToolCallRecord], None] | None = None,
        home: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        self._tools = tools
        self._on_call = on_call
        self._home = home
        self.closed = False
        self.customer_id = tools.customer_id
        """The signed-in customer every call acts for (never an argument)."""

    async def call(self, name: str, **arguments: Any) -> ToolCallRecord:
        """Run the tool `name` with `arguments`; its record (it never raises for the API's refusals)."""
        if self.closed:
            raise ToolsClosed(f"{name}: the bot's turn is over, its tools no longer answer")
        if (
            self._home is not None and asyncio.get_running_loop() is not self._home
        ):  # the bot's own loop: the call runs on the conversation's
            return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self._call(name, arguments), self._home))
        return await self._call(name, arguments)

    async def _call(self, name: str, arguments: dict[str, Any]) -> ToolCallRecord:
        if self.closed:
            raise ToolsClosed(f"{name}: the bot's turn is over, its tools no longer answer")
        call = ToolCall(id=f"py_{len(self._tools.records) + 1}", name=name, arguments=json.dumps(arguments, default=str))
        record = await self._tools.execute(call)
        if self._on_call is not None:
            self._on_call(call, record)
        return record

    async def get_order(self, order_id: str) -> ToolCallRecord:
        """The order's items, status and placed date."""
        return await self.call("get_order", order_id=order_id)

    async def track_order(self, order_id: str) -> ToolCallRecord:
        """The order's shipping status and tracking."""
        return await self.call("track_order", order_id=order_id)

    async def list_my_orders(self) -> ToolCallRecord:
        """Every order of the signed-in customer."""
        return await self.call("list_my_orders")

    async def check_cancellation(self, order_id: str) -> ToolCallRecord:
        """Whether the order may be cancelled now (`data["eligible"]`), and why not; changes nothing."""
        return await self.call("check_cancellation", order_id=order_id)

    async def cancel_order(self, order_id: str, reason: str | None = None) -> ToolCallRecord:
        """Cancel the order; the API refuses what the policy forbids (`refused`, `error`)."""
        if reason is None:
            return await self.call("cancel_order", order_id=order_id)
        return await self.call("cancel_order", order_id=order_id, reason=reason)


class Tools:
    """The order tools of one conversation for a sync bot, called from its worker thread: each
    call runs on the conversation's event loop and waits for it (see the module doc)."""

    def __init__(self, inner: AsyncTools, loop: asyncio.AbstractEventLoop) -> None:
        self._inner = inner
        self._loop = loop
        self.customer_id = inner.customer_id

    def call(self, name: str, **arguments: Any) -> ToolCallRecord:
        """Run the tool `name` with `arguments` and wait for its record."""
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
        return asyncio.run_coroutine_threadsafe(self._inner.call(name, **arguments), self._loop).result()

    def get_order(self, order_id: str) -> ToolCallRecord:
        """The order's items, status and placed date."""
        return self.call("get_order", order_id=order_id)

    def track_order(self, order_id: str) -> ToolCallRecord:
        """The order's shipping status and tracking."""
        return self.call("track_order", order_id=order_id)

    def list_my_orders(self) -> ToolCallRecord:
        """Every order of the signed-in customer."""
        return self.call("list_my_orders")

    def check_cancellation(self, order_id: str) -> ToolCallRecord:
        """Whether the order may be cancelled now (`data["eligible"]`), and why not; changes nothing."""
        return self.call("check_cancellation", order_id=order_id)

    def cancel_order(self, order_id: str, reason: str | None = None) -> ToolCallRecord:
        """Cancel the order; the API refuses what the policy forbids (`refused`, `error`)."""
        if reason is None:
            return self.call("cancel_order", order_id=order_id)
        return self.call("cancel_order", order_id=order_id, reason=reason)
