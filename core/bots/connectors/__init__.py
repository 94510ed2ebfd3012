"""Connectors to deployed chatbots: Rasa, Taskyto, and any HTTP bot described in YAML."""

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.core.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from parley.core.bots.connectors.base import aclose_connectors

__all__ = ["aclose_connectors"]

if not TYPE_CHECKING:  # type checkers see the imports above; at run time each name is imported on first use
    __getattr__, __dir__ = lazy_exports(__name__, __file__)
