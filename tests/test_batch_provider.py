"""The batch runner against a scripted OpenAI-compatible server: rate limits adapt the
concurrency, persistent provider errors and hung calls are recorded and the batch goes on,
the reply cache replays a batch without a single request."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from parley.core.engine.batch_models import BatchModels, BoundedJudge
from parley.core.engine.batch_runner import BatchRunner, prepare_batch
from parley.core.models.openai_provider import aclose_clients
from parley.core.records.batch import BatchOptions, RoleModels
from parley.core.reports.stats import summarize
from parley.core.store.store import Store
from tests.fake_openai_server import TextReply, run_fake_server

ROOT = Path(__file__).resolve().parent.parent
PROFILES = ROOT / "profiles"
PLAYBOOKS = PROFILES / "playbooks"
FAKE = "openai-api/fake/m"


@pytest.fixture(scope="module")
def server():
    with run_fake_server() as s:
        yield s


@pytest.fixture
def fake(server, monkeypatch):
    server.reset()
    monkeypatch.setenv("FAKE_BASE_URL", server.base_url)
    yield server
    server.reset()


@pytest.fixture
def store(tmp_path):
    s = Store.open(tmp_path / "parley.db")
    yield s
    s.close()


async def run_batch(store, sources, options):
    prepared = await prepare_batch(store, sources, options)
    runner = BatchRunner(store, prepared)
    events = []
    runner.subscribe(events.append)
    try:
        result = await runner.run()
    finally:
        await aclose_clients()
    return result, events


async def test_rate_limits_lower_the_concurrency_then_it_recovers_and_nothing_fails(fake, store):
    fake.fixed_delay_ms = 20
    for _ in range(4):  # the first wave of requests is throttled
        fake.push_error(429, "slow down", retry_after=1)
    options = BatchOptions(models=RoleModels(bot=FAKE), concurrency=4, max_turns=2)
    started = time.monotonic()
    result, events = await run_batch(store, [PROFILES], options)

    changes = [e for e in events if e.kind == "concurrency_changed"]
    assert result.rate_limited >= 1
    assert changes[0].limit < 4 and changes[0].reason.startswith("rate limited")
    assert changes[0].paused_for_s == pytest.approx(1.0, abs=0.2)  # Retry-After honoured
    assert result.lowest_limit < 4
    assert changes[-1].limit == 4, "the limit grows back to the configured maximum as calls succeed"
    assert result.max_in_flight <= 4
    # the throttling cost time, never a conversation
    assert result.status == "completed" and result.errors == 0 and result.done == 27
    assert not store.conversation_rows(result.batch_id, outcome="error")
    assert time.monotonic() - started >= 1.0
    # no conversation was launched while as many as the current limit were in flight
    limit, in_flight, launches = 4, 0, 0
    for e in events:
        if e.kind == "concurrency_changed":
            limit = e.limit
        elif e.kind == "conversation_started":
            in_flight += 1
            launches += 1
            assert in_flight <= limit, f"launch {launches} with {in_flight} in flight over a limit of {limit}"
        elif e.kind in ("conversation_finished", "conversation_failed"):
            in_flight -= 1
    assert launches == 27


async def test_the_bots_provider_failing_after_retries_is_the_bots_failure_and_the_batch_goes_on(fake, store):
    for _ in range(5):  # the first attempt and its 4 retries, all refused (no Retry-After: not a rate limit)
        fake.push_error(500, "overloaded")
    options = BatchOptions(models=RoleModels(bot=FAKE), concurrency=1, max_turns=2)
    result, events = await run_batch(store, [PLAYBOOKS], options)

    assert result.status == "completed" and result.done == 7
    assert result.bot_errors == 1 and result.errors == 0 and result.passed + result.bot_failures == 7
    broke = [e for e in events if e.kind == "conversation_finished" and e.outcome == "bot_error"]
    assert len(broke) == 1 and broke[0].stop_reason == "bot_error" and not broke[0].passed
    assert "server error" in broke[0].row.error and "gave up after 5 attempts" in broke[0].row.error
    assert not [e for e in events if e.kind == "conversation_failed"]  # the run did not break: the bot did
    summary = summarize(store, result.batch_id)
    assert (summary.bot_errors, summary.errors) == (1, 0)
    assert summary.pass_rate_denominator == 7  # the bot error is in the denominator
    [row] = store.conversation_rows(result.batch_id, outcome="bot_error")
    assert row.stop_reason == "bot_error" and "overloaded" in row.error and row.score is None
    assert not result.ok()  # the exit code says the bot failed


async def test_a_hung_model_call_ends_the_conversation_as_a_timeout(fake, store):
    fake.push_hang(30)
    options = BatchOptions(models=RoleModels(bot=FAKE), concurrency=1, max_turns=2, timeout_s=1.0)
    started = time.monotonic()
    result, _ = await run_batch(store, [PLAYBOOKS / "track_shipped_order.yaml"], options)

    assert time.monotonic() - started < 20  # the 1 s limit, not the 30 s hang waited out
    [row] = store.conversation_rows(result.batch_id)
    assert row.stop_reason == "timeout" and "1 s limit" in row.error
    assert row.outcome == "failed"  # a timeout fails the conversation_completed check: the bot's failure
    assert result.status == "completed"


async def test_a_hung_judge_is_a_judge_error_not_a_score(fake, store):
    class Hanging:
        name = "hanging"

        async def judge(self, conversation, spec, checks):
            await asyncio.sleep(60)

    result = await BoundedJudge(Hanging(), 0.05).judge(None, None, [])
    assert result.score is None and "no answer within 0.05 s" in result.error

    fake.push_hang(30)
    options = BatchOptions(models=RoleModels(judge=FAKE), concurrency=1, timeout_s=1.0)
    result, _ = await run_batch(store, [PLAYBOOKS / "track_shipped_order.yaml"], options)
    stored = next(store.iter_conversations(result.batch_id))
    assert stored.conversation.stop_reason == "user_stop"
    assert stored.verdict.score is None and "no answer within 1 s" in stored.verdict.judge.error
    assert stored.verdict.outcome == "passed"  # no min_score check: the bot is not blamed


async def test_the_cache_replays_a_batch_without_a_request(fake, store):
    fake.default = TextReply("Let me look at that order for you.")
    options = BatchOptions(models=RoleModels(bot=FAKE), concurrency=3, max_turns=2, cache=True)
    first, _ = await run_batch(store, [PLAYBOOKS], options)
    made = len(fake.requests)
    assert made > 0 and first.cache_misses == made and first.cache_hits == 0

    second, _ = await run_batch(store, [PLAYBOOKS], options)
    assert len(fake.requests) == made, "the second run is answered from the cache"
    assert second.cache_hits == made and second.cache_misses == 0

    def texts(batch_id):
        return {s.spec.spec_id: [m.model_dump() for m in s.conversation.messages] for s in store.iter_conversations(batch_id)}

    assert texts(first.batch_id) == texts(second.batch_id)
    # a replayed reply costs nothing
    assert summarize(store, second.batch_id).total_usage.input_tokens == 0
    assert summarize(store, first.batch_id).total_usage.input_tokens > 0


async def test_without_the_cache_every_run_asks_again(fake, store):
    options = BatchOptions(models=RoleModels(bot=FAKE), concurrency=3, max_turns=1)
    await run_batch(store, [PLAYBOOKS / "track_shipped_order.yaml"], options)
    once = len(fake.requests)
    await run_batch(store, [PLAYBOOKS / "track_shipped_order.yaml"], options)
    assert len(fake.requests) == 2 * once


async def test_an_llm_user_fills_any_items_once_per_profile(fake, store, tmp_path):
    profile = tmp_path / "any_items.yaml"
    profile.write_text(
        """test_name: any_items
user:
  role: a customer
  goals:
    - "track order {{order}}"
    - order:
        function: forward()
        type: string
        data:
          - ORD-1004
          - any(3 order ids like ORD-1003)
conversation:
  number: 4
world:
  today: 2026-11-21
""",
        encoding="utf-8",
    )
    fake.push_text("ORD-1003\nORD-1001\nORD-1002")
    fake.default = TextReply("Hello, where is my order?")
    options = BatchOptions(models=RoleModels(user=FAKE), max_turns=1)
    prepared = await prepare_batch(store, [profile], options)
    await aclose_clients()
    assert [s.variables["order"] for s in prepared.specs] == ["ORD-1004", "ORD-1003", "ORD-1001", "ORD-1002"]
    assert len(fake.requests) == 1  # one list for the whole profile
    assert "3 order ids like ORD-1003" in fake.requests[0].messages[-1]["content"]
    assert not prepared.warnings

    # resuming plans the very same conversations without asking again
    from parley.core.engine.batch_runner import prepare_resume

    resumed = await prepare_resume(store, prepared.id)
    await aclose_clients()
    assert [s.spec_id for s in resumed.specs] == [s.spec_id for s in prepared.specs]
    assert [s.variables for s in resumed.specs] == [s.variables for s in prepared.specs]
    assert len(fake.requests) == 1

    # offline, the listed items are all there is, and the expansion says so once
    offline = await prepare_batch(store, [profile], BatchOptions())
    assert [s.variables["order"] for s in offline.specs] == ["ORD-1004"] * 4  # number: 4, one item
    assert len(offline.warnings) == 1 and "needs an LLM" in offline.warnings[0]


def test_missing_keys_are_found_before_anything_runs(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    models = BatchModels(RoleModels(judge="openai/gpt-4o-mini"))
    from parley.core.errors import ConfigError

    with pytest.raises(ConfigError, match="OPENAI_API_KEY is not set.*judge role"):
        models.check_keys()


async def test_a_storm_of_rate_limits_slows_the_batch_and_fails_no_conversation(fake, store):
    """40% of the bot's calls answered 429 with Retry-After 0.3 s, at concurrency 16: every
    conversation still ends of its own accord (no error of any kind), the adaptive limit shrank,
    and the batch reports the rate limits it absorbed."""
    fake.rate_limit_storm(0.4, retry_after="0.3", seed=1)
    options = BatchOptions(models=RoleModels(bot=FAKE), concurrency=16, max_turns=4, timeout_s=60)
    result, events = await run_batch(store, [PLAYBOOKS, PROFILES / "track_shipped_order.yaml"], options)

    assert result.status == "completed" and result.done == result.total == 8
    assert (result.errors, result.bot_errors) == (0, 0)
    stops = {s.conversation.stop_reason for s in store.iter_conversations(result.batch_id)}
    assert stops <= {"user_stop", "bot_stop", "max_turns"}, stops
    assert fake.storm_hits >= 5 and result.rate_limited >= 1
    assert result.lowest_limit < 16  # the limit shrank on the 429s
    assert any(e.kind == "concurrency_changed" and e.paused_for_s >= 0.3 for e in events)  # and honoured Retry-After
