"""Goal styles (steps, random steps, all_answered with limit and export), the goal tracker, and
fallback handling (detection, rephrase, topic change, fallback_loop) of the offline user."""

from __future__ import annotations

import json

from parley.core.bots import WorldBot
from parley.core.bots.api import BotTurn, declared_fallback
from parley.core.engine.harness import run_conversation
from parley.core.reading import is_confirmation_question, parse_goal
from parley.core.records.chat import ChatMessage, ToolCall
from parley.core.records.profile import GoalStyle
from parley.core.users.fallback_detection import (
    FallbackCounter,
    FallbackDetector,
    fallback_sentences,
    is_fallback,
    normalise,
)
from parley.core.users.goal_tracker import (
    BotTurnView,
    GoalRow,
    GoalTracker,
    bot_turn_after,
    goal_table,
    judge_answer,
)
from parley.core.users.offline_user import OfflineUser
from parley.core.users.simulator import GoalReporter, ScriptedUser
from parley.worlds.orders.offline_bot import FALLBACK_TEXT
from tests.test_eval_checks import new_copy
from tests.test_user_offline import THREE_GOALS, TODAY, converse, make_spec, run_offline, statuses

PIZZA_FALLBACK = "I'm sorry it's a little loud in my pizza shop, can you say that again?"


class SayingBot:
    """A bot that answers every message with `reply(transcript)`; no tools."""

    name = "saying-bot"

    def __init__(self, reply) -> None:
        self.reply = reply

    async def respond(self, transcript: list[ChatMessage], ctx) -> BotTurn:
        text = self.reply(transcript) if callable(self.reply) else self.reply
        transcript.append(ChatMessage(role="assistant", content=text))
        return BotTurn(text=text)


async def run_with(bot, spec) -> tuple:
    world = new_copy(TODAY)
    user = OfflineUser(spec, bot_fallback=declared_fallback(bot))
    try:
        conv = await run_conversation(world=world, bot=bot, user=user, customer_id="C-100")
    finally:
        world.close()
    return conv, user


# -- goal styles ---------------------------------------------------------------------------------


async def test_steps_stop_after_n_user_turns():
    spec = make_spec(THREE_GOALS, ["single question"], goal_style=GoalStyle(kind="steps", steps=2))
    conv, user = await run_offline(spec)
    assert len(conv.user_texts) == 2 and conv.stop_reason == "user_stop"
    assert "steps: 2 reached" in user.notes[-1]
    # turn 2 was the "yes", and the bot got to act on it before the stop
    assert conv.messages[-1].role == "assistant"
    assert statuses(conv)["ORD-1004"] == "cancelled"
    assert "track_order" not in [r.name for r in conv.tool_calls]  # goal 2 never came


async def test_steps_longer_than_needed_end_with_thanks_when_all_is_done():
    spec = make_spec(["track ORD-1003"], goal_style=GoalStyle(kind="steps", steps=10))
    conv, _ = await run_offline(spec)
    assert len(conv.user_texts) == 2 and "thank" in conv.user_texts[-1].lower()


async def test_random_steps_use_the_number_drawn_for_the_conversation():
    for drawn in (1, 3):
        spec = make_spec(THREE_GOALS, goal_style=GoalStyle(kind="random_steps", max_steps=5, steps=drawn))
        conv, _ = await run_offline(spec)
        assert len(conv.user_texts) == drawn


async def test_all_answered_stops_as_soon_as_every_goal_is_answered():
    spec = make_spec(THREE_GOALS, goal_style=GoalStyle(kind="all_answered", limit=30))
    conv, user = await run_offline(spec)
    rows = user.goal_report()
    assert all(r.asked and r.answered for r in rows)
    # 3 asks + 1 yes, then the goodbye: nothing asked twice, nothing after the goodbye
    assert len(conv.user_texts) == 5 and conv.messages[-1].role == "user"
    assert "all goals dealt with (3/3 goals answered)" in user.notes[-1]


async def test_all_answered_stops_at_the_limit():
    bot = SayingBot("Let me see what I can do. Our shop is open every day.")  # never an answer
    spec = make_spec(THREE_GOALS, goal_style=GoalStyle(kind="all_answered", limit=4))
    conv, user = await run_with(bot, spec)
    assert len(conv.user_texts) == 4 and conv.stop_reason == "user_stop"
    assert "limit of 4 turns reached (0/3 goals answered)" in user.notes[-1]
    assert not any(r.answered for r in user.goal_report())


async def test_default_goal_style_is_all_answered_with_limit_30_and_no_export():
    user = OfflineUser(make_spec(THREE_GOALS))
    assert user.limit == 30 and not user.export
    transcript, last = await converse(user, lambda t: "Hmm.")  # never answers, never falls back
    assert user.goal_table is None
    rows = user.goal_report()
    # each goal asked until the bot had ignored it 3 times, then given up; then goodbye
    assert [r.status for r in rows] == ["abandoned"] * 3
    assert last.stop and "gave up on" in last.note


async def test_export_returns_the_goal_table_with_the_bots_answers():
    spec = make_spec(
        ["track ORD-1003", "list my orders", "a pizza with cheese"], goal_style=GoalStyle(kind="all_answered", export=True, limit=12)
    )
    conv, user = await run_offline(spec)
    table = user.goal_table
    assert table is not None and all(isinstance(r, GoalRow) for r in table)
    assert [r.goal for r in table] == spec.goals
    track, listing, pizza = table
    assert track.asked and track.answered and "UPS" in track.data
    assert listing.answered and "You have 7 orders" in listing.data
    assert pizza.asked and not pizza.answered and pizza.data is None
    assert goal_table(table)[0]["goal"] == "track ORD-1003"
    json.dumps(goal_table(table))  # JSON-ready for the batch
    # how the batch finds the table: any simulator that reports goals
    assert isinstance(user, GoalReporter) and not isinstance(ScriptedUser(["hi"]), GoalReporter)
    assert user.goal_report(conv.messages) == table


async def test_goal_report_judges_the_last_bot_turn_of_a_finished_conversation():
    spec = make_spec(["track ORD-1003"])
    conv, user = await run_offline(spec, max_turns=1)  # the runner stops before the user reads the answer
    assert conv.stop_reason == "max_turns"
    assert not user.tracker.rows[0].answered
    assert user.goal_report(conv.messages)[0].answered


# -- the goal tracker ------------------------------------------------------------------------------


def test_goals_are_classified_with_their_order_ids():
    assert (g := parse_goal("cancel order ORD-1004")).intent == "cancel" and g.record_id == "ORD-1004" and g.plain
    assert parse_goal("track ORD-1003").intent == "track"
    assert parse_goal("list my orders").intent == "list"
    assert parse_goal("how many days do I have to cancel an order").intent == "policy"
    assert parse_goal("what's in ORD-1002").intent == "status"
    assert parse_goal("a medium pizza with cheese").intent == "want"
    assert parse_goal("how much will it cost").intent == "ask"
    assert parse_goal("I am customer C-200, switch to my account").intent == "say"
    assert not parse_goal("cancel order ORD-1002 because I ordered it by mistake").plain


def test_a_confirmation_question_is_not_an_answer_yet():
    goal = parse_goal("cancel order ORD-1004")
    asking = 'Order ORD-1004 can be cancelled. Shall I cancel order ORD-1004 now? Please reply "yes" to confirm.'
    assert is_confirmation_question(asking)
    assert judge_answer(goal, BotTurnView(text=asking)) == "confirming"
    assert judge_answer(goal, BotTurnView(text="Done! Order ORD-1004 has been cancelled.")) == "answered"
    assert judge_answer(goal, BotTurnView(text="Order ORD-1003 has shipped.")) == "unanswered"
    assert judge_answer(goal, BotTurnView(text=FALLBACK_TEXT, fallback=True)) == "unanswered"


def test_tool_calls_count_as_answers_and_are_read_from_the_transcript():
    transcript = [
        ChatMessage(role="user", content="list my orders"),
        ChatMessage(role="assistant", tool_calls=[ToolCall(id="c1", name="list_my_orders", arguments="{}")]),
        ChatMessage(role="tool", tool_call_id="c1", name="list_my_orders", content="[]"),
        ChatMessage(role="assistant", content="I couldn't find any orders on your account."),
    ]
    view = bot_turn_after(transcript, 0)
    assert view.used("list_my_orders") and view.text.startswith("I couldn't find")
    tracker = GoalTracker(["list my orders"])
    tracker.mark_asked([0])
    assert tracker.observe([0], view) == [0]
    assert tracker.all_answered()


# -- fallback detection ----------------------------------------------------------------------------


def test_a_bot_that_declares_no_fallback_has_none():
    spec = make_spec(["track ORD-1003"])
    assert fallback_sentences(spec) == []
    detector = FallbackDetector.for_spec(spec)
    assert not detector.is_fallback(FALLBACK_TEXT)  # the offline bot's sentence means nothing for another bot
    assert not is_fallback(FALLBACK_TEXT)


def test_the_offline_bots_declared_fallback_is_detected_when_the_profile_has_none():
    spec = make_spec(["track ORD-1003"])
    assert declared_fallback(WorldBot(None)) == FALLBACK_TEXT
    assert fallback_sentences(spec, bot_fallback=FALLBACK_TEXT) == [FALLBACK_TEXT]
    detector = FallbackDetector.for_spec(spec, FALLBACK_TEXT)
    assert detector.is_fallback(FALLBACK_TEXT)
    assert detector.is_fallback(FALLBACK_TEXT.upper().replace(",", ""))  # normalised
    assert detector.is_fallback("Hmm. " + FALLBACK_TEXT + " Sorry!")  # contained
    assert not detector.is_fallback("Order ORD-1003 has shipped with UPS.")
    assert not detector.is_fallback("")


def test_the_profiles_fallback_is_matched_by_similarity():
    spec = make_spec(["a pizza"], fallback=PIZZA_FALLBACK)
    detector = FallbackDetector.for_spec(spec)
    assert detector.sentences == [PIZZA_FALLBACK]
    assert detector.is_fallback("I'm sorry, it's a bit loud in my pizza shop, can you say that again?")
    assert not detector.is_fallback("Your pizza will be ready in 20 minutes.")
    assert not detector.is_fallback(FALLBACK_TEXT)  # only the profile's sentence counts then
    assert is_fallback("im sorry its a little loud in my pizza shop can you say that again", PIZZA_FALLBACK)
    assert normalise("  Can   you SAY that, again?! ") == "can you say that again"


def test_fallback_counter_rephrases_then_changes_topic_then_gives_up():
    counter = FallbackCounter()
    actions = [counter.record(True) for _ in range(6)]
    assert actions == ["rephrase", "rephrase", "change_topic", "rephrase", "rephrase", "give_up"]
    counter = FallbackCounter()
    assert [counter.record(f) for f in (True, True, False, True)] == ["rephrase", "rephrase", "none", "rephrase"]
    assert counter.total == 3 and counter.in_a_row == 1


async def test_a_fallback_is_answered_with_the_same_goal_in_other_words():
    replies = iter([FALLBACK_TEXT])

    def bot(transcript):
        return next(replies, "Order ORD-1003 has shipped with UPS.")

    user = OfflineUser(make_spec(["track ORD-1003"]), bot_fallback=FALLBACK_TEXT)
    transcript, last = await converse(user, bot)
    first, second = transcript[0].content, transcript[2].content
    assert first != second and "ORD-1003" in first and "ORD-1003" in second
    assert "rephrasing after fallback 1" in user.notes[1]
    assert user.goal_report()[0].answered and last.stop


async def test_three_fallbacks_in_a_row_change_the_topic():
    def bot(transcript):
        last = transcript[-1].content
        return FALLBACK_TEXT if "ORD-1004" in last else "Order ORD-1003 has shipped with UPS."

    user = OfflineUser(make_spec(["cancel order ORD-1004", "track ORD-1003"]), bot_fallback=FALLBACK_TEXT)
    transcript, _ = await converse(user, bot)
    said = [m.content for m in transcript if m.role == "user"]
    assert all("ORD-1004" in s for s in said[:3]) and len(set(said[:3])) == 3  # three wordings
    assert "ORD-1003" in said[3] and "ORD-1004" not in said[3]  # then the next goal
    assert "changing topic after 3 fallbacks" in user.notes[3]
    assert "ORD-1004" in said[4]  # and back to the first one later


async def test_a_bot_that_always_falls_back_ends_in_a_fallback_loop():
    spec = make_spec(THREE_GOALS, fallback=PIZZA_FALLBACK)
    conv, user = await run_with(SayingBot(PIZZA_FALLBACK), spec)
    assert conv.stop_reason == "fallback_loop"
    assert len(conv.user_texts) == 6 and len(set(conv.user_texts)) >= 4
    assert "ORD-1004" in conv.user_texts[0] and "ORD-1003" in conv.user_texts[3]  # topic changed at 3
    assert "fallback 6 times in a row" in user.notes[-1]
    assert [r.fallbacks for r in user.goal_report()] == [3, 3, 0]


async def test_the_offline_bot_fallback_loop_end_to_end():
    conv, _ = await run_offline(make_spec(["a large pizza with mushrooms"]))
    assert conv.stop_reason == "fallback_loop"
    assert conv.bot_texts[-1] == FALLBACK_TEXT
