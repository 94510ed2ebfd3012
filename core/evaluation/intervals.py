"""How sure a rate is: a Wilson interval for a pass rate, a seeded bootstrap over specs for pass^k.

A pass rate without its uncertainty invites people to chase noise: 9 of 10 and 7 of 10 are not
told apart by 10 conversations. Every rate parley reports carries a 95% interval:
- a pass rate (successes out of n independent-enough conversations): Wilson's score interval,
  which stays inside [0, 1] and behaves at 0/n and n/n, where the textbook p +- z*se does not;
- pass^k (a mean over specs of C(c, k)/C(n, k)): a percentile bootstrap that resamples the specs
  with replacement, since the specs, not the trials, are the independent units. Its random
  generator is seeded from the batch's seed (`stats_seed`), so the same batch always gives the
  same interval. When every spec passed (or failed) all its trials the resamples cannot spread, so
  the interval is Wilson's on the number of specs instead (and says so in `method`).

A resample is not drawn spec by spec: specs take few distinct values (C(c, k)/C(n, k) for
c = 0..n), so how often each value comes up in a resample is multinomial, drawn as one binomial
per value given those before it, each by inverting its CDF (tables cached per count left, and
only the part of each CDF that holds any probability is built). The same distribution as
picking specs one by one, at a few draws per resample instead of one per spec: a 10,000-spec
batch's interval takes a fraction of a second. The comparison of two batches
(parley.core.reports.compare) uses the same functions.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import math
import random
from collections import Counter
from collections.abc import Mapping
from math import comb
from statistics import NormalDist
from typing import Literal

from pydantic import BaseModel

__all__ = [
    "DEFAULT_CONFIDENCE",
    "DEFAULT_RESAMPLES",
    "Interval",
    "bootstrap_pass_hat_k",
    "stats_seed",
    "wilson_interval",
]

DEFAULT_CONFIDENCE = 0.95
DEFAULT_RESAMPLES = 2000
NEGLIGIBLE = 1e-18
"""A binomial probability below this (far out in a tail) is left out of the CDF tables."""


class Interval(BaseModel):
    """A two-sided interval around a rate, both ends within [0, 1]."""

    low: float
    high: float
    confidence: float = DEFAULT_CONFIDENCE
    method: Literal["wilson", "bootstrap"]

    def __str__(self) -> str:
        return f"{self.low * 100:.1f}-{self.high * 100:.1f}%"


def _z(confidence: float) -> float:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def wilson_interval(successes: int, n: int, *, confidence: float = DEFAULT_CONFIDENCE) -> Interval | None:
    """Wilson's score interval for `successes` out of `n`; None when n is 0 (no rate at all)."""
    if n < 0 or not 0 <= successes <= max(n, 0):
        raise ValueError(f"need 0 <= successes <= n, got {successes} of {n}")
    if n == 0:
        return None
    z = _z(confidence)
    p = successes / n
    z2n = z * z / n
    centre = (p + z2n / 2) / (1 + z2n)
    half = z * math.sqrt(p * (1 - p) / n + z2n / (4 * n)) / (1 + z2n)
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return Interval(low=low, high=high, confidence=confidence, method="wilson")


def stats_seed(batch_seed: int | str, what: str = "") -> int:
    """A seed that depends on the batch's own seed (and what is drawn) only: the same batch, and a
    re-run of it that gives the same results, always get the same interval."""
    digest = hashlib.sha256(f"{batch_seed}\n{what}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


@functools.lru_cache(maxsize=4096)  # the same (n, p) comes back in every resampling of a batch's pass^k
def _binomial_cdf(n: int, p: float) -> tuple[int, list[float]]:
    """(lo, cdf) with cdf[i] = P(X <= lo + i), X ~ Binomial(n, p), over the values from lo up to
    where what is left is negligible (the last entry is 1). Built outward from the mode with the
    ratio of successive terms, so a 10,000-spec table costs a few hundred multiplications."""
    if p <= 0.0:
        return 0, [1.0]
    if p >= 1.0:
        return n, [1.0]
    q = 1.0 - p
    mode = min(n, int((n + 1) * p))
    at_mode = math.exp(
        math.lgamma(n + 1) - math.lgamma(mode + 1) - math.lgamma(n - mode + 1) + mode * math.log(p) + (n - mode) * math.log1p(-p)
    )
    above, term, i = [], at_mode, mode
    while i < n:
        term *= (n - i) / (i + 1) * p / q
        i += 1
        if term < NEGLIGIBLE:
            break
        above.append(term)
    below, term, i = [], at_mode, mode
    while i > 0:
        term *= i / (n - i + 1) * q / p
        i -= 1
        if term < NEGLIGIBLE:
            break
        below.append(term)
    terms = [*reversed(below), at_mode, *above]
    cdf, total = [], 0.0
    for t in terms:
        total += t
        cdf.append(total)
    cdf = [c / total for c in cdf]
    cdf[-1] = 1.0
    return mode - len(below), cdf


def _resampled_means(values: list[float], resamples: int, rng: random.Random) -> list[float]:
    """The means of `resamples` resamples of `values` with replacement, each drawn as multinomial
    counts of the distinct values (see the module doc)."""
    size = len(values)
    counted = sorted(Counter(values).items())
    conditional = []  # P(a draw is value j | it is none of the values before j)
    left = 1.0
    for _, n in counted[:-1]:
        share = n / size
        conditional.append(min(1.0, share / left) if left > 0 else 0.0)
        left -= share
    tables: dict[tuple[int, int], tuple[int, list[float]]] = {}
    means = []
    steps = [(j, p, counted[j][0]) for j, p in enumerate(conditional)]
    last = counted[-1][0]
    draw, find, known = rng.random, bisect.bisect_left, tables.get  # the loop below runs resamples x values times
    for _ in range(resamples):
        remaining, total = size, 0.0
        for j, p, value in steps:
            if remaining == 0:
                break
            table = known((j, remaining))
            if table is None:
                table = tables[(j, remaining)] = _binomial_cdf(remaining, p)
            lo, cdf = table
            drawn = lo + find(cdf, draw())
            if drawn > remaining:
                drawn = remaining
            total += value * drawn
            remaining -= drawn
        means.append((total + last * remaining) / size)
    return means


def _percentile(ordered: list[float], q: float) -> float:
    """The q-quantile (0..1) of sorted values, linearly interpolated."""
    position = q * (len(ordered) - 1)
    lower = math.floor(position)
    upper = min(lower + 1, len(ordered) - 1)
    return ordered[lower] + (ordered[upper] - ordered[lower]) * (position - lower)


def bootstrap_pass_hat_k(
    per_spec: Mapping[str, tuple[int, int]],
    k: int,
    *,
    seed: int,
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
) -> Interval | None:
    """A percentile bootstrap interval for pass^k from (passed c, judged trials n) per spec.
    Specs with fewer than k judged trials are left out, as pass^k leaves them out; None when
    none has k. The specs are resampled with replacement `resamples` times with
    `random.Random(seed)`."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    _z(confidence)
    values = [comb(c, k) / comb(n, k) for _, (c, n) in sorted(per_spec.items()) if n >= k]
    if not values:
        return None
    m = len(values)
    if min(values) == max(values) and values[0] in (0.0, 1.0):
        # Every spec all-pass (or all-fail): resampling them shows no spread at all, which says
        # nothing about how few specs there were. Wilson's interval on the specs does.
        return wilson_interval(m if values[0] == 1.0 else 0, m, confidence=confidence)
    means = sorted(_resampled_means(values, resamples, random.Random(seed)))
    alpha = (1 - confidence) / 2
    low = max(0.0, _percentile(means, alpha))
    high = min(1.0, _percentile(means, 1 - alpha))
    return Interval(low=low, high=high, confidence=confidence, method="bootstrap")
