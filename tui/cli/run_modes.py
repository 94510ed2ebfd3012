"""What `parley run` was asked to do, and the CI gate on its result.

A run is one of: a new batch from PATHs, `--resume BATCH`, `--rerun WHAT BATCH` (a new batch of
exactly the parent's conversations that WHAT picks, same seeds), `--replay BATCH` (the parent's
customers, word for word, to a bot), or `parley rescore BATCH` (the parent's stored
conversations judged again: no bot or customer is called). `RunRequest.prepare` plans and stores it; the options a
person typed override the parent's where that makes sense (models, cache, concurrency, budget)
and are refused with a note where it does not (seed, trials, turn and time limits: a re-run
that changed them would not be the same conversations).

`--fail-under RATE` turns the exit code into a gate on the pass rate (or, with
`--fail-under-lower`, on the lower bound of its 95% Wilson interval).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import click

from parley.tui.cli.batch_options import given_options

if TYPE_CHECKING:  # the engine loads when a command runs, not when `parley --help` starts
    from parley.core.engine import PreparedBatch
    from parley.core.evaluation import BatchSummary
    from parley.core.records import BatchOptions, ConversationSpec, RerunSelection
    from parley.core.store import Store

Mode = Literal["new", "resume", "rerun", "replay", "rescore"]

# Options a re-run or a replay may take from the command line (parameter -> where it goes).
# `parley run`'s exit codes (and `--dry-run`'s, which shares its planning errors).
EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_BUDGET = 3
EXIT_INTERRUPTED = 130


def parse_selection(text: str) -> list[RerunSelection]:
    """`failed`, `errors`, `unverified`, `user-faults`, `evaluation-errors`, or several joined by
    commas (parley.core.records.RERUN_OUTCOMES)."""
    from parley.core.records import RERUN_OUTCOMES

    picked: list[RerunSelection] = []
    for part in (p.strip() for p in text.split(",")):
        if part not in RERUN_OUTCOMES:
            raise click.BadParameter(
                f"{part!r} is not one of {', '.join(RERUN_OUTCOMES)} (several may be joined by commas)", param_hint="'--rerun'"
            )
        if part not in picked:
            picked.append(part)
    return picked


def parse_rate(ctx: click.Context | None, param: click.Parameter | None, value: str | None) -> float | None:
    """A pass rate as a fraction (0.9) or a percentage (90%)."""
    if value is None:
        return None
    text = value.strip()
    try:
        rate = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a rate: give a fraction (0.9) or a percentage (90%)") from None
    if not 0.0 <= rate <= 1.0:
        raise click.BadParameter(f"{value!r} is not a rate between 0 and 1 (or 0% and 100%)")
    return rate


@dataclass
class RunRequest:
    """One `parley run` invocation, resolved (see the module doc)."""

    mode: Mode
    paths: list[Path] = field(default_factory=list)
    options: BatchOptions | None = None
    """BatchOptions for a new batch."""
    single: str | None = None
    ref: str | None = None
    """The batch resumed, re-run or replayed."""
    selections: list[RerunSelection] = field(default_factory=list)
    models: dict[str, Any] = field(default_factory=dict)
    """Role overrides for a re-run or replay."""
    updates: dict[str, Any] = field(default_factory=dict)
    """Other option overrides for a re-run or replay."""
    budget_usd: float | None = None
    """A resumed batch's new budget."""
    criteria_from: list[Path] = field(default_factory=list)
    """A re-score's `--criteria-from` files."""
    group: list[tuple[str, BatchOptions]] | None = None
    """Several bots (`--bot A --bot B`): each one's name and its batch's options, run side by side
    (parley.tui.cli.run_group); None: one batch."""
    generated: list[ConversationSpec] = field(default_factory=list)
    """Specs made in code that join the files' (`parley redteam`'s attacks)."""
    sources: list[str] = field(default_factory=list)
    """With `generated`: the batch's sources as it names them."""

    async def prepare(self, store: Store, *, dry_run: bool = False) -> PreparedBatch:
        """Plan and store the batch (parley.core.engine.batch_plan.PreparedBatch); with
        `dry_run`, only plan it."""
        from parley.core.engine import prepare_batch, prepare_replay, prepare_rerun, prepare_rescore, prepare_resume

        ref = self.ref or "latest"
        if self.mode == "rescore":
            return await prepare_rescore(
                store,
                ref,
                judge=self.models.get("judge"),
                criteria_from=self.criteria_from,
                cache=bool(self.updates.get("cache")),
                concurrency=self.updates.get("concurrency"),
                rules=self.updates.get("rules"),
                min_kappa=self.updates.get("min_kappa"),
                require_calibrated=self.updates.get("require_calibrated"),
            )
        if self.mode == "resume":
            return await prepare_resume(store, ref, budget_usd=self.budget_usd, dry_run=dry_run)
        if self.mode == "rerun":
            return await prepare_rerun(store, ref, self.selections, models=self.models, update=self.updates, dry_run=dry_run)
        if self.mode == "replay":
            return await prepare_replay(store, ref, models=self.models, update=self.updates, dry_run=dry_run)
        assert self.options is not None, "a new batch is planned from its options"
        if self.generated:
            from parley.core.engine import prepare_specs
            from parley.core.library import load_specs

            loaded = load_specs(self.paths, seed=self.options.seed) if self.paths else []
            return await prepare_specs(store, [*loaded, *self.generated], self.options, dry_run=dry_run, sources=self.sources)
        return await prepare_batch(store, self.paths, self.options, single=self.single, dry_run=dry_run)

    async def prepare_or_exit(self, store: Store, *, dry_run: bool = False) -> tuple[PreparedBatch | None, int]:
        """(the prepared batch, EXIT_OK), or (None, the exit code) once the reason is printed:
        nothing to re-run (EXIT_OK), invalid inputs located line by line (EXIT_FAILED), a bad
        selection (EXIT_USAGE), any other ParleyError such as a missing key or an unknown batch
        (EXIT_FAILED)."""
        from parley.core.engine import InvalidInputs, NothingToRerun, SelectionError
        from parley.core.errors import ParleyError

        try:
            return await self.prepare(store, dry_run=dry_run), EXIT_OK
        except NothingToRerun as exc:
            click.echo(str(exc))
            return None, EXIT_OK
        except InvalidInputs as exc:
            for error in exc.errors:
                click.echo(error.render(), err=True)
            click.echo(f"error: {exc}", err=True)
            return None, EXIT_FAILED
        except SelectionError as exc:
            click.echo(f"error: {exc}", err=True)
            return None, EXIT_USAGE
        except ParleyError as exc:
            click.echo(f"error: {exc}", err=True)
            return None, EXIT_FAILED


def lineage_request(ctx: click.Context, mode: Mode, ref: str, selections: list[RerunSelection], values: dict[str, Any]) -> RunRequest:
    """A re-run or replay with the overrides the person typed (the options whose declaration says
    a re-run may change them: the roles' models into `models`, the rest into `updates`); a note on
    stderr for those that stay the parent's (seed, trials, turn and time limits; a replay's customer)."""
    from parley.core.records import BatchOptions

    typed = given_options(ctx)
    kept = [o for o in typed if o.lineage == "kept" or (mode == "replay" and o.name == "user")]
    if kept:
        what = "a re-run" if mode == "rerun" else "a replay"
        click.echo(f"note: {what} keeps its parent's {', '.join(o.cli_flag for o in kept)}; ignoring them", err=True)
    changed = {o.name: values[o.name] for o in typed if o.lineage == "may_change" and o not in kept}
    as_options = BatchOptions.from_values(changed).model_dump(exclude_unset=True)
    models = as_options.pop("models", {})
    if "bot" in models and "bot_prompt" not in models:
        models["bot_prompt"] = None  # a new bot does not inherit the parent's prompt file
    return RunRequest(mode=mode, ref=ref, selections=selections, models=models, updates=as_options)


# -- the CI gate --------------------------------------------------------------------------------


def rate_gate(summary: BatchSummary, threshold: float, *, lower: bool) -> tuple[bool, str]:
    """(held, line): whether the batch's pass rate (or its Wilson lower bound) is at least
    `threshold`, and a line saying so. No judged conversation at all never holds."""
    n = summary.pass_rate_denominator
    rate = summary.pass_rate
    interval = summary.pass_rate_interval
    shown = f"pass rate {rate * 100:.1f}% ({summary.passed} of {n})" if rate is not None else "no judged conversation"
    if interval is not None:
        shown += f", 95% interval [{interval.low * 100:.1f}%, {interval.high * 100:.1f}%]"
    measured = (interval.low if interval is not None else None) if lower else rate
    what = "its lower bound" if lower else "it"
    if measured is None:
        return False, f"CI gate: {shown}: failed (--fail-under {threshold * 100:g}%)"
    held = measured >= threshold
    verdict = "at or above" if held else "below"
    return held, f"CI gate: {shown}; {what} is {verdict} {threshold * 100:g}%"
