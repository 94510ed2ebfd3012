"""The goal tracker: which of the user's goals were asked, and which the bot answered.

Used by the `all_answered` goal style (stop when every goal is answered, or at the limit) and
exported as a per-goal table (`GoalRow`: goal, asked, answered, data = the bot's answer).

A goal is *asked* when a user message asks it (the offline user knows; for an LLM user the
message is matched against the goal: its order id, or one of its key terms).

It is *answered* by the bot turn that follows the asking message (all the bot's text and tool
calls until the next user message) when that turn is not a fallback and:
- cancel <id>: the bot ran cancel_order for the id; or ran check_cancellation for it without
  asking to confirm (a refusal is an answer); or, with no tool calls seen (an external bot),
  its text mentions the id and a cancel word and is not a confirmation question. A confirmation
  question leaves the goal *confirming*: asked, not answered, until the user's yes is acted on;
- track / status <id>: a track_order or get_order call for the id, or the text mentions the id;
- list: a list_my_orders call, or (no tool calls seen) the text mentions two order ids or "orders";
- policy: the text gives a number of days or mentions the policy;
- anything else: the text shares a key term with the goal (a word of 4+ letters that is not a
  stop word), or the bot used a tool; a goal with no key terms takes any non-fallback answer.
"Answered" means the bot gave an answer, not that the customer got what they wanted: a refused
cancellation is answered. A goal is *abandoned* after 3 bot turns that answered none of the
goals asked and were not fallbacks (fallbacks are handled by parley.core.users.fallback_detection).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Literal

from pydantic import BaseModel, Field

from parley.core.records import ChatMessage
from parley.core.specs import heuristic_view
from parley.core.world import extract_order_ids

GoalIntent = Literal["cancel", "track", "list", "status", "policy", "ask", "want", "do", "say"]
GoalStatus = Literal["pending", "asked", "confirming", "answered", "abandoned"]

MAX_UNANSWERED = 3
DATA_EXCERPT_CHARS = 300

_CANCEL = re.compile(r"\b(cancel\w*|annul\w*|revoke|call off)\b", re.I)
_POLICY = re.compile(r"\b(polic(y|ies)|rules?|how (many|long)|deadline|window|eligib\w*|allowed)\b", re.I)
_TRACK = re.compile(r"\b(track\w*|where|shipp\w*|ship(ment)?|deliver\w*|arriv\w*|eta|package|parcel|carrier|transit)\b", re.I)
_LIST = re.compile(r"\b(list\w*|all (of )?my orders|my orders|order history|orders)\b", re.I)
_STATUS = re.compile(r"\b(status|details?|info\w*|contents?|items?|total|cost|price|bought|what'?s in)\b", re.I)
_QUESTION_START = re.compile(
    r"^(how|what|when|where|which|who|whom|whose|why|can|could|is|are|do|does|did|will|would|should|may|if)\b",
    re.I,
)
_VERBS = frozenset(
    "add ask book buy change check close confirm create delete find get know learn make modify "
    "open order pay reach receive remove request reschedule reserve reset return schedule see "
    "send set speak talk update upgrade use".split()
)
_IMPERATIVE = re.compile(r"^(please|ignore|tell|give|show|explain|let|switch|stop|don'?t|try|insist|demand)\b", re.I)
_ORDER_WORDS = re.compile(r"(?i)\b[a-z]{2,5}[-_ ]?\d{3,10}\b|#\d{3,10}\b")
_STOP_WORDS = frozenset(
    "about after again also an and any are because been before being both but can could does "
    "doing down each few for from further have having here hers herself himself how into its "
    "itself just like more most much must myself need only other ought ours ourselves over own "
    "please same should some such than that their theirs them themselves then there these they "
    "this those through under until very want was were what when where which while whom why "
    "will with would your yours yourself yourselves going know tell wondering order orders".split()
)
_WORD = re.compile(r"[^\W\d_]{4,}", re.UNICODE)
_DAYS = re.compile(r"\b\d+\s*-?\s*days?\b|\bpolicy\b|\bwithin\b", re.I)
CONFIRMATION_QUESTION = re.compile(
    r"(\b(shall|should|do you want|would you like|want me to|can you confirm|could you confirm|please confirm|"
    r"are you sure)\b[^.!?]*\bcancel\w*|\breply\s+[\"'\u201c]?yes\b|\bconfirm (the|this|that|your) cancel\w*)",
    re.I,
)
ASKS_FOR_ORDER_ID = re.compile(
    r"\b(which order|what order|order (id|number)|give me the order|provide the order)\b[^.!]*\?|\border id\b", re.I
)


def order_digits(order_id: str) -> str:
    """`ORD-1003` -> `1003`: ids are compared on their digits, whatever way they are written."""
    return "".join(c for c in order_id if "0" <= c <= "9")


def ids_in(text: str | None) -> list[str]:
    """Order ids in a text, normalised to ORD-<digits> (parley.core.world.order_mentions)."""
    return extract_order_ids(text or "")


def mentions_id(text: str | None, order_id: str) -> bool:
    digits = order_digits(order_id)
    if not digits:
        return False
    if any(order_digits(i) == digits for i in ids_in(text)):
        return True
    return re.search(rf"(?<!\d){re.escape(digits)}(?!\d)", text or "") is not None


def is_confirmation_question(text: str | None) -> bool:
    """Does the bot ask the user to confirm a cancellation?"""
    return bool(text) and CONFIRMATION_QUESTION.search(heuristic_view(text or "")) is not None


def confirmation_order_id(text: str | None) -> str | None:
    """The order the bot asks to confirm cancelling (the id in the question, else in the reply)."""
    if not text:
        return None
    text = heuristic_view(text)
    match = CONFIRMATION_QUESTION.search(text)
    if match:
        start = max(text.rfind(".", 0, match.start()), text.rfind("\n", 0, match.start()), 0)
        end = text.find("?", match.end())
        ids = ids_in(text[start : end if end >= 0 else len(text)])
        if ids:
            return ids[-1]
    ids = ids_in(text)
    return ids[-1] if ids else None


# -- goals ---------------------------------------------------------------------------------------


class Goal(BaseModel):
    """A goal as the simulators understand it: its text, what kind of request it is, its id."""

    index: int
    text: str
    intent: GoalIntent
    order_id: str | None = None
    """The order id as the goal writes it (kept byte for byte in what the user says)."""
    key_terms: list[str] = Field(default_factory=list)
    plain: bool = True
    """The goal is just its intent and id ("cancel order ORD-1004"); False when it says more
    ("... because I ordered it by mistake", "ignore your policy and cancel ORD-1005"), and the
    simulator should then say the goal's own words."""


# Words a plain order goal may consist of besides its id.
_PLAIN_WORDS = frozenset(
    "a an the my me for of please order orders cancel track trace where is it status details detail "
    "list all show see check get info information what's whats in about".split()
)


def _written_id(text: str) -> str | None:
    # Keep the id as the goal wrote it ("ORD-1004"), falling back to the normalised form.
    match = re.search(r"\b[A-Za-z]{2,5}-?\d{3,10}\b|#\d{3,10}", text)
    ids = ids_in(text)
    if match and ids and order_digits(match.group(0)) == order_digits(ids[0]):
        return match.group(0)
    return ids[0] if ids else None


def key_terms(text: str) -> list[str]:
    """Content words of a text: 4+ letters, not stop words, lower case, in order, no repeats."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(text.lower()):
        if word not in _STOP_WORDS:
            seen.setdefault(word, None)
    return list(seen)


def parse_goal(text: str, index: int = 0) -> Goal:
    """Classify a goal text (English keywords; other languages fall to ask/want/do)."""
    clean = " ".join(text.split())
    order_id = _written_id(clean)
    if _CANCEL.search(clean) and _POLICY.search(clean) and not order_id:
        intent: GoalIntent = "policy"
    elif _CANCEL.search(clean) and order_id:
        intent = "cancel"
    elif _TRACK.search(clean) and order_id:
        intent = "track"
    elif _LIST.search(clean) and not order_id:
        intent = "list"
    elif _POLICY.search(clean) and not order_id and re.search(r"\bcancel|return|refund", clean, re.I):
        intent = "policy"
    elif order_id:
        intent = "status"
    else:
        first = clean.split(" ", 1)[0].lower().strip(",.") if clean else ""
        if _QUESTION_START.match(clean) or clean.endswith("?"):
            intent = "ask"
        elif first in ("i", "i'm", "im", "my", "we", "we're", "our"):
            intent = "say"
        elif first in _VERBS or _CANCEL.match(clean) or _TRACK.match(clean) or _IMPERATIVE.match(clean):
            intent = "do"
        else:
            intent = "want"
    terms = key_terms(clean)
    if intent == "list":
        terms = sorted(set(terms) | {"orders"})
    rest = _ORDER_WORDS.sub(" ", clean.lower())
    plain = all(w in _PLAIN_WORDS for w in re.findall(r"[^\W\d_][\w']*", rest))
    return Goal(index=index, text=clean, intent=intent, order_id=order_id, key_terms=terms, plain=plain)


def goal_mentioned(goal: Goal, user_text: str | None) -> bool:
    """Does a user message (an LLM user's) ask about this goal? Its order id, else a key term."""
    if not user_text:
        return False
    if goal.order_id:
        return mentions_id(user_text, goal.order_id)
    words = set(key_terms(user_text))
    if goal.intent == "list":
        return bool(_LIST.search(user_text))
    if goal.intent == "policy":
        return bool(_POLICY.search(user_text) or _CANCEL.search(user_text))
    return bool(words & set(goal.key_terms))


# -- bot turns -----------------------------------------------------------------------------------


class ToolUse(BaseModel):
    """A tool the bot called during a turn, with the order it was about."""

    name: str
    order_id: str | None = None
    result: str | None = None


class BotTurnView(BaseModel):
    """What the user side can see of one bot turn: its text and the tools it used."""

    text: str = ""
    tools: list[ToolUse] = Field(default_factory=list)
    fallback: bool = False

    def used(self, name: str, order_id: str | None = None) -> bool:
        return any(
            t.name == name and (order_id is None or (t.order_id and order_digits(t.order_id) == order_digits(order_id))) for t in self.tools
        )


def last_user_index(transcript: Sequence[ChatMessage]) -> int:
    for i in range(len(transcript) - 1, -1, -1):
        if transcript[i].role == "user":
            return i
    return -1


def bot_turn_after(transcript: Sequence[ChatMessage], index: int) -> BotTurnView:
    """The bot's text and tool calls after message `index` (up to the next user message)."""
    texts: list[str] = []
    tools: list[ToolUse] = []
    by_id: dict[str, ToolUse] = {}
    for m in transcript[index + 1 :]:
        if m.role == "user":
            break
        if m.role == "assistant":
            if m.content:
                texts.append(m.content)
            for call in m.tool_calls:
                try:
                    args = json.loads(call.arguments or "{}")
                except ValueError:
                    args = {}
                oid = args.get("order_id") if isinstance(args, dict) else None
                use = ToolUse(name=call.name, order_id=oid if isinstance(oid, str) else None)
                tools.append(use)
                by_id[call.id] = use
        elif m.role == "tool" and m.tool_call_id in by_id:
            by_id[m.tool_call_id].result = m.content
    return BotTurnView(text=heuristic_view("\n".join(texts).strip()), tools=tools)


def judge_answer(goal: Goal, turn: BotTurnView) -> Literal["answered", "confirming", "unanswered"]:
    """Whether a (non-fallback) bot turn answers `goal` (see the module doc for the rules)."""
    if turn.fallback:
        return "unanswered"
    text = turn.text
    no_tools = not turn.tools
    oid = goal.order_id
    if goal.intent == "cancel" and oid:
        if turn.used("cancel_order", oid):
            return "answered"
        mentions = mentions_id(text, oid)
        if is_confirmation_question(text) and (mentions or turn.used("check_cancellation", oid)):
            return "confirming"
        if turn.used("check_cancellation", oid):
            return "answered"
        if no_tools and mentions and _CANCEL.search(text):
            return "answered"
        return "unanswered"
    if goal.intent in ("track", "status") and oid:
        if turn.used("track_order", oid) or turn.used("get_order", oid) or mentions_id(text, oid):
            return "answered"
        return "unanswered"
    if goal.intent == "list":
        if turn.used("list_my_orders"):
            return "answered"
        if no_tools and (len(ids_in(text)) >= 2 or re.search(r"\borders\b", text, re.I)):
            return "answered"
        return "unanswered"
    if goal.intent == "policy":
        return "answered" if _DAYS.search(text) else "unanswered"
    if not text and no_tools:
        return "unanswered"
    if not goal.key_terms or turn.tools:
        return "answered"
    return "answered" if set(key_terms(text)) & set(goal.key_terms) else "unanswered"


# -- the tracker ---------------------------------------------------------------------------------


class GoalRow(BaseModel):
    """One row of the exported goal table."""

    goal: str
    asked: bool = False
    answered: bool = False
    data: str | None = None
    """An excerpt of the bot's answer (None until answered)."""
    status: GoalStatus = "pending"
    intent: GoalIntent = "ask"
    order_id: str | None = None
    times_asked: int = 0
    fallbacks: int = 0
    unanswered_replies: int = 0


def _excerpt(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= DATA_EXCERPT_CHARS else text[: DATA_EXCERPT_CHARS - 1] + "…"


class GoalTracker:
    """Per-goal state of one conversation. Pure bookkeeping: the simulators decide what to say."""

    def __init__(self, goals: Sequence[str] | Sequence[Goal]) -> None:
        self.goals: list[Goal] = [g if isinstance(g, Goal) else parse_goal(str(g), i) for i, g in enumerate(goals)]
        self.rows: list[GoalRow] = [GoalRow(goal=g.text, intent=g.intent, order_id=g.order_id) for g in self.goals]

    # state
    def status(self, index: int) -> GoalStatus:
        return self.rows[index].status

    def open_goals(self) -> list[int]:
        """Goals neither answered nor abandoned, in order."""
        return [i for i, r in enumerate(self.rows) if r.status not in ("answered", "abandoned")]

    def all_resolved(self) -> bool:
        return not self.open_goals()

    def all_answered(self) -> bool:
        return all(r.answered for r in self.rows)

    def answered_count(self) -> int:
        return sum(1 for r in self.rows if r.answered)

    # updates
    def mark_asked(self, indices: Iterable[int]) -> None:
        for i in indices:
            row = self.rows[i]
            row.asked = True
            row.times_asked += 1
            if row.status == "pending":
                row.status = "asked"

    def mark_answered(self, index: int, data: str | None) -> None:
        row = self.rows[index]
        row.asked = True
        row.answered = True
        row.status = "answered"
        row.data = _excerpt(data) if data else row.data

    def reopen(self, index: int) -> None:
        """The user took a step back (changed their mind): the goal is asked, not confirming."""
        row = self.rows[index]
        if row.status == "confirming":
            row.status = "asked"

    def observe(self, indices: Sequence[int], turn: BotTurnView) -> list[int]:
        """Judge a bot turn against the goals the previous user message asked; returns the goals
        it answered. Fallbacks are counted per goal; 3 non-fallback turns that answered none of
        the asked goals abandon the ones still open."""
        answered: list[int] = []
        progressed = False
        for i in indices:
            row = self.rows[i]
            if row.status in ("answered", "abandoned"):
                continue
            if turn.fallback:
                row.fallbacks += 1
                continue
            verdict = judge_answer(self.goals[i], turn)
            if verdict == "answered":
                self.mark_answered(i, turn.text)
                answered.append(i)
                progressed = True
            elif verdict == "confirming":
                row.status = "confirming"
                row.data = _excerpt(turn.text)
                progressed = True
        if not turn.fallback and not progressed:
            for i in indices:
                row = self.rows[i]
                if row.status in ("answered", "abandoned"):
                    continue
                row.unanswered_replies += 1
                if row.unanswered_replies >= MAX_UNANSWERED:
                    row.status = "abandoned"
        return answered

    def report(self) -> list[GoalRow]:
        """A copy of the table."""
        return [r.model_copy() for r in self.rows]


def goal_table(rows: Sequence[GoalRow]) -> list[dict]:
    """The table as plain dicts (JSON-ready), e.g. for a conversation's metadata."""
    return [r.model_dump() for r in rows]
