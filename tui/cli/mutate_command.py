"""`parley mutate PATH... --bot B`: how good is the suite? It runs once against the bot as it is
and once per mutant of the bot's behaviour (parley.core.mutation), each a stored batch whose
parent is the base batch (`parley compare BASE MUTANT` shows what it changed), and says per mutant
killed (naming the conversations and checks that caught it), survived (with what would kill it),
not exercised or not exercisable, and the mutation score with its interval.

    parley mutate profiles                                   the shipped suite, offline
    parley mutate profiles --mutants leaks,acts_twice        some mutants only
    parley mutate profiles --bot openai/gpt-4o-mini -k 5     with a model: 5 trials, the paired test
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import click

from parley.tui.cli.batch_options import declared_options
from parley.tui.cli.bot_lineup import one_bot
from parley.tui.cli.command_io import db_option, open_store
from parley.tui.cli.run_command import RUN_CHECKS
from parley.tui.terminal_text import visible

EXIT_ALL_KILLED = 0
EXIT_SURVIVORS = 1

EPILOG = """\b
Mutants: every one (parley's, and those the suite's worlds declare) unless --mutants names
some; docs/mutation.md says what each changes (a name that is none lists them).
\b
Exit codes:
  0  every mutant that was exercised was killed
  1  some mutant survived (or the input was invalid)
  2  usage error
"""


def _mutant_names(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> list[str]:

    names = [n.strip() for v in value for n in v.split(",") if n.strip()]
    return list(dict.fromkeys(names))  # parley's mutants and the suite's worlds': checked once the suite is read


@click.command(epilog=EPILOG)
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path), metavar="PATH...")
@declared_options("run", checks=RUN_CHECKS)
@click.option(
    "--mutants",
    "mutant_names",
    multiple=True,
    callback=_mutant_names,
    metavar="NAMES",
    help="The mutants to run, comma-separated or repeated (default: every one).",
)
@click.option(
    "--format", "-f", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True, help="The result as text or JSON."
)
@db_option
def mutate(paths: tuple[Path, ...], mutant_names: list[str], fmt: str, db_path: Path | None, **options: Any) -> None:
    """Run the suite against the bot and against each mutant of it: which misbehaviours it catches.

    PATH may be files or folders, as for `parley run`; every batch option of `parley run` applies
    to the base batch and to each mutant's. With a model in any role (or --trials above 1), a
    mutant is killed only when the exact McNemar test says its batch is worse beyond noise.
    """
    from parley.core.errors import ParleyError
    from parley.core.mutation import render_mutation_report, result_lines, run_mutation
    from parley.core.records import BatchOptions

    batch_options = BatchOptions.from_values(one_bot(click.get_current_context(), options, "mutate"))

    def progress(result: Any) -> None:
        click.echo(visible(result_lines(result)[0]), err=True)

    with open_store(db_path) as store:
        try:
            report = asyncio.run(run_mutation(store, list(paths), batch_options, mutant_names, on_result=progress))
        except ParleyError as exc:
            if not str(exc).startswith("no mutant named"):
                raise
            raise click.BadParameter(str(exc), param_hint="'--mutants'") from None
    text = report.model_dump_json(indent=2) + "\n" if fmt == "json" else visible(render_mutation_report(report))
    sys.stdout.write(text)
    sys.stdout.flush()
    sys.exit(EXIT_SURVIVORS if any(r.status == "survived" for r in report.results) else EXIT_ALL_KILLED)
