"""What a batch runs: its specs (loaded from its sources), its trials, and what is left to do.

- `load_batch_specs`: the sources' specs for the batch seed. When the user simulator is an
  LLM, `any(...)` items are generated once per profile with `generate_any_items` and kept in
  the store's llm_cache (scoped to the batch, or shared with `--cache`), so `--resume` plans the
  very same conversations. Offline, the expansion's warning says what was used instead.
- `trial_spec`: trial 1 runs the spec as it is; trial t > 1 gets its own seed, derived from
  the spec's seed and t (stable across runs and machines).
- `select_single`: `--single I` picks one spec by its position in the plan or by its id.
- `PreparedBatch`: a stored batch record with its specs and the (spec_id, trial) pairs that
  are already done; `pending()` yields the rest lazily, in plan order.
"""

from __future__ import annotations

import asyncio
import datetime
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from parley.core.engine.reachability import PreflightReport
from parley.core.errors import ParleyError, ProfileError
from parley.core.models import OFFLINE
from parley.core.records import BatchRecord, ConversationSpec, LoadOptions, Profile, derive_seed
from parley.core.specs import SpecSet, load_specs_as, read_profile
from parley.core.store import Store, cache_key
from parley.core.users import PROFILE_MODEL, ReplayScript

if TYPE_CHECKING:
    from parley.core.engine.batch_models import BatchModels
    from parley.core.models import ChatModel
    from parley.core.rules import CompiledRule

RunKey = tuple[str, int]


class InvalidInputs(ParleyError):
    """The batch's files have problems: every one of them, with its location, in `errors`."""

    def __init__(self, errors: Sequence[ProfileError]) -> None:
        self.errors = list(errors)
        n = len(self.errors)
        super().__init__(f"{n} problem{'s' if n != 1 else ''} in the input files; nothing was run")


class SelectionError(ParleyError):
    """`--single` names no spec of the plan."""


@dataclass(frozen=True)
class PlannedRun:
    """One conversation to run: a spec (with the trial's seed) and its trial number."""

    spec: ConversationSpec
    trial: int
    position: int
    """0-based position in the plan: specs in order, each spec's trials together."""
    replay: ReplayScript | None = None
    """A replay (`parley run --replay`): the stored conversation whose customer it replays."""
    rescore_of: str | None = None
    """A re-score (`parley rescore`): the stored conversation judged again instead of run."""

    @property
    def key(self) -> RunKey:
        return (self.spec.spec_id, self.trial)


def trial_seed(seed: int, trial: int) -> int:
    """The seed of trial `trial` (1-based) of a spec whose seed is `seed`."""
    return seed if trial <= 1 else derive_seed(seed, "trial", trial)


def trial_spec(spec: ConversationSpec, trial: int) -> ConversationSpec:
    """The spec as trial `trial` runs it (its own seed from trial 2 on)."""
    return spec if trial <= 1 else spec.model_copy(update={"seed": trial_seed(spec.seed, trial)})


def select_single(specs: Sequence[ConversationSpec], selector: str | int) -> ConversationSpec:
    """The spec at position `selector` of the plan (0-based, as `parley profiles expand` lists
    them), or the one whose spec id (or, when unique, name) it is."""
    text = str(selector).strip()
    if text.isascii() and text.lstrip("-").isdigit():
        index = int(text)
        if 0 <= index < len(specs):
            return specs[index]
        raise SelectionError(
            f"--single {index}: the plan has {len(specs)} conversation{'s' if len(specs) != 1 else ''}"
            + (f" (0-{len(specs) - 1})" if specs else "")
        )
    for spec in specs:
        if spec.spec_id == text:
            return spec
    named = [s for s in specs if s.name == text]
    if len(named) == 1:
        return named[0]
    if named:
        ids = ", ".join(s.spec_id for s in named[:5])
        raise SelectionError(f"--single {text}: several conversations have that name ({ids}); give a spec id")
    raise SelectionError(f"--single {text}: no conversation has that index, spec id or name; `parley profiles expand PATH` lists them")


# -- loading ------------------------------------------------------------------------------------


@dataclass
class LoadedSpecs:
    specs: list[ConversationSpec]
    warnings: list[str]
    spec_set: SpecSet

    @property
    def notes(self) -> list[str]:
        """Skipped files and notes, one line each, as the command line prints them."""
        return [f"skipped {line}" for line in self.spec_set.skipped] + [f"note: {line}" for line in self.spec_set.notes]

    @property
    def left_out(self) -> list[ProfileError]:
        """Errors of files found in folders: those files are left out, the others run."""
        return [e for e in self.spec_set.errors if e not in self.spec_set.blocking]


def _any_scope(batch_id: str, shared: bool) -> str | None:
    return None if shared else batch_id


async def _generated_profiles(
    first: SpecSet,
    *,
    models: BatchModels,
    store: Store | None,
    batch_id: str,
    shared_cache: bool,
    loading: LoadOptions,
) -> dict[str, Profile]:
    """Profiles with any() items, those items generated by the user model (once per profile)."""
    from parley.core.specs import resolve_any_items
    from parley.core.users import generate_any_items

    user_name = models.names.user
    resolved: dict[str, Profile] = {}
    for file in first.files:
        if file.kind != "profile":
            continue
        profile, errors = await asyncio.to_thread(read_profile, Path(file.path), loading)
        if profile is None or errors or not any(v.any_prompts for v in profile.user.variables):
            continue
        name = profile.llm.qualified_model if user_name == PROFILE_MODEL else user_name
        if name == OFFLINE:
            continue
        model = models.chat_model(name, "user")

        async def generate(instruction: str, model: ChatModel = model, name: str = name) -> list[str]:
            key = cache_key({"kind": "any_items", "scope": _any_scope(batch_id, shared_cache), "model": name, "instruction": instruction})
            if store is not None:
                stored = await asyncio.to_thread(store.cache_get, key)
                if isinstance(stored, list):
                    return [str(item) for item in stored]
            items = await generate_any_items(model, instruction)
            if store is not None:
                await asyncio.to_thread(store.cache_put, key, name, {"instruction": instruction}, items)
            return items

        resolved[file.path] = await resolve_any_items(profile, generate)
    return resolved


async def load_batch_specs(
    sources: Sequence[str | Path],
    *,
    seed: int,
    models: BatchModels | None = None,
    store: Store | None = None,
    batch_id: str = "",
    shared_cache: bool = False,
    loading: LoadOptions | None = None,
) -> LoadedSpecs:
    """The specs of `sources` for batch `seed` (see the module doc), read as `loading` says.

    Raises InvalidInputs with every problem when a file named in `sources` (or an option's
    file) has one, or when no file is left to run; files found inside a folder that have
    problems are left out (`LoadedSpecs.left_out`) and the others run. ParleyError when the
    sources make no conversation."""
    loading = loading or LoadOptions()
    first = await asyncio.to_thread(load_specs_as, list(sources), loading, seed=seed)
    spec_set = first
    if models is not None and models.names.user != OFFLINE:
        generated = await _generated_profiles(
            first, models=models, store=store, batch_id=batch_id, shared_cache=shared_cache, loading=loading
        )
        if generated:
            spec_set = await asyncio.to_thread(
                load_specs_as, list(sources), loading, seed=seed, profile_hook=lambda p: generated.get(p.source, p)
            )
    if spec_set.blocking or (spec_set.errors and not spec_set.specs):
        raise InvalidInputs(spec_set.errors)
    if not spec_set.specs:
        shown = ", ".join(str(s) for s in sources)
        raise ParleyError(f"{shown}: no conversations to run (no profile, playbook or scenario file found)")
    return LoadedSpecs(specs=spec_set.specs, warnings=spec_set.warnings, spec_set=spec_set)


# -- a prepared batch ---------------------------------------------------------------------------


def batch_today(batch: BatchRecord) -> datetime.date:
    """The date a batch's specs that pin none run on: its own (a re-run's or replay's is its
    parent's), else the day it was created (UTC)."""
    return batch.options.today or batch.created_at.astimezone(datetime.UTC).date()


@dataclass
class PreparedBatch:
    """A stored batch record, the specs it runs and what of it is already done."""

    batch: BatchRecord
    specs: list[ConversationSpec]
    done_keys: set[RunKey] = field(default_factory=set)
    warnings: list[str] = field(default_factory=list)
    resumed: bool = False
    notes: list[str] = field(default_factory=list)
    """Skipped files and notes of the loader, one line each."""
    left_out: list[ProfileError] = field(default_factory=list)
    """The problems of files found in folders, which the batch leaves out."""
    exact_specs: dict[RunKey, ConversationSpec] = field(default_factory=dict)
    """Runs whose spec is given as it is (a replay takes each stored one), not derived per trial."""
    replays: dict[RunKey, ReplayScript] = field(default_factory=dict)
    """A replay: the stored conversation each run replays."""
    preflight: PreflightReport | None = None
    """What the check before launch learnt of each role's endpoint (the context length each
    reports: `preflight.context_length("judge")`); None when nothing was checked (--dry-run)."""
    rescores: dict[RunKey, str] = field(default_factory=dict)
    """A re-score: the stored conversation (its id) each run judges again."""
    rules: list[CompiledRule] = field(default_factory=list)
    """The Sensei rules of `--rules`, loaded and checked (parley.core.engine.batch_rules)."""

    @property
    def id(self) -> str:
        return self.batch.id

    @property
    def trials(self) -> int:
        return self.batch.options.trials

    @property
    def pairs(self) -> set[RunKey] | None:
        """The only (spec id, trial) pairs a re-run or replay plans; None: every spec x trial."""
        pairs = self.batch.options.pairs
        return None if pairs is None else {(spec_id, trial) for spec_id, trial in pairs}

    def planned(self, key: RunKey, pairs: set[RunKey] | None = None) -> bool:
        """Whether `key` is one of the batch's runs (`pairs`: `self.pairs`, when the caller has it)."""
        pairs = self.pairs if pairs is None else pairs
        return 1 <= key[1] <= self.trials and (pairs is None or key in pairs)

    @property
    def total(self) -> int:
        pairs = self.pairs
        if pairs is None:
            return len(self.specs) * self.trials
        ids = {s.spec_id for s in self.specs}
        return sum(1 for key in pairs if key[0] in ids and self.planned(key, pairs))  # the set built once: a re-score plans every pair

    @property
    def already_done(self) -> int:
        ids = {s.spec_id for s in self.specs}
        pairs = self.pairs
        return sum(1 for key in self.done_keys if key[0] in ids and self.planned(key, pairs))

    @property
    def remaining(self) -> int:
        return self.total - self.already_done

    @property
    def today(self) -> datetime.date:
        """The date of specs that pin none: the day the batch was created (UTC), so a resumed
        batch runs in the same world as its first part; a re-run or replay keeps its parent's."""
        return batch_today(self.batch)

    def pending(self) -> Iterator[PlannedRun]:
        """The runs not done yet, in plan order (lazily: a large batch is never a list)."""
        position = 0
        pairs = self.pairs
        for spec in self.specs:
            for trial in range(1, self.trials + 1):
                key = (spec.spec_id, trial)
                if pairs is not None and key not in pairs:
                    continue
                if key not in self.done_keys:
                    exact = self.exact_specs.get(key)
                    yield PlannedRun(
                        spec=exact if exact is not None else trial_spec(spec, trial),
                        trial=trial,
                        position=position,
                        replay=self.replays.get(key),
                        rescore_of=self.rescores.get(key),
                    )
                position += 1
