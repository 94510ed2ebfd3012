"""What the offline customer can do with a goal: act it out, or only state it.

It acts out the kinds of goal the world's tools answer (the world's `goal_tools`, parley.core.
world.hooks; on the order world: track an order, ask for its status or details, cancel it and
answer the bot's confirmation, list the customer's orders, ask about the cancellation policy,
cancel then change its mind and keep the order). Any other goal (a pizza, a question, an
instruction, every goal on a world that declares no goal tools) it says once in its own words and
watches for an answer that shares the goal's words, confirming an action on the record it names
and giving its id or credentials when asked: it states the goal, but does not act it out, so
nothing it does tests whether the bot can do it. That is information, not a fault: `parley profiles
validate` names such goals, `parley run` warns once per file, and the conversation carries the
note (its metadata's `goals_only_stated`, shown with the verdict).

This module is the one place that knowledge lives; parley.core.evaluation.offline_roles asks it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from parley.core.reading import Goal, GoalIntent, parse_goals, reading_world
from parley.core.world import WorldDefinition, goal_tools

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
"""The kinds of goal the offline customer can act out, on a world whose tools answer them (track,
status and cancel name a record; so does keep, its own or the cancellation's it takes back)."""
_NEED_A_RECORD: frozenset[str] = frozenset({"track", "status", "cancel", "keep"})

GOALS_ONLY_STATED = "goals_only_stated"
"""The conversation metadata key: the goals its offline customer only stated, in order."""
ONLY_STATED_ADVICE = "use `--user MODEL` or a playbook to test it"


def only_stated_advice(goals: int) -> str:
    """ONLY_STATED_ADVICE for one goal or several."""
    return ONLY_STATED_ADVICE if goals == 1 else ONLY_STATED_ADVICE.removesuffix(" it") + " them"


def acts_out(goal: Goal, world: WorldDefinition | None = None) -> bool:
    """Does the offline customer act `goal` out on `world` (the default world when None), rather
    than only state it?"""
    if goal.intent not in ACTED_INTENTS or goal.intent not in goal_tools(reading_world(world)):
        return False
    return goal.record_id is not None or goal.intent not in _NEED_A_RECORD


def goals_only_stated(goals: Sequence[str], world: WorldDefinition | None = None) -> list[Goal]:
    """The goals of a conversation the offline customer will only state on `world`, in order."""
    world = reading_world(world)
    return [goal for goal in parse_goals(goals, world) if not acts_out(goal, world)]


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
