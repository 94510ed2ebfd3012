"""A goal in the customer's own words: goals are written as instructions to the customer ("say
you changed your mind", "ask whether the shop delivers on Sundays", "tell the bot you are in a
hurry", "then ..."); the offline customer says what they ask of it, in the first person ("I
changed my mind.", "Could you tell me whether the shop delivers on Sundays?", "I am in a
hurry."), never the instruction spliced into a sentence.

`own_words(text)` gives that sentence, or None when the goal is not written as an instruction to
the customer (a noun phrase, a request for the bot, a question): the phrasebook's sentences say
those (parley.core.users.phrasebook). `without_lead(text)` drops a leading "then", "and",
"also", ... that only orders the goals. English only: goals in other languages are left as
written.
"""

from __future__ import annotations

import re

__all__ = ["own_words", "without_lead"]

_LEAD = re.compile(
    r"^\s*(?:(?:and\s+)?then|and|also|after\s+that|afterwards|finally|first(?:ly)?|next|lastly|at\s+the\s+end|in\s+the\s+end)\b[\s,:]*",
    re.I,
)
_BOT = r"(?:the\s+(?:bot|agent|assistant|chatbot|chat\s*bot|operator|shop|company|support(?:\s+agent)?)|them|it|him|her)"
_THAT = r"(?:that\s+)?"
_QUESTION_WORDS = r"(?:whether|if|what|when|where|which|who|whom|whose|why|how(?:\s+(?:much|many|long|often|soon))?)"

# (pattern, how the rest is said); `{rest}` is the rest of the goal in the first person.
_FORMS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.I | re.S), form)
    for pattern, form in (
        (rf"^ask\s+(?:{_BOT}\s+)?(?P<w>{_QUESTION_WORDS})\s+(?P<rest>.+)$", "Could you tell me {w} {rest}?"),
        (rf"^ask\s+(?:{_BOT}\s+)?to\s+(?P<rest>.+)$", "Could you {rest}?"),
        (rf"^ask\s+(?:{_BOT}\s+)?for\s+(?P<rest>.+)$", "Could I get {rest}, please?"),
        (rf"^ask\s+(?:{_BOT}\s+)?about\s+(?P<rest>.+)$", "I have a question about {rest}."),
        (rf"^(?:tell|remind)\s+{_BOT}\s+to\s+(?P<rest>.+)$", "Please {rest}."),
        (
            rf"^(?:say|tell\s+{_BOT}|explain(?:\s+to\s+{_BOT})?|mention|state|claim|reply|answer|admit|point\s+out|remind\s+{_BOT})\s+{_THAT}(?P<rest>.+)$",
            "{Rest}.",
        ),
        (r"^insist\s+on\s+(?P<rest>.+)$", "I really need {rest}."),
        (rf"^insist\s+{_THAT}(?P<rest>.+)$", "I insist: {rest}."),
        (r"^complain\s+about\s+(?P<rest>.+)$", "I want to complain about {rest}."),
        (rf"^complain\s+{_THAT}(?P<rest>.+)$", "I want to complain: {rest}."),
        (r"^pretend\s+to\s+be\s+(?P<rest>.+)$", "I am {rest}."),
        (rf"^pretend\s+{_THAT}(?P<rest>.+)$", "{Rest}."),
        (r"^refuse\s+to\s+(?P<rest>.+)$", "I'd rather not {rest}."),
        (r"^(?:try|attempt|want|wish|hope)\s+to\s+(?P<rest>.+)$", "I'd like to {rest}."),
        (r"^to\s+(?P<rest>.+)$", "I'd like to {rest}."),
        (r"^(?P<rest>you(?:'re|'ve|'d|'ll)?\s+.+)$", "{Rest}."),
    )
)

# The customer's "you" becomes "I" (as a subject) or "me"; the bot (named "the bot", "the
# agent"...) becomes "you".
_SUBJECT_BEFORE = re.compile(
    r"(^\s*$|\b(?:that|and|but|or|so|because|if|when|whether|then|as|since|until|unless|while)\s*$|[,;:]\s*$)", re.I
)
_SWAPS = {
    "you're": "I'm",
    "you've": "I've",
    "you'll": "I'll",
    "you'd": "I'd",
    "your": "my",
    "yours": "mine",
    "yourself": "myself",
}
_WORDS = re.compile(
    r"\b(?:the\s+(?:bot|agent|assistant|chatbot)'s|the\s+(?:bot|agent|assistant|chatbot)|you\s+are|you\s+were|are\s+you"
    r"|you(?:'re|'ve|'ll|'d)?|your(?:s|self)?)\b",
    re.I,
)


def without_lead(text: str) -> str:
    """The goal without a leading word that only orders it ("then", "and", "also", ...)."""
    stripped = _LEAD.sub("", text, count=1).strip()
    return stripped or text.strip()


def _first_person(text: str) -> str:
    def swap(match: re.Match[str]) -> str:
        word = match.group(0)
        lower = " ".join(word.lower().split())
        if lower.startswith("the "):
            return "your" if lower.endswith("'s") else "you"
        if lower == "you are":
            return "I am"
        if lower == "you were":
            return "I was"
        if lower == "are you":
            return "am I"
        if lower in _SWAPS:
            return _SWAPS[lower]
        # a bare "you": the subject of what follows, or the object of what comes before
        return "I" if _SUBJECT_BEFORE.search(text[: match.start()]) else "me"

    return _WORDS.sub(swap, text)


def own_words(text: str) -> str | None:
    """What an instruction to the customer asks them to say, as their own sentence; None when
    the goal is not written as one (see the module doc)."""
    goal = " ".join(without_lead(text).split()).rstrip(" .!?;,")
    for pattern, form in _FORMS:
        match = pattern.match(goal)
        if match is None:
            continue
        rest = _first_person(match.group("rest").strip())
        if not rest:
            return None
        fields = {"rest": rest, "Rest": rest[:1].upper() + rest[1:], "w": (match.groupdict().get("w") or "").lower()}
        sentence = form.format(**fields)
        return sentence[:1].upper() + sentence[1:]
    return None
