"""Two batches side by side: what got better, what broke, and whether it is more than noise.

`compare_batches(store, base, new)` matches conversations by spec id and trial (the same spec
and seed) and sorts every change, most important first:
- regressions: passed -> a failure of the bot (failed, bot_error), or passed -> a simulator fault
  (user_fault) in a conversation where a check about the bot failed;
- fixes: a failure of the bot -> passed;
- specs only in the new batch (new) and only in the base (missing);
- other outcome changes (to or from unverified, a simulator fault, an error of any kind...); a
  pass lost to a simulator fault is named in the verdict's line (`lost_to_simulator`): the bot
  was not judged where it passed before;
- score changes (same outcome, another judge score);
- check changes (same outcome and score, another set of failed checks or of criteria met); and,
  over every matched pair, which checks started or stopped failing and which criteria in words
  started or stopped being met;
- whether the batches were judged by differently calibrated judges (parley.core.reports.
  compare_calibration): their verdicts' changes may then be the judges'.
For each side it gives the pass rate with its Wilson interval and pass^k with a seeded
bootstrap interval (each side's summary, seeded by its batch's seed as its own report is), over
the pairs both batches ran (so the two are comparable), and tokens,
cost and latency. Whether the change is beyond noise is the exact McNemar test
(parley.core.reports.paired_test) over the pairs both sides judged; a spec regressed beyond
noise when it lost more trials than it won back and either the whole batch got worse beyond
noise or the spec's own trials show it.

Everything is read with one query per batch (no transcript): 1,000 conversations a side
compare in well under a second.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Literal

from pydantic import BaseModel, Field

from parley.core.evaluation import BatchSummary, Interval, PassAtK
from parley.core.records import BOT_FAILURES, PASSED, BatchRecord, OutcomeRow
from parley.core.reports.attack_compare import AttackComparison, compare_attacks
from parley.core.reports.compare_calibration import CalibrationDifference, calibration_difference
from parley.core.reports.paired_test import DEFAULT_ALPHA, PairedTest, mcnemar_exact, one_sided_p
from parley.core.store import Store, outcome_rows

ChangeKind = Literal["regression", "fix", "outcome_change", "score_change", "check_change"]
CHANGE_ORDER: tuple[ChangeKind, ...] = ("regression", "fix", "outcome_change", "score_change", "check_change")
PairKey = tuple[str, int]


_Row = OutcomeRow  # one stored conversation as the comparison reads it


def _read_rows(store: Store, batch_id: str) -> dict[PairKey, _Row]:
    return {(r.spec_id, r.trial): r for r in outcome_rows(store, batch_id)}


# ---- the records ----------------------------------------------------------------------------


class SideOfPair(BaseModel):
    """One batch's conversation of a matched pair."""

    conversation_id: str
    outcome: str
    stop_reason: str
    score: int | None
    failed_checks: list[str]
    first_divergence: int | None = None
    """A replayed conversation: the first bot turn (1-based) whose answer differed from the
    stored one; None: none did (or not a replay)."""


class PairChange(BaseModel):
    """One spec x trial whose result changed between the batches."""

    kind: ChangeKind
    spec_id: str
    name: str
    trial: int
    base: SideOfPair
    new: SideOfPair
    started_failing: list[str] = Field(default_factory=list)
    """Checks that failed in the new batch and not in the base."""
    stopped_failing: list[str] = Field(default_factory=list)
    started_being_met: list[str] = Field(default_factory=list)
    """Criteria in words met in the new batch and not in the base."""
    stopped_being_met: list[str] = Field(default_factory=list)

    @property
    def failed_side(self) -> SideOfPair:
        """The side that failed: the new one for a regression, the base for a fix."""
        return self.new if self.kind == "regression" else self.base

    @property
    def checks_turned(self) -> list[str]:
        """The checks that started failing (a regression) or stopped failing (a fix)."""
        return self.started_failing if self.kind == "regression" else self.stopped_failing


class SpecOnlyOnOneSide(BaseModel):
    """A spec one batch ran and the other did not."""

    spec_id: str
    name: str
    conversations: int
    outcomes: dict[str, int]


class CheckChange(BaseModel):
    """One check, over every matched pair: in how many it started or stopped failing."""

    check: str
    started_failing: int
    stopped_failing: int


class CriterionChange(BaseModel):
    """One criterion in words, over every matched pair: in how many it started or stopped being met."""

    criterion: str
    started_being_met: int
    stopped_being_met: int


class SpecRegression(BaseModel):
    """A spec that lost more trials than it won back."""

    spec_id: str
    name: str
    regressions: int
    fixes: int
    p_worse: float
    """One-sided exact test over the spec's own trials."""
    beyond_noise: bool


class Rate(BaseModel):
    value: float | None
    successes: int
    n: int
    interval: Interval | None


class SideSummary(BaseModel):
    """One batch: its record, what it holds, and its numbers over the pairs both batches ran."""

    batch: BatchRecord
    conversations: int
    """Every stored conversation of the batch."""
    outcomes: dict[str, int]
    """Every stored conversation by outcome."""
    pass_rate: Rate
    """Over the matched pairs: passed / (passed + failures of the bot)."""
    pass_k: list[PassAtK]
    """Over the matched pairs' specs."""
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    """None: some call's price is unknown (never 0 for unknown)."""
    mean_cost_usd: float | None
    mean_duration_s: float | None
    mean_turns: float | None
    bot_latency_s: float | None
    """Mean per bot answer."""


class ReplayStats(BaseModel):
    """The new batch replays the base's customers: how far its bot's answers strayed."""

    conversations: int
    diverged: int
    """Conversations where some bot answer differed from the stored one."""
    exhausted: int
    """Conversations that ended with replay_exhausted."""


class BatchComparison(BaseModel):
    """Everything `parley compare BASE NEW` says (see the module doc)."""

    base: SideSummary
    new: SideSummary
    same_batch: bool
    made_from_base: Literal["rerun", "replay", "rescore", "mutant"] | None
    """The new batch is a re-run (its missing specs were not re-run), a replay, a re-score or a
    mutant (`parley mutate`) of the base."""
    replay: ReplayStats | None = None
    sources_only_in_base: list[str]
    sources_only_in_new: list[str]
    common_specs: int
    matched_pairs: int
    trials_only_in_base: int
    """Conversations of common specs whose trial the new batch did not run."""
    trials_only_in_new: int
    new_specs: list[SpecOnlyOnOneSide]
    missing_specs: list[SpecOnlyOnOneSide]
    changes: list[PairChange]
    """Most important first (CHANGE_ORDER), then in spec order and trial."""
    check_changes: list[CheckChange]
    criterion_changes: list[CriterionChange] = Field(default_factory=list)
    paired_test: PairedTest
    spec_regressions: list[SpecRegression]
    calibration: CalibrationDifference | None = None
    """Where the two batches' judges were calibrated differently (None: they were not, or no
    model judged them): their verdicts' changes may be the judges'."""
    attacks: AttackComparison | None = None
    """The two batches' attacks compared per strategy (parley.core.reports.attack_compare): None
    unless both have attacks."""

    def of_kind(self, kind: ChangeKind) -> list[PairChange]:
        return [c for c in self.changes if c.kind == kind]

    @property
    def lost_to_simulator(self) -> list[PairChange]:
        """Passes that became simulator faults with no check about the bot failing: not a
        regression, but the bot was not judged where it passed before (worth a re-run)."""
        return [c for c in self.changes if c.kind == "outcome_change" and c.base.outcome in PASSED and c.new.outcome == "user_fault"]

    @property
    def regressed_beyond_noise(self) -> list[str]:
        """Spec ids that regressed beyond noise: what `--fail-on-regression` fails on."""
        return [s.spec_id for s in self.spec_regressions if s.beyond_noise]

    @property
    def regressed_strategies(self) -> list[str]:
        """Attack strategies that regressed beyond noise: `--fail-on-regression` fails on them too."""
        return self.attacks.regressed if self.attacks is not None else []

    @property
    def missing_news(self) -> list[SpecOnlyOnOneSide]:
        """The base's specs the new batch did not run, as news: none for a re-run, which left
        out on purpose what it did not re-run (every surface lists these, never `missing_specs`)."""
        return self.missing_specs if self.made_from_base != "rerun" else []

    @property
    def no_change(self) -> bool:
        """Nothing changed in what both ran, and no spec came or went (a re-run's left-out
        specs are not news)."""
        return not self.changes and not self.new_specs and not self.missing_news


# ---- building it ------------------------------------------------------------------------------


def _side_of(row: _Row) -> SideOfPair:
    # model_construct here and in _change: built from the store's own rows, which need no validating
    return SideOfPair.model_construct(
        conversation_id=row.id,
        outcome=row.outcome,
        stop_reason=row.stop_reason,
        score=row.score,
        failed_checks=sorted(row.failed_checks),
        first_divergence=row.first_divergence,
    )


def _made_from(base: BatchRecord, new: BatchRecord) -> Literal["rerun", "replay", "rescore", "mutant"] | None:
    if new.parent_id != base.id or new.id == base.id:
        return None
    if new.options.rescore_of:
        return "rescore"
    if new.options.mutant:
        return "mutant"
    return "rerun" if new.options.rerun else "replay"


def classify(base: str, new: str, *, new_failed_checks: bool = False) -> ChangeKind | None:
    """The kind of an outcome change (None: the outcome did not change). A pass that became a
    simulator fault is a regression when a check about the bot failed in it (`new_failed_checks`)."""
    if base == new:
        return None
    if base in PASSED and (new in BOT_FAILURES or (new == "user_fault" and new_failed_checks)):
        return "regression"
    if base in BOT_FAILURES and new in PASSED:
        return "fix"
    return "outcome_change"


def _classify(base: _Row, new: _Row) -> ChangeKind | None:
    return classify(base.outcome, new.outcome, new_failed_checks=bool(new.failed_checks))


def _change(base: _Row, new: _Row) -> PairChange | None:
    kind = _classify(base, new)
    if kind is None:
        if base.score != new.score:
            kind = "score_change"
        elif base.failed_checks != new.failed_checks or base.met_criteria != new.met_criteria:
            kind = "check_change"
        else:
            return None
    return PairChange.model_construct(
        kind=kind,
        spec_id=new.spec_id,
        name=new.name,
        trial=new.trial,
        base=_side_of(base),
        new=_side_of(new),
        started_failing=sorted(new.failed_checks - base.failed_checks),
        stopped_failing=sorted(base.failed_checks - new.failed_checks),
        started_being_met=sorted(new.met_criteria - base.met_criteria),
        stopped_being_met=sorted(base.met_criteria - new.met_criteria),
    )


def _only_on_one_side(rows: Iterable[_Row]) -> list[SpecOnlyOnOneSide]:
    by_spec: dict[str, list[_Row]] = defaultdict(list)
    for row in rows:
        by_spec[row.spec_id].append(row)
    ordered = sorted(by_spec.values(), key=lambda rs: (rs[0].spec_index, rs[0].spec_id))
    return [
        SpecOnlyOnOneSide(
            spec_id=rs[0].spec_id, name=rs[0].name, conversations=len(rs), outcomes=dict(Counter(r.outcome for r in rs).most_common())
        )
        for rs in ordered
    ]


def _summary(batch: BatchRecord, rows: dict[PairKey, _Row], matched: Sequence[_Row]) -> SideSummary:
    """One side: its whole summary and the summary of its matched pairs, both computed as every
    report computes them (parley.core.evaluation.BatchSummary, seeded by the batch's own seed),
    so a batch compared in full shows the numbers its own report shows."""
    every = list(rows.values())
    whole = BatchSummary.from_rows(every, planned=batch.planned, trials=batch.options.trials, seed=batch.options.seed)
    paired_trials = max((r.trial for r in matched), default=batch.options.trials)
    if len(matched) == len(every) and paired_trials == batch.options.trials:  # every conversation has its pair
        paired = whole
    else:
        paired = BatchSummary.from_rows(matched, trials=paired_trials, seed=batch.options.seed)
    turns = sum(r.turns for r in every)
    return SideSummary(
        batch=batch,
        conversations=whole.done,
        outcomes=dict(sorted(((o, n) for o, n in whole.outcomes.items() if n), key=lambda item: -item[1])),
        pass_rate=Rate(value=paired.pass_rate, successes=paired.passed, n=paired.pass_rate_denominator, interval=paired.pass_rate_interval),
        pass_k=paired.pass_k,
        input_tokens=sum(r.input_tokens for r in every),
        output_tokens=sum(r.output_tokens for r in every),
        cost_usd=whole.cost_usd,
        mean_cost_usd=whole.mean_cost_usd,
        mean_duration_s=whole.mean_duration_s,
        mean_turns=whole.mean_turns,
        bot_latency_s=math.fsum(r.bot_latency_s for r in every) / turns if turns else None,
    )


def _spec_regressions(pairs: Sequence[tuple[_Row, _Row]], batch_worse: bool, alpha: float) -> list[SpecRegression]:
    lost: Counter[str] = Counter()
    won: Counter[str] = Counter()
    first: dict[str, _Row] = {}
    for base, new in pairs:
        kind = _classify(base, new)
        if kind == "regression":
            lost[base.spec_id] += 1
        elif kind == "fix":
            won[base.spec_id] += 1
        first.setdefault(base.spec_id, base)
    out = []
    for spec_id in sorted(lost, key=lambda s: (first[s].spec_index, s)):
        b, c = lost[spec_id], won[spec_id]
        if b <= c:
            continue
        p = one_sided_p(b, c)
        out.append(
            SpecRegression(
                spec_id=spec_id, name=first[spec_id].name, regressions=b, fixes=c, p_worse=p, beyond_noise=batch_worse or p <= alpha
            )
        )
    return out


def _counted(pairs: Iterable[tuple[Iterable[str], Iterable[str]]]) -> tuple[Counter[str], Counter[str]]:
    """How often each name stands on the left of the pairs, and how often on the right."""
    left: Counter[str] = Counter()
    right: Counter[str] = Counter()
    for names_left, names_right in pairs:
        left.update(names_left)
        right.update(names_right)
    return left, right


def compare_batches(store: Store, base_ref: str, new_ref: str, *, alpha: float = DEFAULT_ALPHA) -> BatchComparison:
    """Compare batch `new_ref` with batch `base_ref` (ids, prefixes, `latest`, `latest~N`)."""
    if not 0.0 < alpha <= 1.0:
        raise ValueError(f"alpha must be in (0, 1], got {alpha}")
    base_batch = store.get_batch(base_ref)
    new_batch = store.get_batch(new_ref)
    base_rows = _read_rows(store, base_batch.id)
    new_rows = base_rows if new_batch.id == base_batch.id else _read_rows(store, new_batch.id)

    base_specs = {k[0] for k in base_rows}
    new_specs = {k[0] for k in new_rows}
    common_specs = base_specs & new_specs
    keys = sorted(base_rows.keys() & new_rows.keys(), key=lambda k: (base_rows[k].spec_index, k[0], k[1]))
    pairs = [(base_rows[k], new_rows[k]) for k in keys]

    changes = [c for c in (_change(b, n) for b, n in pairs) if c is not None]
    changes.sort(key=lambda c: CHANGE_ORDER.index(c.kind))  # stable: spec order kept within a kind

    started, stopped = _counted((c.started_failing, c.stopped_failing) for c in changes)
    check_changes = [
        CheckChange(check=name, started_failing=started[name], stopped_failing=stopped[name])
        for name in sorted(started.keys() | stopped.keys(), key=lambda n: (-(started[n] - stopped[n]), -started[n], n))
    ]
    met, unmet = _counted((c.started_being_met, c.stopped_being_met) for c in changes)
    criterion_changes = [
        CriterionChange(criterion=name, started_being_met=met[name], stopped_being_met=unmet[name])
        for name in sorted(met.keys() | unmet.keys(), key=lambda n: (-(unmet[n] - met[n]), -unmet[n], n))
    ]

    regressions = sum(1 for c in changes if c.kind == "regression")
    fixes = sum(1 for c in changes if c.kind == "fix")
    test = mcnemar_exact(regressions, fixes, alpha=alpha)
    made_from = _made_from(base_batch, new_batch)
    replay = None
    if made_from == "replay":
        replay = ReplayStats(
            conversations=len(new_rows),
            diverged=sum(1 for r in new_rows.values() if r.first_divergence is not None),
            exhausted=sum(1 for r in new_rows.values() if r.stop_reason == "replay_exhausted"),
        )
    return BatchComparison(
        made_from_base=made_from,
        replay=replay,
        base=_summary(base_batch, base_rows, [b for b, _ in pairs]),
        new=_summary(new_batch, new_rows, [n for _, n in pairs]),
        same_batch=base_batch.id == new_batch.id,
        sources_only_in_base=[s for s in base_batch.sources if s not in new_batch.sources],
        sources_only_in_new=[s for s in new_batch.sources if s not in base_batch.sources],
        common_specs=len(common_specs),
        matched_pairs=len(pairs),
        trials_only_in_base=sum(1 for k in base_rows if k[0] in common_specs and k not in new_rows),
        trials_only_in_new=sum(1 for k in new_rows if k[0] in common_specs and k not in base_rows),
        new_specs=_only_on_one_side(r for k, r in new_rows.items() if k[0] not in base_specs),
        missing_specs=_only_on_one_side(r for k, r in base_rows.items() if k[0] not in new_specs),
        changes=changes,
        check_changes=check_changes,
        criterion_changes=criterion_changes,
        paired_test=test,
        spec_regressions=_spec_regressions(pairs, test.worse_beyond_noise, alpha),
        calibration=calibration_difference(store, base_batch, new_batch) if base_batch.id != new_batch.id else None,
        attacks=compare_attacks(store, base_batch.id, new_batch.id, alpha=alpha),
    )


def verdict_line(comparison: BatchComparison) -> str:
    """One line for a terminal or a CI log: what changed and whether it is beyond noise."""
    t = comparison.paired_test
    judges = "; judged by differently calibrated judges" if comparison.calibration is not None else ""
    if comparison.no_change:
        return "no change" + judges
    parts = [f"{t.regressions} regression{'s' if t.regressions != 1 else ''}", f"{t.fixes} fix{'es' if t.fixes != 1 else ''}"]
    others = len(comparison.changes) - t.regressions - t.fixes
    lost = len(comparison.lost_to_simulator)
    if others:
        parts.append(f"{others} other change{'s' if others != 1 else ''}")
    if lost:
        parts.append(f"{lost} pass{'es' if lost != 1 else ''} lost to simulator faults (the bot not judged)")
    if comparison.new_specs or comparison.missing_news:
        parts.append(f"{len(comparison.new_specs)} new, {len(comparison.missing_news)} missing spec(s)")
    beyond = comparison.regressed_beyond_noise
    noise = f"regressed beyond noise: {', '.join(beyond)}" if beyond else "no regression beyond noise"
    return f"{', '.join(parts)}; exact McNemar p = {t.p_value:.3g}; {noise}{judges}"
