"""Simulated customers: the LLM and offline users, styles, goal tracking, fallback detection."""

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.core.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from parley.core.users.factory import PROFILE_MODEL, make_user_simulator
    from parley.core.users.llm_user import LLMUser, generate_any_items
    from parley.core.users.replay_user import REPLAY_USER, ReplayScript, ReplayUser, bot_replies, finish_replay
    from parley.core.users.simulator import GoalReporter, UserSimulator, UserTurn

__all__ = [
    "GoalReporter",
    "LLMUser",
    "PROFILE_MODEL",
    "REPLAY_USER",
    "ReplayScript",
    "ReplayUser",
    "UserSimulator",
    "UserTurn",
    "bot_replies",
    "finish_replay",
    "generate_any_items",
    "make_user_simulator",
]

__getattr__, __dir__ = lazy_exports(__name__, __file__)
