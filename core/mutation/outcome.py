"""What became of one mutant: killed, survived, not exercised, not exercisable, or acting where
nothing can see it; and the mutation score over a run.

A mutant is killed when a conversation that passed on the base batch is a regression in the
mutant's batch, by the comparison's one definition (parley.core.reports.compare: passed -> a bot
failure by the batch's outcome classes); with a model in any role (or several trials) it is
killed only when the exact McNemar test `parley compare` uses says the mutant's batch is worse
beyond noise. It is exercised when it acted visibly in some conversation (parley.core.mutation.notes);
one that acted only where nothing could see it (a second cancellation the world refused) has no
visible effect, and one that could not act on the world at all is not exercisable by construction.
The score is killed / (killed + survived), with its Wilson interval.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from parley.core.evaluation import Interval, wilson_interval
from parley.core.mutation.catalogue import Mutant
from parley.core.mutation.notes import notes_of
from parley.core.reports import compare_batches
from parley.core.store import Store

__all__ = ["Catch", "MutantResult", "MutantStatus", "MutationReport", "decide_mutant", "mutation_score"]

MutantStatus = Literal["killed", "survived", "not_exercised", "not_exercisable", "no_visible_effect"]


class Catch(BaseModel):
    """A conversation that caught a mutant: it passed on the base and failed under the mutant."""

    spec_id: str
    name: str
    trial: int
    conversation_id: str
    outcome: str
    checks: list[str] = Field(default_factory=list)
    """The checks that started failing."""


class MutantResult(BaseModel):
    """One mutant's result (see the module doc)."""

    mutant: str
    title: str
    batch_id: str
    status: MutantStatus
    caught_by: list[Catch] = Field(default_factory=list)
    exercised_in: int = 0
    """Conversations in which it acted visibly."""
    conversations: int = 0
    acts: list[str] = Field(default_factory=list)
    """What it did, a few examples (`spec#0: cancel_order on ORD-1001 instead of ORD-1002`)."""
    why: str | None = None
    """Why it was not exercisable, or had no visible effect."""
    would_kill: str | None = None
    """For a survivor (or one not exercised): what would kill it, from the catalogue."""
    p_worse: float | None = None
    """With the paired test: how likely this many regressions are by chance."""


class MutationReport(BaseModel):
    """A mutation run: the base batch, each mutant's result, the score."""

    base_batch_id: str
    base_passed: int
    base_conversations: int
    paired_test: bool
    """Killing needed the paired test (a model in some role, or several trials)."""
    results: list[MutantResult]
    killed: int
    exercised: int
    score: float | None
    interval: Interval | None


MAX_ACTS = 3


def decide_mutant(store: Store, base_id: str, batch_id: str, mutant: Mutant, *, paired: bool, alpha: float = 0.05) -> MutantResult:
    """Decide one mutant from its stored batch and the base's (see the module doc)."""
    comparison = compare_batches(store, base_id, batch_id, alpha=alpha)
    exercised = 0
    acted_unseen = 0
    not_exercisable: list[str] = []
    acts: list[str] = []
    total = 0
    for stored in store.iter_conversations(batch_id):
        total += 1
        notes = notes_of(stored.conversation.metadata)
        if notes is None:
            continue
        if notes.not_exercisable:
            not_exercisable.append(notes.not_exercisable)
        if notes.exercised:
            exercised += 1
        elif notes.acted:
            acted_unseen += 1
        for act in notes.acted[: MAX_ACTS - len(acts)]:
            acts.append(f"{stored.spec.spec_id} trial {stored.trial}, turn {act.turn}: {act.what}")
    catches = [
        Catch(
            spec_id=c.spec_id,
            name=c.name,
            trial=c.trial,
            conversation_id=c.new.conversation_id,
            outcome=c.new.outcome,
            checks=c.started_failing,
        )
        for c in comparison.of_kind("regression")
    ]
    test = comparison.paired_test
    killed = bool(catches) and (not paired or test.worse_beyond_noise)
    status: MutantStatus
    why = None
    if killed:
        status = "killed"
    elif exercised:
        status = "survived"
        if catches:
            why = f"{len(catches)} conversations caught it, not beyond noise (p = {test.p_worse:.3g}): more trials (--trials) may"
    elif acted_unseen:
        status, why = "no_visible_effect", "it acted, but nothing it did changed anything a check could see"
    elif total and len(not_exercisable) == total:
        status, why = "not_exercisable", sorted(set(not_exercisable))[0]
    else:
        status = "not_exercised"
    return MutantResult(
        mutant=mutant.name,
        title=mutant.title,
        batch_id=batch_id,
        status=status,
        caught_by=catches if killed else [],
        exercised_in=exercised,
        conversations=total,
        acts=acts,
        why=why,
        would_kill=mutant.kills if status in ("survived", "not_exercised") else None,
        p_worse=test.p_worse if paired else None,
    )


def mutation_score(results: list[MutantResult]) -> tuple[int, int, float | None, Interval | None]:
    """(killed, exercised, killed / exercised, its Wilson interval): exercised are the killed and the survivors."""
    killed = sum(1 for r in results if r.status == "killed")
    exercised = killed + sum(1 for r in results if r.status == "survived")
    return killed, exercised, (killed / exercised if exercised else None), wilson_interval(killed, exercised)
