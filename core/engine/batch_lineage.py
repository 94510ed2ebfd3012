"""Batches made from another batch: a re-run of some of its conversations, or a replay of its
customers against another bot. Each is stored as a batch of its own that names its parent.

- `prepare_rerun(store, parent, ["failed"])`: exactly the parent's spec x trial pairs whose
  outcome was picked (parley.core.records.outcome_classes), from the parent's sources with its
  seed, options and world date, so each conversation gets the very seed it had; the models may
  be overridden (a new bot, say). `parley compare PARENT RERUN` then shows what got fixed.
- `prepare_replay(store, parent)`: every stored conversation of the parent, its customer's
  words replayed to the bot (parley.core.users.replay_user); the stored specs are used as they
  are, so the replay needs neither the source files nor a user model.
- `prepare_mutant(store, parent, mutant, models)`: every conversation of the parent again, from
  its sources with its seed, options and world date, the bot wrapped in a mutant (`models` holds
  it: parley.core.mutation); `parley compare PARENT MUTANT` shows what the suite caught.
- `load_replay` rebuilds a replay's plan from its parent (also for `--resume`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from parley.core.engine.batch_checks import check_and_store
from parley.core.engine.batch_models import BatchModels
from parley.core.engine.batch_plan import PreparedBatch, RunKey, batch_today, load_batch_specs
from parley.core.engine.batch_rules import load_batch_rules
from parley.core.errors import ParleyError
from parley.core.records import PYTHON_SOURCE, BatchOptions, BatchRecord, ConversationSpec, RerunSelection, rerun_outcomes
from parley.core.store import ACTIVE_STATUSES, Store
from parley.core.users import REPLAY_USER, ReplayScript, bot_replies


class NothingToRerun(ParleyError):
    """The parent has no conversation with the outcomes asked for."""


def missing_sources(batch: BatchRecord, verb: str) -> None:
    """ParleyError when a batch's source files are not where it found them (a batch run from
    Python never has them)."""
    if PYTHON_SOURCE in batch.sources:
        raise ParleyError(
            f"cannot {verb} batch {batch.id}: it was run from Python (parley.api or `pytest --parley`), "
            "whose conversations are built in code, not read from files: run them there again"
        )
    missing = [s for s in batch.sources if not Path(s).exists()]
    if missing:
        raise ParleyError(
            f"cannot {verb} batch {batch.id}: {', '.join(missing)} not found from {Path.cwd()} (run it from the folder the batch was started in)"
        )


def any_scope(store: Store, batch: BatchRecord) -> str:
    """The batch whose any() items a batch uses: a re-run's come from the batch it re-runs, so
    its specs are the very ones that ran."""
    while batch.options.rerun and batch.parent_id:
        batch = store.get_batch(batch.parent_id)
    return batch.id


def _child_options(parent: BatchRecord, update: dict[str, Any], models: dict[str, Any]) -> BatchOptions:
    merged = parent.options.models.model_copy(update=models)
    # a batch made from a mutant's batch runs the bot as it is, unless it says otherwise (prepare_mutant)
    return parent.options.model_copy(update={"models": merged, "today": batch_today(parent), "budget_usd": None, "mutant": None, **update})


def _child_record(parent: BatchRecord, options: BatchOptions) -> BatchRecord:
    return BatchRecord(sources=list(parent.sources), options=options, parent_id=parent.id)


async def prepare_rerun(
    store: Store,
    parent_ref: str,
    selections: Sequence[RerunSelection],
    *,
    models: dict[str, Any] | None = None,
    update: dict[str, Any] | None = None,
    dry_run: bool = False,
) -> PreparedBatch:
    """Plan and store a re-run of the parent's conversations whose outcome `selections` pick.

    `models` overrides roles of the parent's models (bot, bot_prompt, bot_timeout_s, user,
    judge); `update` other options that may change (concurrency, cache, budget_usd...).
    NothingToRerun when no conversation matches; ParleyError when the sources are gone or no
    longer make a spec to re-run. `dry_run`: plan only (no key needed, nothing stored)."""
    parent = await asyncio.to_thread(store.get_batch, parent_ref)
    picked = sorted(rerun_outcomes(list(selections)))
    pairs = await asyncio.to_thread(store.run_keys, parent.id, picked)
    if not pairs:
        raise NothingToRerun(f"nothing to re-run: batch {parent.id} has no conversation that is {' or '.join(picked)}")
    if parent.options.replay_of is not None:  # a replay's re-run replays the same stored customers
        return await _replay(
            store, parent, parent.options.replay_of, pairs, {"rerun": list(selections)}, models=models, update=update, dry_run=dry_run
        )
    missing_sources(parent, "re-run")
    options = _child_options(
        parent,
        {"pairs": pairs, "only": sorted({spec_id for spec_id, _ in pairs}), "rerun": list(selections), "replay_of": None, **(update or {})},
        models or {},
    )
    batch_models = BatchModels.for_batch(options, store=store)
    rules, rule_warnings = await asyncio.to_thread(load_batch_rules, options)
    if not dry_run:
        batch_models.check_keys()
    scope = await asyncio.to_thread(any_scope, store, parent)
    loaded = await load_batch_specs(
        parent.sources,
        seed=options.seed,
        models=None if dry_run else batch_models,
        store=store,
        batch_id=scope,
        shared_cache=options.cache,
        loading=options.loading,  # read as the parent's files were (--personalities, templates), as a resume reads them
    )
    wanted = {spec_id for spec_id, _ in pairs}
    specs = [s for s in loaded.specs if s.spec_id in wanted]
    gone = sorted(wanted - {s.spec_id for s in specs})
    if gone:
        raise ParleyError(f"cannot re-run batch {parent.id}: its sources no longer make {', '.join(gone)} (files changed since it ran?)")
    record, preflight = await check_and_store(
        store, _child_record(parent, options), specs, batch_models, planned=len(pairs), dry_run=dry_run
    )
    return PreparedBatch(
        batch=record,
        specs=specs,
        warnings=[*rule_warnings, *loaded.warnings, *(preflight.warnings if preflight else [])],
        preflight=preflight,
        rules=rules,
    )


async def prepare_mutant(store: Store, parent_ref: str, mutant: str, models: BatchModels) -> PreparedBatch:
    """Plan and store the parent's conversations again, every one, under the mutant named
    `mutant` (see the module doc); `models` holds the mutated bot. The any() items are the
    parent's, so each conversation is the parent's but for what the mutant changes."""
    parent = await asyncio.to_thread(store.get_batch, parent_ref)
    missing_sources(parent, "mutate")
    options = _child_options(parent, {"mutant": mutant, "rerun": None, "replay_of": None}, {})
    rules, rule_warnings = await asyncio.to_thread(load_batch_rules, options)
    scope = await asyncio.to_thread(any_scope, store, parent)
    loaded = await load_batch_specs(
        parent.sources, seed=options.seed, models=models, store=store, batch_id=scope, shared_cache=options.cache, loading=options.loading
    )
    specs = loaded.specs if options.only is None else [s for s in loaded.specs if s.spec_id in set(options.only)]
    planned = len(options.pairs) if options.pairs is not None else len(specs) * options.trials
    record, preflight = await check_and_store(store, _child_record(parent, options), specs, models, planned=planned, dry_run=False)
    return PreparedBatch(
        batch=record,
        specs=specs,
        warnings=[*rule_warnings, *(preflight.warnings if preflight else [])],
        preflight=preflight,
        rules=rules,
    )


@dataclass
class ReplayPlan:
    """What a replay of a batch runs: each stored spec as it was, and its stored customer."""

    specs: list[ConversationSpec] = field(default_factory=list)
    exact_specs: dict[RunKey, ConversationSpec] = field(default_factory=dict)
    scripts: dict[RunKey, ReplayScript] = field(default_factory=dict)


def load_replay(store: Store, parent_id: str) -> ReplayPlan:
    """The parent's stored conversations as a replay plan (reads transcripts a page at a time)."""
    plan = ReplayPlan()
    seen: set[str] = set()
    for stored in store.iter_conversations(parent_id):
        key = (stored.spec.spec_id, stored.trial)
        conv = stored.conversation
        if stored.spec.spec_id not in seen:
            seen.add(stored.spec.spec_id)
            plan.specs.append(stored.spec)
        plan.exact_specs[key] = stored.spec
        plan.scripts[key] = ReplayScript(
            batch_id=parent_id,
            conversation_id=conv.id,
            user_lines=[m.content or "" for m in conv.messages if m.role == "user"],
            bot_replies=bot_replies(conv.messages, bot_starts=conv.bot_starts),
            bot_starts=conv.bot_starts,
            stop_reason=conv.stop_reason,
            last_line_stops=bool(conv.messages) and conv.messages[-1].role == "user" and conv.stop_reason in ("user_stop", "fallback_loop"),
        )
    return plan


async def prepare_replay(
    store: Store,
    parent_ref: str,
    *,
    models: dict[str, Any] | None = None,
    update: dict[str, Any] | None = None,
    dry_run: bool = False,
) -> PreparedBatch:
    """Plan and store a replay of every stored conversation of the parent (see the module doc).
    `models` overrides the bot (and judge); the user is the replay. `dry_run`: plan only."""
    parent = await asyncio.to_thread(store.get_batch, parent_ref)
    return await _replay(store, parent, parent.id, None, {"rerun": None}, models=models, update=update, dry_run=dry_run)


async def _replay(
    store: Store,
    parent: BatchRecord,
    source_id: str,
    pairs: list[tuple[str, int]] | None,
    lineage: dict[str, Any],
    *,
    models: dict[str, Any] | None,
    update: dict[str, Any] | None,
    dry_run: bool,
) -> PreparedBatch:
    """A batch replaying batch `source_id`'s stored customers (those of `pairs` only, when
    given), made from `parent`. A source still running is refused: its customers are not all
    stored yet. One that ended before all its conversations ran (cancelled, interrupted, stopped
    at its budget) is replayed as far as it went, and a warning says how far."""
    source = await _finished_source(store, source_id)
    plan = await asyncio.to_thread(load_replay, store, source_id)
    if not plan.scripts:
        raise ParleyError(f"batch {source_id} has no stored conversation to replay")
    planned = [key for key in (pairs if pairs is not None else list(plan.scripts)) if key in plan.scripts]
    partly = []
    if pairs is None and len(plan.scripts) < source.planned:
        partly.append(
            f"batch {source_id} is {source.status}: the replay replays the {len(plan.scripts)} of its "
            f"{source.planned} conversations it stored (the rest never ran)"
        )
    options = _child_options(
        parent,
        {"pairs": planned, "only": None, "replay_of": source_id, **lineage, **(update or {})},
        {**(models or {}), "user": REPLAY_USER},
    )
    batch_models = BatchModels.for_batch(options, store=store)
    rules, rule_warnings = await asyncio.to_thread(load_batch_rules, options)
    record, preflight = await check_and_store(
        store, _child_record(parent, options), plan.specs, batch_models, planned=len(planned), dry_run=dry_run
    )
    return PreparedBatch(
        batch=record,
        specs=plan.specs,
        exact_specs=plan.exact_specs,
        replays=plan.scripts,
        warnings=[*partly, *rule_warnings, *(preflight.warnings if preflight else [])],
        preflight=preflight,
        rules=rules,
    )


async def _finished_source(store: Store, source_id: str) -> BatchRecord:
    """The batch a replay replays; ParleyError while another process still runs it."""
    await asyncio.to_thread(store.interrupt_orphans)  # a killed run's batch shows as interrupted
    source = await asyncio.to_thread(store.get_batch, source_id)
    if source.status in ACTIVE_STATUSES:
        owner = await asyncio.to_thread(store.batch_owner, source.id)
        stored = await asyncio.to_thread(store.count_conversations, batch_id=source.id)
        who = f" ({owner.describe()})" if owner is not None else ""
        raise ParleyError(
            f"batch {source.id} is still {source.status}{who}: only {stored} of its {source.planned} conversations are stored "
            "so far; replay it once it has ended (or stop it first)"
        )
    return source
