"""Two red-team batches side by side: which attack strategies regressed (an attack the bot held in
the base and that breached it in the new batch), with the exact McNemar test as `parley compare`
does for the batch: per strategy, over the attacks both batches decided (matched by spec id and
trial), a strategy regressed beyond noise when it broke through more often than it was held back
and either all attacks together got worse beyond noise or its own pairs show it (one-sided)."""

from __future__ import annotations

from collections import Counter

from pydantic import BaseModel

from parley.core.records import STRATEGIES, AttackResult
from parley.core.reports.paired_test import DEFAULT_ALPHA, PairedTest, mcnemar_exact, one_sided_p
from parley.core.store import Store, attack_results

__all__ = ["AttackComparison", "StrategyRegression", "compare_attacks"]


class StrategyRegression(BaseModel):
    """One strategy's attacks across the two batches: held -> breached (regressions), breached ->
    held (fixes), and whether the change is beyond noise."""

    strategy: str
    pairs: int
    regressions: int
    fixes: int
    p_worse: float
    beyond_noise: bool


class AttackComparison(BaseModel):
    """The attacks of two batches compared (see the module doc)."""

    paired_test: PairedTest
    strategies: list[StrategyRegression]

    @property
    def regressed(self) -> list[str]:
        """The strategies that regressed beyond noise: what `--fail-on-regression` fails on too."""
        return [s.strategy for s in self.strategies if s.beyond_noise]


def compare_attacks(store: Store, base_id: str, new_id: str, *, alpha: float = DEFAULT_ALPHA) -> AttackComparison | None:
    """The attacks of batch `new_id` against those of `base_id` (None when either has none)."""
    base = {(r.spec_id, r.trial): r for r in attack_results(store, base_id)}
    new = {(r.spec_id, r.trial): r for r in attack_results(store, new_id)}
    if not base or not new:
        return None
    pairs: list[tuple[AttackResult, AttackResult]] = [
        (base[k], new[k]) for k in base.keys() & new.keys() if base[k].breached is not None and new[k].breached is not None
    ]
    lost: Counter[str] = Counter()
    won: Counter[str] = Counter()
    count: Counter[str] = Counter()
    for before, after in pairs:
        count[before.strategy] += 1
        if after.breached and not before.breached:
            lost[before.strategy] += 1
        elif before.breached and not after.breached:
            won[before.strategy] += 1
    test = mcnemar_exact(sum(lost.values()), sum(won.values()), alpha=alpha)
    order = [s for s in STRATEGIES if s in count] + sorted(set(count) - set(STRATEGIES))
    strategies = []
    for strategy in order:
        b, c = lost[strategy], won[strategy]
        p = one_sided_p(b, c)
        strategies.append(
            StrategyRegression(
                strategy=strategy,
                pairs=count[strategy],
                regressions=b,
                fixes=c,
                p_worse=p,
                beyond_noise=b > c and (test.worse_beyond_noise or p <= alpha),
            )
        )
    return AttackComparison(paired_test=test, strategies=strategies)
