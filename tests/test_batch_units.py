"""The batch runner's parts on their own: the adaptive limit, trial seeds, --single, the cache."""

from __future__ import annotations

import asyncio

import pytest

from parley.core.engine.adaptive_limit import AdaptiveLimit
from parley.core.engine.batch_plan import SelectionError, select_single, trial_seed, trial_spec
from parley.core.models.retry import RetryEvent
from parley.core.records.chat import ChatMessage, GenerateConfig, ModelReply, ToolSpec, Usage
from parley.core.records.spec import ConversationSpec
from parley.core.store.reply_cache import CachedModel
from parley.core.store.store import Store


def rate_limited(retry_after: float | None = None) -> RetryEvent:
    return RetryEvent(status=429, delay_s=0.1, attempt=1, reason="rate_limited", retry_after_s=retry_after)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def test_the_limit_shrinks_on_429s_and_grows_back_on_successes():
    clock = Clock()
    changes = []
    limit = AdaptiveLimit(10, raise_every=3, cooldown_s=0.5, on_change=changes.append, clock=clock)
    limit.on_retry(rate_limited())
    assert limit.limit == 8
    limit.on_retry(rate_limited())  # the same burst: once per cooldown
    assert limit.limit == 8
    clock.now += 1
    limit.on_retry(rate_limited())
    assert limit.limit == 6  # 10 * 0.8 * 0.8 = 6.4
    for _ in range(3):
        limit.call_succeeded()
    assert limit.limit == 7
    for _ in range(30):
        limit.call_succeeded()
    assert limit.limit == 10 and limit.lowest == 6  # never above the configured maximum
    assert [(c.previous, c.limit) for c in changes] == [(10, 8), (8, 6), (6, 7), (7, 8), (8, 9), (9, 10)]
    assert limit.rate_limited == 3


async def test_the_limit_never_goes_below_one_and_other_retries_do_not_count():
    clock = Clock()
    limit = AdaptiveLimit(2, cooldown_s=0, clock=clock)
    for _ in range(10):
        limit.on_retry(rate_limited())
    assert limit.limit == 1
    limit.on_retry(RetryEvent(status=503, delay_s=0.1, attempt=1, reason="server_error"))
    assert limit.rate_limited == 10


async def test_acquire_waits_for_a_slot_and_for_retry_after():
    limit = AdaptiveLimit(2, cooldown_s=0)
    assert await limit.acquire() and await limit.acquire()
    third = asyncio.create_task(limit.acquire())
    await asyncio.sleep(0.01)
    assert not third.done()  # two in flight: the third waits
    limit.release()
    assert await asyncio.wait_for(third, 30) is True
    limit.release()
    limit.release()

    limit.on_retry(rate_limited(retry_after=0.2))
    started = asyncio.get_running_loop().time()
    assert await limit.acquire()
    assert asyncio.get_running_loop().time() - started >= 0.18  # launches paused for Retry-After
    limit.release()


async def test_closing_releases_every_waiter():
    limit = AdaptiveLimit(1)
    assert await limit.acquire()
    waiting = asyncio.create_task(limit.acquire())
    await asyncio.sleep(0.01)
    limit.close()
    assert await asyncio.wait_for(waiting, 30) is False
    assert await limit.acquire() is False


def _spec(name: str, index: int = 0, seed: int = 11) -> ConversationSpec:
    return ConversationSpec(spec_id=f"{name}#{index}", kind="profile", source="x.yaml", name=name, index=index, seed=seed)


def test_trial_one_keeps_the_spec_and_later_trials_get_their_own_stable_seeds():
    spec = _spec("a")
    assert trial_spec(spec, 1) is spec
    seeds = [trial_spec(spec, t).seed for t in (1, 2, 3)]
    assert len(set(seeds)) == 3 and seeds == [trial_seed(11, t) for t in (1, 2, 3)]
    assert trial_seed(11, 2) == trial_seed(11, 2) and trial_seed(11, 2) != trial_seed(12, 2)


def test_single_picks_by_position_spec_id_or_unique_name():
    specs = [_spec("a"), _spec("b", 0), _spec("b", 1)]
    assert select_single(specs, "0").spec_id == "a#0"
    assert select_single(specs, 2).spec_id == "b#1"
    assert select_single(specs, "b#0").spec_id == "b#0"
    assert select_single(specs, "a").spec_id == "a#0"
    with pytest.raises(SelectionError, match="the plan has 3 conversations"):
        select_single(specs, "3")
    with pytest.raises(SelectionError, match="several"):
        select_single(specs, "b")
    with pytest.raises(SelectionError, match="no conversation"):
        select_single(specs, "zzz")


class Recording:
    name = "openai/fake"

    def __init__(self) -> None:
        self.calls = 0

    async def generate(self, messages, tools=None, config=None):
        self.calls += 1
        return ModelReply(model=self.name, text=f"reply {self.calls}", usage=Usage(input_tokens=5, output_tokens=2, calls=1))

    def stream(self, messages, tools=None, config=None):
        raise NotImplementedError


async def test_the_cache_is_keyed_by_the_whole_request(tmp_path):
    store = Store.open(tmp_path / "c.db")
    inner = Recording()
    model = CachedModel(inner, store)
    hello = [ChatMessage(role="user", content="hello")]
    tool = ToolSpec(name="t", description="d", parameters={"type": "object"})

    first = await model.generate(hello)
    again = await model.generate(hello)
    assert (first.text, again.text, inner.calls) == ("reply 1", "reply 1", 1)
    assert again.usage.input_tokens == 0  # replayed: nothing billed
    assert (await model.generate(hello, [tool])).text == "reply 2"
    assert (await model.generate(hello, config=GenerateConfig(temperature=0.5))).text == "reply 3"
    assert (await model.generate([ChatMessage(role="user", content="hello!")])).text == "reply 4"
    # another process (a re-run) replays from the file
    replay = CachedModel(Recording(), Store.open(tmp_path / "c.db"))
    assert (await replay.generate(hello, [tool])).text == "reply 2" and replay.inner.calls == 0
    stream = replay.stream(hello)
    assert [d async for d in stream] == ["reply 1"] and stream.reply.text == "reply 1"
    store.close()
