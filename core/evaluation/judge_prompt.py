"""The frame both model judges' prompts share (the rubric judge's, parley.core.evaluation.judge,
and the criteria judge's, parley.core.evaluation.criteria_prompt).

A system message, then one user message: the shop's date and the signed-in customer, what the
customer wanted, the transcript numbered by turn (condensed to fit the judge's context, and
saying so), how the conversation ended, then what the judge is asked; then the tail (a
reminder's exchange). What differs between the judges (the system message, how a turn is
written, what is asked) is theirs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Protocol

from parley.core.evaluation.transcript_turns import QUOTING, quoted
from parley.core.prompts import Condensed, condense, estimate_messages
from parley.core.records import ChatMessage, Conversation, ConversationSpec

__all__ = ["fit_judge_messages", "fit_off_the_loop", "too_long_subject"]

_TRANSCRIPT_HEADING = f"Transcript (numbered by turn: turn N starts at the customer's N-th message). {QUOTING}\n"


def fit_judge_messages(
    conversation: Conversation,
    spec: ConversationSpec,
    *,
    system: str,
    transcript: Sequence[ChatMessage],
    render: Callable[[Condensed], str],
    asked: Sequence[str],
    budget: int | None,
    tail: Sequence[ChatMessage],
    ended: str | None = None,
    goals: bool = True,
) -> tuple[list[ChatMessage], Condensed]:
    """A judge's messages (see the module doc), with `transcript` condensed until they take at
    most `budget` tokens (None: no limit) and written by `render`; `asked` are the parts after
    how the conversation ended (`ended`: said otherwise, e.g. at a checkpoint; `goals` False: what
    the customer wanted left out). Also what the condensing did (`fits` False: not even condensed)."""
    about = []
    if conversation.final_state is not None:
        about.append(f"Today's date in the shop: {conversation.final_state.today.isoformat()}.")
    about.append(f"Signed-in customer: {conversation.customer_id}.")
    before = [" ".join(about)]
    if goals and spec.goals:
        before.append("What the customer wanted:\n" + "\n".join(f"- {g}" for g in spec.goals))
    if ended is None:
        ended = f"The conversation ended: {conversation.stop_reason}" + (
            f" (the error, as a JSON string: {quoted(conversation.error, 1000)})." if conversation.error else "."
        )
    system_message = ChatMessage(role="system", content=system)

    def build(fitted: Condensed) -> list[ChatMessage]:
        shown = _TRANSCRIPT_HEADING
        if fitted.note:
            shown += fitted.note + "\n"
        shown += render(fitted)
        return [system_message, ChatMessage(role="user", content="\n\n".join([*before, shown, ended, *asked])), *tail]

    last: tuple[Condensed, list[ChatMessage]] | None = None  # the last candidate measured, as built

    def measure(candidate: Condensed) -> int:
        nonlocal last
        last = (candidate, build(candidate))
        return estimate_messages(last[1])

    fitted = condense(
        list(transcript),
        budget if budget is not None else 2**62,
        measure=measure,
        answering=False,  # every turn is history to a judge: the last one's results may be shortened too
    )
    if last is not None and last[0] is fitted:  # the chosen one was the last measured: built already
        return last[1], fitted
    return build(fitted), fitted


def too_long_subject(unreadable: str = "") -> str:
    """What does not fit a judge's context: the conversation; or, when the judge's first answer
    could not be read (`unreadable` says why), the conversation with the reminder after it."""
    if not unreadable:
        return "the conversation"
    return f"after a first answer that could not be read in full ({unreadable}), the conversation with a reminder"


class _Fit(Protocol):
    def __call__(self, *, budget: int | None) -> tuple[list[ChatMessage], Condensed]: ...


async def fit_off_the_loop(fit: _Fit, budget: int | None) -> tuple[list[ChatMessage], Condensed]:
    """`fit(budget=budget)`, a judge's prompt fitted to `budget`: built whole here first (one
    render of the transcript, a fraction of a millisecond for a usual conversation), and only
    when that does not fit, condensed in a worker thread (condensing renders the transcript again
    and again: some milliseconds of CPU for a long one). A round trip to a thread is no saving
    for one render: on a busy loop (a re-score judging 32 conversations at once) it kept each
    conversation's slot waiting about 20 ms for each prompt."""
    messages, whole = fit(budget=None)
    if budget is None:
        return messages, whole
    if whole.tokens_after <= budget:
        return messages, whole.model_copy(update={"budget": budget})
    return await asyncio.to_thread(fit, budget=budget)
