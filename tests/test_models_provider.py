"""The OpenAI-compatible provider end to end, over real loopback HTTP against the fake server."""

from __future__ import annotations

import asyncio
import socket
import time

import pytest

from parley.core.errors import ConfigError, ProviderError
from parley.core.models.openai_provider import OpenAICompatibleModel, aclose_clients, shared_client_count
from parley.core.models.retry import RetryEvent, RetryPolicy
from parley.core.records.chat import ChatMessage, GenerateConfig, ToolCall, ToolSpec
from tests.fake_openai_server import FakeOpenAIServer, RawReply, TextReply, fake_server_process, run_fake_server
from tests.waiting import until

KEY = "sk-test-key"
HELLO = [ChatMessage(role="system", content="You are an order assistant."), ChatMessage(role="user", content="Where is my order ORD-1001?")]
TRACK = ToolSpec(
    name="track_order",
    description="Where an order is.",
    parameters={"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]},
)


class RecordingSleep:
    """Sleeps for real only a token amount, remembering what it was asked to wait."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)
        await asyncio.sleep(0)


@pytest.fixture(autouse=True)
async def close_clients(close_model_clients):
    """Each test's shared model clients are closed on its own event loop."""


def make_model(
    server: FakeOpenAIServer,
    name: str = "openai/gpt-4o-mini",
    *,
    key: str | None = KEY,
    events: list[RetryEvent] | None = None,
    sleep=None,
    **kwargs,
) -> OpenAICompatibleModel:
    env = {"OPENAI_BASE_URL": server.base_url}
    if key is not None:
        env["OPENAI_API_KEY"] = key
    return OpenAICompatibleModel(
        name,
        env=env,
        sleep=sleep or RecordingSleep(),
        on_retry=events.append if events is not None else None,
        **kwargs,
    )


# -- replies ---------------------------------------------------------------------------------


async def test_text_reply_with_usage_cost_latency_and_finish_reason(server):
    server.push_text("Your order ORD-1001 is out for delivery.", usage=(1000, 200))
    reply = await make_model(server).generate(HELLO)
    assert reply.text == "Your order ORD-1001 is out for delivery."
    assert reply.model == "openai/gpt-4o-mini"
    assert reply.finish_reason == "stop"
    assert (reply.usage.input_tokens, reply.usage.output_tokens, reply.usage.calls) == (1000, 200, 1)
    assert reply.usage.cost_usd == pytest.approx(1000 * 0.15e-6 + 200 * 0.60e-6)
    assert 0 < reply.latency_s < 5


async def test_request_carries_messages_tools_options_and_the_key(server):
    history = HELLO + [
        ChatMessage(role="assistant", tool_calls=[ToolCall(id="c1", name="track_order", arguments='{"order_id": "ORD-1001"}')]),
        ChatMessage(role="tool", tool_call_id="c1", name="track_order", content="shipped"),
    ]
    await make_model(server).generate(history, tools=[TRACK], config=GenerateConfig(temperature=0.2, seed=7, max_tokens=50))
    [request] = server.requests
    assert request.headers["authorization"] == f"Bearer {KEY}"
    body = request.body
    assert body["model"] == "gpt-4o-mini"
    assert [m["role"] for m in body["messages"]] == ["system", "user", "assistant", "tool"]
    assert body["messages"][2]["tool_calls"][0]["function"]["arguments"] == '{"order_id": "ORD-1001"}'
    assert body["messages"][3]["tool_call_id"] == "c1"
    assert body["tools"] == [TRACK.to_openai()]
    assert (body["temperature"], body["seed"], body["max_completion_tokens"]) == (0.2, 7, 50)


async def test_other_servers_get_max_tokens(server):
    model = OpenAICompatibleModel("openai-api/llama-cpp/smollm2", env={"LLAMA_CPP_BASE_URL": server.base_url})
    await model.generate(HELLO, config=GenerateConfig(max_tokens=32))
    body = server.requests[0].body
    assert body["model"] == "smollm2" and body["max_tokens"] == 32 and "max_completion_tokens" not in body


async def test_tool_calls_keep_raw_arguments_even_when_malformed(server):
    server.push_tool_calls(("track_order", '{"order_id": "ORD-1001"}'), ("cancel_order", '{"order_id": "ORD-1'))
    reply = await make_model(server).generate(HELLO, tools=[TRACK])
    assert reply.finish_reason == "tool_calls"
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [
        ("track_order", '{"order_id": "ORD-1001"}'),
        ("cancel_order", '{"order_id": "ORD-1'),
    ]
    assert all(c.id for c in reply.tool_calls)
    assert reply.as_message().tool_calls == reply.tool_calls


async def test_missing_usage_still_counts_the_call_with_unknown_cost(server):
    server.push_text("hi", usage=None)
    reply = await make_model(server).generate(HELLO)
    assert (reply.usage.input_tokens, reply.usage.output_tokens, reply.usage.calls) == (0, 0, 1)
    assert reply.usage.cost_usd is None


async def test_unpriced_model_has_unknown_cost(server):
    server.push_text("hi", usage=(10, 2))
    model = OpenAICompatibleModel("ollama/qwen2.5", env={"OLLAMA_BASE_URL": server.base_url})
    reply = await model.generate(HELLO)
    assert reply.usage.input_tokens == 10 and reply.usage.cost_usd is None


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"id": "x", "choices": []}, "the reply has no choices"),
        ({"id": "x"}, "the reply's choices: Field required"),
        ({"choices": [{"message": {"content": 42}}]}, "the reply's choices.0.message.content: Input should be a valid string"),
        (
            {"choices": [{"message": {"content": "hi", "tool_calls": [{"id": "c1", "function": {"arguments": "{}"}}]}}]},
            "the reply's choices.0.message.tool_calls.0.function.name: Field required",
        ),
        (["not", "a", "completion"], "the reply is not a JSON object but ['not', 'a', 'completion']"),
        ("<html>busy</html>", "the reply is not a JSON object but '<html>busy</html>'"),
    ],
)
async def test_a_reply_that_is_not_a_chat_completion_says_which_field_is_wrong(server, body, expected):
    server.push(RawReply(body))
    with pytest.raises(ProviderError) as caught:
        await make_model(server).generate(HELLO)
    assert str(caught.value) == f"openai/gpt-4o-mini (bot): bad reply from {server.base_url}: {expected}"
    assert not caught.value.retryable
    assert len(server.requests) == 1  # a malformed reply is not asked again


async def test_a_tool_call_without_a_function_is_left_out_and_missing_fields_get_defaults(server):
    server.push(
        RawReply(
            {
                "choices": [
                    {
                        "message": {
                            "content": None,
                            "tool_calls": [{"id": "c1", "type": "retrieval"}, {"function": {"name": "track_order", "arguments": None}}],
                        }
                    }
                ]
            }
        )
    )
    reply = await make_model(server).generate(HELLO, tools=[TRACK])
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [("call_1", "track_order", "")]
    assert reply.text is None and reply.finish_reason is None
    assert reply.usage.calls == 1 and reply.usage.cost_usd is None


async def test_latency_measures_the_wait(server):
    server.fixed_delay_ms = 200
    reply = await make_model(server).generate(HELLO)
    assert reply.latency_s >= 0.2


# -- retries ---------------------------------------------------------------------------------


async def test_429_waits_as_long_as_retry_after_then_succeeds(server):
    server.push_error(429, "slow down", retry_after=1).push_text("done")
    events: list[RetryEvent] = []
    sleep = RecordingSleep()
    reply = await make_model(server, events=events, sleep=sleep).generate(HELLO)
    assert reply.text == "done"
    assert len(server.requests) == 2
    assert [e.status for e in events] == [429]
    assert events[0].retry_after_s == 1.0
    assert sleep.delays[0] >= 1.0


async def test_retry_after_ms_is_honoured_in_real_time(server):
    server.push_error(429, headers={"retry-after-ms": "300"}).push_text("done")
    model = OpenAICompatibleModel(
        "openai/gpt-4o-mini",
        env={"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": KEY},
        retry_policy=RetryPolicy(base_delay_s=0.05),
    )
    assert (await model.generate(HELLO)).text == "done"
    first, second = server.requests
    assert second.received_at - first.received_at >= 0.3


async def test_500_then_success(server):
    server.push_error(500, "upstream hiccup").push_text("recovered")
    events: list[RetryEvent] = []
    reply = await make_model(server, events=events).generate(HELLO)
    assert reply.text == "recovered"
    assert [e.reason for e in events] == ["server_error"]


async def test_persistent_500_gives_up_with_a_retryable_error(server):
    for _ in range(5):
        server.push_error(500, "upstream down")
    with pytest.raises(ProviderError) as info:
        await make_model(server).generate(HELLO)
    assert info.value.retryable is True and info.value.status == 500
    assert "upstream down" in str(info.value) and "gave up after 5 attempts" in str(info.value)
    assert len(server.requests) == 5


async def test_hang_times_out_is_retried_then_fails(server):
    server.push_hang(60).push_hang(60)
    model = make_model(server, timeout_s=0.3, retry_policy=RetryPolicy(max_retries=1))
    started = time.monotonic()
    with pytest.raises(ProviderError) as info:
        await model.generate(HELLO)
    assert time.monotonic() - started < 30  # two timeouts, not two 60 s hangs waited out
    assert info.value.retryable is True and info.value.status is None
    assert "no reply from" in str(info.value) and "within 0.3 s" in str(info.value)
    assert len(server.requests) == 2


async def test_hang_then_answer_recovers(server):
    server.push_hang(60).push_text("finally")
    events: list[RetryEvent] = []
    # the limit is the answer's too: 2 s, so that a busy machine still answers within it
    reply = await make_model(server, timeout_s=2.0, events=events).generate(HELLO)
    assert reply.text == "finally"
    assert [e.reason for e in events] == ["timeout"]


# -- refusals ----------------------------------------------------------------------------------


async def test_401_is_not_retried_and_names_the_key_variable(server):
    server.push_error(401, "Incorrect API key provided")
    events: list[RetryEvent] = []
    with pytest.raises(ProviderError) as info:
        await make_model(server, events=events).generate(HELLO)
    message = str(info.value)
    assert "the API key in OPENAI_API_KEY was refused" in message and "Incorrect API key provided" in message
    assert info.value.status == 401 and info.value.retryable is False
    assert len(server.requests) == 1 and events == []


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (400, "rejected the request (400): 'messages' is too long"),
        (403, "access denied"),
        (404, "model 'gpt-4o-mini' not found at http://127.0.0.1"),
        (422, "rejected the request (422)"),
    ],
)
async def test_refusals_are_not_retried_and_explain_themselves(server, status, expected):
    server.push_error(status, "'messages' is too long")
    with pytest.raises(ProviderError) as info:
        await make_model(server).generate(HELLO)
    assert expected in str(info.value)
    assert info.value.status == status and info.value.retryable is False
    assert len(server.requests) == 1


async def test_missing_key_fails_before_any_request(server):
    model = make_model(server, key=None)  # constructing it is fine
    with pytest.raises(ConfigError, match="OPENAI_API_KEY is not set"):
        await model.generate(HELLO)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY is not set"):
        async for _ in model.stream(HELLO):
            pass
    with pytest.raises(ConfigError):
        model.check()
    assert server.requests == []


async def test_unreachable_server_is_retried_then_reported():
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    base_url = f"http://127.0.0.1:{port}/v1"
    events: list[RetryEvent] = []
    model = OpenAICompatibleModel(
        "openai-api/vllm/m",
        env={"VLLM_BASE_URL": base_url},
        sleep=RecordingSleep(),
        on_retry=events.append,
        retry_policy=RetryPolicy(max_retries=2),
    )
    with pytest.raises(ProviderError) as info:
        await model.generate(HELLO)
    assert f"cannot reach {base_url}" in str(info.value)
    assert info.value.retryable is True
    assert [e.reason for e in events] == ["connection", "connection"]


async def test_a_server_that_answered_and_then_died_is_named_as_stopped_not_unreachable():
    # The live tier's crash: llama.cpp's server answered, then died on a completion. Every
    # conversation after that must say the server stopped, not only "connection failed".
    with run_fake_server() as live:
        base_url = live.base_url
        model = OpenAICompatibleModel(
            "openai-api/dying/m", env={"DYING_BASE_URL": base_url}, sleep=RecordingSleep(), retry_policy=RetryPolicy(max_retries=1)
        )
        assert (await model.generate(HELLO)).text
    with pytest.raises(ProviderError) as info:  # the server's process is gone
        await model.generate(HELLO)
    assert f"the model server at {base_url} stopped answering" in str(info.value)
    assert "cannot reach" not in str(info.value)


async def test_a_local_server_never_sees_the_openai_key(server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-do-not-leak")
    monkeypatch.setenv("OPENAI_ORG_ID", "org-do-not-leak")
    model = OpenAICompatibleModel("ollama/qwen2.5", env={"OLLAMA_BASE_URL": server.base_url})
    await model.generate(HELLO)
    headers = server.requests[0].headers
    assert "sk-do-not-leak" not in str(headers) and "org-do-not-leak" not in str(headers)


# -- streaming -------------------------------------------------------------------------------


async def test_stream_yields_deltas_that_assemble_into_the_generated_text(server):
    text = "Your order ORD-1001 shipped on Monday and arrives tomorrow."
    server.push_text(text, usage=(40, 12)).push_text(text, usage=(40, 12))
    model = make_model(server)
    stream = model.stream(HELLO)
    deltas = [d async for d in stream]
    generated = await model.generate(HELLO)
    assert len(deltas) > 1
    assert "".join(deltas) == text == generated.text
    assert stream.reply is not None
    assert stream.reply.text == generated.text
    assert stream.reply.usage == generated.usage
    assert stream.reply.finish_reason == "stop"
    assert server.requests[0].body["stream"] is True
    assert server.requests[0].body["stream_options"] == {"include_usage": True}


async def test_stream_assembles_tool_call_deltas_keeping_raw_arguments(server):
    server.push_tool_calls(("track_order", '{"order_id": "ORD-1001"}'), ("cancel_order", '{"order_id": "ORD'), text="Let me check.")
    stream = make_model(server).stream(HELLO, tools=[TRACK])
    assert "".join([d async for d in stream]) == "Let me check."
    assert [(c.name, c.arguments) for c in stream.reply.tool_calls] == [
        ("track_order", '{"order_id": "ORD-1001"}'),
        ("cancel_order", '{"order_id": "ORD'),
    ]
    assert stream.reply.finish_reason == "tool_calls"


async def test_stream_from_a_server_without_usage_still_counts_the_call(server):
    server.stream_usage = "ignore"
    server.push_text("hello there", usage=(10, 2))
    stream = make_model(server).stream(HELLO)
    assert "".join([d async for d in stream]) == "hello there"
    assert stream.reply.usage.calls == 1 and stream.reply.usage.input_tokens == 0
    assert stream.reply.usage.cost_usd is None


async def test_stream_falls_back_when_the_server_refuses_stream_options(server):
    server.stream_usage = "reject"
    model = make_model(server)
    first = model.stream(HELLO)
    assert "".join([d async for d in first]) == "ok"
    second = model.stream(HELLO)
    assert "".join([d async for d in second]) == "ok"
    # refused once, then remembered for the endpoint
    assert ["stream_options" in r.body for r in server.requests] == [True, False, False]


async def test_stream_retries_a_429_before_any_text(server):
    server.push_error(429, retry_after=0).push_text("after the wait")
    events: list[RetryEvent] = []
    stream = make_model(server, events=events).stream(HELLO)
    assert "".join([d async for d in stream]) == "after the wait"
    assert [e.status for e in events] == [429]


async def test_stream_that_stalls_after_some_text_fails_without_repeating_it(server):
    server.push(TextReply("Your order is on its way.", stall_s=60))
    events: list[RetryEvent] = []
    shown: list[str] = []
    # 2 s: the first words must come within the limit too, on a busy machine as well
    with pytest.raises(ProviderError, match="stalled for more than 2 s") as info:
        async for delta in make_model(server, timeout_s=2.0, events=events).stream(HELLO):
            shown.append(delta)
    assert shown == ["Your "]  # what reached the screen is not shown twice by a silent retry
    assert info.value.retryable is True
    assert len(server.requests) == 1 and events == []


async def test_stream_refusal_is_a_provider_error(server):
    server.push_error(401, "bad key")
    with pytest.raises(ProviderError, match="OPENAI_API_KEY was refused"):
        async for _ in make_model(server).stream(HELLO):
            pass
    assert len(server.requests) == 1


# -- sharing ---------------------------------------------------------------------------------


async def test_one_client_per_endpoint_shared_by_every_model(server):
    bot = make_model(server)
    judge = OpenAICompatibleModel("openai/gpt-4o", role="judge", env={"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": KEY})
    other_key = make_model(server, key="sk-other")
    assert bot.client() is judge.client()
    assert other_key.client() is not bot.client()
    await asyncio.gather(bot.generate(HELLO), judge.generate(HELLO), other_key.generate(HELLO))
    assert shared_client_count() == 2


async def test_many_concurrent_conversations_share_the_pool(server):
    server.hold_requests()
    models = [make_model(server) for _ in range(50)]
    calls = [asyncio.create_task(m.generate(HELLO)) for m in models]
    try:
        # concurrent, not one after the other: the server holds all 50 at once
        await until(lambda: server.held == 50 or any(c.done() for c in calls), "50 requests in flight at once")
        assert server.held == 50
    finally:
        server.release_requests()
    replies = await asyncio.gather(*calls)
    assert all(r.text == "ok" for r in replies)
    assert shared_client_count() == 1


async def test_fake_server_as_a_process_answers_after_the_fixed_delay():
    # the throughput benchmark's setup: a separate process answering every request after 200 ms
    with fake_server_process(delay_ms=200) as base_url:
        model = OpenAICompatibleModel("openai-api/bench/m", env={"BENCH_BASE_URL": base_url})
        replies = await asyncio.gather(*(model.generate(HELLO) for _ in range(10)))
        await aclose_clients()
    assert all(r.text == "ok" and r.latency_s >= 0.2 for r in replies)
