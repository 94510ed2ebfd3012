"""The batch runner: many conversations at once on one asyncio loop, each stored as it ends.

Launch, watch, stop and resume a batch:

    prepared = await prepare_batch(store, ["profiles/"], BatchOptions(concurrency=8, trials=3))
    # or: prepared = await prepare_resume(store, "latest")
    runner = BatchRunner(store, prepared, on_event=print)   # or: async for e in runner.events()
    task = asyncio.create_task(runner.run())
    ...
    runner.stop()      # no more launches; in-flight conversations get `grace_s`, then are cancelled
    runner.cancel()    # in-flight conversations are cancelled now (saved as cancelled)
    result = await task

A batch built in code (parley's Python API, the pytest plugin) is prepared from its specs
(`prepare_specs`, its source `python`) and may be open-ended: it runs what it planned, then every
conversation `submit(spec, trial)` adds while it runs, each awaited through the future `submit`
returns (the stored conversation and its verdict), until `close()`:

    prepared = await prepare_specs(store, [], BatchOptions())
    runner = BatchRunner(store, prepared, open_ended=True)
    task = asyncio.create_task(runner.run())
    stored = await runner.submit(spec)     # a StoredConversation
    runner.close()                         # no more: run() ends once the last one is stored
    result = await task

`stop()`, `cancel()`, `submit()` and `close()` must be called on the loop's thread (from another
thread, through `loop.call_soon_threadsafe`). Several runners may share one loop (a service running batches side
by side); each adapts its own limit. The caller closes the shared HTTP clients at shutdown
(`parley.core.models.openai_provider.aclose_clients()`).

How it behaves:
- conversations are launched in plan order while the adaptive limit (parley.core.engine.adaptive_limit)
  allows; never more in flight than the current limit; 429s shrink it and pause launches for
  the server's Retry-After, successful calls grow it back up to `options.concurrency`;
- each conversation runs with its own World and user simulator, is evaluated (the judge bounded
  by its own timeout) and committed in one transaction from a worker thread at once: nothing
  accumulates in memory, and a process killed at any moment loses nothing that had finished;
- a re-score's runs read their stored conversations a page at a time ahead of them, and a
  judged copy leaves the limit as it is handed to the store (storing calls no model: the next
  judging need not wait for the commit); the copies ready at once share one transaction
  (parley.core.engine.stored_copies), and the run ends once its copy is committed;
- a conversation that breaks is stored with who broke it (bot_error: a failure of the bot;
  user_error, infrastructure_error: counted apart) and the batch goes on; whatever breaks while
  it is prepared, evaluated or stored, it is stored all the same (see batch_conversation and
  `_store`), so the counts are always the rows stored;
- stopped, the batch is `cancelled`, interrupted conversations are saved as `cancelled` with
  what they had; `prepare_resume` plans the same specs from the stored sources and options and
  runs only the (spec_id, trial) pairs not completed (those in RERUN_STOPS run again).
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import functools
import logging
import math
import time
import uuid
from collections import Counter
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from parley.core.bots import bot_kind, kind_uses_world
from parley.core.engine.adaptive_limit import AdaptiveLimit, LimitChange
from parley.core.engine.batch_checks import TooManyConversations, check_and_store
from parley.core.engine.batch_conversation import (
    CANCELLED_TEXT,
    STAGE_TEXT,
    ConversationControl,
    StepCallback,
    broke_at,
    empty_conversation,
    run_planned,
)
from parley.core.engine.batch_lineage import any_scope, load_replay, missing_sources
from parley.core.engine.batch_models import BatchModels
from parley.core.engine.batch_plan import InvalidInputs, LoadedSpecs, PlannedRun, PreparedBatch, load_batch_specs, select_single, trial_spec
from parley.core.engine.batch_rules import BatchRules, load_batch_rules
from parley.core.engine.gc_threshold import fewer_collections
from parley.core.engine.harness import Limits, describe_error
from parley.core.engine.rescore import rescore_models, rescore_planned, resume_rescore
from parley.core.engine.spec_worlds import WorldTemplates
from parley.core.engine.stored_copies import CopyWriter, ReadAhead
from parley.core.errors import ParleyError
from parley.core.evaluation import broken_verdict, offline_limits_by_file, unseen_context_warnings
from parley.core.records import (
    PYTHON_SOURCE,
    RERUN_STOPS,
    UNEVALUATED,
    BatchEvent,
    BatchFinished,
    BatchOptions,
    BatchRecord,
    BatchStarted,
    ConcurrencyChanged,
    Conversation,
    ConversationCopy,
    ConversationFailed,
    ConversationFinished,
    ConversationRow,
    ConversationSpec,
    ConversationStarted,
    OutcomeCounts,
    Progress,
    StoredConversation,
    TranscriptEvent,
    TranscriptStep,
    Verdict,
)
from parley.core.store import DamagedDatabase, DatabaseGone, DuplicateConversationError, Store, outcome_rows, running_elsewhere

if TYPE_CHECKING:
    from parley.core.rules import CompiledRule

log = logging.getLogger("parley.engine.batch_runner")

__all__ = [
    "BatchResult",
    "BatchRunner",
    "DEFAULT_GRACE_S",
    "InvalidInputs",
    "NotRun",
    "TooManyConversations",
    "prepare_batch",
    "prepare_resume",
    "prepare_specs",
    "result_row",
]

DEFAULT_GRACE_S = 5.0


class NotRun(ParleyError):
    """A conversation submitted to an open-ended batch that never ran (the batch was stopped first)."""


EventCallback = Callable[[BatchEvent], object]


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


# -- preparing ----------------------------------------------------------------------------------


async def prepare_batch(
    store: Store,
    sources: Sequence[str | Path],
    options: BatchOptions,
    *,
    single: str | int | None = None,
    models: BatchModels | None = None,
    dry_run: bool = False,
    max_planned: int | None = None,
) -> PreparedBatch:
    """Load and check a new batch's inputs, then store its record (status `pending`).

    Raises, with nothing stored: InvalidInputs (every problem of the files), SelectionError
    (`single` names no spec), ConfigError (a model name that is not one, or a missing API key /
    base URL for a role the batch uses), UnreachableEndpoint / CredentialsRefused (the check
    before launch, parley.core.engine.reachability: an endpoint the batch would call does not
    answer, or refuses its key), TooManyConversations (more than `max_planned` conversations),
    ParleyError (no conversations at all). The check's report is `PreparedBatch.preflight`, its
    warnings (a model the endpoint does not list) among `warnings`. `dry_run`: plan only: no key is needed, no model is called (an LLM
    user's any() items are not generated, no endpoint is probed), nothing is stored.
    """
    batch_id = uuid.uuid4().hex
    models = models or BatchModels.for_batch(options, store=store)
    rules, rule_warnings = await asyncio.to_thread(load_batch_rules, options)
    loaded = await _load_sources(store, sources, options, models, scope=batch_id, dry_run=dry_run)
    specs = loaded.specs
    if single is not None:
        specs = [select_single(specs, single)]
        options = options.model_copy(update={"only": [specs[0].spec_id]})
    prepared = await _checked_and_stored(
        store, BatchRecord(id=batch_id, sources=[str(s) for s in sources], options=options), specs, models, dry_run, max_planned, rules
    )
    prepared.warnings[:0] = [*rule_warnings, *loaded.warnings]
    prepared.notes, prepared.left_out = loaded.notes, loaded.left_out
    return prepared


async def _load_sources(
    store: Store, sources: Sequence[str | Path], options: BatchOptions, models: BatchModels, *, scope: str, dry_run: bool
) -> LoadedSpecs:
    """The specs `sources` make for a batch with `options`, its any() items kept under batch
    `scope`. The bot's and the judge's keys are checked first, before any any() generation (on
    a dry run nothing is checked or generated)."""
    if not dry_run:
        models.check_keys()
    return await load_batch_specs(
        sources,
        seed=options.seed,
        models=None if dry_run else models,
        store=store,
        batch_id=scope,
        shared_cache=options.cache,
        loading=options.loading,
    )


async def prepare_specs(
    store: Store,
    specs: Sequence[ConversationSpec],
    options: BatchOptions,
    *,
    models: BatchModels | None = None,
    dry_run: bool = False,
    sources: Sequence[str] = (PYTHON_SOURCE,),
) -> PreparedBatch:
    """A new batch of specs built in code (parley's Python API, the pytest plugin, `parley
    redteam`'s generated attacks), stored with `sources` (default `python`: it has no files to
    resume from). The checks are prepare_batch's: the
    models' keys (a Python bot's import), the budget, the check before launch. An open-ended
    batch may start with no spec at all (BatchRunner.submit adds them)."""
    models = models or BatchModels.for_batch(options, store=store)
    rules, rule_warnings = await asyncio.to_thread(load_batch_rules, options)
    record = BatchRecord(sources=list(sources), options=options)
    prepared = await _checked_and_stored(store, record, list(specs), models, dry_run, None, rules)
    prepared.warnings[:0] = rule_warnings
    return prepared


async def _checked_and_stored(
    store: Store,
    record: BatchRecord,
    specs: list[ConversationSpec],
    models: BatchModels,
    dry_run: bool,
    max_planned: int | None,
    rules: list[CompiledRule],
) -> PreparedBatch:
    """The checks every new batch goes through before it is stored (parley.core.engine.batch_checks), then its record."""
    record, preflight = await check_and_store(
        store, record, specs, models, planned=len(specs) * record.options.trials, dry_run=dry_run, max_planned=max_planned
    )
    return PreparedBatch(
        batch=record,
        specs=specs,
        warnings=[*(preflight.warnings if preflight else []), *await _launch_warnings(specs, record.options)],
        preflight=preflight,
        rules=rules,
    )


async def _launch_warnings(specs: Sequence[ConversationSpec], options: BatchOptions) -> list[str]:
    """What the batch's offline roles will not read, one line per file (in a thread: a suite of
    thousands of goals is parsed); and for a bot that only hears the customer's lines, each
    playbook file whose injected context it will never receive."""
    models = options.models
    lines = await asyncio.to_thread(offline_limits_by_file, specs, user_model=models.user, judge_model=models.judge)
    if not kind_uses_world(bot_kind(models.bot, bot_prompt=models.bot_prompt)):
        lines += unseen_context_warnings(list(specs), models.bot)
    return lines


async def prepare_resume(
    store: Store,
    batch_ref: str = "latest",
    *,
    models: BatchModels | None = None,
    budget_usd: float | None = None,
    dry_run: bool = False,
    python_refusal: Callable[[str], str] | None = None,
) -> PreparedBatch:
    """Re-plan a stored batch (id, unique id prefix, `latest`, `latest~N`) from its stored
    sources and options; the (spec_id, trial) pairs already completed are skipped when it runs.
    `budget_usd` replaces the batch's budget (a batch stopped at its budget goes on with more).
    `dry_run`: plan only (no key needed, nothing changed in the store). `python_refusal`: why a
    check written in Python may not be imported here (the service's), None when it may."""
    ref = (batch_ref or "latest").strip()
    if not await asyncio.to_thread(store.count_batches):
        raise ParleyError("there is no batch to resume in this database; start one with `parley run PATH`")
    await asyncio.to_thread(store.interrupt_orphans)  # a killed run's batch shows as interrupted
    batch = await asyncio.to_thread(store.get_batch, ref)
    if batch.status in ("pending", "running"):
        owner = await asyncio.to_thread(store.batch_owner, batch.id)
        if owner is not None and running_elsewhere(owner):
            raise ParleyError(f"batch {batch.id} is still running ({owner.describe()}); stop it there before resuming")
    options = batch.options
    if options.mutant is not None and models is None:  # its bot was wrapped in the mutant, which a resume cannot rebuild
        raise ParleyError(
            f"batch {batch.id} ran the bot under the mutant {options.mutant}: run `parley mutate` again rather than resume it"
        )
    if options.rescore_of is not None:  # a re-score: its plan is its parent's stored conversations
        prepared = await resume_rescore(store, batch, python_refusal=python_refusal)
        prepared.done_keys = await asyncio.to_thread(store.completed_keys, batch.id)
        return prepared
    models = models or BatchModels.for_batch(options, store=store, python_refusal=python_refusal)
    rules, rule_warnings = await asyncio.to_thread(load_batch_rules, options)
    if options.replay_of is not None:  # a replay: its plan is its parent's stored conversations
        plan = await asyncio.to_thread(load_replay, store, options.replay_of)
        if not dry_run:
            models.check_keys(plan.specs)
        prepared = PreparedBatch(batch=batch, specs=plan.specs, exact_specs=plan.exact_specs, replays=plan.scripts, resumed=True)
    else:
        missing_sources(batch, "resume")
        scope = await asyncio.to_thread(any_scope, store, batch)
        loaded = await _load_sources(store, batch.sources, options, models, scope=scope, dry_run=dry_run)
        specs = loaded.specs
        if options.only is not None:
            wanted = set(options.only)
            specs = [s for s in specs if s.spec_id in wanted]
            if not specs:
                raise ParleyError(f"cannot resume batch {batch.id}: its sources no longer make {', '.join(options.only)}")
        if not dry_run:
            models.check_keys(specs)
        warnings = loaded.warnings + await _launch_warnings(specs, options)
        prepared = PreparedBatch(batch=batch, specs=specs, warnings=warnings, resumed=True, notes=loaded.notes, left_out=loaded.left_out)
    prepared.rules = rules
    prepared.warnings[:0] = rule_warnings
    if budget_usd is not None:
        models.check_budget(budget_usd, prepared.specs)
        options = options.model_copy(update={"budget_usd": budget_usd})
        prepared.batch = prepared.batch.model_copy(update={"options": options})
        if not dry_run:
            prepared.batch = await asyncio.to_thread(store.update_batch, batch.id, options=options)
    if not dry_run:
        prepared.preflight = await models.preflight(prepared.specs)
        prepared.warnings.extend(prepared.preflight.warnings)
    if prepared.total != batch.planned:
        prepared.warnings.append(
            f"the sources now make {prepared.total} conversations; batch {batch.id} planned {batch.planned} (files changed since it started?)"
        )
        if not dry_run:
            prepared.batch = await asyncio.to_thread(store.update_batch, batch.id, planned=prepared.total)
    prepared.done_keys = await asyncio.to_thread(store.completed_keys, batch.id)
    return prepared


# -- results ------------------------------------------------------------------------------------


def result_row(
    batch_id: str | None, spec: ConversationSpec, conversation: Conversation, verdict: Verdict | None, trial: int
) -> ConversationRow:
    """The results-table row of a conversation, as the store would list it (without reading it back)."""
    return ConversationRow.of(batch_id, spec, conversation, verdict, trial)


class BatchResult(OutcomeCounts):
    """How a run of a batch ended: its counts (OutcomeCounts: passed, failed, bot_errors, errors,
    the pass rate... under the summary's names) and how the run went. Counts cover the whole
    batch (earlier runs included) and are of stored conversations only: they always equal the
    rows the batch holds."""

    batch_id: str
    status: str
    total: int
    elapsed_s: float
    ran: int
    """Conversations run by this run (a resumed batch's earlier ones not counted)."""
    max_in_flight: int
    lowest_limit: int
    rate_limited: int
    cache_hits: int
    cache_misses: int
    error: str | None = None
    rule_failures: int = 0
    """Pair and batch rules (`--rules`) that failed: a pair of conversations, or the batch."""

    @property
    def all_passed(self) -> bool:
        return self.status == "completed" and self.passed == self.total

    def ok(self, *, strict: bool = False) -> bool:
        """The exit code is 0: the batch completed every conversation, no pair or batch rule
        failed, and its conversations are ok (OutcomeCounts.ok: unverified conversations and
        the simulator's faults fail it only when `strict`)."""
        return self.status == "completed" and self.done >= self.total and not self.rule_failures and super().ok(strict=strict)


class _AboutConversation(TypedDict):
    """Which conversation of which batch an event is about."""

    batch_id: str
    conversation_id: str
    spec_id: str
    name: str
    trial: int


class _Tally:
    """Outcomes of the stored conversations, counted as the batch's counts are (OutcomeCounts)."""

    def __init__(self) -> None:
        self._outcomes: Counter[str] = Counter()

    @property
    def done(self) -> int:
        return self._outcomes.total()

    def counts(self) -> dict[str, int]:
        """The counts every event and result of the batch carries (OutcomeCounts' `outcomes`)."""
        return OutcomeCounts.of(self._outcomes).outcomes

    def add(self, outcome: str | None, n: int = 1) -> None:
        self._outcomes[outcome or UNEVALUATED] += n


# -- the runner ---------------------------------------------------------------------------------


class BatchRunner:
    """Runs a PreparedBatch (see the module doc). One runner runs its batch once."""

    def __init__(
        self,
        store: Store,
        prepared: PreparedBatch,
        *,
        models: BatchModels | None = None,
        on_event: EventCallback | None = None,
        concurrency: int | None = None,
        grace_s: float = DEFAULT_GRACE_S,
        stream_transcripts: bool = False,
        open_ended: bool = False,
    ) -> None:
        self.store = store
        self.prepared = prepared
        self.batch_id = prepared.id
        options = prepared.batch.options
        self.options = options
        if models is None and options.rescore_of is not None:
            models = rescore_models(options, store)  # a re-score calls its judge alone
        self.models = models or BatchModels.for_batch(options, store=store)
        self.limits = Limits(max_turns=options.max_turns, timeout_s=options.timeout_s)
        self.grace_s = grace_s
        self.stream_transcripts = stream_transcripts
        self.limiter = AdaptiveLimit(concurrency or options.concurrency, on_change=self._limit_changed)
        self.models.attach(on_retry=self.limiter.on_retry, on_success=self.limiter.call_succeeded)
        self._callbacks: list[EventCallback] = [on_event] if on_event is not None else []
        self._queues: list[asyncio.Queue[BatchEvent]] = []
        self._in_flight: dict[str, ConversationControl] = {}
        self._worlds = WorldTemplates()
        self._stopping = False
        self._grace_handle: asyncio.TimerHandle | None = None
        self._tally = _Tally()
        self._total: int | None = None
        self._ran = 0
        self._started = 0.0
        self._fatal: str | None = None
        self._interrupted_any = False
        self._finished = False
        self.budget_usd = options.budget_usd
        self.spent_usd = 0.0
        """Measured cost of the batch's stored conversations (earlier runs of it included)."""
        self._budget_reached = False
        self.rules = (
            BatchRules(prepared.rules, self.models, prepared.specs, self.batch_id, threads=concurrency or options.concurrency)
            if prepared.rules
            else None
        )
        self._rules_task: asyncio.Task[Any] | None = None
        self._rules_undecided = False
        """Pair or batch rules the run did not get to decide (it was stopped): the batch is not completed."""
        self.rule_failures = 0
        """Pair and batch rules that failed (a pair, or the batch) in this run's decision."""
        self.open_ended = open_ended
        self._wake = asyncio.Event()
        self._added = 0
        self._added_stored = 0
        self._closed = False
        self._waiting: dict[str, asyncio.Future[StoredConversation]] = {}
        """Futures of submitted conversations, by conversation id (ConversationControl's)."""
        self._queued: list[tuple[PlannedRun, asyncio.Future[StoredConversation], BatchModels | None]] = []
        self._run_models: dict[str, BatchModels] = {}
        self._stored: ReadAhead | None = None
        """A re-score: the stored conversations its runs judge, read ahead of them."""
        self._copies = CopyWriter(store, self.batch_id)
        """A re-score: its copies, written together as they come."""

    @property
    def total(self) -> int:
        """Conversations the batch plans: its plan's (counted once the run starts), and those submitted to it."""
        return (self._total if self._total is not None else self.prepared.total) + self._added

    # -- an open-ended batch -------------------------------------------------------------------

    def submit(self, spec: ConversationSpec, trial: int = 1, *, models: BatchModels | None = None) -> asyncio.Future[StoredConversation]:
        """Add one conversation to this open-ended batch: trial `trial` of `spec` (its seed
        derived as `--trials` derives it), run with `models` (default: the batch's) under the
        batch's adaptive limit. The future gives the stored conversation and its verdict; NotRun
        when the batch stops before it starts. On the loop's thread."""
        if not self.open_ended:
            raise RuntimeError("submit() is for an open-ended batch (BatchRunner(..., open_ended=True))")
        if self._closed or self._stopping or self._finished:
            raise NotRun(f"batch {self.batch_id} takes no more conversations: it was closed or stopped")
        if models is not None:
            models.attach(on_retry=self.limiter.on_retry, on_success=self.limiter.call_succeeded)
        if self.rules is not None:
            self.rules.count(spec)
        future: asyncio.Future[StoredConversation] = asyncio.get_running_loop().create_future()
        run = PlannedRun(spec=trial_spec(spec, trial), trial=trial, position=self.total)
        self._added += 1
        self._queued.append((run, future, models))
        self._wake.set()
        return future

    def close(self) -> None:
        """No more submissions: `run()` ends once what was submitted is stored. On the loop's thread."""
        self._closed = True
        self._wake.set()

    async def _launches(self) -> AsyncGenerator[tuple[PlannedRun, asyncio.Future[StoredConversation] | None, BatchModels | None]]:
        """What to launch, in order: the plan's pending runs, then (open-ended) each submitted one
        as it comes, the stored plan's size kept up with them, until closed or stopped. Submitted
        runs it never got to hand out stay queued (for `_not_run`)."""
        for run in self.prepared.pending():
            yield run, None, None
        while self.open_ended and not self._stopping:
            if self._added != self._added_stored:  # several submitted at once: one update for all of them
                # before waiting or returning too: those submitted during the update's own await count
                self._added_stored = self._added
                await asyncio.to_thread(self.store.update_batch, self.batch_id, planned=self.total)
                continue
            if not self._queued:
                if self._closed:
                    return
                self._wake.clear()
                await self._wake.wait()
                continue
            ready, self._queued = self._queued, []
            handed = 0
            try:
                for item in ready:
                    handed += 1
                    yield item
            finally:
                self._queued[:0] = ready[handed:]

    def _not_run(self, why: str) -> None:
        """Submitted conversations that will never start: their futures say so."""
        ready, self._queued = self._queued, []
        for _, future, _ in ready:
            if not future.done():
                future.set_exception(NotRun(why))

    # -- watching ------------------------------------------------------------------------------

    def subscribe(self, callback: EventCallback) -> None:
        """Call `callback(event)` for every event from now on (on the loop's thread)."""
        self._callbacks.append(callback)

    def events(self) -> AsyncIterator[BatchEvent]:
        """Every event from now on, ending after BatchFinished. Call before `run()` starts to
        see BatchStarted."""
        queue: asyncio.Queue[BatchEvent] = asyncio.Queue()
        self._queues.append(queue)

        async def iterate() -> AsyncIterator[BatchEvent]:
            try:
                while True:
                    event = await queue.get()
                    yield event
                    if isinstance(event, BatchFinished):
                        return
            finally:
                if queue in self._queues:
                    self._queues.remove(queue)

        return iterate()

    def _emit(self, event: BatchEvent) -> None:
        for callback in list(self._callbacks):
            try:
                callback(event)
            except Exception:  # noqa: BLE001 - a watcher's bug must not stop the batch
                log.exception("a batch watcher failed on %s", type(event).__name__)
        for queue in self._queues:
            queue.put_nowait(event)

    def _limit_changed(self, change: LimitChange) -> None:
        self._emit(ConcurrencyChanged(batch_id=self.batch_id, **dataclasses.asdict(change)))

    def progress(self) -> Progress:
        """Where the batch is now."""
        elapsed = max(time.monotonic() - self._started, 1e-9) if self._started else 0.0
        rate = self._ran / elapsed if elapsed else 0.0
        total = self.total
        remaining = max(0, total - self._tally.done)
        return Progress(
            batch_id=self.batch_id,
            total=total,
            outcomes=self._tally.counts(),
            in_flight=len(self._in_flight),
            rate_per_s=rate,
            eta_s=(remaining / rate) if rate > 0 else None,
            concurrency=self.limiter.limit,
        )

    # -- control -------------------------------------------------------------------------------

    @property
    def stopping(self) -> bool:
        return self._stopping

    @property
    def in_flight(self) -> int:
        return len(self._in_flight)

    def stop(self, grace_s: float | None = None) -> None:
        """Stop launching; conversations in flight get `grace_s` (default the runner's) to
        finish, then are cancelled. A second call cancels them at once."""
        if self._finished:
            return
        if self._stopping:
            self.cancel()
            return
        self._stopping = True
        self.limiter.close()
        self._wake.set()  # an open-ended batch waiting for submissions stops waiting
        grace = self.grace_s if grace_s is None else grace_s
        loop = asyncio.get_running_loop()
        self._grace_handle = loop.call_later(max(0.0, grace), self._interrupt_all)

    def cancel(self) -> None:
        """Stop launching and cancel every conversation in flight now (each is saved as
        cancelled with what it had)."""
        if self._finished:
            return
        self._stopping = True
        self.limiter.close()
        self._wake.set()
        if self._grace_handle is not None:
            self._grace_handle.cancel()
        self._interrupt_all()

    def _interrupt_all(self) -> None:
        if self._rules_task is not None and not self._rules_task.done():
            assert self.rules is not None
            self.rules.close()  # the thread's next question fails at once; its decisions are not stored
            self._rules_task.cancel()
        for control in list(self._in_flight.values()):
            if control.phase == "waiting" and control.task is not None:
                control.task.cancel()  # it had not started: nothing to save, resume runs it
                self._interrupted_any = True
            elif control.interrupt():
                self._interrupted_any = True

    # -- running -------------------------------------------------------------------------------

    async def run(self) -> BatchResult:
        """Run the batch's pending conversations; returns how the batch ended. Never raises for
        a conversation's failure; a broken store ends the batch `failed`."""
        with fewer_collections():  # the cycle collector's passes cost 5-10% of a batch's CPU
            return await self._run()

    async def _run(self) -> BatchResult:
        prepared = self.prepared
        self._total = prepared.total  # counted once: progress is told after every conversation
        self._started = time.monotonic()
        if prepared.rescores:
            self._stored = ReadAhead(self.store, [run.rescore_of for run in prepared.pending() if run.rescore_of is not None])
        await self._initial_counts()
        # what was measured of the judge marks its verdicts (and, --require-calibrated, which count)
        await self.models.load_calibration(min_kappa=self.options.min_kappa, require=self.options.require_calibrated)
        started_at = prepared.batch.started_at or _now()
        await asyncio.to_thread(
            self.store.update_batch, self.batch_id, status="running", started_at=started_at, finished_at=None, error=None
        )
        self._emit(
            BatchStarted(
                batch_id=self.batch_id,
                total=self.total,
                already_done=self._tally.done,
                resumed=prepared.resumed,
                concurrency=self.limiter.limit,
            )
        )
        self._emit(self.progress())
        if self.rules is not None and prepared.remaining:
            await self.rules.forget_groups(self.store, self.batch_id)  # decided again once every conversation is in
        tasks: set[asyncio.Task[Any]] = set()
        launched_all = True
        own_cancel: asyncio.CancelledError | None = None
        launches = self._launches()
        try:
            async for run, future, models in launches:
                if not await self._may_launch():
                    launched_all = False
                    self._requeue(run, future, models)
                    break
                control = ConversationControl(run=run)
                if future is not None:
                    self._waiting[control.conversation_id] = future
                if models is not None:
                    self._run_models[control.conversation_id] = models
                self._in_flight[control.conversation_id] = control
                task = asyncio.create_task(self._one(control), name=f"parley-{run.spec.spec_id}-{run.trial}")
                control.task = task
                tasks.add(task)
                # Cleanup in a callback: a task cancelled before it started never runs its finally.
                task.add_done_callback(functools.partial(self._task_done, control=control, tasks=tasks))
            while tasks:
                await asyncio.wait(set(tasks))
            await self._decide_group_rules()
        except asyncio.CancelledError as exc:
            # The runner's own task was cancelled (an app closing): cancel what is in flight,
            # save it as cancelled, record the batch's end, then let the cancellation through.
            own_cancel = exc
            self.cancel()
            launched_all = False
            while tasks:
                await asyncio.wait(set(tasks))
        finally:
            await launches.aclose()
            await self._worlds.aclose()  # the served worlds of deployed bots
            if self._grace_handle is not None:
                self._grace_handle.cancel()
            if self._stored is not None:
                self._stored.close()
            self._copies.close()
            self._not_run(f"batch {self.batch_id} was stopped before this conversation started")
        result = await self._finish(launched_all)
        if own_cancel is not None:
            raise own_cancel
        return result

    async def _may_launch(self) -> bool:
        """Wait for room under the limit to launch one more conversation; False when the batch
        launches no more (it is stopping, or its budget is spent: what is in flight finishes
        and is stored)."""
        if self._stopping or not await self.limiter.acquire():
            return False
        if self._stopping:
            self.limiter.release()
            return False
        if self.budget_usd is not None and self.spent_usd >= self.budget_usd:
            self.limiter.release()
            self._budget_reached = True
            return False
        return True

    def _requeue(self, run: PlannedRun, future: asyncio.Future[StoredConversation] | None, models: BatchModels | None) -> None:
        """A submitted run taken from the queue but not launched (the batch stopped): NotRun, as the rest."""
        if future is not None:
            self._queued.insert(0, (run, future, models))

    def _free_slot(self, control: ConversationControl) -> None:
        """The conversation no longer counts as in flight: its slot of the limit is free (once)."""
        if self._in_flight.pop(control.conversation_id, None) is not None:
            self.limiter.release()

    def _task_done(self, task: asyncio.Task[Any], control: ConversationControl, tasks: set[asyncio.Task[Any]]) -> None:
        tasks.discard(task)
        self._free_slot(control)
        self._run_models.pop(control.conversation_id, None)
        control.phase = "done"
        future = self._waiting.pop(control.conversation_id, None)
        if future is not None and not future.done():  # cancelled before it started, or never stored
            future.set_exception(NotRun(self._fatal or f"batch {self.batch_id} was stopped before this conversation was stored"))

    async def _initial_counts(self) -> None:
        """The outcomes and the cost of a resumed batch's completed conversations (those it will not run again)."""
        if not self.prepared.done_keys:
            return
        rows = await asyncio.to_thread(lambda: list(outcome_rows(self.store, self.batch_id)))
        self.spent_usd = math.fsum(r.cost_usd or 0.0 for r in rows)
        kept = Counter(r.outcome for r in rows if r.stop_reason not in RERUN_STOPS)  # what --resume runs again is not counted
        for outcome, n in kept.items():
            self._tally.add(outcome, n)

    async def _finish(self, launched_all: bool) -> BatchResult:
        self._finished = True
        if self.rules is not None:
            self.rules.shutdown()
        if self._fatal is not None:
            status = "failed"
        elif self._budget_reached and not self._stopping:
            status = "stopped_budget"
        elif self._stopping and (not launched_all or self._interrupted_any or self._rules_undecided or self._tally.done < self.total):
            status = "cancelled"
        else:
            status = "completed"
        try:
            await asyncio.to_thread(self.store.update_batch, self.batch_id, status=status, finished_at=_now(), error=self._fatal)
        except Exception as exc:  # noqa: BLE001 - report what we can
            self._fatal = self._fatal or f"could not record the batch's end: {exc}"
            status = "failed"
        elapsed = time.monotonic() - self._started
        self._emit(self.progress())
        self._emit(
            BatchFinished(
                batch_id=self.batch_id,
                status=status,
                total=self.total,
                outcomes=self._tally.counts(),
                elapsed_s=elapsed,
                error=self._fatal,
            )
        )
        return BatchResult(
            batch_id=self.batch_id,
            status=status,
            total=self.total,
            outcomes=self._tally.counts(),
            elapsed_s=elapsed,
            ran=self._ran,
            max_in_flight=self.limiter.max_in_flight,
            lowest_limit=self.limiter.lowest,
            rate_limited=self.limiter.rate_limited,
            cache_hits=self.models.cache_hits,
            cache_misses=self.models.cache_misses,
            error=self._fatal,
            rule_failures=self.rule_failures,
        )

    async def _decide_group_rules(self) -> None:
        """The pair and batch rules, once every planned conversation is stored (a batch stopped
        before that decides them when it is resumed)."""
        rules = self.rules
        if rules is None or not rules.groups or self._fatal is not None or self._budget_reached:
            return
        if self._tally.done < self.prepared.total:
            return
        if self._stopping:
            self._rules_undecided = True
            return
        self._rules_task = asyncio.create_task(rules.decide_groups(self.store, self.batch_id), name=f"parley-rules-{self.batch_id}")
        try:
            reports = await asyncio.shield(self._rules_task)
        except asyncio.CancelledError:
            if not self._rules_task.cancelled():  # the runner's own task was cancelled: pass it on
                self._rules_task.cancel()
                raise
            self._rules_undecided = True
            return
        except Exception as exc:  # a store or evaluation failure: said, and the batch is not completed
            log.exception("batch %s: deciding the pair and batch rules failed", self.batch_id)
            self._fatal = f"deciding the pair and batch rules failed: {describe_error(exc)}"
            return
        self.rule_failures = sum(1 for report in reports if report.count("fail"))

    def _step_callback(self, control: ConversationControl) -> StepCallback | None:
        if not self.stream_transcripts:
            return None
        run = control.run

        def on_step(step: TranscriptStep, data: dict[str, Any]) -> None:
            self._emit(
                TranscriptEvent(
                    batch_id=self.batch_id,
                    conversation_id=control.conversation_id,
                    spec_id=run.spec.spec_id,
                    trial=run.trial,
                    step=step,
                    text=data.get("text"),
                    tool=data.get("tool"),
                    details={k: v for k, v in data.items() if k not in ("text", "tool")},
                )
            )

        return on_step

    async def _conversation(self, control: ConversationControl) -> tuple[Conversation, Verdict]:
        """Run and evaluate one conversation: here, on this loop (a sharded batch runs it on a
        worker process: parley.core.engine.distributed)."""
        return await run_planned(
            control,
            models=self._run_models.get(control.conversation_id, self.models),
            worlds=self._worlds,
            limits=self.limits,
            today=self.prepared.today,
            on_step=self._step_callback(control),
        )

    def _about(self, run: PlannedRun, conversation_id: str) -> _AboutConversation:
        return _AboutConversation(
            batch_id=self.batch_id, conversation_id=conversation_id, spec_id=run.spec.spec_id, name=run.spec.name, trial=run.trial
        )

    async def _one(self, control: ConversationControl) -> None:
        run: PlannedRun = control.run
        spec = run.spec
        try:
            self._emit(ConversationStarted(**self._about(run, control.conversation_id)))
            try:
                if run.rescore_of is not None:  # judged again here, whoever runs the batch's conversations
                    assert self._stored is not None  # made by _run for a plan with re-scores
                    conversation, verdict = await rescore_planned(
                        control, stored_conversations=self._stored, models=self.models, parent_bot=self.options.models
                    )
                else:
                    conversation, verdict = await self._conversation(control)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a bug in one conversation must not stop the batch, nor lose it
                log.exception("%s trial %s: a conversation broke outside its stages", spec.spec_id, run.trial)
                conversation = empty_conversation(
                    control, stop_reason="infrastructure_error", error=f"{STAGE_TEXT['run']}: {describe_error(exc)}"
                )
                verdict = broken_verdict(conversation)
            if self.rules is not None:
                conversation, verdict = await self._judge_rules(control, conversation, verdict)
            control.phase = "saving"
            stored = await self._store(control, conversation, verdict)
            if stored is None:
                return
            conversation, verdict = stored
            future = self._waiting.pop(control.conversation_id, None)
            if future is not None and not future.done():
                future.set_result(
                    StoredConversation(spec=spec, conversation=conversation, verdict=verdict, trial=run.trial, batch_id=self.batch_id)
                )
            row = result_row(self.batch_id, spec, conversation, verdict, run.trial)
            self.spent_usd += row.cost_usd or 0.0
            self._ran += 1
            self._tally.add(row.outcome)
            about = self._about(run, conversation.id)
            if conversation.stop_reason in RERUN_STOPS:
                error = conversation.error or conversation.stop_reason
                self._emit(ConversationFailed(**about, stop_reason=conversation.stop_reason, error=error, row=row))
            else:
                self._emit(
                    ConversationFinished(
                        **about,
                        outcome=verdict.outcome,
                        passed=verdict.passed,
                        score=verdict.score,
                        stop_reason=conversation.stop_reason,
                        row=row,
                    )
                )
            self._emit(self.progress())
        finally:
            control.phase = "done"

    async def _judge_rules(
        self, control: ConversationControl, conversation: Conversation, verdict: Verdict
    ) -> tuple[Conversation, Verdict]:
        """The conversation's per-conversation rules, as checks of its verdict (interruptible, as
        the judge is: an interrupted one is saved as cancelled, and `--resume` runs it again)."""
        assert self.rules is not None
        control.phase = "judging"
        try:
            return conversation, await self.rules.judge(control.run.spec, conversation, verdict)
        except asyncio.CancelledError:
            control.absorb()
            cancelled = conversation.model_copy(update={"stop_reason": "cancelled", "error": CANCELLED_TEXT})
            return cancelled, broken_verdict(cancelled)
        except Exception as exc:  # parley's own failure (rules' errors are their verdicts): stored as such
            log.warning("%s trial %s: evaluating its rules failed", control.run.spec.spec_id, control.run.trial, exc_info=True)
            broke = broke_at(conversation, "evaluation", exc)
            return broke, broken_verdict(broke)

    async def _store(
        self, control: ConversationControl, conversation: Conversation, verdict: Verdict
    ) -> tuple[Conversation, Verdict] | None:
        """Store the conversation; what was stored, or None when nothing could be (the store is
        broken: the batch ends `failed`, and nothing is counted that is not stored).

        A conversation the store refuses (a value it cannot write) is stored again without its
        transcript, as an infrastructure_error saying why, so that it does not vanish."""
        run = control.run
        save = self.store.save_conversation
        try:
            source = (conversation.metadata.get("rescored_from") or {}).get("conversation_id") if run.rescore_of else None
            if source is not None:
                # a re-score's copy: its transcript rows are copied inside SQLite, not written anew,
                # together with the other copies that are ready (parley.core.engine.stored_copies)
                copy = ConversationCopy(spec=run.spec, conversation=conversation, verdict=verdict, trial=run.trial, source_id=source)
                written = await self._copies.hand_over(copy)
                self._free_slot(control)  # storing it calls no model: its slot goes to the next judging now
                await asyncio.shield(written)
            else:
                await asyncio.to_thread(save, self.batch_id, run.spec, conversation, verdict, run.trial)
            return conversation, verdict
        except DuplicateConversationError:
            return conversation, verdict  # another process finished it meanwhile: it counts once, as stored there
        except (DatabaseGone, DamagedDatabase) as exc:  # the file itself: nothing more can be stored
            log.error("%s", exc)
            self._fatal = str(exc)
            self._unstored(control, self._fatal)
            if not self._stopping:
                self.stop(grace_s=0)
            return None
        except Exception as exc:
            log.warning("%s trial %s: could not store the conversation", run.spec.spec_id, run.trial, exc_info=True)
            first = exc
        bare = broke_at(conversation, "store", first).model_copy(
            update={"messages": [], "tool_calls": [], "turns": [], "final_state": None, "system_prompt": None}
        )
        bare.metadata = {**_plain_metadata(run), "stopped_as": conversation.stop_reason, "broke_at": "store"}
        bare_verdict = broken_verdict(bare)
        try:
            await asyncio.to_thread(save, self.batch_id, run.spec, bare, bare_verdict, run.trial)
            return bare, bare_verdict
        except DuplicateConversationError:
            return bare, bare_verdict
        except Exception as exc:  # the store itself is broken: stop the batch
            log.error("could not store a conversation even without its transcript", exc_info=True)
            self._fatal = f"could not store a conversation: {exc}"
            self._unstored(control, self._fatal)
            if not self._stopping:
                self.stop(grace_s=0)
            return None

    def _unstored(self, control: ConversationControl, error: str) -> None:
        """A conversation that could not be stored at all: said, not counted (counts are rows)."""
        about = self._about(control.run, control.conversation_id)
        self._emit(ConversationFailed(**about, stop_reason="infrastructure_error", error=error))
        self._emit(self.progress())


def _plain_metadata(run: PlannedRun) -> dict[str, Any]:
    return {"spec_id": run.spec.spec_id, "trial": run.trial, "seed": run.spec.seed}
