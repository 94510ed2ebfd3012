"""Is the change between two batches more than noise? The exact McNemar test on paired runs.

Two batches are paired run by run: the same spec and trial (so the same seed, and under
`--replay` the very same customer words). Only the discordant pairs say anything about a
difference: b went passed -> failed, c went failed -> passed. If the bot did not change, each
discordant pair is a coin toss, so b ~ Binomial(b + c, 1/2). The exact test uses that binomial
itself rather than the chi-square approximation, which is wrong at the small counts a test
suite gives (a few to a few dozen discordant pairs). It needs no seed and no resampling.
"""

from __future__ import annotations

from math import comb
from typing import Literal

from pydantic import BaseModel

METHOD = "exact McNemar (binomial test on discordant pairs)"
DEFAULT_ALPHA = 0.05


def _tail_at_least(successes: int, n: int) -> float:
    """P(X >= successes) for X ~ Binomial(n, 1/2)."""
    if successes <= 0:
        return 1.0
    if successes > n:
        return 0.0
    return sum(comb(n, i) for i in range(successes, n + 1)) / (1 << n)


def one_sided_p(worse: int, better: int) -> float:
    """P(at least `worse` of the `worse + better` discordant pairs go the worse way by chance)."""
    return _tail_at_least(worse, worse + better)


class PairedTest(BaseModel):
    """The test over every pair both batches judged (passed or a failure of the bot)."""

    method: str = METHOD
    regressions: int
    """Pairs that went passed -> failed (b)."""
    fixes: int
    """Pairs that went failed -> passed (c)."""
    p_value: float
    """Two-sided: how likely so uneven a split of the discordant pairs is by chance."""
    p_worse: float
    """One-sided: how likely at least this many regressions are by chance."""
    alpha: float
    beyond_noise: bool
    """p_value <= alpha."""
    direction: Literal["worse", "better", "same"]

    @property
    def discordant(self) -> int:
        return self.regressions + self.fixes

    @property
    def worse_beyond_noise(self) -> bool:
        return self.regressions > self.fixes and self.p_worse <= self.alpha


def mcnemar_exact(regressions: int, fixes: int, *, alpha: float = DEFAULT_ALPHA) -> PairedTest:
    """The exact McNemar test of `regressions` (b) against `fixes` (c)."""
    n = regressions + fixes
    if n == 0:
        p_value = 1.0
    else:
        p_value = min(1.0, 2 * (1.0 - _tail_at_least(min(regressions, fixes) + 1, n)))
    direction: Literal["worse", "better", "same"] = "worse" if regressions > fixes else "better" if fixes > regressions else "same"
    return PairedTest(
        regressions=regressions,
        fixes=fixes,
        p_value=p_value,
        p_worse=one_sided_p(regressions, fixes),
        alpha=alpha,
        beyond_noise=n > 0 and p_value <= alpha,
        direction=direction,
    )
