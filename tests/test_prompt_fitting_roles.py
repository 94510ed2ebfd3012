"""The bot's and the user simulator's prompts fitted to their model's context, against a fake
endpoint that refuses prompts over a set length: the order bot's old tool results condensed, a
prompt bot's and an LLM user's long history cut in the middle, each saying so, where the same
prompts sent whole are refused."""

from __future__ import annotations

import pytest

from parley.core.bots.api import BotContext
from parley.core.bots.prompt_bot import PromptBot, PromptTemplate
from parley.core.bots.world_bot import WorldBot
from parley.core.errors import ContextLengthExceeded
from parley.core.models.registry import get_model
from parley.core.models.retry import RetryPolicy
from parley.core.records.chat import ChatMessage
from parley.core.users.llm_user import LLMUser
from parley.worlds.orders.offline_bot import OfflineOrderModel
from tests.order_world_support import order_copy, order_tools
from tests.test_user_offline import make_spec

CONTEXT = 2000


@pytest.fixture(autouse=True)
async def close_clients(close_model_clients):
    """Each test's shared model clients are closed on its own event loop."""


def fake_model(server, role: str):
    return get_model(
        f"openai-api/fake/{role}-model", role=role, retry_policy=RetryPolicy(max_retries=0), env={"FAKE_BASE_URL": server.base_url}
    )


@pytest.fixture
async def ctx(today):
    world = order_copy(today)
    yield BotContext(customer_id="C-100", today=world.today, tools=order_tools(world, "C-100"))
    world.close()


async def talk(bot: WorldBot, server, ctx: BotContext, turns: int) -> list[ChatMessage]:
    """`turns` customer turns in which the model lists the orders, then answers."""
    transcript: list[ChatMessage] = []
    for n in range(1, turns + 1):
        transcript.append(ChatMessage(role="user", content=f"Please list my orders ({n})."))
        server.push_tool_calls(("list_my_orders", "{}"))
        server.push_text(f"Here are your orders ({n}).")
        await bot.respond(transcript, ctx)
    return transcript


async def test_the_order_bots_old_tool_results_are_condensed_so_a_long_conversation_is_never_refused(server, ctx):
    server.context_tokens = CONTEXT
    transcript = await talk(WorldBot(fake_model(server, "bot"), context_tokens=CONTEXT), server, ctx, 6)

    assert server.refused_for_length == 0 and len(server.requests) == 12
    assert all(server.prompt_tokens(r.body) <= CONTEXT for r in server.requests)
    last = server.requests[-1].messages
    assert "To fit the model's context, the conversation is condensed" in last[0]["content"]
    # the turn being answered keeps its tool result whole; older ones were condensed
    results = [m["content"] for m in last if m["role"] == "tool"]
    whole = [m.content for m in transcript if m.role == "tool"][-1]
    assert results[-1] == whole and any(r != whole for r in results[:-1])
    # the transcript itself (what is stored and judged) is never changed
    assert all(m.content == whole for m in transcript if m.role == "tool")


async def test_the_same_conversation_sent_whole_is_refused_for_length(server, ctx):
    server.context_tokens = CONTEXT
    with pytest.raises(
        ContextLengthExceeded, match=r"too long for the model's context \(400\): This model's maximum context length is 2000"
    ):
        await talk(WorldBot(fake_model(server, "bot"), context_tokens=1_000_000), server, ctx, 6)
    assert server.refused_for_length == 1


def test_the_offline_model_is_never_condensed():
    # it has no context to fit, and condensing would change its deterministic answers
    assert WorldBot(OfflineOrderModel(), context_tokens=100).context_tokens is None


def long_history(turns: int) -> list[ChatMessage]:
    """A visible conversation with long bot answers (no tools)."""
    messages = []
    for n in range(1, turns + 1):
        messages.append(ChatMessage(role="user", content=f"Customer line {n}: tell me about my orders."))
        messages.append(ChatMessage(role="assistant", content=f"Bot answer {n}: " + "Your order is on its way. " * 40))
    return messages


async def test_a_prompt_bots_long_history_loses_its_middle_and_says_so(server, tmp_path, today):
    server.context_tokens = CONTEXT
    template = PromptTemplate(tmp_path / "agent.txt", "You are the support agent of a shop.")
    transcript = long_history(10)
    transcript.append(ChatMessage(role="user", content="And the last one?"))
    server.push_text("It arrives tomorrow.")
    bot = PromptBot(fake_model(server, "bot"), template, context_tokens=CONTEXT)
    turn = await bot.respond(transcript, BotContext(customer_id="C-100", today=today))

    assert turn.text == "It arrives tomorrow." and server.refused_for_length == 0
    sent = server.requests[-1].messages
    assert sent[0]["content"].startswith("You are the support agent of a shop.\n\nTo fit the model's context")
    assert "turns 2-" in sent[0]["content"]
    assert sent[1]["content"] == "Customer line 1: tell me about my orders."  # the first turn, whole
    assert sent[-1]["content"] == "And the last one?"  # the last, whole


async def test_an_llm_users_growing_history_loses_its_middle_and_says_so(server):
    server.context_tokens = CONTEXT
    spec = make_spec(["track ORD-1003"], [], role="You are a customer of an online shop.")
    user = LLMUser(spec, fake_model(server, "user"), context_tokens=CONTEXT)
    server.push_text("Thanks, that is all.")
    turn = await user.next_message(long_history(10))

    assert turn.text == "Thanks, that is all." and server.refused_for_length == 0
    sent = server.requests[-1].messages
    assert "To fit the model's context, the conversation is condensed: turns 2-" in sent[0]["content"]
    # roles flipped as always: the customer's first line (the simulator's own) is kept, and the
    # bot's last answer is the last thing it reads
    assert sent[2] == {"role": "assistant", "content": "Customer line 1: tell me about my orders."}
    assert sent[-1]["content"].startswith("Bot answer 10: ")

    whole = LLMUser(spec, fake_model(server, "user"), context_tokens=1_000_000)
    with pytest.raises(ContextLengthExceeded):
        await whole.next_message(long_history(10))
