"""Re-scoring a stored batch: its conversations judged again, without calling the bot or the
customer, into a new batch that names it as its parent (`parley rescore BATCH`).

- `prepare_rescore(store, parent)`: plans one run per stored conversation of the parent, with
  the expectations stored with its spec, or (`criteria_from`) the `expect:` blocks re-read from
  those files, matched by spec id; the judge is the parent's unless another is given. The new
  batch keeps the parent's sources, seed and options, and says what it re-scored
  (`BatchOptions.rescore_of`, `criteria_from`).
- The batch runner runs it as any batch (progress, Ctrl-C, `--resume`, the app's feed): each
  run takes its stored conversation (`rescore_planned`; read a page at a time ahead of the
  runs, and the copies written together: parley.core.engine.stored_copies) and evaluates a
  copy of it, as the parent's bot was evaluated (a bot without parley's World is judged on what
  parley saw of it). The copy keeps the transcript, tool calls, final state and timings; its
  usage is only what the judging cost (no bot or customer was called), and its metadata names
  the conversation it copies (`rescored_from`).
- With `cache`, the judge's replies go through the store's reply cache: a second re-score with
  the same judge and expectations makes no model call.
- Sensei rule files (`rules`, else the parent's `--rules`) decide each copy as they decide a
  batch's conversations (parley.core.engine.batch_rules): `conversations: 1` rules as checks of
  its verdict, pair and batch rules once every copy is in, stored with the new batch.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from parley.core.bots import BotSpec, bot_kind
from parley.core.engine.batch_conversation import ConversationControl
from parley.core.engine.batch_models import BatchModels
from parley.core.engine.batch_plan import InvalidInputs, PreparedBatch, RunKey
from parley.core.engine.batch_rules import load_batch_rules
from parley.core.engine.stored_copies import ReadAhead
from parley.core.errors import ParleyError
from parley.core.evaluation import Judge, evaluate_observed
from parley.core.records import BatchOptions, BatchRecord, CheckLimits, Conversation, ConversationSpec, Expectations, RoleModels, Verdict
from parley.core.rules import CompiledRule
from parley.core.specs import load_specs_as
from parley.core.store import Store, running_elsewhere

__all__ = ["RescorePlan", "judge_again", "load_rescore", "prepare_rescore", "rescore_models", "rescore_planned", "resume_rescore"]

UNMATCHED_SHOWN = 5


def rescore_models(options: BatchOptions, store: Store | None = None, *, python_refusal: Callable[[str], str] | None = None) -> BatchModels:
    """The models a re-score calls: its judge alone (its bot and customers are stored)."""
    judge_only = options.models.model_copy(update={"bot": "offline", "user": "offline", "bot_prompt": None})
    return BatchModels.for_batch(options.model_copy(update={"models": judge_only}), store=store, python_refusal=python_refusal)


@dataclass
class RescorePlan:
    """What a re-score runs: the stored conversation of each run and the spec it is judged on."""

    specs: list[ConversationSpec] = field(default_factory=list)
    exact_specs: dict[RunKey, ConversationSpec] = field(default_factory=dict)
    sources: dict[RunKey, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def _expectations(paths: Sequence[str], parent: BatchRecord) -> dict[str, Expectations | None]:
    """The `expect:` block of every spec the files make, by spec id (InvalidInputs for files
    with problems: expectations cannot come from a file that does not read)."""
    loaded = load_specs_as(list(paths), parent.options.loading, seed=parent.options.seed)
    if loaded.errors:
        raise InvalidInputs(loaded.errors)
    if not loaded.specs:
        raise ParleyError(f"--criteria-from {', '.join(paths)}: no profile, playbook or scenario file found")
    return {spec.spec_id: spec.expect for spec in loaded.specs}


def load_rescore(store: Store, parent: BatchRecord, criteria_from: Sequence[str] | None = None) -> RescorePlan:
    """The parent's stored conversations as a re-score plan (see the module doc)."""
    plan = RescorePlan()
    runs = store.stored_runs(parent.id)
    if not runs:
        raise ParleyError(f"batch {parent.id} has no stored conversation to re-score")
    expectations = _expectations(criteria_from, parent) if criteria_from else None
    unmatched: dict[str, None] = {}
    seen: set[str] = set()
    for spec_id, trial, conversation_id, spec in runs:
        if expectations is not None:
            if spec_id in expectations:
                spec = spec.model_copy(update={"expect": expectations[spec_id]})
            else:
                unmatched.setdefault(spec_id, None)
        if spec_id not in seen:
            seen.add(spec_id)
            plan.specs.append(spec)
        plan.exact_specs[(spec_id, trial)] = spec
        plan.sources[(spec_id, trial)] = conversation_id
    if expectations is not None and len(unmatched) == len(seen):
        shown = ", ".join(list(unmatched)[:UNMATCHED_SHOWN])
        raise ParleyError(
            f"none of batch {parent.id}'s specs ({shown}{', ...' if len(unmatched) > UNMATCHED_SHOWN else ''}) is made by "
            f"--criteria-from {', '.join(criteria_from or [])}: spec ids are the test name and its index"
        )
    if unmatched:
        shown = ", ".join(list(unmatched)[:UNMATCHED_SHOWN]) + (", ..." if len(unmatched) > UNMATCHED_SHOWN else "")
        plan.warnings.append(
            f"{len(unmatched)} spec(s) of batch {parent.id} are not made by --criteria-from ({shown}): their stored expectations are used"
        )
    return plan


async def prepare_rescore(
    store: Store,
    parent_ref: str,
    *,
    judge: str | None = None,
    criteria_from: Sequence[str | Path] = (),
    cache: bool = False,
    concurrency: int | None = None,
    rules: str | Path | None = None,
    min_kappa: float | None = None,
    require_calibrated: bool | None = None,
) -> PreparedBatch:
    """Plan and store a re-score of the parent's stored conversations (see the module doc).
    `min_kappa` and `require_calibrated` (None: the parent's) say what the judge's calibration
    must be for its verdicts to count (parley.core.evaluation.calibration_marks).

    Raises, with nothing stored: ParleyError (an unknown batch, one still running, one with no
    stored conversation, --criteria-from files that make none of its specs, a rules folder that
    is not there), InvalidInputs (--criteria-from or rule files with problems), ConfigError (a judge name that is not one, or its
    missing key), UnreachableEndpoint / CredentialsRefused (the check before launch of the
    judge's endpoint, parley.core.engine.reachability)."""
    await asyncio.to_thread(store.interrupt_orphans)
    parent = await asyncio.to_thread(store.get_batch, parent_ref)
    if parent.status in ("pending", "running"):
        owner = await asyncio.to_thread(store.batch_owner, parent.id)
        if owner is not None and running_elsewhere(owner):
            raise ParleyError(f"batch {parent.id} is still running ({owner.describe()}); re-score it when it has ended")
    paths = [str(p) for p in criteria_from]
    plan = await asyncio.to_thread(load_rescore, store, parent, paths or None)
    update: dict[str, object] = {
        "models": parent.options.models.model_copy(update={"judge": judge or parent.options.models.judge}),
        "cache": cache,
        "rescore_of": parent.id,
        "criteria_from": paths or None,
        "rerun": None,
        "replay_of": None,
        "budget_usd": None,
        "pairs": list(plan.sources),
        "only": None,
        "rules": str(rules) if rules is not None else parent.options.rules,
    }
    if concurrency is not None:
        update["concurrency"] = concurrency
    if min_kappa is not None:
        update["min_kappa"] = min_kappa
    if require_calibrated is not None:
        update["require_calibrated"] = require_calibrated
    options = parent.options.model_copy(update=update)
    compiled, rule_warnings = await asyncio.to_thread(_rescore_rules, options, parent, given=rules is not None)
    models = rescore_models(options, store)
    models.check_keys(plan.specs)  # the judge's key; the checks written in Python, imported again
    preflight = await models.preflight(plan.specs)  # the judge's endpoint, checked before anything is stored
    record = BatchRecord(status="pending", sources=list(parent.sources), options=options, planned=len(plan.sources), parent_id=parent.id)
    await asyncio.to_thread(store.create_batch, record)
    return PreparedBatch(
        batch=record,
        specs=plan.specs,
        warnings=[*rule_warnings, *plan.warnings, *preflight.warnings],
        exact_specs=plan.exact_specs,
        rescores=plan.sources,
        preflight=preflight,
        rules=compiled,
    )


def _rescore_rules(options: BatchOptions, parent: BatchRecord, *, given: bool) -> tuple[list[CompiledRule], list[str]]:
    """The rules a re-score decides: those given, else the parent's (read again from its
    `--rules`: a folder since moved is said so, with how to name it)."""
    if not given and options.rules is not None and not Path(options.rules).exists():
        raise ParleyError(
            f"batch {parent.id} was run with --rules {options.rules}, which is no longer there (from {Path.cwd()}): "
            "name the rule files with --rules DIR"
        )
    return load_batch_rules(options)


async def resume_rescore(store: Store, batch: BatchRecord, *, python_refusal: Callable[[str], str] | None = None) -> PreparedBatch:
    """A stored re-score's plan again, to run what it has not yet judged (`parley run --resume`)."""
    assert batch.options.rescore_of is not None
    parent = await asyncio.to_thread(store.get_batch, batch.options.rescore_of)
    plan = await asyncio.to_thread(load_rescore, store, parent, batch.options.criteria_from)
    compiled, rule_warnings = await asyncio.to_thread(load_batch_rules, batch.options)
    models = rescore_models(batch.options, store, python_refusal=python_refusal)
    models.check_keys(plan.specs)
    preflight = await models.preflight(plan.specs)
    return PreparedBatch(
        batch=batch,
        specs=plan.specs,
        warnings=[*rule_warnings, *plan.warnings, *preflight.warnings],
        rules=compiled,
        exact_specs=plan.exact_specs,
        rescores=plan.sources,
        resumed=True,
        preflight=preflight,
    )


async def rescore_planned(
    control: ConversationControl, *, stored_conversations: ReadAhead, models: BatchModels, parent_bot: RoleModels
) -> tuple[Conversation, Verdict]:
    """Judge one stored conversation again (read through `stored_conversations`): a copy of
    it under this run's conversation id, evaluated as its bot was (`parent_bot`: the parent
    batch's models)."""
    run = control.run
    assert run.rescore_of is not None
    stored = await stored_conversations.take(run.rescore_of)
    original = stored.conversation
    conversation = original.model_copy(
        update={
            "id": control.conversation_id,
            "usage": {},  # no bot or customer was called: the copy costs what judging it costs
            "metadata": {**original.metadata, "rescored_from": {"batch_id": stored.batch_id, "conversation_id": original.id}},
        }
    )
    control.phase = "judging"
    verdict = await judge_again(conversation, run.spec, judge=models.judge(), parent_bot=parent_bot, limits=models.check_limits)
    return conversation, verdict


async def judge_again(
    conversation: Conversation, spec: ConversationSpec, *, judge: Judge, parent_bot: RoleModels, limits: CheckLimits | None = None
) -> Verdict:
    """A stored conversation judged again by `judge`, as its bot was (`parent_bot`: the models
    of the batch it was run in): a bot without parley's World is judged on what parley saw of
    it; `limits` are the batch's `--limit`s. No bot or customer is called (a re-score, a
    calibration: parley.core.engine.calibration_run)."""
    bot = BotSpec(name=parent_bot.bot, kind=bot_kind(parent_bot.bot, bot_prompt=parent_bot.bot_prompt), target=parent_bot.bot)
    return await evaluate_observed(
        conversation,
        spec,
        judge=judge,
        uses_world=bot.uses_world or bool(conversation.tool_calls),
        has_tools=bot.kind != "prompt",
        bot_name=conversation.bot_model,
        receives_context=bot.uses_world,
        limits=limits,
    )
