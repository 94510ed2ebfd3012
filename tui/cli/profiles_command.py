"""`parley profiles`: check profiles, playbooks and scenario files, and show what they expand to.

parley profiles validate PATH...   every problem as `file:line:col: field: reason`, warnings
                                   (what the offline roles will not read), a summary line,
                                   exit 1 when there is any problem
parley profiles expand PATH...     a table of the conversations the files make
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from parley.core.records import ConversationSpec
from parley.core.specs import SpecSet, load_specs
from parley.tui.cli.spec_options import loader_lines, personalities_option, template_options
from parley.tui.terminal_text import for_rich, visible

_PATHS = click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path), metavar="PATH...")


@click.group()
def profiles() -> None:
    """Validate profiles, playbooks and scenario files, and show the conversations they make."""


@profiles.command()
@_PATHS
@click.option("--seed", default=0, show_default=True, type=int, help="Batch seed the conversations are drawn with.")
@template_options
@personalities_option
def validate(
    paths: tuple[Path, ...],
    seed: int,
    personality_dirs: tuple[Path, ...],
    agent_template: Path | None,
    client_template: Path | None,
    evaluator_template: Path | None,
) -> None:
    """Check files and folders; print every problem with its location.

    Folders are searched recursively: .yml/.yaml files are Sensei profiles or playbooks (a
    playbook has `steps:`), .json files are scenario files, personalities/ files are checked as
    personalities, templates/ folders are skipped, and so is YAML or JSON that is clearly
    something else (each such file listed with the reason); a .txt file named explicitly is
    checked as a prompt template. Notes say which personality and prompt files were read.
    Warnings name, once per file, what the offline roles (parley's defaults) will not read: a
    rubric or criteria (they need an LLM judge), goals the offline customer only states.
    Exits 1 when anything is wrong (a warning is not).
    """
    from parley.core.evaluation import offline_limits

    result = load_specs(
        paths,
        seed=seed,
        personality_dirs=personality_dirs,
        agent_template=agent_template,
        client_template=client_template,
        evaluator_template=evaluator_template,
    )
    for error in result.errors:
        click.echo(visible(error.render()))
    for line in loader_lines(result):
        click.echo(visible(line))
    for line in offline_limits(result.specs):
        click.echo(visible(f"{line} (warning)"))
    click.echo(visible(_summary(result)))
    if not result.ok:
        sys.exit(1)


@profiles.command()
@_PATHS
@click.option("--seed", default=0, show_default=True, type=int, help="Batch seed the conversations are drawn with.")
@template_options
@personalities_option
def expand(
    paths: tuple[Path, ...],
    seed: int,
    personality_dirs: tuple[Path, ...],
    agent_template: Path | None,
    client_template: Path | None,
    evaluator_template: Path | None,
) -> None:
    """Show the conversations a profile, playbook or scenario file (or folder) makes.

    One row per conversation: its spec id, kind, variables (or a playbook's steps) and
    interaction styles. The same seed always gives the same table.
    """
    from rich.console import Console
    from rich.table import Table

    result = load_specs(
        paths,
        seed=seed,
        personality_dirs=personality_dirs,
        agent_template=agent_template,
        client_template=client_template,
        evaluator_template=evaluator_template,
    )
    if result.errors:
        for error in result.errors:
            click.echo(visible(error.render()), err=True)
        click.echo(visible(_summary(result)), err=True)
        sys.exit(1)
    for line in loader_lines(result):
        click.echo(visible(line), err=True)
    table = Table(title=f"{len(result.specs)} conversation{_s(len(result.specs))} (seed {seed})", title_justify="left")
    table.add_column("spec id", style="bold", no_wrap=True)
    table.add_column("kind", no_wrap=True)
    table.add_column("variables", ratio=3)
    table.add_column("styles", ratio=1)
    for spec in result.specs:
        table.add_row(for_rich(spec.spec_id), for_rich(spec.kind), for_rich(_variables(spec)), for_rich(_styles(spec)))
    console = Console(emoji=False)
    if not console.is_terminal:  # piped or captured: do not squeeze the table into 80 columns
        console = Console(width=max(console.width, 140), emoji=False)
    console.print(table)


def _variables(spec: ConversationSpec) -> str:
    if spec.kind == "playbook":
        steps = spec.extra.get("steps", [])
        users = sum(1 for s in steps if s.get("kind") == "user")
        checks = sum(1 for s in steps if str(s.get("kind", "")).startswith("expect_"))
        return f"customer {spec.world.customer_id}; {len(steps)} steps ({users} user, {checks} assertions)"
    if not spec.variables:
        return "-"
    return "\n".join(f"{name}={_clip(value)}" for name, value in spec.variables.items())


def _styles(spec: ConversationSpec) -> str:
    if spec.kind != "profile":
        return "-"
    names = []
    for style in spec.interaction_styles:
        names.append(f"{style.name} ({', '.join(style.languages)})" if style.languages else style.name)
    return ", ".join(names) or "default"


def _clip(text: str, limit: int = 60) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _s(n: int) -> str:
    return "" if n == 1 else "s"


def _summary(result: SpecSet) -> str:
    kinds = []
    for kind, word in (
        ("profile", "profile"),
        ("playbook", "playbook"),
        ("scenario", "scenario file"),
        ("personality", "personalit"),
        ("template", "template"),
    ):
        n = result.count(kind)
        if n:
            plural = ("ies" if n != 1 else "y") if kind == "personality" else _s(n)
            kinds.append(f"{n} {word}{plural}")
    checked = f"{len(result.files)} file{_s(len(result.files))} checked"
    if kinds:
        checked += f" ({', '.join(kinds)})"
    if result.skipped:
        checked += f", {len(result.skipped)} skipped"
    if result.ok:
        return f"ok: {checked}, {len(result.specs)} conversation{_s(len(result.specs))}"
    bad = len(result.files_with_errors)
    return f"{len(result.errors)} error{_s(len(result.errors))} in {bad} file{_s(bad)}; {checked}"
