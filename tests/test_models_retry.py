"""Retry logic with a fake sleep: what waits, how long, how often, and what never retries."""

from __future__ import annotations

import email.utils
import random

import pytest

from parley.core.errors import ProviderError
from parley.core.models.retry import (
    AttemptError,
    RetryEvent,
    RetryPolicy,
    backoff_delay,
    parse_retry_after,
    retry_call,
)


class FakeSleep:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


class Flaky:
    """Fails with the given errors in turn, then returns "ok"."""

    def __init__(self, *errors: Exception) -> None:
        self.errors = list(errors)
        self.calls = 0

    async def __call__(self) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "ok"


def throttled(retry_after: float | None = None) -> AttemptError:
    return AttemptError("rate limited (429)", status=429, retryable=True, retry_after_s=retry_after)


def server_error(status: int = 500) -> AttemptError:
    return AttemptError(f"server error ({status})", status=status, retryable=True)


# -- Retry-After -----------------------------------------------------------------------------


def test_retry_after_in_seconds():
    assert parse_retry_after({"Retry-After": "7"}) == 7.0
    assert parse_retry_after({"retry-after": "1.5"}) == 1.5


def test_retry_after_as_http_date_counts_from_now():
    now = 1_800_000_000.0
    date = email.utils.formatdate(now + 30, usegmt=True)
    assert parse_retry_after({"Retry-After": date}, now=lambda: now) == pytest.approx(30.0)


def test_retry_after_in_the_past_means_no_wait():
    now = 1_800_000_000.0
    date = email.utils.formatdate(now - 30, usegmt=True)
    assert parse_retry_after({"Retry-After": date}, now=lambda: now) == 0.0


def test_retry_after_ms_wins_over_retry_after():
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "3"}) == 0.25


@pytest.mark.parametrize("headers", [{}, None, {"Retry-After": "soon"}, {"X-Other": "1"}])
def test_absent_or_unreadable_retry_after_is_none(headers):
    assert parse_retry_after(headers) is None


# -- delays ----------------------------------------------------------------------------------


def test_full_jitter_stays_within_the_exponential_ceiling():
    policy = RetryPolicy(base_delay_s=0.5, max_delay_s=3.0)
    rng = random.Random(7)
    for attempt, ceiling in [(1, 0.5), (2, 1.0), (3, 2.0), (4, 3.0), (8, 3.0)]:
        delays = [backoff_delay(attempt, policy, None, rng) for _ in range(500)]
        assert max(delays) <= ceiling
        # full jitter spreads over the whole range, not just near the ceiling
        assert min(delays) < 0.1 * ceiling and max(delays) > 0.9 * ceiling


def test_retry_after_is_a_floor_with_bounded_jitter_and_a_cap():
    policy = RetryPolicy(base_delay_s=0.5, max_retry_after_s=60.0)
    rng = random.Random(1)
    for _ in range(200):
        delay = backoff_delay(1, policy, 2.0, rng)
        assert 2.0 <= delay <= 2.5
    assert backoff_delay(1, policy, 3600.0, rng) == 60.0


# -- retry_call ------------------------------------------------------------------------------


async def test_retries_until_success_and_reports_each_wait():
    sleep, events = FakeSleep(), []
    attempt = Flaky(throttled(retry_after=1.0), server_error(503))
    result = await retry_call(attempt, on_retry=events.append, sleep=sleep, rng=random.Random(0))
    assert result == "ok"
    assert attempt.calls == 3
    assert [e.status for e in events] == [429, 503]
    assert [e.attempt for e in events] == [1, 2]
    assert events[0].rate_limited and events[0].reason == "rate_limited"
    assert events[0].retry_after_s == 1.0
    assert sleep.delays == [e.delay_s for e in events]
    assert sleep.delays[0] >= 1.0  # what the server asked for


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
async def test_client_errors_are_never_retried(status):
    sleep, events = FakeSleep(), []
    refusal = AttemptError(f"refused ({status})", status=status, retryable=False)
    attempt = Flaky(refusal)
    with pytest.raises(ProviderError) as info:
        await retry_call(attempt, on_retry=events.append, sleep=sleep)
    assert info.value is refusal
    assert attempt.calls == 1 and sleep.delays == [] and events == []


async def test_attempts_are_bounded_and_the_last_error_says_so():
    sleep = FakeSleep()
    attempt = Flaky(*[server_error(502) for _ in range(10)])
    with pytest.raises(ProviderError) as info:
        await retry_call(attempt, policy=RetryPolicy(max_retries=4), sleep=sleep)
    assert attempt.calls == 5
    assert len(sleep.delays) == 4
    assert info.value.retryable is True and info.value.status == 502
    assert "gave up after 5 attempts" in str(info.value)


async def test_default_policy_is_four_retries():
    attempt = Flaky(*[server_error() for _ in range(10)])
    with pytest.raises(ProviderError):
        await retry_call(attempt, sleep=FakeSleep())
    assert attempt.calls == 5


async def test_total_wait_is_bounded_by_max_delay():
    sleep = FakeSleep()
    policy = RetryPolicy(max_retries=6, base_delay_s=1.0, max_delay_s=2.0)
    with pytest.raises(ProviderError):
        await retry_call(Flaky(*[server_error() for _ in range(10)]), policy=policy, sleep=sleep)
    assert all(0.0 <= d <= 2.0 for d in sleep.delays)


async def test_timeouts_and_connection_errors_are_retried_with_their_reason():
    events: list[RetryEvent] = []
    attempt = Flaky(
        AttemptError("no reply within 1 s", retryable=True, kind="timeout"),
        AttemptError("cannot reach http://x", retryable=True, kind="connection"),
    )
    assert await retry_call(attempt, on_retry=events.append, sleep=FakeSleep()) == "ok"
    assert [(e.status, e.reason) for e in events] == [(None, "timeout"), (None, "connection")]


async def test_a_broken_listener_does_not_break_the_call():
    def explode(event: RetryEvent) -> None:
        raise RuntimeError("listener bug")

    assert await retry_call(Flaky(server_error()), on_retry=explode, sleep=FakeSleep()) == "ok"


async def test_bugs_are_not_retried():
    attempt = Flaky(KeyError("bug"))
    with pytest.raises(KeyError):
        await retry_call(attempt, sleep=FakeSleep())
    assert attempt.calls == 1


# -- rate limits: retried until the conversation's deadline ------------------------------------


async def test_a_rate_limit_is_retried_past_the_attempt_cap_inside_a_conversation():
    from parley.core.models.retry import rate_limit_deadline

    sleep, events = FakeSleep(), []
    attempt = Flaky(*[throttled(retry_after=0.3) for _ in range(12)])
    with rate_limit_deadline(60):
        assert await retry_call(attempt, policy=RetryPolicy(max_retries=4), on_retry=events.append, sleep=sleep) == "ok"
    assert attempt.calls == 13  # far beyond 4 retries: a rate limit slows a call, never fails it
    assert all(0.3 <= d <= 0.8 for d in sleep.delays)  # Retry-After honoured, plus a little jitter
    assert all(e.rate_limited for e in events)


async def test_a_503_with_retry_after_is_a_rate_limit_and_without_one_is_capped():
    from parley.core.models.retry import is_rate_limit, rate_limit_deadline

    asked = AttemptError("overloaded (503)", status=503, retryable=True, retry_after_s=0.3)
    assert is_rate_limit(asked) and not is_rate_limit(server_error(503))
    assert RetryEvent(503, 0.3, 1, "server_error", 0.3).rate_limited and not RetryEvent(503, 0.3, 1, "server_error").rate_limited
    with rate_limit_deadline(60):
        assert await retry_call(Flaky(*[asked] * 8), policy=RetryPolicy(max_retries=2), sleep=FakeSleep()) == "ok"
        with pytest.raises(ProviderError, match="gave up after 3 attempts"):
            await retry_call(Flaky(*[server_error(503)] * 8), policy=RetryPolicy(max_retries=2), sleep=FakeSleep())


async def test_a_rate_limit_gives_up_when_the_next_wait_would_pass_the_deadline():
    from parley.core.models.retry import rate_limit_deadline

    attempt = Flaky(*[throttled(retry_after=5.0) for _ in range(20)])
    with rate_limit_deadline(3.0), pytest.raises(ProviderError) as info:
        await retry_call(attempt, sleep=FakeSleep())
    assert "still rate limited when the conversation's time ran out" in str(info.value) and info.value.status == 429
    assert attempt.calls == 1  # waiting 5 s would pass the 3 s left: it says so at once instead of timing out


async def test_outside_a_conversation_rate_limits_are_waited_out_for_a_bounded_time():
    sleep = FakeSleep()
    attempt = Flaky(*[throttled(retry_after=10.0) for _ in range(50)])
    with pytest.raises(ProviderError, match="still rate limited after waiting"):
        await retry_call(attempt, policy=RetryPolicy(max_rate_limit_wait_s=35.0), sleep=sleep)
    assert 25.0 <= sum(sleep.delays) <= 35.0
