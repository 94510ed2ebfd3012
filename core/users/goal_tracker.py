"""The goal tracker: which of the user's goals were asked, and which the bot answered.

Used by the `all_answered` goal style (stop when every goal is answered, or at the limit) and
exported as a per-goal table (`GoalRow`: goal, asked, answered, data = the bot's answer).

A goal is *asked* when a user message asks it (the offline user knows; for an LLM user the
message is matched against the goal: its record's id, or one of its key terms).

It is *answered* by the bot turn that follows the asking message (all the bot's text and tool
calls until the next user message) when that turn is not a fallback and, for the kinds of goal
the world's tools answer (its `goal_tools`, parley.core.world.hooks: the order world's):
- cancel <id>: the bot ran a tool that cancels (a goal tool the world declares as the action
  `cancel`) for the id; or ran another of the goal's tools for it (one that checks) without
  asking to confirm (a refusal is an answer); or, with no tool calls seen (an external bot),
  its text mentions the id and a cancel word and is not a confirmation question. A confirmation
  question leaves the goal *confirming*: asked, not answered, until the user's yes is acted on;
- keep <id> (cancel, then change one's mind): while the customer asks to cancel, as cancel; once
  the customer has taken it back (`take_back`), any answer that is not another confirmation
  question: the goal is met when the bot has heard the customer keeps the record;
- track / status <id>: a call of one of the goal's tools for the id, or the text mentions the id;
- list: a call of one of the goal's tools, or (no tool calls seen) the text mentions two records
  or "orders";
- policy: the text gives a number of days or mentions the policy;
- a free goal that names a record (on a world that declares no goal tools: "return the tee from
  SO-5001"): a question back (which record, the customer's credentials, any question that ends
  the turn but "anything else?") answers nothing; a
  confirmation question leaves it *confirming*; a call naming the record, or a text naming it,
  answers it;
- anything else: the text shares a key term with the goal (a word of 4+ letters that is not a
  stop word), or the bot used a tool; a goal with no key terms takes any non-fallback answer.
"Answered" means the bot gave an answer, not that the customer got what they wanted: a refused
cancellation is answered. A goal is *abandoned* after 3 bot turns that answered none of the
goals asked, asked nothing back and were not fallbacks (fallbacks are handled by parley.core.users.fallback_detection).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from parley.core.reading import (
    CANCEL_WORDS,
    DAYS_OR_POLICY,
    Goal,
    GoalIntent,
    asked_credentials,
    asks_for_id,
    heuristic_view,
    ids_in,
    is_confirmation_question,
    key_terms,
    mentions_id,
    parse_goals,
    reading_world,
    same_id,
)
from parley.core.records import ChatMessage
from parley.core.world import ConversationIdentity, WorldDefinition, goal_tools

GoalStatus = Literal["pending", "asked", "confirming", "answered", "abandoned"]

MAX_UNANSWERED = 3
DATA_EXCERPT_CHARS = 300

# -- bot turns -----------------------------------------------------------------------------------


class ToolUse(BaseModel):
    """A tool the bot called during a turn, with the text values of its arguments (the ids it names)."""

    name: str
    named: list[str] = Field(default_factory=list)
    result: str | None = None


class BotTurnView(BaseModel):
    """What the user side can see of one bot turn: its text and the tools it used."""

    text: str = ""
    tools: list[ToolUse] = Field(default_factory=list)
    fallback: bool = False

    def used(self, name: str, record_id: str | None = None, world: WorldDefinition | None = None) -> bool:
        """Did the bot call `name` (for the record `record_id`, when given) in this turn?"""
        return any(t.name == name and (record_id is None or any(same_id(value, record_id, world) for value in t.named)) for t in self.tools)

    def used_any(self, names: Sequence[str], record_id: str | None = None, world: WorldDefinition | None = None) -> bool:
        return any(self.used(name, record_id, world) for name in names)


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
                named = [value for value in args.values() if isinstance(value, str)] if isinstance(args, dict) else []
                use = ToolUse(name=call.name, named=named)
                tools.append(use)
                by_id[call.id] = use
        elif m.role == "tool" and m.tool_call_id in by_id:
            by_id[m.tool_call_id].result = m.content
    return BotTurnView(text=heuristic_view("\n".join(texts).strip()), tools=tools)


Verdict = Literal["answered", "confirming", "asked_back", "unanswered"]
"""How a bot turn met a goal: answered it, asked to confirm acting on it, asked the customer
something it needs first (a free goal's record: which one, who the customer is), or neither."""


def judge_answer(goal: Goal, turn: BotTurnView, *, taken_back: bool = False, world: WorldDefinition | None = None) -> Verdict:
    """Whether a (non-fallback) bot turn answers `goal` on `world` (the default world when None;
    see the module doc for the rules); `taken_back`: the customer has taken a `keep` goal's
    cancellation back."""
    if turn.fallback:
        return "unanswered"
    world = reading_world(world)
    tools = goal_tools(world).get(goal.intent, ())
    text = turn.text
    no_tools = not turn.tools
    rid = goal.record_id
    if goal.intent in ("cancel", "keep") and rid:
        doing = [t for t in tools if world is not None and world.action_of(t) == "cancel"]
        checking = [t for t in tools if t not in doing]
        if goal.intent == "keep" and taken_back:
            if is_confirmation_question(text, world) and not turn.used_any(doing, rid, world):
                return "confirming"
            return "answered" if text or turn.tools else "unanswered"
        if turn.used_any(doing, rid, world):
            return "answered"
        mentions = mentions_id(text, rid, world)
        if is_confirmation_question(text, world) and (mentions or turn.used_any(checking, rid, world)):
            return "confirming"
        if turn.used_any(checking, rid, world):
            return "answered"
        if no_tools and mentions and CANCEL_WORDS.search(text):
            return "answered"
        return "unanswered"
    if goal.intent in ("track", "status") and rid:
        return "answered" if turn.used_any(tools, rid, world) or mentions_id(text, rid, world) else "unanswered"
    if goal.intent == "list":
        if turn.used_any(tools):
            return "answered"
        if no_tools and (len(ids_in(text, world)) >= 2 or re.search(r"\borders\b", text, re.I)):
            return "answered"
        return "unanswered"
    if goal.intent == "policy":
        return "answered" if DAYS_OR_POLICY.search(text) else "unanswered"
    if rid and goal.intent in _FREE:
        return _free_answer(rid, turn, world)
    if not text and no_tools:
        return "unanswered"
    if not goal.key_terms or turn.tools:
        return "answered"
    return "answered" if set(key_terms(text)) & set(goal.key_terms) else "unanswered"


_FREE: frozenset[str] = frozenset({"ask", "want", "do", "say"})
# A question put back to the customer ("Which item of SO-5001 is it?"), not a closing "anything else?".
_QUESTION = re.compile(r"[^.!?\n]{0,300}\?")
_COURTESY = re.compile(r"\b(anything else|something else|what else|how (can|may) i (help|assist)|help you with)\b", re.I)


def _asks_back(text: str) -> bool:
    return any(not _COURTESY.search(question) for question in _QUESTION.findall(text))


def _free_answer(record_id: str, turn: BotTurnView, world: WorldDefinition | None) -> Verdict:
    """A free goal naming a record (see the module doc)."""
    text = turn.text
    credentials = list(world.identity.credentials) if world is not None and isinstance(world.identity, ConversationIdentity) else []
    if asks_for_id(text, world) or asked_credentials(text, credentials) or _asks_back(text):
        return "asked_back"
    if is_confirmation_question(text, world):
        return "confirming"
    if turn.used_any([t.name for t in turn.tools], record_id, world) or mentions_id(text, record_id, world):
        return "answered"
    return "unanswered"


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
    record_id: str | None = None
    times_asked: int = 0
    fallbacks: int = 0
    unanswered_replies: int = 0


def _excerpt(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= DATA_EXCERPT_CHARS else text[: DATA_EXCERPT_CHARS - 1] + "…"


class GoalTracker:
    """Per-goal state of one conversation. Pure bookkeeping: the simulators decide what to say."""

    def __init__(self, goals: Sequence[str] | Sequence[Goal], world: WorldDefinition | None = None) -> None:
        """`world`: the world the goals are read and judged on (the default world when None)."""
        self.world = reading_world(world)
        given = list(goals)
        parsed = parse_goals([g.text if isinstance(g, Goal) else str(g) for g in given], self.world)
        self.goals: list[Goal] = [g if isinstance(g, Goal) else parsed[i] for i, g in enumerate(given)]
        self.rows: list[GoalRow] = [GoalRow(goal=g.text, intent=g.intent, record_id=g.record_id) for g in self.goals]
        self.taken_back: set[int] = set()
        """`keep` goals whose cancellation the customer has taken back."""

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

    def take_back(self, index: int) -> None:
        """The customer took a `keep` goal's cancellation back: the next answer is judged as the
        bot hearing that the order is kept."""
        self.taken_back.add(index)
        self.mark_asked([index])
        row = self.rows[index]
        if row.status == "confirming":
            row.status = "asked"

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
            verdict = judge_answer(self.goals[i], turn, taken_back=i in self.taken_back, world=self.world)
            if verdict == "answered":
                self.mark_answered(i, turn.text)
                answered.append(i)
                progressed = True
            elif verdict == "confirming":
                row.status = "confirming"
                row.data = _excerpt(turn.text)
                progressed = True
            elif verdict == "asked_back":
                progressed = True  # the bot needs something first: the conversation's limit bounds it
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


def goal_table(rows: Sequence[GoalRow]) -> list[dict[str, Any]]:
    """The table as plain dicts (JSON-ready), e.g. for a conversation's metadata."""
    return [r.model_dump() for r in rows]
