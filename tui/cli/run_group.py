"""`parley run` of several bots side by side: one batch per bot, the same specs and seeds, linked
as a group (parley.core.records.BatchRecord.group_id, each batch's `group_role` its bot's name),
run one after the other, then compared (parley.core.reports.group_comparison).

Every member is planned and stored before any runs, so a problem with one bot (a missing key, an
endpoint that does not answer) stops the run before anything ran. `--resume` of any member of a
group goes on with every member not completed; `--rerun WHAT` of one re-runs each member's picks
into a new group, each with its own bot and settings: the pairing is kept. The group's exit code
is the worst of its members'; a member stopped (Ctrl-C, its budget) stops the group there.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import click

from parley.core.errors import ParleyError
from parley.tui.cli.run_modes import EXIT_BUDGET, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, RunRequest
from parley.tui.terminal_text import visible

if TYPE_CHECKING:
    from parley.core.engine import PreparedBatch
    from parley.core.engine.distributed import Placement
    from parley.core.records import BatchRecord
    from parley.core.store import Store

__all__ = ["group_of", "group_report_path", "run_group"]

STOPPING = {EXIT_INTERRUPTED, EXIT_BUDGET, 141}
"""A member that ended so stops the group: the rest would run on what the person stopped."""


def group_of(store: Store, request: RunRequest) -> list[BatchRecord]:
    """The stored group a `--resume` or `--rerun` names a member of, its batches in order; none
    for a batch of no group (or one that is not there: its own run says so)."""
    if request.mode not in ("resume", "rerun"):
        return []
    try:
        batch = store.get_batch(request.ref or "latest")
        return store.group_batches(batch.group_id) if batch.group_id is not None else []
    except ParleyError:
        return []


def group_report_path(store: Store, group_id: str) -> Path:
    base = store.path.parent if store.path is not None else Path("sessions")
    return base / "reports" / f"group-{group_id}.md"


async def _link(store: Store, prepared: PreparedBatch, group_id: str, role: str) -> None:
    prepared.batch = await asyncio.to_thread(store.update_batch, prepared.id, group_id=group_id, group_role=role)


async def _plan(store: Store, request: RunRequest, stored: list[BatchRecord], group_id: str, dry_run: bool) -> list[PreparedBatch] | int:
    """Each member planned (and, unless a dry run, stored and linked), or the exit code of the
    first that could not be (the ones stored before it are marked failed: nothing of them ran)."""
    from parley.core.engine import NothingToRerun, prepare_rerun, prepare_resume

    planned: list[PreparedBatch] = []

    def abandon(role: str) -> None:
        for earlier in planned:
            if not dry_run and not earlier.resumed:
                store.update_batch(earlier.id, status="failed", error=f"its group could not start: the bot {role} could not")

    if request.group is not None:
        for role, options in request.group:
            member = RunRequest(mode="new", paths=request.paths, options=options)
            click.echo(f"bot {role}:", err=True)
            prepared, code = await member.prepare_or_exit(store, dry_run=dry_run)
            if prepared is None:
                abandon(role)
                return code
            if not dry_run:
                await _link(store, prepared, group_id, role)
            planned.append(prepared)
        return planned
    for batch in stored:
        role = batch.group_role or batch.options.models.bot
        try:
            if request.mode == "resume":
                if batch.status == "completed":
                    continue
                prepared = await prepare_resume(store, batch.id, budget_usd=request.budget_usd, dry_run=dry_run)
            else:
                prepared = await prepare_rerun(store, batch.id, request.selections, update=request.updates, dry_run=dry_run)
                if not dry_run:
                    await _link(store, prepared, group_id, role)
        except NothingToRerun as exc:
            click.echo(f"bot {role}: {exc}", err=True)
            continue
        except ParleyError as exc:
            click.echo(visible(f"error: bot {role}: {exc}"), err=True)
            abandon(role)
            return EXIT_FAILED
        planned.append(prepared)
    if not planned:
        click.echo("nothing to do: every batch of the group is completed" if request.mode == "resume" else "nothing to re-run")
        return EXIT_OK
    return planned


async def run_group(
    store: Store,
    request: RunRequest,
    stored: list[BatchRecord],
    *,
    dry_run: bool,
    concurrency: int | None,
    grace_s: float,
    gate: tuple[float | None, bool],
    strict: bool,
    placement: Placement | None,
) -> int:
    """Plan, run and compare the group (see the module doc); its exit code."""
    from parley.tui.cli.run_batch import run_batch

    if request.mode == "rerun" and request.models:
        click.echo("error: a group's re-run keeps each batch's own bot and its settings: give no --bot, --user or --judge", err=True)
        return 2
    group_id = stored[0].group_id if stored and request.mode == "resume" else uuid.uuid4().hex
    assert group_id is not None
    planned = await _plan(store, request, stored, group_id, dry_run)
    if isinstance(planned, int):
        return planned
    if dry_run:
        from parley.core.engine import estimate_batch
        from parley.tui.cli.dry_run_view import render

        for prepared in planned:
            plan = await asyncio.to_thread(estimate_batch, prepared, store)
            click.echo(visible(render(plan, title=f"bot {prepared.batch.options.models.bot}: a new batch of {len(prepared.specs)} specs")))
        return EXIT_OK
    codes = []
    for prepared in planned:
        click.echo(f"\nbot {prepared.batch.group_role} (batch {prepared.id}):")
        code = await run_batch(
            store,
            request,
            concurrency=concurrency,
            report_path=None,
            grace_s=grace_s,
            gate=gate,
            strict=strict,
            placement=placement,
            prepared=prepared,
        )
        codes.append(code)
        if code in STOPPING:
            click.echo(f"the group stopped at bot {prepared.batch.group_role}; continue it with: parley run --resume {prepared.id}")
            return code
    await asyncio.to_thread(_compare, store, group_id)
    return max(codes, default=EXIT_OK)


def _compare(store: Store, group_id: str) -> None:
    """Print the group side by side and write its markdown report."""
    from parley.core.reports import compare_group, group_lines, render_group_markdown

    comparison = compare_group(store, group_id)
    report = group_report_path(store, group_id)
    click.echo("")
    click.echo(visible("\n".join(group_lines(comparison))))
    try:
        report.parent.mkdir(parents=True, exist_ok=True)
        report.write_text(render_group_markdown(comparison), encoding="utf-8")
        click.echo(f"Side by side: {report}   (also: parley compare --group {group_id} --format html)")
    except OSError as exc:
        click.echo(f"error: cannot write {report}: {exc.strerror or exc}", err=True)
