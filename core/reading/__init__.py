"""Reading customer-service text: order ids as people write them, what a message asks for, and
goals as the simulated customers and the checks understand them. Below the bots, the users and
the evaluation, so that the code that judges a bot or a simulated customer shares nothing with
any one of them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.core.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from parley.core.reading.bounded_view import HEURISTIC_MAX_CHARS, heuristic_view
    from parley.core.reading.goals import Goal, GoalIntent, goal_mentioned, key_terms, parse_goal, parse_goals
    from parley.core.reading.order_ids import extract_order_ids, ids_in, mentions_id, order_digits
    from parley.core.reading.plain_text import as_read
    from parley.core.reading.requests import (
        ASKS_FOR_ORDER_ID,
        CANCEL_WORDS,
        CONFIRMATION_QUESTION,
        DAYS_OR_POLICY,
        LIST_WORDS,
        POLICY_WORDS,
        STATUS_WORDS,
        TRACK_WORDS,
        confirmation_order_id,
        is_affirmative,
        is_confirmation_question,
        is_refusal,
    )

__all__ = [
    "as_read",
    "ASKS_FOR_ORDER_ID",
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
    "confirmation_order_id",
    "extract_order_ids",
    "goal_mentioned",
    "heuristic_view",
    "ids_in",
    "is_affirmative",
    "is_confirmation_question",
    "is_refusal",
    "key_terms",
    "mentions_id",
    "order_digits",
    "parse_goal",
    "parse_goals",
]

if not TYPE_CHECKING:  # type checkers see the imports above; at run time each name is imported on first use
    __getattr__, __dir__ = lazy_exports(__name__, __file__)
