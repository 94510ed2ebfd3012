"""A batch's attacks in figures: the attack success rate per strategy and per objective with Wilson
intervals, each breach with its evidence, what the batch's worlds make impossible by construction,
and where an LLM judge's opinion disagreed with the world's verdict.

Attack conversations are counted apart from the batch's ordinary ones (`attacks`, `ordinary`); their
outcomes stay in the batch's one count (OutcomeCounts: a breach is failed, a hold passed, an
attacker that never pressed user_fault). The rate is breached / (breached + held): an attack not
pressed, or whose run broke, says nothing of the bot and is left out of it, counted beside it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, Field

from parley.core.evaluation import Interval, wilson_interval
from parley.core.records import OBJECTIVES, STRATEGIES, AttackResult
from parley.core.store import Store, attack_results

__all__ = ["AttackDisagreement", "AttackRate", "AttackReport", "attack_line", "attack_report"]

log = logging.getLogger("parley.reports.attacks")


class AttackRate(BaseModel):
    """The attacks of one strategy (or objective): how many were decided, breached, and the rate."""

    name: str
    decided: int
    """Breached + held."""
    breached: int
    not_pressed: int = 0
    broken: int = 0
    rate: float | None = None
    interval: Interval | None = None


class AttackDisagreement(BaseModel):
    """An attack on which an LLM judge's opinion and the world's verdict differ."""

    label: str
    strategy: str
    objective: str
    world_says: str
    judge_says: str


class AttackReport(BaseModel):
    """The batch's attacks (see the module doc)."""

    attacks: int
    ordinary: int
    breached: int
    held: int
    not_pressed: int
    broken: int
    rate: float | None = None
    interval: Interval | None = None
    by_strategy: list[AttackRate] = Field(default_factory=list)
    by_objective: list[AttackRate] = Field(default_factory=list)
    breaches: list[AttackResult] = Field(default_factory=list)
    """Every breached attack with its successes (kind, turn, evidence)."""
    impossible: dict[str, dict[str, str]] = Field(default_factory=dict)
    """World -> objective -> why the world makes it impossible by construction (a zero there is no defence)."""
    judged: int = 0
    """Attacks an LLM judge gave its opinion on."""
    disagreements: list[AttackDisagreement] = Field(default_factory=list)


def _rate(name: str, results: Sequence[AttackResult]) -> AttackRate:
    breached = sum(1 for r in results if r.breached is True)
    decided = breached + sum(1 for r in results if r.breached is False)
    return AttackRate(
        name=name,
        decided=decided,
        breached=breached,
        not_pressed=sum(1 for r in results if r.breached is None and r.outcome == "user_fault"),
        broken=sum(1 for r in results if r.breached is None and r.outcome != "user_fault"),
        rate=breached / decided if decided else None,
        interval=wilson_interval(breached, decided) if decided else None,
    )


def _grouped(results: Sequence[AttackResult], key: str, order: Iterable[str]) -> list[AttackRate]:
    names = [n for n in order if any(getattr(r, key) == n for r in results)]
    names += sorted({getattr(r, key) for r in results} - set(names))
    return [_rate(n, [r for r in results if getattr(r, key) == n]) for n in names]


def _impossible(worlds: Iterable[str | None]) -> dict[str, dict[str, str]]:
    from parley.core.users import impossible_objectives
    from parley.core.world import DEFAULT_WORLD, WorldError, load_world

    found: dict[str, dict[str, str]] = {}
    for name in sorted({w or DEFAULT_WORLD for w in worlds}):
        try:
            world = load_world(name)
        except WorldError as exc:  # a world gone since the batch ran: its figures stand, its note is lost
            log.warning("the report cannot load world %s to say what it makes impossible: %s", name, exc)
            continue
        if reasons := impossible_objectives(world):
            found[name] = reasons
    return found


def attack_report(store: Store, batch_id: str, *, total: int | None = None) -> AttackReport | None:
    """The attacks of the batch (an id, a prefix, `latest`...; None when it has none); `total`: the
    batch's conversations (the ordinary ones are the rest)."""
    results = attack_results(store, store.get_batch(batch_id).id)
    if not results:
        return None
    rate = _rate("all", results)
    disagreements = [
        AttackDisagreement(
            label=r.label,
            strategy=r.strategy,
            objective=r.objective,
            world_says="breached" if r.breached else "held",
            judge_says="breached" if r.judge_breached else "held",
        )
        for r in results
        if r.breached is not None and r.judge_breached is not None and r.breached != r.judge_breached
    ]
    return AttackReport(
        attacks=len(results),
        ordinary=max(0, (total or len(results)) - len(results)),
        breached=rate.breached,
        held=rate.decided - rate.breached,
        not_pressed=rate.not_pressed,
        broken=rate.broken,
        rate=rate.rate,
        interval=rate.interval,
        by_strategy=_grouped(results, "strategy", STRATEGIES),
        by_objective=_grouped(results, "objective", OBJECTIVES),
        breaches=[r for r in results if r.breached],
        impossible=_impossible(r.world for r in results),
        judged=sum(1 for r in results if r.judge_breached is not None),
        disagreements=disagreements,
    )


def attack_line(report: AttackReport) -> str:
    """The attacks in one line, as the app's batch view shows them beside the pass rate:
    "attacks: 6 of 21 breached (12.3-50.1%), 1 not pressed; impossible on orders: read_another"."""
    line = f"attacks: {report.breached} of {report.breached + report.held} breached"
    if report.interval is not None:
        line += f" ({report.interval})"
    if report.not_pressed:
        line += f", {report.not_pressed} not pressed"
    for world, reasons in report.impossible.items():
        line += f"; impossible on {world}: {', '.join(reasons)}"
    if report.judged:
        line += f"; judge disagreed on {len(report.disagreements)} of {report.judged}"
    return line
