"""A batch's counts in words, one line: the same words wherever a person reads them (the command
line's end lines and `parley batches show`, the app's status line).

    27 of 27 done: 22 passed, 0 failed, 0 bot errors (the bot's failures); counted apart:
    5 unverified, 0 simulator faults, 0 simulator errors, 0 infrastructure errors

Every number is a field of the batch's summary (parley.core.evaluation.BatchSummary).
"""

from __future__ import annotations

from parley.core.evaluation import BatchSummary


def _n(count: int, one: str, many: str | None = None) -> str:
    return f"{count} {one if count == 1 else (many or one + 's')}"


def apart_phrases(summary: BatchSummary, *, every: bool = True) -> list[str]:
    """What the pass rate leaves out, each kind in its own words. `every`: the four kinds always
    there even at 0 (unverified, simulator faults, simulator errors, infrastructure errors);
    otherwise only the kinds the batch has."""
    kinds = [
        (summary.unverified, "unverified", "unverified", True),
        (summary.user_faults, "simulator fault", None, True),
        (summary.user_errors, "simulator error", None, True),
        (summary.infrastructure_errors, "infrastructure error", None, True),
        (summary.cancelled, "cancelled", "cancelled", False),
        (summary.evaluation_errors, "evaluation error", None, False),
        (summary.legacy_errors, "legacy error", None, False),
        (summary.unevaluated, "unevaluated", "unevaluated", False),
    ]
    return [_n(count, one, many) for count, one, many, always in kinds if count or (every and always)]


def counts_line(summary: BatchSummary) -> str:
    """Done, the bot's results and what is counted apart (see the module doc)."""
    return (
        f"{summary.done} of {summary.planned} done: {summary.passed} passed, {summary.failed} failed, "
        f"{_n(summary.bot_errors, 'bot error')} (the bot's failures); counted apart: {', '.join(apart_phrases(summary))}"
    )


def short_counts(summary: BatchSummary) -> str:
    """The same counts for a narrow line: `1 passed, 1 failed, 1 bot error, 1 unverified` (the
    kinds counted apart only when there are some)."""
    return ", ".join(
        [f"{summary.passed} passed", f"{summary.failed} failed", _n(summary.bot_errors, "bot error"), *apart_phrases(summary, every=False)]
    )
