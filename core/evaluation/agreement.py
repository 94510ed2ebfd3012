"""How far two raters agree on the same items: the confusion matrix, the share of items they
agree on, Cohen's kappa (its quadratic-weighted form for ordered categories such as a rubric's
1-3) and a seeded percentile-bootstrap interval for it. Pure, standard library only.

Kappa is agreement beyond what chance would give raters who use each category as often as
these two do: (observed - expected) / (1 - expected). Where the reference rater (the person)
used one category only, chance explains all agreement and kappa says nothing: it is undefined
(None), whatever the other rater did. The interval resamples the items with replacement
(`resamples` times, from `seed`, so the same pairs always give the same interval) and takes the
2.5th and 97.5th percentiles of the kappas of the resamples in which kappa is defined; with too
few of those (under half) there is no interval.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

__all__ = [
    "agreement_share",
    "bootstrap_kappa",
    "cohen_kappa",
    "confusion_matrix",
    "kappa_of_pairs",
]

DEFAULT_RESAMPLES = 2000
DEFAULT_CONFIDENCE = 0.95

Pair = tuple[str, str]
"""(reference's category, other rater's category): the person's label first, then the judge's."""


def confusion_matrix(pairs: Sequence[Pair], categories: Sequence[str]) -> list[list[int]]:
    """Counts of each (reference, other) pair: row i is the reference's category i, column j the
    other rater's category j. A pair naming a category not in `categories` is a ValueError."""
    index = {c: i for i, c in enumerate(categories)}
    matrix = [[0] * len(categories) for _ in categories]
    for reference, other in pairs:
        if reference not in index or other not in index:
            raise ValueError(f"({reference!r}, {other!r}) is not a pair of {', '.join(categories)}")
        matrix[index[reference]][index[other]] += 1
    return matrix


def agreement_share(matrix: Sequence[Sequence[int]]) -> float | None:
    """The share of items both raters put in the same category (None: no item)."""
    n = sum(map(sum, matrix))
    return sum(matrix[i][i] for i in range(len(matrix))) / n if n else None


def _weights(k: int, weighted: bool) -> list[list[float]]:
    """Disagreement weights: 1 off the diagonal (nominal), or ((i - j) / (k - 1))^2 (quadratic)."""
    if not weighted or k < 2:
        return [[0.0 if i == j else 1.0 for j in range(k)] for i in range(k)]
    return [[((i - j) / (k - 1)) ** 2 for j in range(k)] for i in range(k)]


def cohen_kappa(matrix: Sequence[Sequence[int]], *, weighted: bool = False) -> float | None:
    """Cohen's kappa of a confusion matrix (its quadratic-weighted form when `weighted`: the
    categories are in order, and a near miss costs less than a far one). None when it is
    undefined: no item, or the reference rater used one category only."""
    k = len(matrix)
    n = sum(map(sum, matrix))
    rows = [sum(row) for row in matrix]
    if n == 0 or sum(1 for r in rows if r) < 2:
        return None
    cols = [sum(matrix[i][j] for i in range(k)) for j in range(k)]
    w = _weights(k, weighted)
    observed = sum(w[i][j] * matrix[i][j] for i in range(k) for j in range(k)) / n
    expected = sum(w[i][j] * rows[i] * cols[j] for i in range(k) for j in range(k)) / (n * n)
    if expected == 0:
        return None
    return 1 - observed / expected


def kappa_of_pairs(pairs: Sequence[Pair], categories: Sequence[str], *, weighted: bool = False) -> float | None:
    """`cohen_kappa` of the pairs' confusion matrix."""
    return cohen_kappa(confusion_matrix(pairs, categories), weighted=weighted)


def _percentile(ordered: Sequence[float], q: float) -> float:
    """The q-quantile of sorted values, interpolated linearly between the two nearest."""
    at = q * (len(ordered) - 1)
    below = math.floor(at)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (at - below)


def bootstrap_kappa(
    pairs: Sequence[Pair],
    categories: Sequence[str],
    *,
    weighted: bool = False,
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = 0,
) -> tuple[float, float] | None:
    """A percentile-bootstrap interval (low, high) for the pairs' kappa (see the module doc); None when the
    kappa of fewer than half the resamples is defined."""
    if not pairs or not 0 < confidence < 1:
        return None
    index = {c: i for i, c in enumerate(categories)}
    coded = [(index[a], index[b]) for a, b in pairs]
    k, n = len(categories), len(coded)
    rng = random.Random(seed)
    kappas: list[float] = []
    for _ in range(resamples):
        matrix = [[0] * k for _ in range(k)]
        for _ in range(n):
            a, b = coded[rng.randrange(n)]
            matrix[a][b] += 1
        kappa = cohen_kappa(matrix, weighted=weighted)
        if kappa is not None:
            kappas.append(kappa)
    if len(kappas) * 2 < resamples:
        return None
    kappas.sort()
    tail = (1 - confidence) / 2
    return _percentile(kappas, tail), _percentile(kappas, 1 - tail)
