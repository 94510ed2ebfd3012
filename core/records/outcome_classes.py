"""What `compare`, `run --rerun` and the JUnit report make of a conversation's outcome: the one
mapping from outcome names to the classes they need.

The outcome is the effective one the store gives (its OUTCOME_SQL): one of
parley.core.records.verdict.OUTCOMES (`passed`, `failed`, `bot_error`, `unverified`,
`user_fault`, `user_error`, `infrastructure_error`, `cancelled`, `evaluation_error`, or `error`:
a run stored before parley told who failed, which the migration could not attribute), or
`unevaluated`. Only `passed` and the bot's failures (`failed`, `bot_error`) are judged;
everything else is counted apart and named.
"""

from __future__ import annotations

from typing import Literal

from parley.core.records.batch import RerunSelection
from parley.core.records.conversation import BROKEN_STOPS
from parley.core.records.verdict import BOT_FAILURES

__all__ = ["BOT_FAILURES", "ERRORS", "PASSED", "RERUN_OUTCOMES", "judged", "junit_kind", "rerun_outcomes"]

PASSED: frozenset[str] = frozenset({"passed"})
ERRORS: frozenset[str] = BROKEN_STOPS | {"evaluation_error"}
"""Runs that broke, whoever broke them (the bot's own errors too: each broken stop reason is
also the outcome), and checks that could not be decided."""

RERUN_OUTCOMES: dict[RerunSelection, frozenset[str]] = {
    "failed": BOT_FAILURES,
    "errors": ERRORS,
    "unverified": frozenset({"unverified"}),
    "user-faults": frozenset({"user_fault"}),
}
"""`parley run --rerun WHAT`: the outcomes each WHAT picks."""

JunitKind = Literal["passed", "failure", "error", "skipped"]


def judged(outcome: str | None) -> bool | None:
    """True for a pass, False for a failure of the bot, None for anything counted apart."""
    if outcome in PASSED:
        return True
    if outcome in BOT_FAILURES:
        return False
    return None


def junit_kind(outcome: str | None) -> JunitKind:
    """A JUnit testcase's result: a failed check is a failure, a run that broke (the bot's
    error included) an error, and what could not be judged (unverified, a simulator fault, no
    verdict) is skipped with its reason."""
    if outcome in PASSED:
        return "passed"
    if outcome == "failed":
        return "failure"
    if outcome in ERRORS:
        return "error"
    return "skipped"


def rerun_outcomes(selections: list[RerunSelection]) -> frozenset[str]:
    """The outcomes picked by one or more `--rerun` selections."""
    picked: set[str] = set()
    for selection in selections:
        picked |= RERUN_OUTCOMES[selection]
    return frozenset(picked)
