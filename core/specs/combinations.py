"""How Sensei counts and walks forward() variables: chains, independent forwards, combinations.

- `forward(x)` nests x inside the variable. Following the links from a variable that nothing
  nests gives a *chain* (`cans -> drink`): one odometer whose last wheel turns fastest, so
  conversation i takes the chain's combination i (wrapping around).
- A `forward()` variable that no chain mentions is *independent*: it just steps through its
  values, one per conversation, and does not count towards the combinations.
- `all_combinations` is the largest product of a chain's sizes; with no chain at all Sensei
  counts 0 conversations (parley reports that as an error). `sample(f)` is
  `round(f * all_combinations)` with Python's round (4.5 gives 4); the conversations are the
  first ones of the sequence, as Sensei runs them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from parley.core.records import Variable


@dataclass(frozen=True)
class ForwardPlan:
    """forward() variables grouped as Sensei groups them."""

    chains: list[list[Variable]]
    """Each chain from the variable that nests to the last one nested (slowest wheel first)."""
    independent: list[Variable]


def forward_plan(variables: Sequence[Variable]) -> ForwardPlan:
    """Chains and independent forward() variables, each in definition order."""
    forward = {v.name: v for v in variables if v.function.kind == "forward"}
    nested = {v.function.nests for v in forward.values() if v.function.nests in forward}
    chains: list[list[Variable]] = []
    in_chain: set[str] = set()
    for variable in forward.values():
        if variable.function.nests not in forward or variable.name in nested:
            continue  # a chain starts at a variable that nests another and that nothing nests
        chain = [variable]
        while chain[-1].function.nests in forward and forward[chain[-1].function.nests] not in chain:
            chain.append(forward[chain[-1].function.nests])
        chains.append(chain)
        in_chain.update(v.name for v in chain)
    independent = [v for v in forward.values() if v.name not in in_chain]
    return ForwardPlan(chains=chains, independent=independent)


def chain_size(chain: Sequence[Variable]) -> int:
    """How many combinations a chain walks through before it wraps around."""
    return math.prod(len(v.values) for v in chain)


def combination_count(variables: Sequence[Variable]) -> int | None:
    """Sensei's `all_combinations`: the largest chain's product (0 without a chain); None while
    a chain still waits for any() items, whose number is not known yet."""
    plan = forward_plan(variables)
    if any(v.any_prompts for chain in plan.chains for v in chain):
        return None
    return max((chain_size(chain) for chain in plan.chains), default=0)


def sample_size(fraction: float, total: int) -> int:
    """`sample(fraction)` of `total` combinations: Python's round, as Sensei's code does."""
    return round(fraction * total)


def chain_digits(index: int, chain: Sequence[Variable]) -> list[int]:
    """The value positions of `chain`'s variables in conversation `index` (the last turns fastest)."""
    combo = index % chain_size(chain)
    digits: list[int] = []
    for variable in reversed(chain):
        combo, digit = divmod(combo, len(variable.values))
        digits.append(digit)
    return digits[::-1]
