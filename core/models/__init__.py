"""Chat models: names, the OpenAI-compatible provider, pricing, retry. The offline roles are not here: they live with the bots, the users and the judges."""

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.core.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from parley.core.models.api import ChatModel, ReplyStream
    from parley.core.models.chat_model_base import ChatModelBase, WholeReplyStream
    from parley.core.models.names import OFFLINE, parse_model_name
    from parley.core.models.openai_provider import (
        CONNECT_TIMEOUT_S,
        DEFAULT_TIMEOUT_S,
        POOL_CONNECTIONS,
        POOL_KEEPALIVE,
        aclose_clients,
        mark_answered,
    )
    from parley.core.models.pricing import price_for
    from parley.core.models.registry import get_model
    from parley.core.models.retry import RetryEvent, rate_limit_deadline

__all__ = [
    "CONNECT_TIMEOUT_S",
    "ChatModel",
    "ChatModelBase",
    "DEFAULT_TIMEOUT_S",
    "OFFLINE",
    "POOL_CONNECTIONS",
    "POOL_KEEPALIVE",
    "ReplyStream",
    "RetryEvent",
    "WholeReplyStream",
    "aclose_clients",
    "get_model",
    "mark_answered",
    "parse_model_name",
    "price_for",
    "rate_limit_deadline",
]

if not TYPE_CHECKING:  # type checkers see the imports above; at run time each name is imported on first use
    __getattr__, __dir__ = lazy_exports(__name__, __file__)
