"""`parley batches`: the stored batches.

    parley batches list [--status S] [--limit N] [--json]   newest first: id, created, sources,
                                                            bot model, counts, pass rate
    parley batches show ID                                  one batch: what it ran, what it came
                                                            from, its scored summary

ID may be a unique prefix (6+ characters), `latest` or `latest~N` (N batches before it).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from parley.core.records import BatchOptions, BatchRecord, UnreadableBatch
from parley.core.store import BatchRow
from parley.tui.cli.command_io import console, db_option, open_store
from parley.tui.terminal_text import for_rich, one_line, visible


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f}%"


def bot_label(batch: BatchRecord) -> str:
    models = batch.options.models
    return models.bot + (f" + {Path(models.bot_prompt).name}" if models.bot_prompt else "")


def lineage(batch: BatchRecord) -> str | None:
    """How a batch was made from another one, in words; None for a batch of its own."""
    options = batch.options
    if batch.parent_id and options.rescore_of:
        how = f"judge {options.models.judge}" + (f", expectations from {', '.join(options.criteria_from)}" if options.criteria_from else "")
        return f"re-score of {options.rescore_of} (its stored conversations judged again: {how})"
    if batch.parent_id and options.rerun:
        picked = ", ".join(options.rerun)
        return f"re-run of {batch.parent_id} ({picked} conversations, same seeds)"
    if options.replay_of:
        return f"replay of {options.replay_of} (its customers' words, to bot {options.models.bot})"
    if batch.parent_id and options.mutant:
        return f"mutant {options.mutant} of {batch.parent_id} (its conversations again, the bot misbehaving in that one way)"
    return None


def generation_line(options: BatchOptions) -> str:
    """`Generation: bot temperature=0.2; user ...; judge ...`: what each role's requests carried,
    the settings given (`--gen`) over each role's defaults; an offline role calls no model."""
    from parley.core.evaluation import judge_generation

    models, given = options.models, options.models.generation
    parts = []
    for role, model, default in (
        ("bot", models.bot, "the server's defaults"),
        ("user", models.user, "its profile's llm: block"),
        ("judge", models.judge, judge_generation().described() + " (its defaults)"),
    ):
        if model == "offline":
            kept = f"{given[role].described()} kept, not sent" if role in given else "none"
            shown = f"{kept} (offline: no model to send them to)"
        elif role in given:
            shown = judge_generation(given[role]).described() if role == "judge" else given[role].described()
            shown += "" if role != "user" else " over its profile's llm: block"
        else:
            shown = default
        parts.append(f"{role} {shown}")
    return "Generation: " + "; ".join(parts)


def prices_text(options: BatchOptions) -> str:
    """`ollama/llama3 free, openai-api/vllm/qwen $0.2/$0.6 per million tokens`."""
    shown = []
    for model, price in options.prices.items():
        free = price.input_per_m == 0 and price.output_per_m == 0
        shown.append(f"{model} free" if free else f"{model} ${price.input_per_m:g}/${price.output_per_m:g} per million tokens in/out")
    return ", ".join(shown)


def _row_json(row: BatchRow) -> dict[str, Any]:
    b = row.batch
    return {
        "id": b.id,
        "created_at": b.created_at.isoformat(),
        "status": b.status,
        "sources": b.sources,
        "bot": b.options.models.bot,
        "bot_prompt": b.options.models.bot_prompt,
        "user": b.options.models.user,
        "judge": b.options.models.judge,
        "trials": b.options.trials,
        "planned": b.planned,
        "done": row.summary.done,
        "passed": row.summary.passed,
        "failed": row.summary.failed,
        "bot_errors": row.summary.bot_errors,
        "unverified": row.summary.unverified,
        "user_faults": row.summary.user_faults,
        "errors": row.summary.errors,
        "evaluation_errors": row.summary.evaluation_errors,
        "unevaluated": row.summary.unevaluated,
        "failed_scenarios": row.summary.broken,
        "pass_rate": row.summary.pass_rate,
        "parent_id": b.parent_id,
        "replay_of": b.options.replay_of,
        "rerun": b.options.rerun,
        "rescore_of": b.options.rescore_of,
        "group_id": b.group_id,
        "group_role": b.group_role,
        "criteria_from": b.options.criteria_from,
    }


def _status(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    from parley.core.records import BATCH_STATUSES

    if value is not None and value not in BATCH_STATUSES:
        raise click.BadParameter(f"{value!r} is not one of {', '.join(BATCH_STATUSES)}")
    return value


@click.group()
def batches() -> None:
    """List stored batches and show one (ids: a prefix, `latest`, `latest~N`)."""


@batches.command("list")
@click.option(
    "--status",
    callback=_status,
    metavar="STATUS",
    help="Only batches in this status: pending, running, completed, failed, cancelled, interrupted or stopped_budget.",
)
@click.option("--limit", type=click.IntRange(1, None), default=30, show_default=True, help="How many batches, newest first.")
@click.option("--json", "as_json", is_flag=True, help="One JSON array on stdout (every field, full ids).")
@db_option
def list_batches(status: str | None, limit: int, as_json: bool, db_path: Path | None) -> None:
    """Stored batches, newest first: id, created, status, sources, bot, counts and pass rate.

    The first row is `latest`, the next `latest~1`, and so on.
    """
    with open_store(db_path, read_only=True) as store:
        rows = store.list_batches(limit=limit, status=status)
        total = store.count_batches()
    if as_json:
        from parley.core.reports import inert_json

        sys.stdout.write(inert_json(json.dumps([_row_json(r) if isinstance(r, BatchRow) else _unreadable_json(r) for r in rows], indent=2)))
        sys.stdout.write("\n")
        return
    if not rows:
        what = f"no {status} batches" if status else "no batches yet"
        click.echo(f"{what} in {store.path or 'this database'}; `parley run PATH` starts one")
        return
    from rich.table import Table

    table = Table(box=None, pad_edge=False, header_style="bold")
    made_from = {row.batch.id: _made_from(row.batch) for row in rows if not isinstance(row, UnreadableBatch)}
    columns = [
        *("Batch", "Created (UTC)", "Status", "Sources", "Bot", "Planned", "Done"),
        *("Passed", "Failed", "Bot errors", "Apart", "Errors", "Pass rate"),
    ]
    if any(made_from.values()):  # the column only when some batch was made from another
        columns.append("From")
    for column in columns:
        table.add_column(column, no_wrap=column not in ("Sources", "Bot"))
    unreadable: list[UnreadableBatch] = []
    for row in rows:
        if not isinstance(row, BatchRow):  # a damaged row: what it is in its place, and why below
            unreadable.append(row)
            cells = [for_rich(row.id[:12]), for_rich((row.created_at or "-")[:16]), "unreadable", "(cannot be read: below)"]
            table.add_row(*cells, *["-"] * (len(columns) - len(cells)))
            continue
        b = row.batch
        cells = [
            b.id[:12],
            b.created_at.strftime("%Y-%m-%d %H:%M"),
            for_rich(b.status),
            for_rich(", ".join(b.sources)),
            for_rich(bot_label(b)),
            str(b.planned),
            str(row.summary.done),
            str(row.summary.passed),
            str(row.summary.failed),
            str(row.summary.bot_errors),
            str(row.summary.apart),
            str(row.summary.errors),
            _pct(row.summary.pass_rate),
        ]
        table.add_row(*cells, *([for_rich(made_from[b.id])] if len(columns) > len(cells) else []))
    out = console()
    if not out.is_terminal:  # captured or piped: wide enough that the counts squeeze no bot name
        out.width = max(out.width, 160)
    out.print(table)
    if len(rows) < total and not status:
        shown = f"{len(rows)} of {total} batches (--limit shows more)"
    else:
        shown = f"{len(rows)} batch{'es' if len(rows) != 1 else ''}" + (f" ({status})" if status else "")
    out.print(shown, highlight=False)
    for row in rows:
        if isinstance(row, BatchRow) and row.batch.status == "interrupted":
            short = row.batch.id[:12]
            out.print(
                f"interrupted: {short} (its process ended before it did): continue it with parley run --resume {short}", highlight=False
            )
    for row in unreadable:  # also logged, in parley.log beside the database
        out.print(one_line(f"unreadable: batch {row.id}: {row.reason}"), highlight=False, markup=False)


def _unreadable_json(row: UnreadableBatch) -> dict[str, Any]:
    return {"id": row.id, "created_at": row.created_at, "status": row.status, "unreadable": row.reason}


def _made_from(b: BatchRecord) -> str:
    """`re-run ID`, `replay ID`, `re-scored ID` or `mutant ID` for a batch made from another, else empty."""
    if b.parent_id and b.options.rescore_of:
        return f"re-scored {b.options.rescore_of[:8]}"
    if b.parent_id and b.options.rerun:
        return f"re-run {b.parent_id[:8]}"
    if b.options.replay_of:
        return f"replay {b.options.replay_of[:8]}"
    if b.parent_id and b.options.mutant:
        return f"mutant {b.parent_id[:8]}"
    return ""


@batches.command("show")
@click.argument("batch_ref", metavar="ID", default="latest")
@db_option
def show(batch_ref: str, db_path: Path | None) -> None:
    """One batch: what it ran and how, the batch it was made from, and its scored summary."""
    from parley.core.reports import summarize
    from parley.tui.cli.batch_summary import summary_lines

    with open_store(db_path, read_only=True) as store:
        summary = summarize(store, batch_ref)
        children = store.child_batches(summary.batch.id)
    b = summary.batch
    o = b.options
    lines = [
        f"Batch {b.id}: {b.status}" + (f" ({b.error})" if b.error else ""),
        *([f"continue it with: parley run --resume {b.id}"] if b.status == "interrupted" else []),
        f"Created {b.created_at:%Y-%m-%d %H:%M:%S} UTC"
        + (f", started {b.started_at:%H:%M:%S}" if b.started_at else "")
        + (f", finished {b.finished_at:%H:%M:%S}" if b.finished_at else ""),
        f"Sources: {', '.join(b.sources) or '-'}",
        f"Models: bot {o.models.bot}"
        + (f" with the prompt {o.models.bot_prompt}" if o.models.bot_prompt else "")
        + f", user {o.models.user}, judge {o.models.judge}",
        generation_line(o),
        *([f"Prices: {prices_text(o)}"] if o.prices else []),
        f"Trials {o.trials}, seed {o.seed}, max turns {o.max_turns}, timeout {o.timeout_s:g} s"
        + (f", budget ${o.budget_usd:g}" if o.budget_usd else "")
        + (f", prompt version {o.prompt_version}" if o.prompt_version else ""),
    ]
    made = lineage(b)
    if made:
        lines.append(f"Made from: {made}")
    if b.group_id is not None:
        lines.append(f"Group: {b.group_id}, as {b.group_role} (side by side: parley compare --group {b.group_id[:12]})")
    for child in children:
        if not isinstance(child, BatchRecord):
            lines.append(f"Made into: batch {child.id} (cannot be read: {child.reason})")
            continue
        if child.options.rescore_of:
            how = f"re-scored by judge {child.options.models.judge}"
        elif child.options.rerun:
            how = f"re-run ({', '.join(child.options.rerun)})"
        else:
            how = f"replayed to bot {child.options.models.bot}"
        lines.append(f"Made into: batch {child.id} ({child.status}), {how}")
    lines += ["", *summary_lines(summary), "", f"Report: parley report {b.id}   (compare: parley compare {b.id[:12]} NEW)"]
    console().print(visible("\n".join(lines)), highlight=False, markup=False)
