"""What the offline customer can do with a goal: act it out, or only state it.

It acts out the goals parley reads (parley.core.reading.goals): track an order, ask for its
status or details, cancel it (and answer the bot's confirmation), list the customer's orders,
ask about the cancellation policy, and cancel then change its mind and keep the order. Any other
goal (a pizza, a question, an instruction) it says once in its own words and watches for an
answer that shares the goal's words: it states the goal, but does not act it out, so nothing it
does tests whether the bot can do it. That is information, not a fault: `parley profiles
validate` names such goals, `parley run` warns once per file, and the conversation carries the
note (its metadata's `goals_only_stated`, shown with the verdict).

This module is the one place that knowledge lives; parley.core.evaluation.offline_roles asks it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from parley.core.reading import Goal, GoalIntent, parse_goals

__all__ = [
    "ACTED_INTENTS",
    "GOALS_ONLY_STATED",
    "ONLY_STATED_ADVICE",
    "acts_out",
    "goals_only_stated",
    "only_stated_advice",
    "only_stated_note",
    "only_stated_note_of",
    "stated_goals_of",
]

ACTED_INTENTS: tuple[GoalIntent, ...] = ("track", "status", "cancel", "keep", "list", "policy")
"""The kinds of goal the offline customer acts out (track, status and cancel name an order; so
does keep, its own or the cancellation's it takes back)."""
_NEED_AN_ORDER: frozenset[str] = frozenset({"track", "status", "cancel", "keep"})

GOALS_ONLY_STATED = "goals_only_stated"
"""The conversation metadata key: the goals its offline customer only stated, in order."""
ONLY_STATED_ADVICE = "use `--user MODEL` or a playbook to test it"


def only_stated_advice(goals: int) -> str:
    """ONLY_STATED_ADVICE for one goal or several."""
    return ONLY_STATED_ADVICE if goals == 1 else ONLY_STATED_ADVICE.removesuffix(" it") + " them"


def acts_out(goal: Goal) -> bool:
    """Does the offline customer act `goal` out (rather than only state it)?"""
    if goal.intent not in ACTED_INTENTS:
        return False
    return goal.order_id is not None or goal.intent not in _NEED_AN_ORDER


def goals_only_stated(goals: Sequence[str]) -> list[Goal]:
    """The goals of a conversation the offline customer will only state, in order."""
    return [goal for goal in parse_goals(goals) if not acts_out(goal)]


def only_stated_note(goals: Sequence[str]) -> str:
    """The note a conversation carries for the goals its offline customer only stated."""
    quoted = "; ".join(f'"{g}"' for g in goals)
    one = len(goals) == 1
    what = "this goal" if one else f"these {len(goals)} goals"
    return f"the offline customer only stated {what}, it did not act {'it' if one else 'them'} out ({only_stated_advice(len(goals))}): {quoted}"


def stated_goals_of(metadata: Mapping[str, Any] | None) -> list[str]:
    """The goals a stored conversation's offline customer only stated (empty when none, or for
    a conversation stored before parley noted them)."""
    value = (metadata or {}).get(GOALS_ONLY_STATED)
    return [str(g) for g in value] if isinstance(value, list) else []


def only_stated_note_of(metadata: Mapping[str, Any] | None) -> str | None:
    """The note of a stored conversation's metadata (None: no goal was only stated)."""
    goals = stated_goals_of(metadata)
    return only_stated_note(goals) if goals else None
