"""parley's SQLite store: schema and migrations, rows <-> records, queries, who owns a batch, the reply cache."""

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.core.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from parley.core.store.batch_owner import running_elsewhere
    from parley.core.store.batch_queries import (
        attack_results,
        batch_worlds,
        criterion_counts,
        failed_check_counts,
        failure_entries,
        goals_only_stated,
        judge_keys,
        limit_counts,
        measured_usage,
        not_applicable_checks,
        not_read,
        outcome_rows,
        policy_violations,
        role_usage,
        rubric_calibration,
        unpriced_models,
    )
    from parley.core.store.batch_row import BatchRow
    from parley.core.store.calibrations import calibrations_for, get_calibration, list_calibrations, save_calibration
    from parley.core.store.file_health import DamagedDatabase, DatabaseGone, damage_line, opened_count
    from parley.core.store.labels import all_labels, delete_label, labelled_counts, labels_of, missing_conversations, save_labels
    from parley.core.store.reply_cache import CachedModel
    from parley.core.store.rows import JUDGE_ROLE, cache_key
    from parley.core.store.rule_results import batch_rule_summaries, clear_batch_rules, iter_rule_results, save_batch_rules
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
        DuplicateConversationError,
        ReadOnlyDatabase,
        Store,
        UnreadableBatchError,
    )

__all__ = [
    "batch_worlds",
    "attack_results",
    "ACTIVE_STATUSES",
    "BatchRow",
    "CHATS",
    "CachedModel",
    "DamagedDatabase",
    "DatabaseGone",
    "DuplicateConversationError",
    "JUDGE_ROLE",
    "ReadOnlyDatabase",
    "SessionCursor",
    "SessionFilters",
    "SessionItem",
    "SessionKind",
    "Store",
    "UnreadableBatchError",
    "batch_rule_summaries",
    "all_labels",
    "calibrations_for",
    "delete_label",
    "get_calibration",
    "labelled_counts",
    "labels_of",
    "list_calibrations",
    "missing_conversations",
    "save_calibration",
    "save_labels",
    "cache_key",
    "clear_batch_rules",
    "criterion_counts",
    "limit_counts",
    "damage_line",
    "failed_check_counts",
    "failure_entries",
    "goals_only_stated",
    "judge_keys",
    "iter_rule_results",
    "measured_usage",
    "not_applicable_checks",
    "not_read",
    "outcome_rows",
    "opened_count",
    "outcome_names",
    "policy_violations",
    "profile_names",
    "role_usage",
    "rubric_calibration",
    "running_elsewhere",
    "save_batch_rules",
    "unpriced_models",
]

if not TYPE_CHECKING:  # type checkers see the imports above; at run time each name is imported on first use
    __getattr__, __dir__ = lazy_exports(__name__, __file__)
