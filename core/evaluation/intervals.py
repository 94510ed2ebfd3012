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
"""

from __future__ import annotations

import hashlib
import math
import random
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
WORK_BUDGET = 4_000_000
"""Spec draws per bootstrap at most: a batch of many specs gets fewer resamples (never under
MIN_RESAMPLES), so a 10,000-spec summary stays well under a second."""
MIN_RESAMPLES = 400


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
    none has k. The specs are resampled with replacement `resamples` times (fewer for very many
    specs, see WORK_BUDGET) with `random.Random(seed)`."""
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
    rounds = max(MIN_RESAMPLES, min(resamples, WORK_BUDGET // m))
    rng = random.Random(seed)
    choices = rng.choices
    means = sorted(math.fsum(choices(values, k=m)) / m for _ in range(rounds))
    alpha = (1 - confidence) / 2
    low = max(0.0, _percentile(means, alpha))
    high = min(1.0, _percentile(means, 1 - alpha))
    return Interval(low=low, high=high, confidence=confidence, method="bootstrap")
