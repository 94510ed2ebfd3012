"""An asyncio event loop on a thread of its own: where the batch service runs its batches.

Offline conversations are CPU work: twenty batches on the loop that also serves HTTP made a
status call wait behind hundreds of conversation steps (p50 0.9 s, p99 2.7 s). On their own
loop the HTTP handlers only wait for the interpreter lock, a few milliseconds at a time.
Everything a batch touches (its runner, the shared model clients, connectors) lives on this
loop; the service's handlers hand it coroutines with `run` and callables with `call`.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

log = logging.getLogger("parley.service")


class BatchLoop:
    """A started event loop on a daemon thread (see the module doc)."""

    def __init__(self, name: str = "parley-batches") -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        finally:
            try:
                self.loop.run_until_complete(self.loop.shutdown_asyncgens())
                self.loop.run_until_complete(self.loop.shutdown_default_executor())
            except Exception:  # noqa: BLE001 - closing anyway; say what was left
                log.exception("closing the batch loop")
            self.loop.close()

    @property
    def closed(self) -> bool:
        return not self._thread.is_alive()

    async def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run `coroutine` on the batch loop; its result (or exception) comes back to the caller's
        loop. A caller that goes away does not cancel it: batch work finishes what it started."""
        future = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        return await asyncio.shield(asyncio.wrap_future(future))

    def call(self, function: Callable[..., object], *args: Any) -> None:
        """Call `function(*args)` on the batch loop's thread, soon."""
        self.loop.call_soon_threadsafe(function, *args)

    def close(self, timeout_s: float = 30.0) -> None:
        """Stop the loop (after the work handed to it) and wait for its thread."""
        if self._thread.is_alive():
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(timeout_s)
