"""A batch on another benchmark's domain (a world whose `leaderboard` hook names it: tau2-bench's
retail and airline) as that benchmark's leaderboard row: the domain, pass^1 .. pass^4 over its
tasks (the batch's own pass^k, computed once in parley.core.evaluation.BatchSummary: tau2's
formula, each task a spec run `--trials` times), and the user simulator's model beside it, since
scores compare only under the same simulator. A k above the batch's trials is n/a.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from pydantic import BaseModel

from parley.core.errors import ParleyError
from parley.core.evaluation import BatchSummary
from parley.core.world import leaderboard, load_world

__all__ = ["LEADERBOARD_K", "LeaderboardRow", "leaderboard_row"]

log = logging.getLogger("parley.reports.leaderboard")

LEADERBOARD_K = 4
"""tau2's leaderboard shows pass^1 .. pass^4."""


class LeaderboardRow(BaseModel):
    """One batch as a leaderboard row (see the module doc)."""

    benchmark: str
    domain: str
    pass_k: list[float | None]
    """pass^1 .. pass^4 (None: the batch ran fewer trials than k)."""
    tasks: int
    """Tasks with at least one judged trial."""
    user_model: str

    def cells(self) -> list[str]:
        """domain, pass^1 .. pass^4 (as percentages, n/a), user simulator."""
        return [self.domain, *("n/a" if v is None else f"{v * 100:.1f}" for v in self.pass_k), self.user_model]

    def line(self) -> str:
        """One terminal line: `tau2-bench retail: pass^1 45.0  pass^2 n/a ... (40 tasks; user simulator openai/gpt-4.1)`."""
        values = "  ".join(f"pass^{k} {cell}" for k, cell in enumerate(self.cells()[1:-1], 1))
        return f"{self.benchmark} {self.domain}: {values} ({self.tasks} tasks; user simulator {self.user_model})"


def leaderboard_row(summary: BatchSummary, worlds: Sequence[str], user_model: str) -> LeaderboardRow | None:
    """The batch's leaderboard row when all its conversations ran on one world that is a
    benchmark's domain; None otherwise (or when that world cannot be loaded, logged)."""
    if len(worlds) != 1:
        return None
    try:
        named = leaderboard(load_world(worlds[0]))
    except ParleyError as exc:  # a world gone (a SOURCE moved) costs the row, never the report
        log.warning("the world %s of the batch cannot be loaded (%s): no leaderboard row", worlds[0], exc)
        return None
    if named is None:
        return None
    by_k = {p.k: p for p in summary.pass_k}
    return LeaderboardRow(
        benchmark=named[0],
        domain=named[1],
        pass_k=[by_k[k].value if k in by_k else None for k in range(1, LEADERBOARD_K + 1)],
        tasks=by_k[1].specs if 1 in by_k else 0,
        user_model=user_model,
    )
