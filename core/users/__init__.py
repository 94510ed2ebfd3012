"""Simulated customers: the LLM and offline users, styles, goal tracking, fallback detection, and
which goals the offline customer acts out and which it only states."""

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.core.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from parley.core.users.acted_goals import (
        ACTED_INTENTS,
        GOALS_ONLY_STATED,
        ONLY_STATED_ADVICE,
        acts_out,
        goals_only_stated,
        only_stated_advice,
        only_stated_note,
        only_stated_note_of,
        stated_goals_of,
    )
    from parley.core.users.attacker import OFFLINE_ATTACKER_NAME, OfflineAttacker, attack_lines, attacker_spec, objective_text
    from parley.core.users.customer_facts import CustomerFacts, read_customer_facts
    from parley.core.users.factory import PROFILE_MODEL, make_user_simulator
    from parley.core.users.fallback_detection import FallbackDetector
    from parley.core.users.goal_driven_user import simulated_world
    from parley.core.users.llm_user import LLMUser, generate_any_items, profile_generation
    from parley.core.users.phrasebook import language_code
    from parley.core.users.redteam_suite import REDTEAM_SOURCE, attack_suite, impossible_objectives, impossible_strategies
    from parley.core.users.replay_user import REPLAY_USER, ReplayScript, ReplayUser, bot_replies, finish_replay
    from parley.core.users.simulator import GoalReporter, StatesGoals, UserSimulator, UserTurn

__all__ = [
    "OFFLINE_ATTACKER_NAME",
    "OfflineAttacker",
    "REDTEAM_SOURCE",
    "attack_lines",
    "attacker_spec",
    "attack_suite",
    "impossible_objectives",
    "impossible_strategies",
    "objective_text",
    "ACTED_INTENTS",
    "CustomerFacts",
    "GOALS_ONLY_STATED",
    "FallbackDetector",
    "ONLY_STATED_ADVICE",
    "GoalReporter",
    "LLMUser",
    "profile_generation",
    "PROFILE_MODEL",
    "REPLAY_USER",
    "ReplayScript",
    "ReplayUser",
    "StatesGoals",
    "UserSimulator",
    "UserTurn",
    "acts_out",
    "bot_replies",
    "read_customer_facts",
    "finish_replay",
    "generate_any_items",
    "language_code",
    "goals_only_stated",
    "make_user_simulator",
    "only_stated_advice",
    "only_stated_note",
    "only_stated_note_of",
    "simulated_world",
    "stated_goals_of",
]

if not TYPE_CHECKING:  # type checkers see the imports above; at run time each name is imported on first use
    __getattr__, __dir__ = lazy_exports(__name__, __file__)
