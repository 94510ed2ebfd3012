"""Prompts that fit a model's context: token estimates, the transcript condenser, context lengths."""

from parley.core.prompts.condense import Condensed, Turn, condense, fit_messages, split_turns, turn_list
from parley.core.prompts.context_window import (
    ANSWER_TOKENS,
    DEFAULT_CONTEXT_TOKENS,
    context_length_from_models,
    context_tokens,
    prompt_budget,
)
from parley.core.prompts.tokens import estimate_messages, estimate_tokens, estimate_tool_specs
from parley.core.prompts.tool_results import KEY_FIELDS, LONG_TOOL_RESULT_CHARS, shorten_tool_result

__all__ = [
    "ANSWER_TOKENS",
    "DEFAULT_CONTEXT_TOKENS",
    "KEY_FIELDS",
    "LONG_TOOL_RESULT_CHARS",
    "Condensed",
    "Turn",
    "condense",
    "context_length_from_models",
    "context_tokens",
    "fit_messages",
    "estimate_messages",
    "estimate_tokens",
    "estimate_tool_specs",
    "shorten_tool_result",
    "prompt_budget",
    "split_turns",
    "turn_list",
]
