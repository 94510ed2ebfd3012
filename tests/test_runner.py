"""run_conversation: every stop reason, who starts, and what the record keeps."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from parley.core.bots.world_bot import WorldBot
from parley.core.engine.harness import Limits, run_conversation
from parley.core.errors import ProviderError
from parley.core.records.chat import Usage
from parley.core.records.conversation import Conversation
from parley.core.users.simulator import ScriptedUser, UserTurn, visible_transcript
from parley.worlds.orders.offline_bot import GREETING_TEXT, OfflineOrderModel
from tests.order_world_support import order_copy, status
from tests.test_bot_order_loop import HANG, ScriptedModel, calls, text


@pytest.fixture
def world(today):
    world = order_copy(today)
    yield world
    world.close()


OFFLINE = WorldBot(OfflineOrderModel())


class EchoUser:
    """Never stops on its own; says 'hello' forever."""

    name = "echo"

    async def next_message(self, transcript):
        return UserTurn(text="hello", usage=Usage(input_tokens=3, output_tokens=1, calls=1))


class LastWordsUser:
    name = "last-words"

    async def next_message(self, transcript):
        return UserTurn(text="I'm leaving, bye.", stop=True, note="gave up")


async def test_user_stop_when_the_script_runs_out(world):
    conv = await run_conversation(world=world, bot=OFFLINE, user=ScriptedUser(["hi", "track ORD-1003"]), customer_id="C-100")
    assert conv.stop_reason == "user_stop" and conv.error is None
    assert conv.user_texts == ["hi", "track ORD-1003"] and len(conv.bot_texts) == 2
    assert [t.index for t in conv.turns] == [1, 2] and conv.turns[1].tool_calls == 1
    assert (conv.bot_model, conv.user_simulator, conv.customer_id) == ("offline", "scripted", "C-100")
    assert conv.duration_s > 0 and conv.ended_at >= conv.started_at
    assert "C-100" in conv.system_prompt and all(m.role != "system" for m in conv.messages)


async def test_a_last_message_with_stop_is_kept_unanswered(world):
    conv = await run_conversation(world=world, bot=OFFLINE, user=LastWordsUser(), customer_id="C-100")
    assert conv.stop_reason == "user_stop"
    assert [m.role for m in conv.messages] == ["user"] and conv.turns == []


async def test_bot_stop_when_the_bot_says_goodbye(world):
    conv = await run_conversation(
        world=world, bot=OFFLINE, user=ScriptedUser(["thanks", "bye", "wait, one more thing"]), customer_id="C-100"
    )
    assert conv.stop_reason == "bot_stop"
    assert conv.user_texts == ["thanks", "bye"]


async def test_max_turns(world):
    conv = await run_conversation(world=world, bot=OFFLINE, user=EchoUser(), customer_id="C-100", limits=Limits(max_turns=3))
    assert conv.stop_reason == "max_turns"
    assert len(conv.turns) == 3 and len(conv.user_texts) == 3
    assert conv.usage["user"].input_tokens == 9 and conv.usage["bot"].calls == 3


async def test_timeout_on_a_hung_model_keeps_the_partial_transcript(world):
    model = ScriptedModel(calls(("cancel_order", '{"order_id": "ORD-1004"}')), text("Cancelled."), HANG)
    started = time.perf_counter()
    conv = await run_conversation(
        world=world,
        bot=WorldBot(model),
        user=ScriptedUser(["cancel ORD-1004, I confirm", "thanks"]),
        customer_id="C-100",
        limits=Limits(timeout_s=2.0),  # the turns before the hang fit in it, on a busy machine too
    )
    assert time.perf_counter() - started < 30  # the limit, not the hang waited out
    assert conv.stop_reason == "timeout" and "2 s" in conv.error
    assert conv.user_texts == ["cancel ORD-1004, I confirm", "thanks"]
    assert conv.bot_texts == ["Cancelled."]
    # what happened before the hang is in the record, the World included
    assert [r.name for r in conv.tool_calls] == ["cancel_order"]
    assert status(conv.final_state, "ORD-1004") == "cancelled"


async def test_timeout_mid_turn_keeps_the_tools_already_run(world):
    model = ScriptedModel(calls(("track_order", '{"order_id": "ORD-1003"}')), HANG)
    conv = await run_conversation(
        world=world, bot=WorldBot(model), user=ScriptedUser(["where is ORD-1003?"]), customer_id="C-100", limits=Limits(timeout_s=2.0)
    )
    assert conv.stop_reason == "timeout"
    assert [m.role for m in conv.messages] == ["user", "assistant", "tool"]
    assert len(conv.tool_calls) == 1 and conv.usage["bot"].calls == 1


async def test_the_bots_provider_failing_is_the_bots_error(world):
    model = ScriptedModel(text("Hello!"), ProviderError("openai/gpt-4o-mini (bot): 500 from the server after 3 tries", status=500))
    conv = await run_conversation(world=world, bot=WorldBot(model), user=ScriptedUser(["hi", "track ORD-1003"]), customer_id="C-100")
    assert conv.stop_reason == "bot_error"
    assert conv.error == "openai/gpt-4o-mini (bot): 500 from the server after 3 tries"
    assert conv.bot_texts == ["Hello!"] and conv.user_texts == ["hi", "track ORD-1003"]


async def test_a_broken_simulator_is_a_user_error(world):
    class Broken:
        name = "broken"

        async def next_message(self, transcript):
            raise KeyError("goal")

    conv = await run_conversation(world=world, bot=OFFLINE, user=Broken(), customer_id="C-100")
    assert conv.stop_reason == "user_error" and "KeyError" in conv.error


async def test_the_simulators_provider_failing_is_infrastructure(world):
    class NoProvider:
        name = "openai/gpt-4o-mini"

        async def next_message(self, transcript):
            raise ProviderError("openai/gpt-4o-mini (user): server error (503) (gave up after 5 attempts)", status=503)

    conv = await run_conversation(world=world, bot=OFFLINE, user=NoProvider(), customer_id="C-100")
    assert conv.stop_reason == "infrastructure_error" and "(user): server error (503)" in conv.error


async def test_a_simulator_with_nothing_usable_is_a_user_error(world):
    class Mute:
        name = "mute"

        async def next_message(self, transcript):
            return UserTurn.stopped("the user model gave no usable reply twice", stop_reason="user_error")

    conv = await run_conversation(world=world, bot=OFFLINE, user=Mute(), customer_id="C-100")
    assert (conv.stop_reason, conv.error) == ("user_error", "the user model gave no usable reply twice")


async def test_an_empty_move_is_kept_as_an_empty_turn(world):
    class Blank:
        name = "blank"

        async def next_message(self, transcript):
            return UserTurn(text="")

    conv = await run_conversation(world=world, bot=OFFLINE, user=Blank(), customer_id="C-100")
    assert conv.stop_reason == "user_stop" and [(m.role, m.content) for m in conv.messages] == [("user", "")]


async def test_a_deadline_passed_while_the_user_thinks_is_not_the_bots_timeout(world):
    class Slow:
        name = "openai/slow"

        async def next_message(self, transcript):
            await asyncio.sleep(5)
            return UserTurn(text="hi")

    conv = await run_conversation(world=world, bot=OFFLINE, user=Slow(), customer_id="C-100", limits=Limits(timeout_s=0.2))
    assert conv.stop_reason == "infrastructure_error" and "user simulator had not answered" in conv.error


async def test_a_world_that_cannot_be_reached_is_infrastructure(world, monkeypatch):
    import parley.core.engine.harness as harness

    def broken_tools(*args):
        raise OverflowError("date value out of range")

    monkeypatch.setattr(harness, "WorldTools", broken_tools)
    conv = await run_conversation(world=world, bot=OFFLINE, user=ScriptedUser(["hi"]), customer_id="C-100")
    assert conv.stop_reason == "infrastructure_error" and conv.error == "OverflowError: date value out of range"
    assert conv.messages == [] and conv.turns == []


async def test_bot_starts(world):
    seen = []

    class Watcher:
        name = "watcher"

        async def next_message(self, transcript):
            seen.append([m.content for m in visible_transcript(transcript)])
            return UserTurn.stopped("done")

    conv = await run_conversation(world=world, bot=OFFLINE, user=Watcher(), customer_id="C-100", bot_starts=True)
    assert conv.bot_starts and conv.messages[0].role == "assistant"
    assert conv.bot_texts == [GREETING_TEXT]
    assert seen == [[GREETING_TEXT]]  # the user saw the bot's opening first
    assert conv.stop_reason == "user_stop" and conv.turns[0].user_latency_s == 0.0


async def test_the_record_holds_the_final_world_state_and_round_trips(world):
    conv = await run_conversation(
        world=world,
        bot=OFFLINE,
        user=ScriptedUser(["cancel ORD-1002", "yes"]),
        customer_id="C-100",
        conversation_id="conv-1",
        metadata={"spec": "cancel-eligible", "seed": 7},
    )
    assert conv.final_state.final_row("orders", "ORD-1002")["status"] == "cancelled"
    assert [c.after["order_id"] for c in conv.final_state.changes if c.table == "audit"] == ["ORD-1002"]
    again = Conversation.model_validate(json.loads(conv.model_dump_json()))
    assert again == conv and again.id == "conv-1" and again.metadata["seed"] == 7


async def test_each_world_is_private(today):
    first, second = order_copy(today), order_copy(today)
    try:
        await run_conversation(world=first, bot=OFFLINE, user=ScriptedUser(["cancel ORD-1001", "yes"]), customer_id="C-100")
        conv = await run_conversation(world=second, bot=OFFLINE, user=ScriptedUser(["track ORD-1001"]), customer_id="C-100")
    finally:
        first.close()
        second.close()
    assert not conv.final_state.changes  # the first conversation's cancellation is not in the second's world
    assert conv.tool_calls[0].ok and '"pending"' in conv.tool_calls[0].result
    assert "has not shipped yet" in conv.bot_texts[0]
