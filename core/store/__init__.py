"""parley's SQLite store: schema and migrations, rows <-> records, queries, who owns a batch, the reply cache."""

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.core.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from parley.core.store.batch_owner import running_elsewhere
    from parley.core.store.reply_cache import CachedModel
    from parley.core.store.rows import cache_key
    from parley.core.store.session_queries import (
        CHATS,
        SessionCursor,
        SessionFilters,
        SessionItem,
        SessionKind,
        outcome_names,
        profile_names,
    )
    from parley.core.store.store import (
        ACTIVE_STATUSES,
        BROKEN_SQL,
        JUDGE_ROLE,
        OUTCOME_SQL,
        RERUN_SQL,
        DuplicateConversationError,
        ReadOnlyDatabase,
        Store,
        UnreadableBatchError,
    )

__all__ = [
    "ACTIVE_STATUSES",
    "BROKEN_SQL",
    "CHATS",
    "CachedModel",
    "DuplicateConversationError",
    "JUDGE_ROLE",
    "OUTCOME_SQL",
    "RERUN_SQL",
    "ReadOnlyDatabase",
    "SessionCursor",
    "SessionFilters",
    "SessionItem",
    "SessionKind",
    "Store",
    "UnreadableBatchError",
    "cache_key",
    "outcome_names",
    "profile_names",
    "running_elsewhere",
]

__getattr__, __dir__ = lazy_exports(__name__, __file__)
