"""The numbers of one batch, read from the store: totals, pass rate, pass^k, scores, profiles,
tokens and cost per role, stop reasons, failures and policy violations.

The store gives one light row per conversation (parley.core.store.outcome_rows: a batch may
hold 10,000 conversations, which read and count in a fraction of a second) and aggregates what
needs the verdicts' JSON itself; the listed failures and violations are capped.

Counting rules, used everywhere: each conversation has one outcome (the effective one the store
gives, parley.core.records.verdict.Outcome, or unevaluated):
- *passed*, *failed* and *bot_error* say whether the bot did its job: the pass rate is
  passed / (passed + failed + bot_error), with its 95% Wilson interval and its denominator, and
  pass^k counts these trials only (with a seeded bootstrap interval over specs);
- *unverified* (nothing about the bot was checked), *user_fault* (the simulated user
  misbehaved), *user_error*, *infrastructure_error*, *cancelled* (the run broke on the other side),
  *evaluation_error* (a check could not be decided), a legacy *error* (stored before parley told
  who failed) and *unevaluated* (no verdict) are counted apart, each under its own name;
- a *judge error* is a conversation whose judge failed (no score), whatever its outcome: it is
  counted on the side, never turned into a score.
With k >= 2 trials, the specs whose judged trials disagree are listed as flaky.

A check that could not be applied (`not_applicable`: a world check on a bot without parley's
World, a tool expectation on a bot whose tool calls parley cannot see) neither passes nor fails:
a conversation passes on the checks that applied. The summary counts the not-applicable checks
of runs that did not break, and how many passed conversations had any, so the report can say so.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from pydantic import BaseModel, Field

from parley.core.evaluation import Interval, bootstrap_pass_hat_k, pass_hat_k, stats_seed, wilson_interval
from parley.core.records import (
    BOT_FAILURES,
    BROKEN_STOPS,
    OUTCOMES,
    STOP_REASONS,
    UNEVALUATED,
    BatchRecord,
    CheckFailureCount,
    FailureEntry,
    NotApplicableCount,
    OutcomeRow,
    PolicyViolation,
    RoleUsage,
)
from parley.core.store import (
    JUDGE_ROLE,
    Store,
    failed_check_counts,
    failure_entries,
    not_applicable_checks,
    outcome_rows,
    policy_violations,
    role_usage,
)

PASS_RATE_BASIS = (
    "passed / (passed + failed + bot errors): unverified conversations, simulator faults and errors, "
    "infrastructure errors, cancelled runs, evaluation errors and unevaluated conversations are counted apart"
)
LEGACY_ERROR_NOTE = (
    "stored before parley told the bot's errors from the simulator's and its own, and not attributable from "
    "the error text: counted apart, as they were then"
)
UNVERIFIED_HINT = "add an `expect:` block or use an LLM judge (`--judge MODEL`)"
ROLE_ORDER = ("bot", "user", JUDGE_ROLE)
DEFAULT_MAX_LISTED = 100


# ---- pass^k -----------------------------------------------------------------------------------


def pass_hat_k_from_counts(counts: Mapping[str, tuple[int, int]], k: int) -> float | None:
    """pass^k from (passed c, judged trials n) per spec, via parley.core.evaluation.pass_k (tau-bench's mean of
    C(c, k) / C(n, k)). Specs with fewer than k judged trials are left out, as a batch with
    errors may have them; None when no spec has k."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    eligible = {spec: [True] * c + [False] * (n - c) for spec, (c, n) in counts.items() if n >= k}
    return pass_hat_k(eligible, k) if eligible else None


# ---- the summary ------------------------------------------------------------------------------


class ScoreStatistics(BaseModel):
    """Over conversations the judge scored (1-3). `std` is the sample standard deviation."""

    count: int = 0
    mean: float | None = None
    median: float | None = None
    std: float | None = None
    min: int | None = None
    max: int | None = None


class PassAtK(BaseModel):
    k: int
    value: float | None
    specs: int
    """Specs with at least k judged trials (the mean is over these)."""
    interval: Interval | None = None
    """95% percentile bootstrap over those specs, seeded from the batch's seed: the same batch (and
    a re-run of it with the same results) always shows the same interval."""


class ProfileStats(BaseModel):
    name: str
    runs: int
    passed: int
    failed: int
    """The bot's failures: failed checks and bot errors."""
    errors: int
    """Counted apart: unverified, simulator faults, broken runs, evaluation errors."""
    pass_rate: float | None
    mean_score: float | None
    mean_turns: float
    pass_rate_interval: Interval | None = None


class FlakySpec(BaseModel):
    """A spec whose judged trials disagree (some passed, some failed)."""

    spec_id: str
    name: str
    trials: int
    """Judged trials (passed, failed or bot_error)."""
    passed: int
    failed: int
    other: int = 0
    """Trials counted apart (unverified, simulator faults, broken runs)."""


class LatencyStats(BaseModel):
    """The bot's response time per turn."""

    turns: int
    mean_s: float
    min_s: float
    max_s: float


class BatchSummary(BaseModel):
    batch: BatchRecord
    planned: int
    done: int
    passed: int
    failed: int
    """Conversations in which a check about the bot failed."""
    bot_errors: int = 0
    """Conversations the bot broke (stop reason bot_error): failures of the bot too."""
    unverified: int = 0
    """Ran to an end, nothing failed, nothing about the bot checked: neither passed nor failed."""
    user_faults: int = 0
    """The simulated user misbehaved (empty turn, repeating itself, talking as the bot...)."""
    user_errors: int = 0
    infrastructure_errors: int = 0
    cancelled: int = 0
    legacy_errors: int = 0
    """Stop reason `error`: see LEGACY_ERROR_NOTE."""
    errors: int
    """The runs that broke on the simulator's or parley's side: user_errors +
    infrastructure_errors + cancelled + legacy_errors."""
    evaluation_errors: int
    """Runs that did not break but a check could not be decided."""
    judge_errors: int
    """Runs whose judge failed (no score), whatever their outcome."""
    unevaluated: int
    outcomes: dict[str, int] = Field(default_factory=dict)
    """Every outcome's count (all of parley.core.records.verdict.OUTCOMES, and unevaluated)."""
    pass_rate: float | None
    pass_rate_interval: Interval | None = None
    """95% Wilson interval of the pass rate."""
    pass_rate_denominator: int
    pass_rate_basis: str = PASS_RATE_BASIS
    pass_k: list[PassAtK]
    flaky_specs: list[FlakySpec] = Field(default_factory=list)
    """With 2 or more trials: the specs whose judged trials disagree, most disagreeing first."""
    score_statistics: ScoreStatistics
    score_distribution: dict[str, int]
    """003's shape: {"score_1": n, "score_2": n, "score_3": n}."""
    mean_turns: float | None
    mean_duration_s: float | None
    total_duration_s: float
    profiles: list[ProfileStats]
    usage: list[RoleUsage]
    total_usage: RoleUsage
    stop_reasons: dict[str, int]
    policy_violations: list[PolicyViolation]
    policy_violations_total: int
    failed_checks: list[CheckFailureCount]
    failures: list[FailureEntry]
    failures_total: int
    """Every conversation that neither passed nor was merely unverified."""
    bot_latency: LatencyStats | None
    not_applicable_checks: list[NotApplicableCount] = Field(default_factory=list)
    passed_with_not_applicable: int = 0
    """Passed conversations that had at least one not-applicable check (passed on the rest)."""

    @property
    def bot_failures(self) -> int:
        """Failed checks and bot errors: the pass rate's failures."""
        return self.failed + self.bot_errors


def _score_statistics(distribution: Mapping[int, int]) -> ScoreStatistics:
    scores = [s for s, n in sorted(distribution.items()) for _ in range(n)]
    if not scores:
        return ScoreStatistics()
    return ScoreStatistics(
        count=len(scores),
        mean=statistics.fmean(scores),
        median=float(statistics.median(scores)),
        std=statistics.stdev(scores) if len(scores) > 1 else 0.0,
        min=min(scores),
        max=max(scores),
    )


def _rate(passed: int, judged: int) -> float | None:
    return passed / judged if judged else None


def _mean(values: Sequence[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


_JUDGED = frozenset({"passed", "failed", "bot_error"})


class _SpecTrials(NamedTuple):
    spec_id: str
    name: str
    spec_index: int
    c: int
    """Passed trials."""
    n: int
    """Judged trials."""
    other: int
    """Trials counted apart."""


class _Profile:
    __slots__ = ("runs", "passed", "failed", "errors", "scores", "turns")

    def __init__(self) -> None:
        self.runs = self.passed = self.failed = self.errors = 0
        self.scores: list[int] = []
        self.turns: list[int] = []


class _Tally:
    """One pass over a batch's light rows (parley.core.store.outcome_rows): counts by outcome,
    scores, turns and time, per spec and per profile, stop reasons, the bot's latency. Holds a
    few numbers per conversation, never the rows."""

    def __init__(self) -> None:
        self.outcomes: Counter[str] = Counter()
        self.judge_errors = 0
        self.violations = 0
        self.turns: list[int] = []
        self.durations: list[float] = []
        self.scores: Counter[int] = Counter()
        self.stop_reasons: Counter[str] = Counter()
        self.specs: dict[str, list[Any]] = {}  # spec_id -> [name, spec_index, passed, judged, apart]
        self.profiles: dict[str, _Profile] = defaultdict(_Profile)
        self.answered_turns = 0
        self.latency: list[float] = []
        self.latency_lows: list[float] = []
        self.latency_highs: list[float] = []

    def add(self, r: OutcomeRow) -> None:
        o = r.outcome
        self.outcomes[o] += 1
        self.judge_errors += r.judge_error and r.stop_reason not in BROKEN_STOPS
        self.violations += r.policy_violations
        self.turns.append(r.turns)
        self.durations.append(r.duration_s)
        self.stop_reasons[r.stop_reason] += 1
        if r.score is not None:
            self.scores[r.score] += 1
        judged = o in _JUDGED
        spec = self.specs.get(r.spec_id)
        if spec is None:
            spec = self.specs[r.spec_id] = [r.name, r.spec_index, 0, 0, 0]
        else:
            spec[0], spec[1] = min(spec[0], r.name), min(spec[1], r.spec_index)
        spec[2] += o == "passed"
        spec[3] += judged
        spec[4] += not judged
        profile = self.profiles[r.name]
        profile.runs += 1
        profile.passed += o == "passed"
        profile.failed += o in BOT_FAILURES
        profile.errors += not judged
        profile.turns.append(r.turns)
        if r.score is not None:
            profile.scores.append(r.score)
        if r.turns > 0:
            self.answered_turns += r.turns
            self.latency.append(r.bot_latency_s)
            if r.bot_latency_min_s is not None:
                self.latency_lows.append(r.bot_latency_min_s)
            if r.bot_latency_max_s is not None:
                self.latency_highs.append(r.bot_latency_max_s)

    def per_spec(self) -> list[_SpecTrials]:
        """Per spec: passed, judged trials and trials counted apart, in spec order."""
        rows = [_SpecTrials(spec_id, name, index, c, n, other) for spec_id, (name, index, c, n, other) in self.specs.items()]
        return sorted(rows, key=lambda t: (t.spec_index, t.spec_id))

    def profile_stats(self) -> list[ProfileStats]:
        out = []
        for name in sorted(self.profiles):
            p = self.profiles[name]
            out.append(
                ProfileStats(
                    name=name,
                    runs=p.runs,
                    passed=p.passed,
                    failed=p.failed,
                    errors=p.errors,
                    pass_rate=_rate(p.passed, p.passed + p.failed),
                    pass_rate_interval=wilson_interval(p.passed, p.passed + p.failed),
                    mean_score=_mean(p.scores),
                    mean_turns=_mean(p.turns) or 0.0,
                )
            )
        return out

    def ordered_stop_reasons(self) -> dict[str, int]:
        """Counts in STOP_REASONS order (any other reason after them)."""
        counted = dict(self.stop_reasons)
        ordered: dict[str, int] = {s: counted.pop(s) for s in STOP_REASONS if s in counted}
        ordered.update(sorted(counted.items()))
        return ordered

    def bot_latency(self) -> LatencyStats | None:
        if not self.answered_turns:
            return None
        return LatencyStats(
            turns=self.answered_turns,
            mean_s=math.fsum(self.latency) / self.answered_turns,
            min_s=min(self.latency_lows),
            max_s=max(self.latency_highs),
        )


def _pass_k(rows: Sequence[_SpecTrials], seed: int, trials: int) -> list[PassAtK]:
    per_spec = {r.spec_id: (r.c, r.n) for r in rows if r.n}
    return [
        PassAtK(
            k=k,
            value=pass_hat_k_from_counts(per_spec, k),
            specs=sum(1 for _, n in per_spec.values() if n >= k),
            interval=bootstrap_pass_hat_k(per_spec, k, seed=stats_seed(seed, f"pass^{k}")),
        )
        for k in range(1, max(trials, 1) + 1)
    ]


def _flaky(rows: Sequence[_SpecTrials]) -> list[FlakySpec]:
    """Specs with 2+ judged trials that disagree, the most evenly split first (then the most
    trials, then spec order)."""
    flaky = [r for r in rows if r.n >= 2 and 0 < r.c < r.n]
    flaky.sort(key=lambda r: (-min(r.c, r.n - r.c) / r.n, -r.n, r.spec_index, r.spec_id))
    return [FlakySpec(spec_id=r.spec_id, name=r.name, trials=r.n, passed=r.c, failed=r.n - r.c, other=r.other) for r in flaky]


def _usage(store: Store, bid: str) -> tuple[list[RoleUsage], RoleUsage]:
    """Per role and in total. A role's cost is None as soon as one of its calls had no price."""
    usage = role_usage(store, bid)
    usage.sort(key=lambda u: (ROLE_ORDER.index(u.role) if u.role in ROLE_ORDER else len(ROLE_ORDER), u.role))
    total = RoleUsage(
        role="total",
        calls=sum(u.calls for u in usage),
        input_tokens=sum(u.input_tokens for u in usage),
        output_tokens=sum(u.output_tokens for u in usage),
        unreported_calls=sum(u.unreported_calls for u in usage),
        cost_usd=None if any(u.cost_usd is None for u in usage) else sum(u.cost_usd or 0.0 for u in usage),
    )
    return usage, total


def summarize(store: Store, batch_id: str, *, max_listed: int = DEFAULT_MAX_LISTED) -> BatchSummary:
    """The summary of a batch (id or unique prefix). Lists of failures and policy violations
    keep the first `max_listed` (in spec order); their totals are always complete."""
    batch = store.get_batch(batch_id)
    bid = batch.id
    t = _Tally()
    for row in outcome_rows(store, bid):
        t.add(row)
    outcomes = {o: t.outcomes.get(o, 0) for o in (*OUTCOMES, UNEVALUATED)}
    done = len(t.turns)
    distribution = dict(t.scores)
    usage, total = _usage(store, bid)
    not_applicable, passed_with_na = not_applicable_checks(store, bid)
    per_spec = t.per_spec()
    passed, failed, bot_errors = outcomes["passed"], outcomes["failed"], outcomes["bot_error"]
    judged = passed + failed + bot_errors
    broken = outcomes["user_error"] + outcomes["infrastructure_error"] + outcomes["cancelled"] + outcomes["error"]
    return BatchSummary(
        batch=batch,
        planned=batch.planned,
        done=done,
        passed=passed,
        failed=failed,
        bot_errors=bot_errors,
        unverified=outcomes["unverified"],
        user_faults=outcomes["user_fault"],
        user_errors=outcomes["user_error"],
        infrastructure_errors=outcomes["infrastructure_error"],
        cancelled=outcomes["cancelled"],
        legacy_errors=outcomes["error"],
        errors=broken,
        evaluation_errors=outcomes["evaluation_error"],
        judge_errors=t.judge_errors,
        unevaluated=outcomes[UNEVALUATED],
        outcomes=outcomes,
        pass_rate=_rate(passed, judged),
        pass_rate_interval=wilson_interval(passed, judged),
        pass_rate_denominator=judged,
        pass_k=_pass_k(per_spec, batch.options.seed, batch.options.trials),
        flaky_specs=_flaky(per_spec) if batch.options.trials >= 2 else [],
        score_statistics=_score_statistics(distribution),
        score_distribution={f"score_{s}": distribution.get(s, 0) for s in (1, 2, 3)},
        mean_turns=_mean(t.turns),
        mean_duration_s=_mean(t.durations),
        total_duration_s=math.fsum(t.durations),
        profiles=t.profile_stats(),
        usage=usage,
        total_usage=total,
        stop_reasons=t.ordered_stop_reasons(),
        policy_violations=policy_violations(store, bid, max_listed),
        policy_violations_total=t.violations,
        failed_checks=failed_check_counts(store, bid),
        failures=failure_entries(store, bid, max_listed),
        failures_total=done - passed - outcomes["unverified"],
        bot_latency=t.bot_latency(),
        not_applicable_checks=not_applicable,
        passed_with_not_applicable=passed_with_na,
    )
