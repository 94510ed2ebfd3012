"""Goals as the simulated customers and the checks understand them: what kind of request a
goal is (cancel, track, list, status, policy, keep, or a free request), the record it names, its
key terms, and whether a customer's message asks about it.

Goals are read on the conversation's world: its ids name a goal's record, and a kind of request
(track, status, list, policy, cancel, keep) is read only on a world whose tools answer it (its
`goal_tools`, parley.core.world.hooks: the order world's); on any other world a goal is a free
request (ask, want, do, say) that may still name a record.

`keep` is a change of mind: ask to cancel an order, then take it back and keep it ("cancel order
ORD-1004, then say you changed your mind and want to keep it"). Written as a goal of its own
after the cancellation ("then say you changed your mind and keep it"), it names no order:
`parse_goals` gives it the order of the goal before it, and `takes_back` that goal's index."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field

from parley.core.reading.record_names import mentions_id, reading_world, records_in, same_id
from parley.core.reading.requests import CANCEL_WORDS, LIST_WORDS, POLICY_WORDS, TRACK_WORDS
from parley.core.world import WorldDefinition, goal_tools

__all__ = ["Goal", "GoalIntent", "goal_mentioned", "key_terms", "parse_goal", "parse_goals"]

GoalIntent = Literal["cancel", "track", "list", "status", "policy", "keep", "ask", "want", "do", "say"]

_QUESTION_START = re.compile(
    r"^(how|what|when|where|which|who|whom|whose|why|can|could|is|are|do|does|did|will|would|should|may|if)\b",
    re.I,
)
_IMPERATIVE = re.compile(r"^(please|ignore|tell|give|show|explain|let|switch|stop|don'?t|try|insist|demand)\b", re.I)
# A change of mind, and keeping the order: together (or keeping with a cancellation) a goal is `keep`.
_CHANGED_MIND = re.compile(r"\b(chang\w* (your|my|their|his|her) mind|thinks? better of it|thought better of it|on second thought)\b", re.I)
_KEEP_IT = re.compile(
    r"\b(keep(ing)?|hold(ing)? on to) (it|them|the order|this order|that order|my order|your order|the items?|order \S+)\b", re.I
)
_ID_WORDS = re.compile(r"(?i)\b[a-z]{2,5}[-_ ]?\d{3,10}\b|#\d{3,10}\b")
_WRITTEN_ID = re.compile(r"\b[A-Za-z]{2,5}-?\d{3,10}\b|#\d{3,10}|\b[A-Za-z]{2,5}-[A-Za-z0-9]{2,10}\b")
_WORD = re.compile(r"[^\W\d_]{4,}", re.UNICODE)
_VERBS = frozenset(
    "add ask book buy change check close confirm create delete find get know learn make modify "
    "open order pay reach receive remove request reschedule reserve reset return schedule see "
    "send set speak talk update upgrade use".split()
)
_STOP_WORDS = frozenset(
    "about after again also an and any are because been before being both but can could does "
    "doing down each few for from further have having here hers herself himself how into its "
    "itself just like more most much must myself need only other ought ours ourselves over own "
    "please same should some such than that their theirs them themselves then there these they "
    "this those through under until very want was were what when where which while whom why "
    "will with would your yours yourself yourselves going know tell wondering order orders".split()
)


class Goal(BaseModel):
    """A goal as the simulators understand it: its text, what kind of request it is, its record."""

    index: int
    text: str
    intent: GoalIntent
    record_id: str | None = None
    """The id of the record it names, as the goal writes it (kept byte for byte in what the user says)."""
    record_table: str | None = None
    """The table of that record."""
    key_terms: list[str] = Field(default_factory=list)
    plain: bool = True
    """The goal is just its intent and id ("cancel order ORD-1004"); False when it says more
    ("... because I ordered it by mistake", "ignore your policy and cancel ORD-1005"), and the
    simulator should then say the goal's own words."""
    takes_back: int | None = None
    """For a `keep` goal written after the cancellation it takes back: that goal's index."""


# Words a plain goal of a kind the world's tools answer may consist of besides its id.
_PLAIN_WORDS = frozenset(
    "a an the my me for of please order orders cancel track trace where is it status details detail "
    "list all show see check get info information what's whats in about".split()
)


def _written_id(text: str, world: WorldDefinition | None) -> tuple[str, str] | None:
    """(table, id) of the first record the text names, the id kept as the goal wrote it ("ORD-1004"),
    else as the world reads it."""
    found = records_in(text, world)
    if not found:
        return None
    table, key = found[0]
    for match in _WRITTEN_ID.finditer(text):
        if same_id(match.group(0), key, world):
            return table, match.group(0)
    return table, key


def key_terms(text: str) -> list[str]:
    """Content words of a text: 4+ letters, not stop words, lower case, in order, no repeats."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(text.lower()):
        if word not in _STOP_WORDS:
            seen.setdefault(word, None)
    return list(seen)


def parse_goal(text: str, index: int = 0, world: WorldDefinition | None = None) -> Goal:
    """Classify a goal text (English keywords; other languages fall to ask/want/do) on `world`
    (the default world when None): see the module doc."""
    world = reading_world(world)
    kinds = set(goal_tools(world))
    clean = " ".join(text.split())
    written = _written_id(clean, world)
    record_id = written[1] if written else None
    cancelling = "cancel" in kinds and CANCEL_WORDS.search(clean) is not None
    keeping = _KEEP_IT.search(clean) is not None
    intent: GoalIntent
    if "keep" in kinds and ((_CHANGED_MIND.search(clean) and (keeping or cancelling)) or (cancelling and keeping)):
        intent = "keep"
    elif "policy" in kinds and cancelling and POLICY_WORDS.search(clean) and not record_id:
        intent = "policy"
    elif cancelling and record_id:
        intent = "cancel"
    elif "track" in kinds and TRACK_WORDS.search(clean) and record_id:
        intent = "track"
    elif "list" in kinds and LIST_WORDS.search(clean) and not record_id:
        intent = "list"
    elif "policy" in kinds and POLICY_WORDS.search(clean) and not record_id and re.search(r"\bcancel|return|refund", clean, re.I):
        intent = "policy"
    elif "status" in kinds and record_id:
        intent = "status"
    else:
        intent = _free_intent(clean)
    terms = key_terms(clean)
    rest = _ID_WORDS.sub(" ", clean.lower())
    plain = all(w in _PLAIN_WORDS for w in re.findall(r"[^\W\d_][\w']*", rest))
    return Goal(
        index=index,
        text=clean,
        intent=intent,
        record_id=record_id,
        record_table=written[0] if written else None,
        key_terms=terms,
        plain=plain,
    )


def _free_intent(clean: str) -> GoalIntent:
    """A free request: a question, a statement about the customer, an instruction, or a thing wanted."""
    first = clean.split(" ", 1)[0].lower().strip(",.") if clean else ""
    if _QUESTION_START.match(clean) or clean.endswith("?"):
        return "ask"
    if first in ("i", "i'm", "im", "my", "we", "we're", "our"):
        return "say"
    if first in _VERBS or CANCEL_WORDS.match(clean) or TRACK_WORDS.match(clean) or _IMPERATIVE.match(clean):
        return "do"
    return "want"


def parse_goals(texts: Sequence[str], world: WorldDefinition | None = None) -> list[Goal]:
    """Each goal parsed on `world`; a `keep` goal that names no record takes back the
    cancellation goal before it, when the nearest goal before it that names a record is one (its
    record, and `takes_back`: its index)."""
    world = reading_world(world)
    goals = [parse_goal(text, i, world) for i, text in enumerate(texts)]
    for i, goal in enumerate(goals):
        if goal.intent != "keep" or goal.record_id is not None:
            continue
        before = next((g for g in reversed(goals[:i]) if g.record_id is not None), None)
        if before is not None and before.intent == "cancel":
            goals[i] = goal.model_copy(
                update={"record_id": before.record_id, "record_table": before.record_table, "takes_back": before.index}
            )
    return goals


def goal_mentioned(goal: Goal, user_text: str | None, world: WorldDefinition | None = None) -> bool:
    """Does a user message (an LLM user's) ask about this goal? Its record's id, else a key term."""
    if not user_text:
        return False
    if goal.record_id:
        return mentions_id(user_text, goal.record_id, world)
    words = set(key_terms(user_text))
    if goal.intent == "list":
        return bool(LIST_WORDS.search(user_text))
    if goal.intent == "policy":
        return bool(POLICY_WORDS.search(user_text) or CANCEL_WORDS.search(user_text))
    return bool(words & set(goal.key_terms))
