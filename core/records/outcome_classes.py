"""Every outcome a conversation can have, in one table: what each is called where a person reads
it, how the batch counts it, and what the exit code, `parley run --rerun`, JUnit and pytest make
of it. The batch's counts (parley.core.records.outcome_counts.OutcomeCounts) and every surface
that names, counts or maps an outcome read this table; none keeps a list of its own.

The outcome is the effective one the store gives (its OUTCOME_SQL): one of
parley.core.records.verdict.OUTCOMES (`passed`, `failed`, `bot_error`, `unverified`,
`user_fault`, `user_error`, `infrastructure_error`, `cancelled`, `evaluation_error`, or `error`:
a run stored before parley told who failed, which the migration could not attribute), or
`unevaluated`. Each belongs to one group:
- `passed`, and the bot's failures (`bot_failure`: failed, bot_error): judged, the pass rate's
  denominator;
- `error`: the run broke on the simulator's or parley's side (the summary's *errors*);
- `apart`: neither passed nor failed, and the run did not break (unverified, simulator faults,
  evaluation errors, unevaluated).

Adding an outcome (say `attack_succeeded`):
1. add its name to `Outcome` in parley.core.records.verdict, where its meaning is written;
2. add one `OutcomeKind` row to OUTCOME_KINDS below (its count's field name, its words, group,
   exit code, `--rerun` selection, JUnit and pytest results); a new `--rerun` word also goes in
   parley.core.records.batch.RerunSelection;
3. add its count to OutcomeCounts (parley.core.records.outcome_counts) as a property named
   after its `field`, beside the others: the summary, the service's views and the exports then
   carry it;
4. name it in the README's outcome table. tests/test_one_summary.py checks every surface shows
   it under its words.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from parley.core.records.batch import RerunSelection
from parley.core.records.batch_figures import UNEVALUATED

__all__ = [
    "BOT_FAILURES",
    "ERRORS",
    "JUDGED",
    "OUTCOME_KINDS",
    "PASSED",
    "RERUN_OUTCOMES",
    "JunitKind",
    "OutcomeGroup",
    "OutcomeKind",
    "PytestKind",
    "judged",
    "junit_kind",
    "outcome_kind",
    "pytest_kind",
    "rerun_outcomes",
]

OutcomeGroup = Literal["passed", "bot_failure", "error", "apart"]
ExitRule = Literal["passes", "fails_when_strict", "fails"]
JunitKind = Literal["passed", "failure", "error", "skipped"]
PytestKind = Literal["passed", "failed", "skipped", "error"]


@dataclass(frozen=True)
class OutcomeKind:
    """One outcome and what every surface makes of it."""

    outcome: str
    field: str
    """The name of its count in the batch's summary, the exports and the service's views."""
    one: str
    """One conversation of it, in words (`1 bot error`)."""
    many: str
    """Several, in words (`2 bot errors`)."""
    group: OutcomeGroup
    exit: ExitRule
    """What it does to `parley run`'s exit code: nothing, fail it under `--strict` only, or fail it."""
    rerun: RerunSelection | None
    """The `parley run --rerun` word that picks it (None: nothing does)."""
    junit: JunitKind
    pytest: PytestKind
    """The pytest plugin's result (`--parley-strict` fails what `exit` fails when strict)."""
    counted_as: str
    """How the summary counts it, in words (the HTML report's outcome table)."""
    always_named: bool = False
    """Named in the counts line even at 0 (parley.core.reports.count_words)."""

    def in_words(self, count: int) -> str:
        """`1 bot error`, `2 bot errors`."""
        return f"{count} {self.one if count == 1 else self.many}"


_BOT = "the bot's failures"
_BROKE = "apart: the run broke on the simulator's or parley's side"
_APART = "apart: neither passed nor failed"

OUTCOME_KINDS: dict[str, OutcomeKind] = {
    k.outcome: k
    for k in (
        OutcomeKind("passed", "passed", "passed", "passed", "passed", "passes", None, "passed", "passed", "the pass rate's passes", True),
        OutcomeKind("failed", "failed", "failed", "failed", "bot_failure", "fails", "failed", "failure", "failed", _BOT, True),
        OutcomeKind("bot_error", "bot_errors", "bot error", "bot errors", "bot_failure", "fails", "failed", "error", "failed", _BOT, True),
        OutcomeKind(
            "unverified",
            "unverified",
            "unverified",
            "unverified",
            "apart",
            "fails_when_strict",
            "unverified",
            "skipped",
            "skipped",
            _APART,
            True,
        ),
        OutcomeKind(
            "user_fault",
            "user_faults",
            "simulator fault",
            "simulator faults",
            "apart",
            "fails_when_strict",
            "user-faults",
            "skipped",
            "skipped",
            _APART,
            True,
        ),
        OutcomeKind(
            "user_error", "user_errors", "simulator error", "simulator errors", "error", "fails", "errors", "error", "error", _BROKE, True
        ),
        OutcomeKind(
            "infrastructure_error",
            "infrastructure_errors",
            "infrastructure error",
            "infrastructure errors",
            "error",
            "fails",
            "errors",
            "error",
            "error",
            _BROKE,
            True,
        ),
        OutcomeKind("cancelled", "cancelled", "cancelled", "cancelled", "error", "fails", "errors", "error", "skipped", _BROKE),
        OutcomeKind(
            "evaluation_error",
            "evaluation_errors",
            "evaluation error",
            "evaluation errors",
            "apart",
            "fails",
            "evaluation-errors",
            "error",
            "error",
            _APART,
        ),
        OutcomeKind("error", "legacy_errors", "legacy error", "legacy errors", "error", "fails", "errors", "error", "error", _BROKE),
        OutcomeKind(UNEVALUATED, "unevaluated", "unevaluated", "unevaluated", "apart", "fails", None, "skipped", "error", _APART),
    )
}
"""Every outcome, in the order the summary counts them (passed, the bot's failures, then what is
counted apart)."""

_OTHER = OutcomeKind("", "", "", "", "apart", "fails", None, "skipped", "error", _APART)
"""An outcome this parley does not know (a newer one's row): counted apart, and it fails the exit code."""


def _of(group: OutcomeGroup) -> frozenset[str]:
    return frozenset(k.outcome for k in OUTCOME_KINDS.values() if k.group == group)


PASSED: frozenset[str] = _of("passed")
BOT_FAILURES: frozenset[str] = _of("bot_failure")
"""Outcomes counted as the bot's failures."""
JUDGED: frozenset[str] = PASSED | BOT_FAILURES
"""Outcomes that say whether the bot did its job: the pass rate's denominator, pass^k's trials."""
ERRORS: frozenset[str] = _of("error")
"""Runs that broke on the simulator's or parley's side: the summary's *errors*."""
RERUN_OUTCOMES: dict[RerunSelection, frozenset[str]] = {
    word: frozenset(k.outcome for k in OUTCOME_KINDS.values() if k.rerun == word) for word in get_args(RerunSelection)
}
"""`parley run --rerun WHAT`: the outcomes each WHAT picks."""


def outcome_kind(outcome: str | None) -> OutcomeKind:
    """The row of `outcome` (an unknown one: counted apart, failing the exit code)."""
    return OUTCOME_KINDS.get(outcome or UNEVALUATED, _OTHER)


def judged(outcome: str | None) -> bool | None:
    """True for a pass, False for a failure of the bot, None for anything counted apart."""
    if outcome in PASSED:
        return True
    if outcome in BOT_FAILURES:
        return False
    return None


def junit_kind(outcome: str | None) -> JunitKind:
    """A JUnit testcase's result: a failed check is a failure, a run that broke (the bot's
    error included) and a check that could not be decided an error, and what could not be judged
    (unverified, a simulator fault, no verdict) is skipped with its reason."""
    return outcome_kind(outcome).junit


def pytest_kind(outcome: str | None, *, strict: bool) -> PytestKind:
    """What a conversation's outcome is in pytest: passed, failed, skipped or error; `strict`
    fails what `parley run --strict` fails."""
    kind = outcome_kind(outcome)
    return "failed" if strict and kind.exit == "fails_when_strict" else kind.pytest


def rerun_outcomes(selections: list[RerunSelection]) -> frozenset[str]:
    """The outcomes picked by one or more `--rerun` selections."""
    picked: set[str] = set()
    for selection in selections:
        picked |= RERUN_OUTCOMES[selection]
    return frozenset(picked)
