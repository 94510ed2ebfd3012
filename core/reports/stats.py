"""The numbers of one batch, read from the store: totals, pass rate, pass^k, scores, profiles,
tokens and cost per role, stop reasons, failures and policy violations.

Everything is aggregated in SQL (a batch may hold 10,000 conversations); only the listed
failures and violations come back as rows, and they are capped.

Counting rules, used everywhere: each conversation has one outcome (the store's OUTCOME_SQL,
parley.core.records.verdict.Outcome):
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
World, a tool expectation on a bot whose tool calls parley cannot see, a default judge check whose
judge failed) neither passes nor fails: a conversation passes on the checks that applied. The
summary counts the not-applicable checks of runs that did not break, by kind and reason, and how
many passed conversations had any, so the report can say so. With an LLM judge it also counts
the judge prompts condensed to fit the judge's context and those that could not fit.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field

from parley.core.evaluation.intervals import Interval, bootstrap_pass_hat_k, stats_seed, wilson_interval
from parley.core.evaluation.pass_k import pass_hat_k
from parley.core.records.batch import BatchRecord
from parley.core.records.conversation import BROKEN_STOPS, STOP_REASONS
from parley.core.records.verdict import OUTCOMES
from parley.core.store.store import JUDGE_ROLE, OUTCOME_SQL, Store

PASS_RATE_BASIS = (
    "passed / (passed + failed + bot errors): unverified conversations, simulator faults and errors, "
    "infrastructure errors, cancelled runs, evaluation errors and unevaluated conversations are counted apart"
)
LEGACY_ERROR_NOTE = (
    "stored before parley told the bot's errors from the simulator's and its own, and not attributable from "
    "the error text: counted apart, as they were then"
)
UNVERIFIED_HINT = "add an `expect:` block or use an LLM judge (`--judge MODEL`)"
BROKEN_SQL = "(" + ", ".join(f"'{s}'" for s in sorted(BROKEN_STOPS)) + ")"
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


class RoleUsage(BaseModel):
    role: str
    models: list[str] = Field(default_factory=list)
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    unreported_calls: int = 0
    cost_usd: float | None = 0.0
    """None: at least one call had no known price (the total is unknown, not 0)."""


class PolicyViolation(BaseModel):
    conversation_id: str
    spec_id: str
    name: str
    trial: int
    check: str
    reason: str


class FailureEntry(BaseModel):
    conversation_id: str
    spec_id: str
    name: str
    trial: int
    outcome: str  # any outcome but passed and unverified
    stop_reason: str
    reasons: list[str]


class CheckFailureCount(BaseModel):
    kind: str
    name: str
    count: int


class NotApplicableCount(BaseModel):
    """Checks of one kind that could not be applied for one reason: how many, in how many
    conversations, which (the first few names) and why. Runs that broke are left out: their
    checks are moot anyway."""

    kind: str
    checks: int
    conversations: int
    names: list[str]
    more_names: int = 0
    reason: str


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
    judge_prompts: int = 0
    """Runs an LLM judge was asked about."""
    judge_prompts_condensed: int = 0
    """Of `judge_prompts`, those whose transcript was condensed to fit the judge's context and sent."""
    judge_prompts_too_long: int = 0
    """Of `judge_prompts`, those that did not fit the judge's context even condensed, or that its
    endpoint refused as too long: judge errors, never scores."""
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


_BASE = "FROM conversations c LEFT JOIN verdicts v ON v.conversation_id = c.id WHERE c.batch_id = ?"
_JSON_CHECKS = "FROM conversations c JOIN verdicts v ON v.conversation_id = c.id, json_each(v.checks) j"

# Each reader below is one SQL aggregate over one batch; `q` is Store.read_sql.
Query = Callable[[str, Sequence[Any]], list[dict[str, Any]]]


def _totals(q: Query, bid: str) -> dict[str, Any]:
    counts = ",\n".join(f"COALESCE(SUM(o = '{o}'), 0) AS n_{o}" for o in (*OUTCOMES, "unevaluated"))
    return q(
        f"""SELECT COUNT(*) AS done, {counts},
               COALESCE(SUM(c.stop_reason NOT IN {BROKEN_SQL} AND json_extract(c.judge, '$.error') IS NOT NULL), 0)
                   AS judge_errors,
               COALESCE(SUM(json_extract(c.judge, '$.prompt_fit') IS NOT NULL), 0) AS judge_prompts,
               COALESCE(SUM(json_extract(c.judge, '$.prompt_fit') = 'condensed'), 0) AS judge_condensed,
               COALESCE(SUM(json_extract(c.judge, '$.prompt_fit') = 'too_long'), 0) AS judge_too_long,
               AVG(c.turns) AS mean_turns, AVG(c.duration_s) AS mean_duration,
               COALESCE(SUM(c.duration_s), 0) AS total_duration,
               COALESCE(SUM(c.policy_violations), 0) AS violations
            FROM (SELECT c.stop_reason, c.turns, c.duration_s, v.policy_violations, v.judge,
                         {OUTCOME_SQL} AS o {_BASE}) c""",
        [bid],
    )[0]


def _score_distribution(q: Query, bid: str) -> dict[int, int]:
    rows = q(f"SELECT v.score, COUNT(*) AS n {_BASE} AND v.score IS NOT NULL GROUP BY v.score", [bid])
    return {r["score"]: r["n"] for r in rows}


_JUDGED_SQL = "('passed', 'failed', 'bot_error')"


def _trials_per_spec(q: Query, bid: str) -> list[dict[str, Any]]:
    """Per spec: passed, judged trials and trials counted apart, in spec order."""
    return q(
        f"""SELECT c.spec_id, MIN(c.name) AS name, MIN(c.spec_index) AS spec_index,
                   SUM(o = 'passed') AS c, SUM(o IN {_JUDGED_SQL}) AS n, SUM(o NOT IN {_JUDGED_SQL}) AS other
            FROM (SELECT c.spec_id, c.name, c.spec_index, {OUTCOME_SQL} AS o {_BASE}) c
            GROUP BY c.spec_id ORDER BY spec_index, c.spec_id""",
        [bid],
    )


def _pass_k(rows: Sequence[Mapping[str, Any]], seed: int, trials: int) -> list[PassAtK]:
    per_spec = {r["spec_id"]: (r["c"], r["n"]) for r in rows if r["n"]}
    return [
        PassAtK(
            k=k,
            value=pass_hat_k_from_counts(per_spec, k),
            specs=sum(1 for _, n in per_spec.values() if n >= k),
            interval=bootstrap_pass_hat_k(per_spec, k, seed=stats_seed(seed, f"pass^{k}")),
        )
        for k in range(1, max(trials, 1) + 1)
    ]


def _flaky(rows: Sequence[Mapping[str, Any]]) -> list[FlakySpec]:
    """Specs with 2+ judged trials that disagree, the most evenly split first (then the most
    trials, then spec order)."""
    flaky = [r for r in rows if r["n"] >= 2 and 0 < r["c"] < r["n"]]
    flaky.sort(key=lambda r: (-min(r["c"], r["n"] - r["c"]) / r["n"], -r["n"], r["spec_index"], r["spec_id"]))
    return [
        FlakySpec(spec_id=r["spec_id"], name=r["name"], trials=r["n"], passed=r["c"], failed=r["n"] - r["c"], other=r["other"])
        for r in flaky
    ]


def _profiles(q: Query, bid: str) -> list[ProfileStats]:
    rows = q(
        f"""SELECT c.name, COUNT(*) AS runs, SUM(o = 'passed') AS passed, SUM(o IN ('failed', 'bot_error')) AS failed,
                   SUM(o NOT IN {_JUDGED_SQL}) AS errors, AVG(c.score) AS mean_score, AVG(c.turns) AS mean_turns
            FROM (SELECT c.name, c.turns, v.score, {OUTCOME_SQL} AS o {_BASE}) c
            GROUP BY c.name ORDER BY c.name""",
        [bid],
    )
    return [
        ProfileStats(
            name=r["name"],
            runs=r["runs"],
            passed=r["passed"],
            failed=r["failed"],
            errors=r["errors"],
            pass_rate=_rate(r["passed"], r["passed"] + r["failed"]),
            pass_rate_interval=wilson_interval(r["passed"], r["passed"] + r["failed"]),
            mean_score=r["mean_score"],
            mean_turns=r["mean_turns"] or 0.0,
        )
        for r in rows
    ]


def _usage(q: Query, bid: str) -> tuple[list[RoleUsage], RoleUsage]:
    """Per role and in total. A role's cost is None as soon as one of its calls had no price."""
    rows = q(
        """SELECT u.role, group_concat(DISTINCT u.model) AS models, SUM(u.calls) AS calls,
                  SUM(u.input_tokens) AS input_tokens, SUM(u.output_tokens) AS output_tokens,
                  SUM(u.unreported_calls) AS unreported_calls,
                  CASE WHEN COUNT(u.cost_usd) = COUNT(*) THEN TOTAL(u.cost_usd) END AS cost_usd
           FROM usage u JOIN conversations c ON c.id = u.conversation_id
           WHERE c.batch_id = ? GROUP BY u.role""",
        [bid],
    )
    usage = [
        RoleUsage(
            role=r["role"],
            models=sorted(set((r["models"] or "").split(","))),
            calls=r["calls"],
            input_tokens=r["input_tokens"],
            output_tokens=r["output_tokens"],
            unreported_calls=r["unreported_calls"],
            cost_usd=r["cost_usd"],
        )
        for r in rows
    ]
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


def _stop_reasons(q: Query, bid: str) -> dict[str, int]:
    """Counts in STOP_REASONS order (any other reason after them)."""
    counted = {r["stop_reason"]: r["n"] for r in q(f"SELECT c.stop_reason, COUNT(*) AS n {_BASE} GROUP BY c.stop_reason", [bid])}
    ordered: dict[str, int] = {s: counted.pop(s) for s in STOP_REASONS if s in counted}
    ordered.update(sorted(counted.items()))
    return ordered


def _policy_violations(q: Query, bid: str, limit: int) -> list[PolicyViolation]:
    rows = q(
        f"""SELECT c.id, c.spec_id, c.name, c.trial,
                   json_extract(j.value, '$.name') AS check_name, json_extract(j.value, '$.reason') AS reason
            {_JSON_CHECKS}
            WHERE c.batch_id = ? AND v.policy_violations > 0
              AND json_extract(j.value, '$.policy_violation') AND json_extract(j.value, '$.outcome') = 'fail'
            ORDER BY c.spec_index, c.spec_id, c.trial, j.key LIMIT ?""",
        [bid, limit],
    )
    return [
        PolicyViolation(
            conversation_id=r["id"],
            spec_id=r["spec_id"],
            name=r["name"],
            trial=r["trial"],
            check=r["check_name"] or "",
            reason=r["reason"] or "",
        )
        for r in rows
    ]


def _failed_checks(q: Query, bid: str) -> list[CheckFailureCount]:
    rows = q(
        f"""SELECT json_extract(j.value, '$.kind') AS check_kind, json_extract(j.value, '$.name') AS check_name,
                   COUNT(*) AS n
            {_JSON_CHECKS}
            WHERE c.batch_id = ? AND json_extract(j.value, '$.outcome') = 'fail'
            GROUP BY check_kind, check_name ORDER BY n DESC, check_kind, check_name""",
        [bid],
    )
    # (`check_kind`, not `kind`: conversations has a `kind` column, which GROUP BY would pick)
    return [CheckFailureCount(kind=r["check_kind"] or "", name=r["check_name"] or "", count=r["n"]) for r in rows]


def _failures(q: Query, bid: str, limit: int) -> list[FailureEntry]:
    """Every conversation that neither passed nor was merely unverified, with its reasons: the
    run's error, the verdict's error, the simulator's faults, then each failed (or undecidable)
    check as "name: reason"."""
    rows = q(
        f"""SELECT c.id, c.spec_id, c.name, c.trial, c.stop_reason, c.error, v.error AS verdict_error,
                   v.checks, v.user_faults, {OUTCOME_SQL} AS o
            {_BASE} AND ({OUTCOME_SQL}) NOT IN ('passed', 'unverified')
            ORDER BY c.spec_index, c.spec_id, c.trial LIMIT ?""",
        [bid, limit],
    )
    failures = []
    for r in rows:
        reasons = [e for e in (r["error"], r["verdict_error"]) if e]
        reasons += [f"user fault ({f.get('kind')}): {f.get('reason')}" for f in json.loads(r["user_faults"] or "[]")]
        reasons += [
            f"{check.get('name')}: {check.get('reason')}"
            for check in json.loads(r["checks"] or "[]")
            if check.get("outcome") in ("fail", "error")
        ]
        failures.append(
            FailureEntry(
                conversation_id=r["id"],
                spec_id=r["spec_id"],
                name=r["name"],
                trial=r["trial"],
                outcome=r["o"],
                stop_reason=r["stop_reason"],
                reasons=list(dict.fromkeys(reasons)),
            )
        )
    return failures


def _not_applicable(q: Query, bid: str, shown_names: int = 5) -> tuple[list[NotApplicableCount], int]:
    na = "json_extract(j.value, '$.outcome') = 'not_applicable'"
    rows = q(
        f"""SELECT json_extract(j.value, '$.kind') AS check_kind, json_extract(j.value, '$.reason') AS reason,
                   COUNT(*) AS n, COUNT(DISTINCT c.id) AS convs,
                   json_group_array(DISTINCT json_extract(j.value, '$.name')) AS names
            {_JSON_CHECKS}
            WHERE c.batch_id = ? AND c.stop_reason NOT IN {BROKEN_SQL} AND {na}
            GROUP BY check_kind, reason ORDER BY n DESC, check_kind, reason""",
        [bid],
    )
    counts = []
    for r in rows:
        names = sorted(str(n) for n in json.loads(r["names"] or "[]") if n)
        counts.append(
            NotApplicableCount(
                kind=r["check_kind"] or "",
                checks=r["n"],
                conversations=r["convs"],
                names=names[:shown_names],
                more_names=max(0, len(names) - shown_names),
                reason=r["reason"] or "",
            )
        )
    if not counts:
        return counts, 0
    passed = q(
        f"""SELECT COUNT(*) AS n {_BASE} AND ({OUTCOME_SQL}) = 'passed'
              AND EXISTS (SELECT 1 FROM json_each(v.checks) j WHERE {na})""",
        [bid],
    )[0]["n"]
    return counts, passed


def _bot_latency(q: Query, bid: str) -> LatencyStats | None:
    r = q(
        f"""SELECT SUM(c.turns) AS turns, TOTAL(c.bot_latency_total_s) AS total,
                   MIN(c.bot_latency_min_s) AS lo, MAX(c.bot_latency_max_s) AS hi
            {_BASE} AND c.turns > 0""",
        [bid],
    )[0]
    if not r["turns"]:
        return None
    return LatencyStats(turns=r["turns"], mean_s=r["total"] / r["turns"], min_s=r["lo"], max_s=r["hi"])


def summarize(store: Store, batch_id: str, *, max_listed: int = DEFAULT_MAX_LISTED) -> BatchSummary:
    """The summary of a batch (id or unique prefix). Lists of failures and policy violations
    keep the first `max_listed` (in spec order); their totals are always complete."""
    batch = store.get_batch(batch_id)
    bid, q = batch.id, store.read_sql
    t = _totals(q, bid)
    outcomes = {o: t[f"n_{o}"] for o in (*OUTCOMES, "unevaluated")}
    distribution = _score_distribution(q, bid)
    usage, total = _usage(q, bid)
    not_applicable, passed_with_na = _not_applicable(q, bid)
    per_spec = _trials_per_spec(q, bid)
    passed, failed, bot_errors = outcomes["passed"], outcomes["failed"], outcomes["bot_error"]
    judged = passed + failed + bot_errors
    broken = outcomes["user_error"] + outcomes["infrastructure_error"] + outcomes["cancelled"] + outcomes["error"]
    return BatchSummary(
        batch=batch,
        planned=batch.planned,
        done=t["done"],
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
        judge_errors=t["judge_errors"],
        judge_prompts=t["judge_prompts"],
        judge_prompts_condensed=t["judge_condensed"],
        judge_prompts_too_long=t["judge_too_long"],
        unevaluated=outcomes["unevaluated"],
        outcomes=outcomes,
        pass_rate=_rate(passed, judged),
        pass_rate_interval=wilson_interval(passed, judged),
        pass_rate_denominator=judged,
        pass_k=_pass_k(per_spec, batch.options.seed, batch.options.trials),
        flaky_specs=_flaky(per_spec) if batch.options.trials >= 2 else [],
        score_statistics=_score_statistics(distribution),
        score_distribution={f"score_{s}": distribution.get(s, 0) for s in (1, 2, 3)},
        mean_turns=t["mean_turns"],
        mean_duration_s=t["mean_duration"],
        total_duration_s=t["total_duration"],
        profiles=_profiles(q, bid),
        usage=usage,
        total_usage=total,
        stop_reasons=_stop_reasons(q, bid),
        policy_violations=_policy_violations(q, bid, max_listed),
        policy_violations_total=t["violations"],
        failed_checks=_failed_checks(q, bid),
        failures=_failures(q, bid, max_listed),
        failures_total=t["done"] - passed - outcomes["unverified"],
        bot_latency=_bot_latency(q, bid),
        not_applicable_checks=not_applicable,
        passed_with_not_applicable=passed_with_na,
    )
