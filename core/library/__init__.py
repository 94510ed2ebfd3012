"""parley as a library: conversations built in code, run as stored batches, results read as records (parley.api shows it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.core.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from parley.core.library.building import (
        DEFAULT_ROLE,
        checkpoint,
        conversation,
        expect_reply,
        expect_tool,
        inject_reply,
        inject_tool,
        say,
        simulate,
    )
    from parley.core.library.results import ConversationResult, RunResult
    from parley.core.library.running import BotArg, RunOptions, SpecsInvalid, checked_rules, load_specs, read_results, run, run_sync
    from parley.core.library.session import BatchSession

__all__ = [
    "BatchSession",
    "BotArg",
    "ConversationResult",
    "DEFAULT_ROLE",
    "RunOptions",
    "RunResult",
    "SpecsInvalid",
    "checked_rules",
    "checkpoint",
    "conversation",
    "expect_reply",
    "expect_tool",
    "inject_reply",
    "inject_tool",
    "load_specs",
    "read_results",
    "run",
    "run_sync",
    "say",
    "simulate",
]

if not TYPE_CHECKING:  # type checkers see the imports above; at run time each name is imported on first use
    __getattr__, __dir__ = lazy_exports(__name__, __file__)
