"""How a number spreads over a batch's conversations, as the report draws it: `Histogram`, bins
of conversations counted once (the HTML report's turn and response-time charts, and the JSON
report's `turn_histogram` and `latency_histogram`, are the same bins).

Whole numbers (turns) get a bin per value while they fit in `MAX_BINS`, wider whole-number bins
beyond; other numbers (seconds) get up to `MAX_BINS` bins of equal width between the smallest
and the largest value.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pydantic import BaseModel, Field

MAX_BINS = 30


class Histogram(BaseModel):
    """`counts[i]` conversations have a value in [edges[i], edges[i + 1]) (the last bin holds its
    upper edge too). No values: no bins."""

    edges: list[float] = Field(default_factory=list)
    counts: list[int] = Field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(self.counts)

    @classmethod
    def of(cls, values: Sequence[float], *, whole: bool = False) -> Histogram:
        """The histogram of `values`; `whole`: they are whole numbers (bins start on whole numbers)."""
        if not values:
            return cls()
        low, high = min(values), max(values)
        if whole:
            low, high = math.floor(low), math.floor(high)
            width: float = max(1, math.ceil((high - low + 1) / MAX_BINS))
            bins = int((high - low) // width) + 1
        elif high == low:
            width, bins = 1.0, 1
        else:
            bins = min(MAX_BINS, max(1, math.ceil(math.sqrt(len(values)))))
            width = (high - low) / bins
        counts = [0] * bins
        for value in values:
            counts[min(bins - 1, int((value - low) // width))] += 1
        return cls(edges=[low + i * width for i in range(bins + 1)], counts=counts)
