"""The event loop a `python:` bot's coroutines run on: its own, in a daemon thread.

An async bot is code parley does not control: it may block its loop (`time.sleep` in an
`async def`), catch the cancellation that ends its turn and go on, or leave threads behind. Run
on parley's loop, any of these held the whole batch (no `bot_error` at `--bot-timeout`, signals
never handled, nothing stored). So each Python bot's coroutines run on a `BotLoop`: parley's loop
waits for them through a future it can always stop waiting on, whatever the bot's loop is doing.
When a call outlasts its time limit and the bot's loop does not answer a ping within
PING_S, the loop is left behind (its daemon thread never keeps parley from exiting) and the
bot's later calls run on a new one. The loop's own `asyncio.to_thread` and `run_in_executor`
threads are daemon threads, and so, by Python's inheritance, are the threads the bot starts from
it: none of them keeps parley alive after its work is done.

The cost is two hand-overs between threads per call: about 180 us per call with one call in
flight and 70 us with 32, against 15 us on the caller's loop, on a busy 2-core machine
(bench/bench_python_bot_loop.py: a batch of an echo bot's conversations, 222 per second against
269); a bot that calls a model spends a thousand times that waiting for it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import logging
import threading
import weakref
from collections.abc import Callable
from typing import Any

__all__ = ["PING_S", "BotLoop"]

log = logging.getLogger("parley.bots.bot_loop")

PING_S = 1.0
"""How long a bot's loop has to answer once a call outlasted its limit, before it is left behind."""


class _DaemonThreads(concurrent.futures.ThreadPoolExecutor):
    """The bot loop's default executor: each call in a daemon thread of its own, never joined
    (a ThreadPoolExecutor's threads are joined at exit; a bot's `to_thread(time.sleep, 1e9)`
    would keep parley alive for ever)."""

    def __init__(self, name: str) -> None:
        super().__init__(max_workers=1, thread_name_prefix=name)
        self._name = name

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> concurrent.futures.Future[Any]:
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()

        def work() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                result = fn(*args, **kwargs)
            except BaseException as exc:  # noqa: BLE001 - handed to whoever awaits it, as a pool does
                future.set_exception(exc)
            else:
                future.set_result(result)

        threading.Thread(target=work, name=f"{self._name} worker", daemon=True).start()
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Nothing to wait for: the threads are daemons, left to end on their own."""


class BotLoop:
    """An event loop in a daemon thread of its own, for one Python bot's coroutines."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.loop = asyncio.new_event_loop()
        self.loop.set_default_executor(_DaemonThreads(name))
        ready = threading.Event()
        self.thread = threading.Thread(target=_serve, args=(self.loop, ready), name=name, daemon=True)
        self.thread.start()
        ready.wait()
        weakref.finalize(self, _stop, self.loop)  # the bot is gone: so is its loop

    async def run(self, make: Callable[[], Any]) -> Any:
        """`make()` called on this loop, and what it returns awaited there (as long as it is
        awaitable); its result, awaited from the caller's loop. Cancelling the caller cancels
        the call on this loop, without waiting for it to end."""

        async def call() -> Any:
            value = make()
            while inspect.isawaitable(value):
                value = await value
            return value

        future = asyncio.run_coroutine_threadsafe(call(), self.loop)
        return await asyncio.wrap_future(future)

    async def responds(self, within: float = PING_S) -> bool:
        """Whether this loop runs a callback within `within` seconds (False: something holds it)."""
        if not self.thread.is_alive():
            return False
        ping = asyncio.run_coroutine_threadsafe(asyncio.sleep(0), self.loop)
        try:
            await asyncio.wait_for(asyncio.wrap_future(ping), within)
        except TimeoutError:
            return False
        return True

    def leave(self) -> None:
        """Stop the loop once it runs again; a loop that never does is left to its daemon thread."""
        _stop(self.loop)


def _serve(loop: asyncio.AbstractEventLoop, ready: threading.Event) -> None:
    asyncio.set_event_loop(loop)
    loop.call_soon(ready.set)
    loop.run_forever()


def _stop(loop: asyncio.AbstractEventLoop) -> None:
    try:
        loop.call_soon_threadsafe(loop.stop)
    except RuntimeError:  # closed already
        log.debug("a bot's loop was closed already when it was stopped")
