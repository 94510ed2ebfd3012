"""One batch's numbers, computed once: `BatchSummary`, from plain per-conversation rows.

Every count a person reads about a batch (the command line's end lines, `parley batches
list/show`, the markdown report, the JSON export, the batch service's views, the app's lines,
the comparison) is a field of this record, under one name each. Its counts per outcome and the
figures derived from them (passed, failed, bot errors, errors, broken, the pass rate and its
denominator...) are those of parley.core.records.OutcomeCounts, defined there once; this record
adds what the conversations say besides:
- the pass rate's 95% Wilson interval, and pass^k over the judged trials only (k >= 2: with a
  seeded bootstrap interval over specs);
- a *judge error* is a conversation whose judge failed (no score), whatever its outcome;
- *judge prompts* are the conversations an LLM judge was asked about: of them, how many were
  *condensed* to fit the judge's context, and how many were *too long* even condensed.

The rows are `SummaryRow`s: what the store reads (parley.core.store.outcome_rows gives them, with
more), or what an exported file holds (one JSON object, NDJSON line or CSV row per conversation:
`SummaryRow.model_validate` takes them as they are). The same conversations give the same
summary from either.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from functools import cached_property
from typing import Any, Protocol, Self, TypeVar

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, computed_field

from parley.core.evaluation.intervals import Interval, bootstrap_pass_hat_k, stats_seed, wilson_interval
from parley.core.evaluation.pass_k import pass_hat_k
from parley.core.records import BROKEN_STOPS, JUDGED, PASSED, OutcomeCounts

__all__ = [
    "PASS_RATE_BASIS",
    "BatchSummary",
    "CountedRow",
    "FlakySpec",
    "NumberStatistics",
    "PassAtK",
    "ScoreStatistics",
    "pass_hat_k_from_counts",
]

PASS_RATE_BASIS = (
    "passed / (passed + failed + bot errors): unverified conversations, simulator faults and errors, "
    "infrastructure errors, cancelled runs, evaluation errors and unevaluated conversations are counted apart"
)
_SCORES = (1, 2, 3)
S = TypeVar("S", bound="BatchSummary")


def pass_hat_k_from_counts(counts: Mapping[str, tuple[int, int]], k: int) -> float | None:
    """pass^k from (passed c, judged trials n) per spec (tau-bench's mean of C(c, k) / C(n, k)).
    Specs with fewer than k judged trials are left out, as a batch with errors may have them;
    None when no spec has k."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    eligible = {spec: [True] * c + [False] * (n - c) for spec, (c, n) in counts.items() if n >= k}
    return pass_hat_k(eligible, k) if eligible else None


class NumberStatistics(BaseModel):
    """Of one number over the conversations that have it. `std` is the sample standard deviation
    (0 for a single value)."""

    count: int = 0
    mean: float | None = None
    median: float | None = None
    std: float | None = None
    min: float | None = None
    max: float | None = None

    @classmethod
    def of(cls, values: list[float]) -> Self:
        if not values:
            return cls()
        n = len(values)
        mean = math.fsum(values) / n
        # (not statistics.stdev: its exact fractions cost more than a list of batches can pay)
        std = math.sqrt(math.fsum((x - mean) ** 2 for x in values) / (n - 1)) if n > 1 else 0.0
        return cls(count=n, mean=mean, median=float(statistics.median(values)), std=std, min=min(values), max=max(values))


class ScoreStatistics(NumberStatistics):
    """Over the conversations the judge scored (1-3): 003's score statistics."""

    min: int | None = None
    max: int | None = None


class PassAtK(BaseModel):
    k: int
    value: float | None
    specs: int
    """Specs with at least k judged trials (the mean is over these)."""
    interval: Interval | None = None
    """95% percentile bootstrap over those specs, seeded: the same batch (and a re-run of it
    with the same results) always shows the same interval."""


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


class CountedRow(Protocol):
    """What `BatchSummary.from_rows` reads of a conversation: a `SummaryRow` (parley.core.records),
    or any row with these fields (the store lists batches from plain tuples)."""

    @property
    def spec_id(self) -> str: ...
    @property
    def spec_index(self) -> int: ...
    @property
    def name(self) -> str: ...
    @property
    def trial(self) -> int: ...
    @property
    def outcome(self) -> str: ...
    @property
    def score(self) -> int | None: ...
    @property
    def turns(self) -> int: ...
    @property
    def duration_s(self) -> float: ...
    @property
    def cost_usd(self) -> float | None: ...
    @property
    def stop_reason(self) -> str | None: ...
    @property
    def judge_error(self) -> bool: ...
    @property
    def judge_prompt_fit(self) -> str | None: ...
    @property
    def criteria_prompt_fit(self) -> str | None: ...
    @property
    def checkpoint_prompt_fits(self) -> Sequence[str]: ...


class _Spec:
    __slots__ = ("name", "order", "passed", "judged", "apart")

    def __init__(self, name: str, order: int) -> None:
        self.name, self.order = name, order
        self.passed = self.judged = self.apart = 0


class BatchSummary(OutcomeCounts):
    """The numbers of one batch (see the module doc): its counts (OutcomeCounts: passed, failed,
    bot_errors, errors, broken, the pass rate...) and what the conversations say besides. Build it
    with `from_rows` (or, for a subclass that adds fields, `extended`): `pass_k` is computed from
    the per-spec counts it keeps, which a summary read back from JSON does not have."""

    model_config = ConfigDict(frozen=False)
    serialized_first = ("planned",)

    planned: int
    """Conversations the batch planned (the rows' count when not known)."""
    judge_errors: int
    """Runs whose judge failed (no score), whatever their outcome (runs that broke left out)."""
    judge_prompts: int = 0
    """Prompts an LLM judge was sent or refused for its context: one per conversation for the
    score, one more for the criteria in words, one per `judge` checkpoint reached (each fitted to
    the judge's context)."""
    judge_prompts_condensed: int = 0
    """Of `judge_prompts`, those whose transcript was condensed to fit the judge's context and sent."""
    judge_prompts_too_long: int = 0
    """Of `judge_prompts`, those that did not fit the judge's context even condensed, or that its
    endpoint refused as too long: judge errors, never scores."""
    pass_rate_interval: Interval | None = None
    """95% Wilson interval of the pass rate."""
    pass_rate_basis: str = PASS_RATE_BASIS
    flaky_specs: list[FlakySpec] = Field(default_factory=list)
    """With 2 or more trials: the specs whose judged trials disagree, most disagreeing first."""
    score_statistics: ScoreStatistics
    score_distribution: dict[str, int]
    """003's shape: {"score_1": n, "score_2": n, "score_3": n}."""
    unscored: int = 0
    """Conversations without a score (the fourth bar of the distribution)."""
    turn_statistics: NumberStatistics = Field(default_factory=NumberStatistics)
    duration_statistics: NumberStatistics = Field(default_factory=NumberStatistics)
    """Seconds per conversation."""
    mean_turns: float | None
    mean_duration_s: float | None
    total_duration_s: float
    cost_usd: float | None = 0.0
    """The batch's cost; None when any conversation's cost is unknown (never 0 for unknown)."""
    cost_unknown: int = 0
    """Conversations whose cost is unknown (a model without a price)."""
    mean_cost_usd: float | None = None

    _per_spec: dict[str, tuple[int, int]] = PrivateAttr(default_factory=dict)
    _trials: int = PrivateAttr(default=1)
    _seed: int | str = PrivateAttr(default=0)

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def pass_k(self) -> list[PassAtK]:
        """pass^1 .. pass^trials over the specs with enough judged trials, each with its interval
        (computed when first read: a list of batches never pays for the bootstrap)."""
        per_spec = self._per_spec
        return [
            PassAtK(
                k=k,
                value=pass_hat_k_from_counts(per_spec, k),
                specs=sum(1 for _, n in per_spec.values() if n >= k),
                interval=bootstrap_pass_hat_k(per_spec, k, seed=stats_seed(self._seed, f"pass^{k}")),
            )
            for k in range(1, max(self._trials, 1) + 1)
        ]

    def extended(self, cls: type[S], **extra: Any) -> S:
        """This summary as `cls`, a subclass that adds fields of its own (the report, a view)."""
        out = cls(**{name: getattr(self, name) for name in BatchSummary.model_fields}, **extra)
        out._per_spec, out._trials, out._seed = self._per_spec, self._trials, self._seed
        return out

    @staticmethod
    def from_rows(
        rows: Iterable[CountedRow], *, planned: int | None = None, trials: int | None = None, seed: int | str = 0
    ) -> BatchSummary:
        """The summary of these conversations (one pass; nothing but a few numbers per
        conversation is held). `planned` defaults to the rows' count, `trials` (pass^k's largest
        k) to the most trials any spec has; `seed` seeds pass^k's intervals."""
        outcomes: Counter[str] = Counter()
        scores: Counter[int] = Counter()
        specs: dict[str, _Spec] = {}
        turns: list[float] = []
        durations: list[float] = []
        costs: list[float] = []
        judge_errors = cost_unknown = max_trial = 0
        fits: Counter[str] = Counter()
        for row in rows:
            o = row.outcome
            outcomes[o] += 1
            if row.score is not None:
                scores[row.score] += 1
            turns.append(row.turns)
            durations.append(row.duration_s)
            if row.cost_usd is None:
                cost_unknown += 1
            else:
                costs.append(row.cost_usd)
            judge_errors += row.judge_error and row.stop_reason not in BROKEN_STOPS
            # the score's call, the criteria's, each checkpoint's
            for fit in (row.judge_prompt_fit, row.criteria_prompt_fit, *row.checkpoint_prompt_fits):
                if fit is not None:
                    fits[fit] += 1
            max_trial = max(max_trial, row.trial)
            spec = specs.get(row.spec_id)
            if spec is None:
                spec = specs[row.spec_id] = _Spec(row.name, row.spec_index)
            else:
                spec.order, spec.name = min(spec.order, row.spec_index), min(spec.name, row.name)
            spec.passed += o in PASSED
            spec.judged += o in JUDGED
            spec.apart += o not in JUDGED

        done = len(turns)
        counts = OutcomeCounts.of(outcomes)
        passed, judged = counts.passed, counts.pass_rate_denominator
        trials = trials if trials is not None else max(max_trial, 1)
        ordered = sorted(specs.items(), key=lambda item: (item[1].order, item[0]))
        per_spec = {spec_id: (s.passed, s.judged) for spec_id, s in ordered if s.judged}
        cost = None if cost_unknown else math.fsum(costs)
        summary = BatchSummary(
            planned=planned if planned is not None else done,
            outcomes=counts.outcomes,
            judge_errors=judge_errors,
            judge_prompts=sum(fits.values()),
            judge_prompts_condensed=fits["condensed"],
            judge_prompts_too_long=fits["too_long"],
            pass_rate_interval=wilson_interval(passed, judged),
            flaky_specs=_flaky(ordered) if trials >= 2 else [],
            score_statistics=ScoreStatistics.of([s for s, n in sorted(scores.items()) for _ in range(n)]),
            score_distribution={f"score_{s}": scores.get(s, 0) for s in _SCORES},
            unscored=done - sum(scores.values()),
            turn_statistics=NumberStatistics.of(turns),
            duration_statistics=NumberStatistics.of(durations),
            mean_turns=math.fsum(turns) / done if done else None,
            mean_duration_s=math.fsum(durations) / done if done else None,
            total_duration_s=math.fsum(durations),
            cost_usd=cost,
            cost_unknown=cost_unknown,
            mean_cost_usd=cost / done if cost is not None and done else None,
        )
        summary._per_spec, summary._trials, summary._seed = per_spec, trials, seed
        return summary


def _flaky(specs: list[tuple[str, _Spec]]) -> list[FlakySpec]:
    """Specs with 2+ judged trials that disagree, the most evenly split first (then the most
    trials, then spec order)."""
    flaky = [(spec_id, s) for spec_id, s in specs if s.judged >= 2 and 0 < s.passed < s.judged]
    flaky.sort(key=lambda item: (-min(item[1].passed, item[1].judged - item[1].passed) / item[1].judged, -item[1].judged))
    return [
        FlakySpec(spec_id=spec_id, name=s.name, trials=s.judged, passed=s.passed, failed=s.judged - s.passed, other=s.apart)
        for spec_id, s in flaky
    ]
