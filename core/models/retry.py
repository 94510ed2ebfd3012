"""Retries for provider calls: exponential backoff with full jitter, honouring Retry-After.

What is retried is decided by the caller, who turns each failed attempt into a ProviderError
with `retryable` set (429, 5xx, timeouts, connection errors) or not (400, 401, 403, 404, 422).
`retry_call` then waits and tries again, telling `on_retry` about each wait so a batch runner
can shrink its concurrency when it is rate limited:
- a rate limit (429, or 503 with a Retry-After) slows a call down, it does not fail it: it is
  retried, honouring Retry-After, until the conversation's own deadline (`rate_limit_deadline`,
  set by the conversation harness) would pass before the next attempt; outside a conversation,
  for at most `RetryPolicy.max_rate_limit_wait_s` of waiting;
- any other transient failure is retried `RetryPolicy.max_retries` times.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import logging
import random
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TypeVar

from parley.core.errors import ProviderError

log = logging.getLogger("parley.models.retry")

T = TypeVar("T")

Sleep = Callable[[float], Awaitable[None]]
Clock = Callable[[], float]


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try. `max_retries` retries follow the first attempt (5 attempts by default).

    Without a Retry-After the n-th wait is uniform in [0, min(max_delay_s, base_delay_s * 2**(n-1))]
    (full jitter). With one, the wait is at least what the server asked, capped at
    `max_retry_after_s`, plus up to `base_delay_s` of jitter so that many conversations told
    the same thing do not come back in the same instant.
    """

    max_retries: int = 4
    base_delay_s: float = 0.5
    max_delay_s: float = 20.0
    max_retry_after_s: float = 60.0
    max_rate_limit_wait_s: float = 120.0
    """Outside a conversation (no deadline): how long rate limits may be waited out in all."""


_RATE_LIMIT_DEADLINE: ContextVar[float | None] = ContextVar("parley_rate_limit_deadline", default=None)


@contextlib.contextmanager
def rate_limit_deadline(seconds: float) -> Iterator[None]:
    """Within this block (a conversation), calls may wait out rate limits until `seconds` from
    now, the conversation's own deadline, whatever their attempt count."""
    token = _RATE_LIMIT_DEADLINE.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        _RATE_LIMIT_DEADLINE.reset(token)


def current_rate_limit_deadline() -> float | None:
    """The `time.monotonic()` by which the current conversation must end, if inside one."""
    return _RATE_LIMIT_DEADLINE.get()


@dataclass(frozen=True)
class RetryEvent:
    """One wait before another attempt. `status` is None for timeouts and connection errors;
    `attempt` is the 1-based number of the attempt that just failed; `reason` is one of
    rate_limited, server_error, http_NNN, timeout, connection."""

    status: int | None
    delay_s: float
    attempt: int
    reason: str
    retry_after_s: float | None = None

    @property
    def rate_limited(self) -> bool:
        """A 429, or a 503 that says when to come back: the provider asks to slow down."""
        return self.status == 429 or (self.status == 503 and self.retry_after_s is not None)


def is_rate_limit(err: ProviderError) -> bool:
    """A 429, or a 503 with Retry-After: retried until the deadline, not a fixed number of times."""
    return err.status == 429 or (err.status == 503 and getattr(err, "retry_after_s", None) is not None)


OnRetry = Callable[[RetryEvent], object]


class AttemptError(ProviderError):
    """One failed attempt, classified: a ProviderError that also carries the server's
    Retry-After (seconds), if it sent one."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retryable: bool = False,
        retry_after_s: float | None = None,
        kind: str | None = None,
    ) -> None:
        super().__init__(message, status=status, retryable=retryable)
        self.retry_after_s = retry_after_s
        self.kind = kind  # "timeout" or "connection" when there was no HTTP status


def parse_retry_after(headers: Mapping[str, str] | None, *, now: Clock = time.time) -> float | None:
    """Seconds to wait as the server asked: `retry-after-ms`, else `Retry-After` in seconds or as
    an HTTP date. None when absent or unreadable; never negative."""
    if not headers:
        return None
    lowered = {k.lower(): v for k, v in headers.items()}
    ms = lowered.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - now())


def backoff_delay(attempt: int, policy: RetryPolicy, retry_after_s: float | None, rng: random.Random) -> float:
    """The wait after failed attempt number `attempt` (1-based)."""
    if retry_after_s is not None:
        asked = min(retry_after_s, policy.max_retry_after_s)
        return min(asked + rng.uniform(0.0, policy.base_delay_s), policy.max_retry_after_s)
    ceiling = min(policy.max_delay_s, policy.base_delay_s * (2 ** (attempt - 1)))
    return rng.uniform(0.0, ceiling)


def _reason(err: ProviderError) -> str:
    status = err.status
    if status == 429:
        return "rate_limited"
    if status is not None and status >= 500:
        return "server_error"
    if status is not None:
        return f"http_{status}"
    return getattr(err, "kind", None) or "connection"


async def retry_call(
    attempt_fn: Callable[[], Awaitable[T]],
    *,
    policy: RetryPolicy | None = None,
    on_retry: OnRetry | None = None,
    sleep: Sleep | None = None,
    rng: random.Random | None = None,
) -> T:
    """Run `attempt_fn` until it succeeds, a non-retryable ProviderError, or retrying is over:
    for a rate limit, when the next wait would pass the conversation's deadline (or the policy's
    `max_rate_limit_wait_s` outside a conversation); for any other transient failure, after
    `max_retries` retries.

    The ProviderError(retryable=True, status=<last status>) raised then says how many attempts
    were made and why the last failed. Exceptions that are not ProviderErrors are bugs and pass
    through at once.
    """
    policy = policy or RetryPolicy()
    sleep = sleep or asyncio.sleep
    attempt = 0
    other_failures = 0
    waited_on_limits = 0.0
    while True:
        attempt += 1
        try:
            return await attempt_fn()
        except ProviderError as err:
            if not err.retryable:
                raise
            retry_after = getattr(err, "retry_after_s", None)
            if rng is None:
                rng = random.Random()  # made on the first retry: seeding one costs ~10 us a call
            tries = "1 attempt" if attempt == 1 else f"{attempt} attempts"
            if is_rate_limit(err):
                delay = backoff_delay(min(attempt, 16), policy, retry_after, rng)
                deadline = current_rate_limit_deadline()
                if deadline is not None and time.monotonic() + delay >= deadline:
                    raise ProviderError(
                        f"{err} (still rate limited when the conversation's time ran out; {tries})",
                        status=err.status,
                        retryable=True,
                    ) from err
                if deadline is None and waited_on_limits + delay > policy.max_rate_limit_wait_s:
                    raise ProviderError(
                        f"{err} (still rate limited after waiting {waited_on_limits:.0f} s; {tries})",
                        status=err.status,
                        retryable=True,
                    ) from err
                waited_on_limits += delay
            else:
                other_failures += 1
                if other_failures > policy.max_retries:
                    raise ProviderError(f"{err} (gave up after {tries})", status=err.status, retryable=True) from err
                delay = backoff_delay(other_failures, policy, retry_after, rng)
            if on_retry is not None:
                # a broken listener must not turn a recoverable call into a failure
                try:
                    on_retry(RetryEvent(err.status, delay, attempt, _reason(err), retry_after))
                except Exception:  # noqa: BLE001 - a watcher's bug is its own
                    log.warning("an on_retry listener failed", exc_info=True)
            await sleep(delay)
