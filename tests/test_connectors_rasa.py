"""The rasa: connector against `parley serve-bot` running for real on loopback, and the reply
shapes of Rasa's REST channel (texts, buttons, images, custom payloads)."""

from __future__ import annotations

import asyncio
import datetime as dt

import pytest

from parley.core.bots.api import BotContext
from parley.core.bots.connectors.base import ConnectorError, aclose_connectors
from parley.core.bots.connectors.rasa import RasaConnector, render_rasa_reply
from parley.core.errors import ConfigError
from parley.core.records.chat import ChatMessage
from tests.connector_servers import serve_bot_process

TODAY = dt.date(2026, 11, 21)


@pytest.fixture(scope="module")
def served():
    with serve_bot_process() as bot:
        yield bot


def ctx(customer: str = "C-100") -> BotContext:
    return BotContext(customer_id=customer, today=TODAY)


async def say(bot, transcript, context, text):
    transcript.append(ChatMessage(role="user", content=text))
    return await bot.respond(transcript, context)


async def test_a_full_conversation_with_the_served_bot_keeps_its_context_and_times_each_turn(served):
    bot = RasaConnector(served.webhook)
    transcript: list[ChatMessage] = []
    context = ctx()
    try:
        first = await say(bot, transcript, context, "I want to cancel ORD-1002")
        second = await say(bot, transcript, context, "yes, please cancel it")
        third = await say(bot, transcript, context, "what is the status of ORD-1002?")
    finally:
        await aclose_connectors()
    assert "ORD-1002" in first.text
    assert "cancel" in second.text.lower()
    # The served World changed for this sender: the order is now cancelled.
    assert "cancelled" in third.text.lower()
    assert [m.role for m in transcript] == ["user", "assistant"] * 3
    assert all(t.latency_s > 0 for t in (first, second, third))
    assert context.session["rasa_sender"].startswith("parley-")


async def test_concurrent_conversations_get_their_own_sender_customer_and_world(served):
    bot = RasaConnector(served.webhook)
    try:
        a, b = ctx("C-100"), ctx("C-200")
        replies = await asyncio.gather(
            say(bot, [], a, "please list my orders"),
            say(bot, [], b, "please list my orders"),
        )
    finally:
        await aclose_connectors()
    assert a.session["rasa_sender"] != b.session["rasa_sender"]
    mine, theirs = replies[0].text, replies[1].text
    assert "ORD-1002" in mine and "ORD-1002" not in theirs  # each sender signed in as its customer
    assert mine != theirs


async def test_the_bot_opens_the_conversation_and_a_goodbye_ends_it(served):
    bot = RasaConnector(served.webhook)
    context = ctx()
    transcript: list[ChatMessage] = []
    try:
        opening = await bot.respond(transcript, context)  # no customer line yet: /session_start
        bye = await say(bot, transcript, context, "thanks, that's all, goodbye")
    finally:
        await aclose_connectors()
    assert opening.text and not opening.ends_conversation
    assert bye.ends_conversation  # serve-bot's custom end_conversation flag -> bot_stop
    assert "[END]" not in bye.text


def test_rich_replies_are_shown_as_text_one_part_a_line():
    text, ends = render_rasa_reply(
        [
            {"recipient_id": "u", "text": "How can I help?"},
            {
                "recipient_id": "u",
                "text": "Pick one:",
                "buttons": [{"title": "Track", "payload": "/track"}, {"title": "Cancel", "payload": "Cancel"}],
            },
            {"recipient_id": "u", "image": "https://example.com/map.png"},
            {"recipient_id": "u", "custom": {"card": "order", "end_conversation": True}},
        ]
    )
    assert text.splitlines() == [
        "How can I help?",
        "Pick one:",
        "[buttons: Track (/track) | Cancel]",
        "[image: https://example.com/map.png]",
        '[custom: {"card":"order"}]',
    ]
    assert ends is True
    assert render_rasa_reply([]) == ("", False)  # Rasa's "no answer"


def test_a_reply_that_is_not_a_list_of_messages_is_an_error_with_an_excerpt():
    with pytest.raises(ConnectorError, match=r"expected a JSON list of messages.*\"oops\""):
        render_rasa_reply({"oops": True})


@pytest.mark.parametrize("url", ["127.0.0.1:5005/webhooks/rest/webhook", "ftp://host/x", "http://user:pw@host/webhook"])
def test_a_bad_url_is_a_config_error(url):
    with pytest.raises(ConfigError):
        RasaConnector(url)
