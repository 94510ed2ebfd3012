"""The LLM user against the scripted fake OpenAI-compatible server: the prompt, the role flip as
the server receives it, the stop marker, usage, odd replies; any() items; the factory."""

from __future__ import annotations

import functools

import pytest

from parley.core.errors import ConfigError
from parley.core.models.openai_provider import OpenAICompatibleModel
from parley.core.records.chat import ChatMessage
from parley.core.records.profile import GoalStyle, InteractionStyle
from parley.core.specs.expansion import resolve_any_items
from parley.core.users.factory import make_user_simulator
from parley.core.users.llm_user import KICKOFF, STOP_MARKER, LLMUser, flip_roles, generate_any_items, parse_items, split_stop_marker
from parley.core.users.offline_user import OfflineUser
from parley.core.users.simulator import UserSimulator
from parley.worlds.orders.offline_bot import FALLBACK_TEXT
from tests.fake_openai_server import FakeOpenAIServer
from tests.test_expansion import profile_from
from tests.test_user_offline import THREE_GOALS, make_spec, run_offline

MODEL = "openai-api/fake/sim-model"


@pytest.fixture(autouse=True)
async def close_clients(close_model_clients):
    """Each test's shared model clients are closed on its own event loop."""


def model_for(server: FakeOpenAIServer) -> OpenAICompatibleModel:
    return OpenAICompatibleModel(MODEL, role="user", env={"FAKE_BASE_URL": server.base_url})


def llm_user(server: FakeOpenAIServer, spec=None, *, bot_fallback: str | None = None) -> LLMUser:
    spec = spec or make_spec(
        ["cancel order ORD-1004", "track ORD-1003"],
        ["make spelling mistakes", "single question"],
        role="You are a customer of an online shop.",
        context=["Your name is Maya.", "You are polite but busy."],
        language="English",
    )
    return LLMUser(spec, model_for(server), bot_fallback=bot_fallback)


def said(*pairs: tuple[str, str]) -> list[ChatMessage]:
    return [ChatMessage(role=role, content=text) for role, text in pairs]


# -- the prompt and the role flip ----------------------------------------------------------------


async def test_the_bots_lines_are_sent_as_user_and_the_simulators_own_as_assistant(server):
    server.push_text("Yes, please cancel it.")
    user = llm_user(server)
    transcript = said(
        ("assistant", "Hello! How can I help?"),
        ("user", "I want to cancel ORD-1004."),
        ("assistant", "Shall I cancel order ORD-1004 now?"),
    )
    turn = await user.next_message(transcript)
    assert turn.text == "Yes, please cancel it." and not turn.stop
    sent = server.requests[-1].messages
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    assert sent[1]["content"] == "Hello! How can I help?"  # the bot, as "user"
    assert sent[2]["content"] == "I want to cancel ORD-1004."  # the simulator itself, as "assistant"
    assert sent[3]["content"] == "Shall I cancel order ORD-1004 now?"
    assert server.requests[-1].body["model"] == "sim-model"


async def test_the_system_prompt_carries_role_language_context_goals_styles_and_the_stop_rule(server):
    server.push_text("Hi, I'd like to cancel order ORD-1004.")
    user = llm_user(server)
    await user.next_message([])
    system = server.requests[-1].messages[0]
    assert system["role"] == "system"
    prompt = system["content"]
    for part in (
        "You are a customer of an online shop.",
        "Write your messages in English.",
        "Your name is Maya.",
        "1. cancel order ORD-1004",
        "2. track ORD-1003",
        "spelling mistakes",
        "one goal per message",
        STOP_MARKER,
        "Do not stop between agreeing to an action and the assistant performing it",
    ):
        assert part in prompt, part


async def test_when_the_user_speaks_first_a_kickoff_stands_in_for_the_bot(server):
    server.push_text("Hello there.")
    await llm_user(server).next_message([])
    sent = server.requests[-1].messages
    assert [m["role"] for m in sent] == ["system", "user"] and sent[1]["content"] == KICKOFF
    # and it stays first once the conversation goes on, so roles keep alternating
    flipped = flip_roles(said(("user", "Hello there."), ("assistant", "Hi!")))
    assert [(m.role, m.content) for m in flipped] == [("user", KICKOFF), ("assistant", "Hello there."), ("user", "Hi!")]


def test_tool_traffic_is_not_shown_to_the_simulator():
    from parley.core.records.chat import ToolCall

    transcript = [
        ChatMessage(role="user", content="track ORD-1003"),
        ChatMessage(role="assistant", tool_calls=[ToolCall(id="c", name="track_order", arguments="{}")]),
        ChatMessage(role="tool", tool_call_id="c", content="{}"),
        ChatMessage(role="assistant", content="It has shipped."),
    ]
    assert [(m.role, m.content) for m in flip_roles(transcript)] == [
        ("user", KICKOFF),
        ("assistant", "track ORD-1003"),
        ("user", "It has shipped."),
    ]


# -- stopping ------------------------------------------------------------------------------------


def test_split_stop_marker():
    assert split_stop_marker("Thanks, bye! <<STOP>>") == ("Thanks, bye!", True)
    assert split_stop_marker("<<STOP>>") == ("", True)
    assert split_stop_marker('Customer: "Where is ORD-1003?"') == ("Where is ORD-1003?", False)
    assert split_stop_marker("ok thanks <stop>") == ("ok thanks", True)


async def test_a_stop_marker_ends_the_conversation_and_is_stripped(server):
    server.push_text("Great, thanks for your help! <<STOP>>", usage=(120, 9))
    user = llm_user(server)
    turn = await user.next_message(said(("user", "Where is ORD-1003?"), ("assistant", "It has shipped with UPS.")))
    assert turn.stop and turn.text == "Great, thanks for your help!"
    assert (turn.usage.input_tokens, turn.usage.output_tokens, turn.usage.calls) == (120, 9, 1)
    assert turn.latency_s > 0


async def test_a_message_that_is_only_the_marker_stops_with_no_text(server):
    server.push_text("<<STOP>>")
    turn = await llm_user(server).next_message(said(("user", "hi"), ("assistant", "Hello!")))
    assert turn.stop and turn.text is None and turn.stop_reason == "user_stop"


async def test_no_stop_between_saying_yes_and_the_bot_acting(server):
    server.push_text("Yes, cancel it. <<STOP>>")
    user = llm_user(server)
    turn = await user.next_message(
        said(
            ("user", "Cancel ORD-1004 please"),
            ("assistant", 'Shall I cancel order ORD-1004 now? Please reply "yes" to confirm.'),
        )
    )
    assert turn.text == "Yes, cancel it." and not turn.stop
    assert "stop deferred" in turn.note


async def test_an_empty_reply_is_retried_once_then_the_user_stops(server):
    server.push_text("   ").push_text("Where is my order ORD-1003?")
    turn = await llm_user(server).next_message([])
    assert turn.text == "Where is my order ORD-1003?" and turn.usage.calls == 2
    server.push_text("").push_text("")
    turn = await llm_user(server).next_message([])
    assert turn.stop and turn.text is None and "no usable reply" in turn.note and turn.usage.calls == 2


async def test_steps_stop_without_asking_the_model(server):
    spec = make_spec(["track ORD-1003"], goal_style=GoalStyle(kind="steps", steps=1))
    user = llm_user(server, spec)
    server.push_text("Where is ORD-1003?")
    first = await user.next_message([])
    assert "last message" in server.requests[-1].messages[0]["content"]
    second = await user.next_message(said(("user", first.text), ("assistant", "It has shipped.")))
    assert second.stop and "steps: 1 reached" in second.note
    assert len(server.requests) == 1


async def test_fallbacks_ask_for_a_rephrase_then_end_in_a_fallback_loop(server):
    user = llm_user(server, make_spec(["track ORD-1003"]), bot_fallback=FALLBACK_TEXT)
    transcript: list[ChatMessage] = []
    for i in range(6):
        server.push_text(f"Where is my order ORD-1003? (try {i})")
        turn = await user.next_message(transcript)
        if i == 1:
            assert "Say the same thing in different words" in server.requests[-1].messages[0]["content"]
        transcript += said(("user", turn.text), ("assistant", FALLBACK_TEXT))
    assert "ask about another of your goals" in server.requests[3].messages[0]["content"]
    turn = await user.next_message(transcript)
    assert turn.stop and turn.stop_reason == "fallback_loop"
    assert len(server.requests) == 6  # no model call for the give-up


async def test_the_language_switch_is_asked_for_on_its_turn(server):
    spec = make_spec(["track ORD-1003"], [InteractionStyle(name="change language", languages=["Italian"])])
    user = llm_user(server, spec)
    server.push_text("Dov'è il mio ordine ORD-1003?")
    await user.next_message([])
    assert user.language_turns == {1: "Italian"}
    assert "Write this message in Italian." in server.requests[-1].messages[0]["content"]


async def test_an_llm_user_against_the_offline_bot_counts_usage_and_fills_the_goal_table(server):
    spec = make_spec(["track ORD-1003"], goal_style=GoalStyle(kind="all_answered", export=True))
    server.push_text("Hi, where is my order ORD-1003?", usage=(50, 8))
    server.push_text("Thanks, that's all! <<STOP>>", usage=(90, 5))
    user = llm_user(server, spec)
    conv, _ = await run_offline(spec, user=user)
    assert conv.stop_reason == "user_stop" and conv.user_simulator == MODEL
    assert conv.user_texts == ["Hi, where is my order ORD-1003?", "Thanks, that's all!"]
    assert any("UPS" in t for t in conv.bot_texts)
    usage = conv.usage["user"]
    assert (usage.input_tokens, usage.output_tokens, usage.calls) == (140, 13, 2)
    # the goal tracker saw the answer and told the model so
    assert "All your goals have been answered" in server.requests[-1].messages[0]["content"]
    assert user.goal_table is not None and user.goal_table[0].answered and "UPS" in user.goal_table[0].data


# -- any() items ---------------------------------------------------------------------------------


def test_parse_items_reads_lists_in_the_usual_shapes():
    assert parse_items('["Sprite", "Coke", "Sprite"]') == ["Sprite", "Coke"]
    assert parse_items('```json\n["a", "b"]\n```') == ["a", "b"]
    assert parse_items("Here are three sodas:\n1. Sprite\n2) Coke\n- Fanta.") == ["Sprite", "Coke", "Fanta"]
    assert parse_items("Sprite\nCoke\n\n7up") == ["Sprite", "Coke", "7up"]
    assert parse_items("Sprite, Coke and Fanta") == ["Sprite", "Coke", "Fanta"]
    assert parse_items("* 2.5\n* 3.") == ["2.5", "3."]
    assert parse_items("") == []


async def test_generate_any_items_fills_any_data_through_resolve_any_items(server):
    server.push_text("Sure! Here is a list:\n1. Fanta\n2. 7up\n3. Dr Pepper")
    profile = profile_from("- drink: {function: forward(), type: string, data: [Sprite, 'any(3 soda drinks)']}")
    resolved = await resolve_any_items(profile, functools.partial(generate_any_items, model_for(server)))
    assert resolved.variable("drink").values == ["Sprite", "Fanta", "7up", "Dr Pepper"]
    sent = server.requests[-1].messages
    assert sent[-1]["role"] == "user" and "3 soda drinks" in sent[-1]["content"]


# -- the factory ---------------------------------------------------------------------------------


def test_make_user_simulator_gives_offline_or_llm_users():
    spec = make_spec(THREE_GOALS)
    offline = make_user_simulator(spec)
    assert isinstance(offline, OfflineUser) and isinstance(offline, UserSimulator) and offline.name == "offline"
    llm = make_user_simulator(spec, MODEL, env={"FAKE_BASE_URL": "http://127.0.0.1:9/v1"})
    assert isinstance(llm, LLMUser) and isinstance(llm, UserSimulator) and llm.name == MODEL
    assert llm.config.temperature == spec.llm.temperature
    profile_model = make_user_simulator(spec, "profile")
    assert profile_model.name == "openai/gpt-4o"  # the profile's llm: block
    with pytest.raises(ConfigError):
        make_user_simulator(spec, "not a model")
