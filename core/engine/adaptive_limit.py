"""How many conversations a batch runs at once, adapted to the provider's rate limits.

`AdaptiveLimit` is a semaphore whose size moves (as inspect_ai's does): a 429 shrinks it by
x0.8 (never below 1) and pauses new launches until the server's Retry-After has passed; every
`raise_every` successful model calls raise it by 1, up to the configured maximum. A conversation
in flight is never interrupted when the limit drops: new ones wait until fewer than the limit
are running, so the number in flight converges on the limit from above and never exceeds it
from below.

A burst of 429s from conversations that were launched together is one signal, not ten: the
limit shrinks at most once per `cooldown_s`.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from parley.core.models import RetryEvent

log = logging.getLogger("parley.engine.adaptive_limit")

DEFAULT_RAISE_EVERY = 5
DEFAULT_COOLDOWN_S = 0.5
SHRINK_FACTOR = 0.8


@dataclass(frozen=True)
class LimitChange:
    limit: int
    previous: int
    reason: str
    paused_for_s: float = 0.0


class AdaptiveLimit:
    """An async limit on conversations in flight. `acquire()` before launching one,
    `release()` when it is done; feed it the provider's retries (`on_retry`) and successful
    calls (`call_succeeded`)."""

    def __init__(
        self,
        maximum: int,
        *,
        raise_every: int = DEFAULT_RAISE_EVERY,
        cooldown_s: float = DEFAULT_COOLDOWN_S,
        on_change: Callable[[LimitChange], object] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if maximum < 1:
            raise ValueError(f"the concurrency limit must be at least 1, got {maximum}")
        self.maximum = maximum
        self.raise_every = max(1, raise_every)
        self.cooldown_s = cooldown_s
        self.on_change = on_change
        self._clock = clock
        self._size = float(maximum)
        self._in_flight = 0
        self._successes = 0
        self._paused_until = 0.0
        self._last_shrink = -math.inf
        self._changed = asyncio.Event()
        self._closed = False
        self.max_in_flight = 0
        """The most conversations ever in flight at once (for tests and the summary)."""
        self.lowest = maximum
        """The lowest the limit went."""
        self.rate_limited = 0
        """429s heard."""

    @property
    def limit(self) -> int:
        return max(1, int(self._size))

    @property
    def in_flight(self) -> int:
        return self._in_flight

    @property
    def paused_for_s(self) -> float:
        return max(0.0, self._paused_until - self._clock())

    def _wake(self) -> None:
        self._changed.set()

    async def acquire(self) -> bool:
        """Wait for a free slot (and for any Retry-After pause to pass), then take it. False,
        without a slot, once the limit is closed (the batch is stopping)."""
        while True:
            if self._closed:
                return False
            pause = self.paused_for_s
            if pause <= 0 and self._in_flight < self.limit:
                self._in_flight += 1
                self.max_in_flight = max(self.max_in_flight, self._in_flight)
                return True
            self._changed.clear()
            try:
                async with asyncio.timeout(pause if pause > 0 else None):
                    await self._changed.wait()
            except TimeoutError:
                pass

    def close(self) -> None:
        """No more slots: waiting and later `acquire()` calls return False."""
        self._closed = True
        self._wake()

    def release(self) -> None:
        self._in_flight -= 1
        self._wake()

    def on_retry(self, event: RetryEvent) -> None:
        """The provider's `on_retry` hook: 429s shrink the limit and pause launches."""
        if not event.rate_limited:
            return
        self.rate_limited += 1
        self._successes = 0
        now = self._clock()
        pause = event.retry_after_s or 0.0
        if pause > 0:
            self._paused_until = max(self._paused_until, now + pause)
        if now - self._last_shrink < self.cooldown_s:
            return
        self._last_shrink = now
        previous = self.limit
        self._size = max(1.0, self._size * SHRINK_FACTOR)
        self.lowest = min(self.lowest, self.limit)
        if self.limit != previous or pause > 0:
            self._notify(LimitChange(self.limit, previous, "rate limited (429)", pause))

    def call_succeeded(self) -> None:
        """A model call went through: every `raise_every` of them, the limit grows by 1."""
        if self._size >= self.maximum:
            return
        self._successes += 1
        if self._successes < self.raise_every:
            return
        self._successes = 0
        previous = self.limit
        self._size = min(float(self.maximum), math.floor(self._size) + 1.0)
        if self.limit != previous:
            self._notify(LimitChange(self.limit, previous, "calls succeeding"))
        self._wake()

    def _notify(self, change: LimitChange) -> None:
        if self.on_change is not None:
            try:
                self.on_change(change)
            except Exception:  # noqa: BLE001 - a watcher's bug must not stop the batch
                log.exception("a concurrency-limit watcher failed on %s", change)
