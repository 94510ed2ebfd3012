"""The provider's sharded connection pool and the batch's collector threshold: requests spread
over the pools and every pool is released, whatever became of the reply; the collector's
thresholds come back when the last batch ends."""

from __future__ import annotations

import asyncio
import gc

import httpx2
import pytest

from parley.core.engine.gc_threshold import fewer_collections
from parley.core.errors import ProviderError
from parley.core.models.openai_provider import OpenAICompatibleModel, shared_client
from parley.core.models.pool_shards import PoolShards
from parley.core.records.chat import ChatMessage
from tests.fake_openai_server import FakeOpenAIServer
from tests.waiting import until

HELLO = [ChatMessage(role="user", content="Where is my order ORD-1001?")]


@pytest.fixture(autouse=True)
async def close_clients(close_model_clients):
    """Each test's shared model clients are closed on its own event loop."""


def make_model(server: FakeOpenAIServer) -> OpenAICompatibleModel:
    return OpenAICompatibleModel("openai-api/fake/m", env={"FAKE_BASE_URL": server.base_url})


def shards_of(model: OpenAICompatibleModel) -> PoolShards:
    transport = shared_client(model.check())._client._transport
    assert isinstance(transport, PoolShards)
    return transport


async def test_concurrent_calls_are_spread_over_the_pools_and_all_released(server):
    server.hold_requests()  # all 40 in flight at once, however busy the machine
    model = make_model(server)
    calls = [asyncio.create_task(model.generate(HELLO)) for _ in range(40)]
    try:
        await until(lambda: server.held == 40 or any(c.done() for c in calls), "the server to hold all 40")
        in_flight = shards_of(model).in_flight
    finally:
        server.release_requests()
    assert sum(in_flight) == 40 and max(in_flight) - min(in_flight) <= 1
    replies = await asyncio.gather(*calls)
    assert [r.text for r in replies] == ["ok"] * 40
    assert shards_of(model).in_flight == [0, 0, 0, 0]


async def test_errors_and_streams_release_their_pool(server):
    model = make_model(server)
    server.push_error(400, "bad request")
    with pytest.raises(ProviderError):
        await model.generate(HELLO)
    server.push_text("one two three")
    stream = model.stream(HELLO)
    assert "".join([piece async for piece in stream]) == "one two three"
    assert stream.reply is not None and stream.reply.text == "one two three"
    assert shards_of(model).in_flight == [0, 0, 0, 0]


async def test_a_pool_never_exceeds_its_share_of_the_connections(server):
    server.fixed_delay_ms = 100
    shards = PoolShards(4, httpx2.Limits(max_connections=8, max_keepalive_connections=8))
    async with httpx2.AsyncClient(transport=shards, base_url=server.base_url) as client:
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        replies = await asyncio.gather(*(client.post("/chat/completions", json=body) for _ in range(16)))
    assert all(r.status_code == 200 for r in replies)
    assert shards.in_flight == [0, 0, 0, 0]
    # 16 requests on 8 connections (2 per pool): two rounds of the 100 ms reply
    first, last = min(r.received_at for r in server.requests), max(r.received_at for r in server.requests)
    assert last - first >= 0.09


def test_the_collector_threshold_is_raised_while_batches_run_and_restored_after():
    before = gc.get_threshold()
    with fewer_collections(gen0=before[0] + 5000):
        raised = gc.get_threshold()
        with fewer_collections(gen0=before[0] + 5000):  # a second batch at the same time
            assert gc.get_threshold() == raised
        assert gc.get_threshold() == raised
    assert raised[0] == before[0] + 5000 and raised[1:] == before[1:]
    assert gc.get_threshold() == before
