"""Where a judge's prompt is fitted to its context: on the event loop for a short transcript, in
a worker thread for a long one.

Fitting (`fit_judge_prompt`, `fit_criteria_prompt`) renders the transcript and, when the prompt
is over the judge's budget, condenses it turn by turn: milliseconds of CPU, which must not hold
the event loop. A transcript of at most half the budget's tokens in characters (and of
`INLINE_CHARS` at most) leaves the other half to the instructions, so it is condensed only
beside an outsized rubric or list of checks, and then briefly; rendering it takes 0.1-0.5 ms,
less than handing it to a thread, whose turn on the GIL a busy loop makes the waiting judge
call wait for (re-scoring at concurrency 32, 6 interleaved pairs: median 105 judge calls/s
fitting here, 103 in a thread).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import Any, TypeVar

from parley.core.records import Conversation

__all__ = ["INLINE_CHARS", "fit_prompt"]

INLINE_CHARS = 8000
"""The longest transcript (characters of messages and tool calls) fitted on the event loop."""

T = TypeVar("T")


def _transcript_chars(conversation: Conversation) -> int:
    return sum(len(m.content or "") + sum(len(c.arguments) for c in m.tool_calls) for m in conversation.messages)


async def fit_prompt(fit: Callable[..., T], conversation: Conversation, *args: Any, budget: int, **kwargs: Any) -> T:
    """`fit(conversation, *args, budget=budget, **kwargs)`: here when the transcript is short
    beside the budget, else in a worker thread (see the module doc)."""
    if _transcript_chars(conversation) <= min(INLINE_CHARS, budget // 2):
        return fit(conversation, *args, budget=budget, **kwargs)
    return await asyncio.to_thread(functools.partial(fit, conversation, *args, budget=budget, **kwargs))
