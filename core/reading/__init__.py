"""Reading customer-service text: records as people name them on a world, what a message asks for,
and goals as the simulated customers and the checks understand them. Below the bots, the users and
the evaluation, so that the code that judges a bot or a simulated customer shares nothing with
any one of them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.core.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from parley.core.reading.bounded_view import HEURISTIC_MAX_CHARS, heuristic_view
    from parley.core.reading.goals import Goal, GoalIntent, goal_mentioned, key_terms, parse_goal, parse_goals
    from parley.core.reading.plain_text import as_read
    from parley.core.reading.record_names import id_digits, ids_in, mentions_id, reading_world, record_noun, records_in, same_id
    from parley.core.reading.requests import (
        ACTION_WORDS,
        CANCEL_WORDS,
        CONFIRMATION_QUESTION,
        DAYS_OR_POLICY,
        LIST_WORDS,
        POLICY_WORDS,
        STATUS_WORDS,
        TRACK_WORDS,
        asked_credentials,
        asked_table,
        asks_for,
        asks_for_id,
        confirmation_question,
        confirmation_record,
        is_affirmative,
        is_confirmation_question,
        is_refusal,
        request_words,
        world_actions,
    )

__all__ = [
    "ACTION_WORDS",
    "as_read",
    "asked_credentials",
    "asked_table",
    "asks_for",
    "asks_for_id",
    "CANCEL_WORDS",
    "CONFIRMATION_QUESTION",
    "DAYS_OR_POLICY",
    "Goal",
    "GoalIntent",
    "HEURISTIC_MAX_CHARS",
    "LIST_WORDS",
    "POLICY_WORDS",
    "STATUS_WORDS",
    "TRACK_WORDS",
    "confirmation_question",
    "confirmation_record",
    "goal_mentioned",
    "heuristic_view",
    "id_digits",
    "ids_in",
    "is_affirmative",
    "is_confirmation_question",
    "is_refusal",
    "key_terms",
    "mentions_id",
    "parse_goal",
    "parse_goals",
    "reading_world",
    "record_noun",
    "records_in",
    "request_words",
    "same_id",
    "world_actions",
]

if not TYPE_CHECKING:  # type checkers see the imports above; at run time each name is imported on first use
    __getattr__, __dir__ = lazy_exports(__name__, __file__)
