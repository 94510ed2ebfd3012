"""Waiting in tests for an event, not for a time: a condition polled until it holds. The
deadline only stops a hang, so it is generous: the suite must pass while other work keeps
every core busy, where anything may take many times longer than on an idle machine."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

PATIENCE_S = 120.0


async def until(
    done: Callable[[], bool], what: str, *, within: float = PATIENCE_S, step: Callable[[], Awaitable[object]] | None = None
) -> None:
    """Return once `done()` holds; between two looks, `await step()` (default: a 10 ms sleep,
    which lets the event loop run); fail naming `what` after `within` seconds."""
    deadline = time.monotonic() + within
    while not done():
        assert time.monotonic() < deadline, f"waited {within:.0f} s for {what}"
        await (step() if step is not None else asyncio.sleep(0.01))
