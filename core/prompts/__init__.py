"""Prompts that fit a model's context: token estimates, the transcript condenser, context lengths.
Below the bots, the users and the evaluation, which each fit the prompts they build with it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.core.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from parley.core.prompts.condenser import MIN_CLIPPED_CHARS, Condensed, Turn, condense, cut_middle, fit_messages, split_turns, turn_list
    from parley.core.prompts.context_window import ANSWER_TOKENS, DEFAULT_CONTEXT_TOKENS, context_tokens, prompt_budget
    from parley.core.prompts.tokens import estimate_messages, estimate_tokens, estimate_tool_specs
    from parley.core.prompts.tool_results import KEY_FIELDS, LONG_TOOL_RESULT_CHARS, shorten_tool_result

__all__ = [
    "ANSWER_TOKENS",
    "DEFAULT_CONTEXT_TOKENS",
    "KEY_FIELDS",
    "LONG_TOOL_RESULT_CHARS",
    "MIN_CLIPPED_CHARS",
    "Condensed",
    "Turn",
    "condense",
    "context_tokens",
    "cut_middle",
    "estimate_messages",
    "estimate_tokens",
    "estimate_tool_specs",
    "fit_messages",
    "prompt_budget",
    "shorten_tool_result",
    "split_turns",
    "turn_list",
]

if not TYPE_CHECKING:  # type checkers see the imports above; at run time each name is imported on first use
    __getattr__, __dir__ = lazy_exports(__name__, __file__)
