"""A batch's report, read from the store: its summary (parley.core.evaluation.BatchSummary, the
one place its counts, rates, scores, turns, time and cost are computed) and what only a report
lists: per profile and per spec, tokens and cost per role, stop reasons, the bot's response
time, how turns and response times spread (parley.core.reports.distributions), failures, policy
violations, failed and not-applicable checks, criteria in words.

The store gives one light row per conversation (parley.core.store.outcome_rows: a batch may
hold 10,000 conversations, which read and count in a fraction of a second, a page at a time)
and aggregates what needs the verdicts' JSON itself; the listed failures and violations are
capped. The summary's counting rules are in parley.core.evaluation.batch_summary.

A check that could not be applied (`not_applicable`: a world check on a bot without parley's
World, a tool expectation on a bot whose tool calls parley cannot see) neither passes nor fails:
a conversation passes on the checks that applied. The report counts the not-applicable checks
of runs that did not break, and how many passed conversations had any, so it can say so.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from typing import TypeVar

from pydantic import BaseModel, Field, computed_field

from parley.core.evaluation import BatchSummary, Interval, wilson_interval
from parley.core.records import (
    STOP_REASONS,
    BatchRecord,
    CheckFailureCount,
    CriterionCounts,
    FailureEntry,
    LimitCounts,
    NotApplicableCount,
    NotRead,
    OutcomeCounts,
    OutcomeRow,
    PolicyViolation,
    RoleUsage,
    StatedGoals,
)
from parley.core.reports.attack_stats import AttackReport, attack_report
from parley.core.reports.distributions import Histogram
from parley.core.reports.leaderboard import LeaderboardRow, leaderboard_row
from parley.core.rules import RuleSummary
from parley.core.store import (
    JUDGE_ROLE,
    Store,
    batch_rule_summaries,
    batch_worlds,
    criterion_counts,
    failed_check_counts,
    failure_entries,
    goals_only_stated,
    limit_counts,
    not_applicable_checks,
    not_read,
    outcome_rows,
    policy_violations,
    role_usage,
    rubric_calibration,
)

LEGACY_ERROR_NOTE = (
    "stored before parley told the bot's errors from the simulator's and its own, and not attributable from "
    "the error text: counted apart, as they were then"
)
UNVERIFIED_HINT = "add an `expect:` block or use an LLM judge (`--judge MODEL`)"
ROLE_ORDER = ("bot", "user", JUDGE_ROLE)
DEFAULT_MAX_LISTED = 100
_S = TypeVar("_S", bound="ProfileStats")


class ProfileStats(OutcomeCounts):
    """One profile's conversations: their counts (OutcomeCounts, under the summary's names) and
    pass rate, with its interval, mean score and turns."""

    name: str
    pass_rate_interval: Interval | None = None
    mean_score: float | None
    mean_turns: float

    @computed_field  # type: ignore[prop-decorator]
    @property
    def runs(self) -> int:
        """Its conversations (the table's Runs: `done`)."""
        return self.done


class SpecStats(ProfileStats):
    """One spec (a profile's conversation, a playbook, a scenario) over its trials; `name` is
    its profile's."""

    spec_id: str


class LatencyStats(BaseModel):
    """The bot's response time per turn."""

    turns: int
    mean_s: float
    min_s: float
    max_s: float


class BatchReport(BatchSummary):
    """The batch's summary and what its report lists besides (see the module doc)."""

    batch: BatchRecord
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
    criteria: list[CriterionCounts] = Field(default_factory=list)
    """Each criterion in words the batch's conversations were checked on, the authors' first."""
    rubric_calibration: str | None = None
    """How the judge that scored the batch was calibrated on its rubric ("κw 0.55",
    "uncalibrated"...); None when no LLM judge scored it."""
    limits: list[LimitCounts] = Field(default_factory=list)
    """Each limit check (`expect.limits`, `--limit`) with how it came out and its worst figure."""
    passed_with_not_applicable: int = 0
    """Passed conversations that had at least one not-applicable check (passed on the rest)."""
    specs: list[SpecStats] = Field(default_factory=list, exclude=True)
    """Per spec, in spec order, when asked for (`summarize(..., per_spec=True)`: the HTML report):
    its trials' counts and pass rate with its interval. Never in a dump: a batch of one trial per
    spec would make the JSON document's head as long as its results, which already give each
    conversation's spec and outcome."""
    turn_histogram: Histogram = Field(default_factory=Histogram)
    """Conversations by their number of turns."""
    latency_histogram: Histogram = Field(default_factory=Histogram)
    """Conversations that got an answer, by the bot's mean response time in them (seconds)."""
    goals_only_stated: list[StatedGoals] = Field(default_factory=list)
    """The specs whose offline customer only stated some goals (the first `max_listed`)."""
    rules: list[RuleSummary] = Field(default_factory=list)
    """The batch's pair and batch rules (`--rules`), as they were last decided: none when it had none."""
    rule_labels: dict[str, str] = Field(default_factory=dict)
    """`SPEC_ID trial N` of each conversation the rules' listed decisions name, by its id."""
    leaderboard: LeaderboardRow | None = None
    """The batch as its benchmark's leaderboard row, when its world is another benchmark's domain
    (tau2-bench's): parley.core.reports.leaderboard."""
    attacks: AttackReport | None = None
    """The batch's attacks (parley.core.reports.attack_stats): None when it has none."""
    not_read: NotRead = Field(default_factory=NotRead)
    """What no role read (criteria for want of an LLM judge, languages the claims check does not
    read): every surface says it beside the pass rate (`NotRead.note`)."""

    @property
    def rules_failed(self) -> int:
        """Pair and batch rules that failed (a pair, or the batch)."""
        return sum(1 for rule in self.rules if rule.failed)


def _mean(values: Sequence[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


class _Profile:
    __slots__ = ("outcomes", "scores", "turns")

    def __init__(self) -> None:
        self.outcomes: Counter[str] = Counter()
        self.scores: list[int] = []
        self.turns: list[int] = []


class _Details:
    """What the report lists beside the summary, gathered in the same pass over the rows: per
    profile, stop reasons, the bot's latency, policy violations."""

    def __init__(self, *, per_spec: bool = False) -> None:
        self.per_spec = per_spec
        self.profiles: dict[str, _Profile] = defaultdict(_Profile)
        self.specs: dict[str, _Profile] = defaultdict(_Profile)
        self.spec_order: dict[str, tuple[int, str]] = {}
        self.turns: list[int] = []
        self.mean_latencies: list[float] = []
        self.stop_reasons: Counter[str] = Counter()
        self.violations = 0
        self.answered_turns = 0
        self.latency: list[float] = []
        self.latency_lows: list[float] = []
        self.latency_highs: list[float] = []
        self.labels: dict[str, str] = {}

    def counted(self, rows: Iterator[OutcomeRow]) -> Iterator[OutcomeRow]:
        """The rows as they are, each noted on the way through."""
        for row in rows:
            self.add(row)
            yield row

    def add(self, r: OutcomeRow) -> None:
        self.labels[r.id] = f"{r.spec_id} trial {r.trial}"
        self.stop_reasons[r.stop_reason] += 1
        self.violations += r.policy_violations
        tallies = [self.profiles[r.name]]
        if self.per_spec:
            self.spec_order.setdefault(r.spec_id, (r.spec_index, r.name))
            tallies.append(self.specs[r.spec_id])
        for p in tallies:
            p.outcomes[r.outcome] += 1
            p.turns.append(r.turns)
            if r.score is not None:
                p.scores.append(r.score)
        self.turns.append(r.turns)
        if r.turns > 0:
            self.mean_latencies.append(r.bot_latency_s / r.turns)
            self.answered_turns += r.turns
            self.latency.append(r.bot_latency_s)
            if r.bot_latency_min_s is not None:
                self.latency_lows.append(r.bot_latency_min_s)
            if r.bot_latency_max_s is not None:
                self.latency_highs.append(r.bot_latency_max_s)

    def profile_stats(self) -> list[ProfileStats]:
        return [_stats(ProfileStats, self.profiles[name], name=name) for name in sorted(self.profiles)]

    def spec_stats(self) -> list[SpecStats]:
        ordered = sorted(self.specs, key=lambda spec_id: (self.spec_order[spec_id][0], spec_id))
        return [_stats(SpecStats, self.specs[s], name=self.spec_order[s][1], spec_id=s) for s in ordered]

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


def _stats(cls: type[_S], p: _Profile, **names: str) -> _S:
    counts = OutcomeCounts.of(p.outcomes)
    return cls(
        **names,
        outcomes=counts.outcomes,
        pass_rate_interval=wilson_interval(counts.passed, counts.pass_rate_denominator),
        mean_score=_mean(p.scores),
        mean_turns=_mean(p.turns) or 0.0,
    )


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


def batch_summary(store: Store, batch_id: str) -> BatchSummary:
    """The summary of a stored batch (id, unique prefix, `latest`...): its counts and rates only,
    without the report's lists."""
    batch = store.get_batch(batch_id)
    return BatchSummary.from_rows(
        outcome_rows(store, batch.id), planned=batch.planned, trials=batch.options.trials, seed=batch.options.seed
    )


def summarize(store: Store, batch_id: str, *, max_listed: int = DEFAULT_MAX_LISTED, per_spec: bool = False) -> BatchReport:
    """The report of a batch (id or unique prefix): its summary and its lists. Lists of failures
    and policy violations keep the first `max_listed` (in spec order); their totals are always
    complete. `per_spec` fills `specs` too."""
    batch = store.get_batch(batch_id)
    bid = batch.id
    details = _Details(per_spec=per_spec)
    summary = BatchSummary.from_rows(
        details.counted(outcome_rows(store, bid)), planned=batch.planned, trials=batch.options.trials, seed=batch.options.seed
    )
    usage, total = _usage(store, bid)
    not_applicable, passed_with_na = not_applicable_checks(store, bid)
    rules = batch_rule_summaries(store, bid)
    named = {cid for rule in rules for result in [*rule.failures, *filter(None, [rule.decision])] for cid in result.conversations}
    return summary.extended(
        BatchReport,
        batch=batch,
        profiles=details.profile_stats(),
        usage=usage,
        total_usage=total,
        stop_reasons=details.ordered_stop_reasons(),
        policy_violations=policy_violations(store, bid, max_listed),
        policy_violations_total=details.violations,
        failed_checks=failed_check_counts(store, bid),
        failures=failure_entries(store, bid, max_listed),
        failures_total=summary.not_passed,
        bot_latency=details.bot_latency(),
        not_applicable_checks=not_applicable,
        criteria=criterion_counts(store, bid),
        rubric_calibration=rubric_calibration(store, bid),
        limits=limit_counts(store, bid),
        passed_with_not_applicable=passed_with_na,
        rules=rules,
        rule_labels={cid: details.labels[cid] for cid in named if cid in details.labels},
        specs=details.spec_stats(),
        turn_histogram=Histogram.of(details.turns, whole=True),
        latency_histogram=Histogram.of(details.mean_latencies),
        goals_only_stated=goals_only_stated(store, bid, max_listed),
        not_read=not_read(store, bid),
        leaderboard=leaderboard_row(summary, batch_worlds(store, bid), batch.options.models.user),
        attacks=attack_report(store, bid, total=summary.done),
    )
