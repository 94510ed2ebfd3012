"""`parley mutate` (`run_mutation`), and the app's mutation of a stored batch (`mutate_batch`): the suite once against the bot as it is (the base batch), then once per mutant,
each a stored batch whose parent is the base (browsable, and `parley compare BASE MUTANT` shows
what it changed), and each mutant decided (parley.core.mutation.outcome)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path

from parley.core.bots import Bot
from parley.core.engine import BatchModels, BatchRunner, prepare_batch, prepare_mutant
from parley.core.models import OFFLINE
from parley.core.mutation.catalogue import Mutant, resolve_mutants
from parley.core.mutation.mutated_bot import MutatedBot
from parley.core.mutation.outcome import MutantResult, MutationReport, decide_mutant, mutation_score
from parley.core.records import PASSED, BatchOptions, ConversationSpec
from parley.core.specs import load_specs
from parley.core.store import Store, outcome_rows
from parley.core.world import WorldDefinition, WorldError, conversation_world, world_of

__all__ = ["mutate_batch", "needs_paired_test", "run_mutation"]


def needs_paired_test(options: BatchOptions) -> bool:
    """Whether a mutant is killed only beyond noise: a model in any role, or several trials."""
    models = options.models
    return options.trials > 1 or models.user != OFFLINE or models.judge != OFFLINE or (models.bot != OFFLINE and ":" not in models.bot)


def _spec_worlds(specs: Sequence[ConversationSpec]) -> list[WorldDefinition]:
    """The worlds the specs run on, each once (a world that cannot be loaded is the batch's to say)."""
    found: dict[str, WorldDefinition] = {}
    for spec in specs:
        try:
            world = world_of(spec)
        except WorldError:
            continue
        found.setdefault(world.name, world)
    return list(found.values())


def _batch_worlds(store: Store, batch_id: str) -> list[WorldDefinition]:
    """The worlds a stored batch's conversations ran on, each once."""
    found: dict[str, WorldDefinition] = {}
    for stored in store.iter_conversations(batch_id):
        world = conversation_world(stored.conversation, stored.spec)
        if world is not None:
            found.setdefault(world.name, world)
    return list(found.values())


async def run_mutation(
    store: Store,
    sources: Sequence[str | Path],
    options: BatchOptions,
    mutants: Sequence[Mutant] | Sequence[str] = (),
    *,
    on_result: Callable[[MutantResult], None] | None = None,
) -> MutationReport:
    """Run the base batch and one batch per mutant, and decide each (see the module doc).
    `mutants`: the mutants, or their names (parley's and those the suite's worlds declare; none:
    every one), resolved before anything runs."""
    if not mutants or isinstance(mutants[0], str):  # resolved before anything is stored
        loaded = await asyncio.to_thread(load_specs, [Path(s) for s in sources], seed=options.seed)
        mutants = resolve_mutants([str(m) for m in mutants], _spec_worlds(loaded.specs))
    models = BatchModels(options.models, store=store, cache=options.cache, judge_timeout_s=options.timeout_s)
    prepared = await prepare_batch(store, sources, options, models=models)
    await BatchRunner(store, prepared, models=models).run()
    return await mutate_batch(store, prepared.batch.id, mutants, bot=models.bot(), on_result=on_result)


async def mutate_batch(
    store: Store,
    base_ref: str,
    mutants: Sequence[Mutant] | Sequence[str] = (),
    *,
    bot: Bot | None = None,
    on_result: Callable[[MutantResult], None] | None = None,
) -> MutationReport:
    """One batch per mutant of a stored base batch (run from files: its sources are read again,
    with its seed and options), each decided against it; `bot` is the base's bot when the caller
    has it built, else it is built from the base batch's options; `mutants` as `run_mutation`
    takes them (the worlds are the base batch's conversations')."""
    base = await asyncio.to_thread(store.get_batch, base_ref)
    if not mutants or isinstance(mutants[0], str):
        worlds = await asyncio.to_thread(_batch_worlds, store, base.id)
        mutants = resolve_mutants([str(m) for m in mutants], worlds)
    options = base.options
    bot = bot or BatchModels(options.models, store=store, cache=options.cache).bot()
    paired = needs_paired_test(options)
    results: list[MutantResult] = []
    for mutant in mutants:
        assert isinstance(mutant, Mutant)
        mutated = BatchModels(
            options.models, store=store, cache=options.cache, judge_timeout_s=options.timeout_s, bot=MutatedBot(bot, mutant)
        )
        child = await prepare_mutant(store, base.id, mutant.name, mutated)
        await BatchRunner(store, child, models=mutated).run()
        result = await asyncio.to_thread(decide_mutant, store, base.id, child.batch.id, mutant, paired=paired)
        results.append(result)
        if on_result is not None:
            on_result(result)
    rows = await asyncio.to_thread(lambda: list(outcome_rows(store, base.id)))
    killed, exercised, score, interval = mutation_score(results)
    return MutationReport(
        base_batch_id=base.id,
        base_passed=sum(1 for r in rows if r.outcome in PASSED),
        base_conversations=len(rows),
        paired_test=paired,
        results=results,
        killed=killed,
        exercised=exercised,
        score=score,
        interval=interval,
    )
