"""`parley run ... --dry-run`: the plan and its cost, printed; nothing is run or stored.

The estimate is parley.core.engine.dry_run; this module plans the request the way a real run
would (new batch, --resume, --rerun, --replay) and prints a table per role.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import click

from parley.tui.cli.run_modes import EXIT_OK
from parley.tui.terminal_text import for_rich, visible

if TYPE_CHECKING:
    from parley.core.engine import DryRun
    from parley.core.store import Store
    from parley.tui.cli.run_modes import RunRequest

SPECS_SHOWN = 12


def _usd(value: float | None) -> str:
    return "unknown" if value is None else f"${value:.4f}"


def _about(value: float | None) -> str:
    return "-" if value is None else f"~{value:,.0f}"


def render(plan: DryRun, *, title: str) -> str:
    """The dry run as text for a terminal."""
    from rich.console import Console
    from rich.table import Table

    lines = [
        f"Dry run of {title}: nothing is run or stored.",
        f"Planned: {plan.conversations} conversation{'s' if plan.conversations != 1 else ''} "
        f"({plan.specs} spec{'s' if plan.specs != 1 else ''}, up to {plan.trials} trial{'s' if plan.trials != 1 else ''} each)",
        "  by kind: " + ", ".join(f"{kind} {n}" for kind, n in plan.by_kind.items()),
        f"  from {len(plan.by_source)} file{'s' if len(plan.by_source) != 1 else ''}: "
        + ", ".join(f"{source} {n}" for source, n in list(plan.by_source.items())[:4])
        + (f" and {len(plan.by_source) - 4} more" if len(plan.by_source) > 4 else ""),
    ]
    shown = list(plan.per_spec.items())[:SPECS_SHOWN]
    lines += [f"    {spec_id} x{trials}" for spec_id, trials in shown]
    if len(plan.per_spec) > SPECS_SHOWN:
        lines.append(f"    ... and {len(plan.per_spec) - SPECS_SHOWN} more specs")
    lines.append("")
    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in (
        "Role",
        "Model",
        "Calls at most",
        "Tokens at most (in/out)",
        "Cost at most",
        "Expected calls",
        "Expected tokens (in/out)",
        "Expected cost",
    ):
        table.add_column(column, no_wrap=True)
    for r in plan.roles:
        if r.kind != "llm":
            what = {
                "offline": "offline: no model calls",
                "connector": "a deployed bot: its own cost",
                "replay": "replayed words: no calls",
                "script": "a playbook's script: no calls",
            }[r.kind]
            calls = str(r.calls_at_most) if r.kind == "connector" else "0"
            table.add_row(r.role, for_rich(r.model), calls, what, "$0.0000", calls if r.kind == "connector" else "0", "", "$0.0000")
            continue
        expected_tokens = (
            "-" if r.expected_input_tokens is None else f"{_about(r.expected_input_tokens)} / {_about(r.expected_output_tokens)}"
        )
        table.add_row(
            r.role,
            for_rich(r.model),
            f"{r.calls_at_most:,}",
            f"{r.input_tokens_at_most:,} / {r.output_tokens_at_most:,}",
            _usd(r.cost_at_most_usd),
            _about(r.expected_calls),
            expected_tokens,
            _usd(r.expected_cost_usd) if r.expected_calls is not None else "-",
        )
    console = Console(width=200, highlight=False, no_color=True, emoji=False)
    with console.capture() as captured:
        console.print(table)
    lines += [line.rstrip() for line in captured.get().rstrip("\n").splitlines()]
    lines.append("")
    unmeasured = any(r.kind == "llm" and r.expected_calls is None for r in plan.roles)
    expected = "not measured yet" if unmeasured else _usd(plan.expected_cost_usd)
    lines.append(f"Total cost: at most {_usd(plan.cost_at_most_usd)}; expected {expected}")
    llm = [r for r in plan.roles if r.kind == "llm"]
    for r in llm:
        if r.measured_conversations:
            lines.append(
                f"  {r.role} ({r.model}): expected from {r.measured_conversations} earlier conversation(s) of {r.measured_specs} of these specs"
            )
        else:
            lines.append(f"  {r.role} ({r.model}): never ran these specs; run a few first (e.g. --single 0) to measure what to expect")
    lines.append(
        "  at most: every conversation to its turn limit, messages of ~80 tokens (parley.core.engine.dry_run); unknown prices are never $0"
    )
    for warning in plan.warnings:
        lines.append(f"warning: {warning}")
    return "\n".join(lines)


async def print_dry_run(store: Store, request: RunRequest) -> int:
    """Plan `request` (a run_modes.RunRequest) without storing it and print its estimate."""
    from parley.core.engine import estimate_batch

    prepared, code = await request.prepare_or_exit(store, dry_run=True)
    if prepared is None:
        return code
    plan = await asyncio.to_thread(estimate_batch, prepared, store)
    titles = {
        "new": "a new batch of " + ", ".join(str(p) for p in request.paths),
        "resume": f"resuming batch {prepared.id}",
        "rerun": f"a re-run of batch {prepared.batch.parent_id} ({', '.join(request.selections)})",
        "replay": f"a replay of batch {prepared.batch.parent_id}",
    }
    click.echo(visible(render(plan, title=titles[request.mode])))
    return EXIT_OK
