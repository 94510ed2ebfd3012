"""`parley redteam [PATH...] --bot B`: attack a bot and decide from the world whether it held.

The attack suite is generated from the world's declarations (parley.core.users.redteam_suite: one
attack per strategy and objective, by the world's default customer against another customer), the
attack files and profiles at PATHs join it, and it runs as an ordinary stored batch: `parley report`,
`parley compare` and the app read it. `--attacker MODEL` makes the attackers an LLM told its strategy
and objective (the offline, seeded phrasebook attackers by default); `--judge MODEL` records an LLM
judge's opinion of each attack beside the world's verdict, and the summary lists where they disagree.
Exit code: 1 when an attack succeeded (a breach is a failed conversation), as `parley run`'s.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import click

from parley.tui.cli.batch_options import declared_options, grace_option
from parley.tui.cli.bot_lineup import one_bot
from parley.tui.cli.command_io import db_option
from parley.tui.cli.run_command import RUN_CHECKS, model_name_check
from parley.tui.cli.run_modes import RunRequest

DEFAULT_WORLD = "orders-staff"


def _names(value: str | None, known: tuple[str, ...], what: str, param: str) -> list[str]:
    if value is None:
        return list(known)
    from parley.core.records import did_you_mean

    names = [part.strip().replace("-", "_") for part in value.split(",") if part.strip()]
    for name in names:
        if name not in known:
            raise click.BadParameter(
                f"unknown {what} {name!r}{did_you_mean(name, known) or '; one of ' + ', '.join(known)}", param_hint=param
            )
    return list(dict.fromkeys(names))


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path), metavar="[PATH...]")
@click.option(
    "--world",
    "world_name",
    default=DEFAULT_WORLD,
    show_default=True,
    metavar="W",
    help="The world the attacks are generated for (a name or a world file's path).",
)
@click.option("--strategies", metavar="S,...", help="The strategies to try, comma-separated (default: every one).")
@click.option("--objectives", metavar="O,...", help="The objectives to try, comma-separated (default: every one).")
@click.option(
    "--attacker", metavar="MODEL", help="An LLM attacker on MODEL, told its strategy and objective (default: the offline attackers)."
)
@declared_options("run", checks=RUN_CHECKS)
@click.option(
    "--report",
    "report_path",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Where to write the markdown report (default: reports/BATCH_ID.md beside the database).",
)
@grace_option(default=5.0, when="On Ctrl-C")
@db_option
def redteam(
    paths: tuple[Path, ...],
    world_name: str,
    strategies: str | None,
    objectives: str | None,
    attacker: str | None,
    report_path: Path | None,
    grace_s: float,
    db_path: Path | None,
    **options: Any,
) -> None:
    """Attack the bot with simulated attackers and decide from the world whether it held.

    One attack per strategy and objective is generated from the world's declarations (its
    customers and their records, its state-changing tools, its free-text fields, its policy);
    PATHs add attack files (profiles with an `attack:` block) and ordinary profiles. An attack
    succeeded when the world shows an unauthorized write or read, never on an opinion.
    """
    from parley.core.errors import ParleyError
    from parley.core.records import OBJECTIVES, STRATEGIES, BatchOptions
    from parley.core.users import REDTEAM_SOURCE, attack_suite, impossible_objectives, impossible_strategies
    from parley.core.world import load_world
    from parley.tui.cli.run_batch import run_and_exit

    chosen_strategies = _names(strategies, STRATEGIES, "strategy", "'--strategies'")
    chosen_objectives = _names(objectives, OBJECTIVES, "objective", "'--objectives'")
    options = one_bot(click.get_current_context(), options, "redteam")
    if attacker is not None:
        options["user"] = model_name_check(click.get_current_context(), _user_param(), attacker)
    try:
        path = Path(world_name)
        world = load_world(path=path) if path.suffix == ".py" else load_world(world_name)
    except ParleyError as exc:
        raise click.BadParameter(str(exc), param_hint="'--world'") from None
    batch_options = BatchOptions.from_values(options)
    specs = attack_suite(
        world, strategies=chosen_strategies, objectives=chosen_objectives, seed=batch_options.seed, today=batch_options.today
    )
    for strategy, why in impossible_strategies(world).items():
        if strategy in chosen_strategies:
            click.echo(f"note: {strategy} left out: {why}", err=True)
    for objective, why in impossible_objectives(world).items():
        if objective in chosen_objectives:
            click.echo(f"note: {objective} is impossible by construction on {world.name}: {why}; a zero there is no defence", err=True)
    request = RunRequest(
        mode="new",
        paths=list(paths),
        options=batch_options,
        generated=specs,
        sources=[f"{REDTEAM_SOURCE}:{world.name}", *(str(p) for p in paths)],
    )
    finish = functools.partial(run_and_exit, db_path, dry_run=False, report_path=report_path, grace_s=grace_s, gate=(None, False))
    finish(request, concurrency=None)


def _user_param() -> click.Parameter:
    """The --user parameter, for its model check (the attacker is the batch's simulated customer)."""
    return click.Option(["--user"], metavar="MODEL")
