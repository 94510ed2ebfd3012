"""A batch's counts in words, one line: the same words wherever a person reads them (the command
line's end lines and `parley batches show`, the app's status line, the library's `explain()`).

    27 of 27 done: 22 passed, 0 failed, 0 bot errors (the bot's failures); counted apart:
    5 unverified, 0 simulator faults, 0 simulator errors, 0 infrastructure errors

Every number is one of the batch's counts (parley.core.records.OutcomeCounts), each outcome in
the words of its row in parley.core.records.OUTCOME_KINDS.
"""

from __future__ import annotations

from parley.core.evaluation import BatchSummary
from parley.core.records import OUTCOME_KINDS, OutcomeCounts


def apart_phrases(counts: OutcomeCounts, *, every: bool = True) -> list[str]:
    """What the pass rate leaves out, each outcome in its own words. `every`: those named even at
    0 always there (unverified, simulator faults, simulator errors, infrastructure errors);
    otherwise only the outcomes the batch has."""
    return [
        kind.in_words(n)
        for kind in OUTCOME_KINDS.values()
        if kind.group in ("error", "apart") and ((n := counts.outcomes.get(kind.outcome, 0)) or (every and kind.always_named))
    ]


def judged_phrases(counts: OutcomeCounts) -> list[str]:
    """Passed, failed, bot errors: `3 passed`, `1 failed`, `0 bot errors`."""
    return [
        kind.in_words(counts.outcomes.get(kind.outcome, 0)) for kind in OUTCOME_KINDS.values() if kind.group in ("passed", "bot_failure")
    ]


def counts_line(summary: BatchSummary) -> str:
    """Done, the bot's results and what is counted apart (see the module doc)."""
    return (
        f"{summary.done} of {summary.planned} done: {', '.join(judged_phrases(summary))} (the bot's failures); "
        f"counted apart: {', '.join(apart_phrases(summary))}"
    )


def short_counts(counts: OutcomeCounts) -> str:
    """The same counts for a narrow line: `1 passed, 1 failed, 1 bot error, 1 unverified` (the
    outcomes counted apart only when there are some)."""
    return ", ".join([*judged_phrases(counts), *apart_phrases(counts, every=False)])
