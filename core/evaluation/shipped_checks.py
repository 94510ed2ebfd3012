"""The checks written in Python that parley ships, named without a module in `expect.python`
(`short_replies`, `no_repeated_reply`, `no_asking_again`). They use nothing but what a check of
yours gets (parley.core.evaluation.check_context, shown by `parley.api`), so they are examples
of the interface as well as checks:

    expect:
      python:
        - short_replies: {words: 60}     # every bot reply at most 60 words (default 80)
        - no_repeated_reply              # no reply the same as the bot's previous one
        - no_asking_again                # the bot never asks for what the customer already gave
"""

from __future__ import annotations

import re

from parley.core.evaluation.check_context import CheckAnswer, CheckedConversation, Message, failed, not_applicable, passed

__all__ = ["no_asking_again", "no_repeated_reply", "short_replies"]

DEFAULT_MAX_WORDS = 80


def _opening(text: str, words: int = 8) -> str:
    """The first words of a text, as a quote of it."""
    return " ".join(text.split()[:words])


def short_replies(conversation: CheckedConversation, words: int = DEFAULT_MAX_WORDS) -> CheckAnswer:
    """Every bot reply has at most `words` words; the longest one over is quoted."""
    replies = conversation.bot_replies
    if not replies:
        return not_applicable("the bot said nothing")
    counted = [(len(reply.text.split()), reply) for reply in replies]
    longest, reply = max(counted, key=lambda item: item[0])
    over = [r for n, r in counted if n > words]
    if over:
        more = f" ({len(over)} replies are)" if len(over) > 1 else ""
        return failed(f"a reply has {longest} words, more than {words}{more}", turn=reply.turn, quote=_opening(reply.text))
    return passed(f"every reply has at most {words} words (the longest {longest})")


def _plain(text: str) -> str:
    return " ".join(text.casefold().split())


def no_repeated_reply(conversation: CheckedConversation) -> CheckAnswer:
    """No bot reply says the same as the bot's previous one (case and spacing aside)."""
    replies = conversation.bot_replies
    if len(replies) < 2:
        return not_applicable("the bot replied fewer than twice")
    for before, reply in zip(replies, replies[1:], strict=False):
        if _plain(reply.text) == _plain(before.text):
            return failed(
                f"the bot said the same again (turns {before.turn} and {reply.turn})", turn=reply.turn, quote=_opening(reply.text)
            )
    return passed(f"none of its {len(replies)} replies repeats the one before")


_RECORD_ID = re.compile(r"(?<![\w-])(?:[A-Za-z]{1,5}-?\d{3,}|#[A-Za-z]?\d{4,})(?![\w-])")
"""A record's id as people write one on any world: a short prefix and digits (`ABC-1234`, `#W1234567`)."""
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.-]+")
_PHONE = re.compile(r"\+?\d[\d\s().-]{7,}\d")
_NAME = re.compile(r"\bmy name is\s+\w+", re.I)

# What a customer may give, how to see it in their words, and how to see the bot ask for it (a
# question: the same sentence ends with a question mark).
_INFORMATION: tuple[tuple[str, re.Pattern[str], re.Pattern[str]], ...] = (
    ("id", _RECORD_ID, re.compile(r"(?<!phone )(?<!mobile )(?<!telephone )\b(id|number)\b[^.!?]*\?", re.I)),
    ("email address", _EMAIL, re.compile(r"\be-?mail( address)?\b[^.!?]*\?", re.I)),
    ("phone number", _PHONE, re.compile(r"\b(phone|mobile|telephone) number\b[^.!?]*\?", re.I)),
    ("name", _NAME, re.compile(r"\byour (full )?name\b[^.!?]*\?", re.I)),
)


def _given(lines: list[Message], pattern: re.Pattern[str], turn: int) -> Message | None:
    """The first customer line up to turn `turn` (whose line comes before the bot's answers) in
    which they gave it."""
    return next((line for line in lines if line.turn <= turn and pattern.search(line.text)), None)


def _question(text: str, match: re.Match[str]) -> str:
    """The sentence of `text` that holds `match`, up to its question mark."""
    start = max(text.rfind(mark, 0, match.start()) for mark in ".!?\n") + 1
    return text[start : match.end()].strip()


def no_asking_again(conversation: CheckedConversation) -> CheckAnswer:
    """The bot never asks the customer for a record's id (an order's, a booking's, their customer
    id), email address, phone number or name that the customer already gave in an earlier turn (a question that restates it, asking
    to confirm, is not asking again)."""
    replies, lines = conversation.bot_replies, list(conversation.customer_lines)
    if not replies or not lines:
        return not_applicable("there is no exchange to look at")
    for reply in replies:
        for what, shape, asking in _INFORMATION:
            question = asking.search(reply.text)
            if question is None or shape.search(reply.text):
                continue
            given = _given(lines, shape, reply.turn)
            if given is not None:
                return failed(
                    f"the bot asked for the {what} in turn {reply.turn}, which the customer gave in turn {given.turn}",
                    turn=reply.turn,
                    quote=_question(reply.text, question),
                )
    return passed("the bot never asked for what the customer had already given")
