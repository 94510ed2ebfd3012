"""Fallback detection: did the bot answer with its "I didn't understand" sentence?

A reply is a fallback when, after normalising both texts (lower case, no punctuation, single
spaces), it is close to one of the fallback sentences: difflib similarity >= 0.8, or the whole
fallback sentence appears inside the reply (a bot that adds a line around it).

The sentences are the profile's `chatbot.fallback` when it has one, else the one the bot under
test declares (the offline order bot declares its own; a deployed or LLM bot declares none), else
none: a bot with no known fallback sentence never has a reply taken for one (see
`fallback_sentences`).

What a simulator does about fallbacks (`FallbackCounter`) counts fallbacks *in a row* (any reply
that is not a fallback resets the count):
- 1st and 2nd in a row: rephrase the same goal in other words;
- 3rd in a row (and every 3rd after it): change topic, i.e. move on to the next unanswered goal;
- 6th in a row: give up, the conversation ends with stop_reason "fallback_loop".
"In a row" rather than "in total" so that a bot that falls back now and then, but still makes
progress, is not cut off; the goal style's limit bounds everything else.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel

if TYPE_CHECKING:
    from parley.core.records import ConversationSpec

SIMILARITY_THRESHOLD = 0.8
TOPIC_CHANGE_AFTER = 3
LOOP_LIMIT = 6

FallbackAction = Literal["none", "rephrase", "change_topic", "give_up"]

_PUNCT = re.compile(r"[^\w\s]+", re.UNICODE)
_SPACES = re.compile(r"\s+")


def normalise(text: str | None) -> str:
    """Lower case, accents and punctuation removed, whitespace collapsed."""
    if not text:
        return ""
    text = unicodedata.normalize("NFKD", text.replace("\u2019", "'"))
    text = "".join(c for c in text if not unicodedata.combining(c)).lower()
    text = _PUNCT.sub(" ", text.replace("'", ""))
    return _SPACES.sub(" ", text).strip()


def fallback_sentences(spec: ConversationSpec | None = None, fallback: str | None = None, *, bot_fallback: str | None = None) -> list[str]:
    """The sentences that count as a fallback: `fallback` or the profile's, else the bot's
    declared one (`bot_fallback`), else none."""
    for text in (fallback if fallback is not None else (spec.fallback if spec is not None else None), bot_fallback):
        if text and text.strip():
            return [text.strip()]
    return []


class FallbackDetector:
    """Decides whether a bot reply is one of the given fallback sentences."""

    def __init__(self, sentences: Sequence[str], threshold: float = SIMILARITY_THRESHOLD) -> None:
        self.sentences = [s for s in sentences if s and s.strip()]
        self.threshold = threshold
        self._normalised = [normalise(s) for s in self.sentences]

    @classmethod
    def for_spec(cls, spec: ConversationSpec, bot_fallback: str | None = None) -> FallbackDetector:
        return cls(fallback_sentences(spec, bot_fallback=bot_fallback))

    def is_fallback(self, reply: str | None) -> bool:
        """True when `reply` is close to, or contains, a fallback sentence."""
        text = normalise(reply)
        if not text:
            return False
        for fb in self._normalised:
            if not fb:
                continue
            if len(fb) >= 10 and fb in text:
                return True
            matcher = difflib.SequenceMatcher(None, text, fb, autojunk=False)
            # cheap upper bounds first: most replies are nowhere near the fallback
            if (
                matcher.real_quick_ratio() >= self.threshold
                and matcher.quick_ratio() >= self.threshold
                and matcher.ratio() >= self.threshold
            ):
                return True
        return False


def is_fallback(reply: str | None, fallback: str | None = None, *, threshold: float = SIMILARITY_THRESHOLD) -> bool:
    """One-off check of `reply` against `fallback` (None: no fallback sentence, never a fallback)."""
    return FallbackDetector(fallback_sentences(fallback=fallback), threshold).is_fallback(reply)


class FallbackCounter(BaseModel):
    """Counts fallbacks and says what to do about the latest bot reply (see the module doc)."""

    in_a_row: int = 0
    total: int = 0
    topic_change_after: int = TOPIC_CHANGE_AFTER
    loop_limit: int = LOOP_LIMIT

    def record(self, fallback: bool) -> FallbackAction:
        """Record one bot reply and return the action it calls for."""
        if not fallback:
            self.in_a_row = 0
            return "none"
        self.in_a_row += 1
        self.total += 1
        if self.in_a_row >= self.loop_limit:
            return "give_up"
        if self.in_a_row % self.topic_change_after == 0:
            return "change_topic"
        return "rephrase"
