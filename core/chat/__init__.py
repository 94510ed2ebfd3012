"""The live chat session and its slash commands, without a face."""

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.core.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from parley.core.chat.commands import CommandResult
    from parley.core.chat.session import ChatSession, write_new_json

__all__ = ["ChatSession", "CommandResult", "write_new_json"]

if not TYPE_CHECKING:  # type checkers see the imports above; at run time each name is imported on first use
    __getattr__, __dir__ = lazy_exports(__name__, __file__)
