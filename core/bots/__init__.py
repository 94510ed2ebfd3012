"""Bots under test: the built-in bot on any world, prompt bots, Python bots, connectors to deployed bots, serve-bot."""

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.core.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from parley.core.bots.api import (
        Bot,
        BotContext,
        BotEvent,
        BotTurn,
        TextDelta,
        ToolCallFinished,
        ToolCallStarted,
        TurnCompleted,
        declared_fallback,
    )
    from parley.core.bots.bot_names import (
        BotSpec,
        bot_from_name,
        bot_kind,
        build_bot,
        kind_uses_world,
        load_python_bot,
        parse_bot_spec,
        uses_world,
        world_bot_model,
    )
    from parley.core.bots.bot_prompt import EMPTY_REPLY_TEXT, ROUND_CAP_TEXT, build_system_prompt
    from parley.core.bots.leftover_threads import exit_at_shutdown, exit_now, left_running_line, threads_left
    from parley.core.bots.prompt_bot import PromptBot, check_prompt_variables, prompt_variables
    from parley.core.bots.python_bot import PYTHON_FORM, PythonBot, PythonBotError, python_bot_name
    from parley.core.bots.python_tools import AsyncTools, Tools, ToolsClosed
    from parley.core.bots.service import WEBHOOK_PATH, build_bot_app
    from parley.core.bots.world_bot import DEFAULT_MAX_TOOL_ROUNDS, WorldBot, offline_elsewhere

__all__ = [
    "AsyncTools",
    "Bot",
    "BotContext",
    "BotEvent",
    "BotSpec",
    "BotTurn",
    "DEFAULT_MAX_TOOL_ROUNDS",
    "EMPTY_REPLY_TEXT",
    "ROUND_CAP_TEXT",
    "WorldBot",
    "build_system_prompt",
    "offline_elsewhere",
    "PYTHON_FORM",
    "PromptBot",
    "PythonBot",
    "PythonBotError",
    "TextDelta",
    "Tools",
    "ToolsClosed",
    "ToolCallFinished",
    "ToolCallStarted",
    "TurnCompleted",
    "WEBHOOK_PATH",
    "bot_from_name",
    "bot_kind",
    "kind_uses_world",
    "build_bot",
    "build_bot_app",
    "check_prompt_variables",
    "declared_fallback",
    "exit_at_shutdown",
    "exit_now",
    "left_running_line",
    "load_python_bot",
    "world_bot_model",
    "parse_bot_spec",
    "prompt_variables",
    "python_bot_name",
    "threads_left",
    "uses_world",
]

if not TYPE_CHECKING:  # type checkers see the imports above; at run time each name is imported on first use
    __getattr__, __dir__ = lazy_exports(__name__, __file__)
