"""`parley init [DIR]`: copy the shipped suite into a folder a user can edit and run."""

from __future__ import annotations

from pathlib import Path

import click

from parley.core.errors import ParleyError


@click.command()
@click.argument("folder", default=Path("parley-suite"), type=click.Path(file_okay=True, path_type=Path))
@click.option(
    "--world",
    "world_name",
    default=None,
    metavar="NAME",
    help="Write a template of a new world named NAME instead (world.py, a profile and a bot to start from).",
)
def init(folder: Path, world_name: str | None) -> None:
    """Copy parley's shipped suite into FOLDER (default: ./parley-suite) to edit and run.

    The suite holds the order-service profiles, personalities, playbooks, a scenario file with its
    prompt templates, and a connector example. With --world NAME, FOLDER gets a commented template
    of a new world instead: world.py (its tables, tools, policy, identity and a rule), a profile that
    runs on it and a python: bot to start from. FOLDER must be new or empty: nothing is overwritten.
    """
    if world_name is not None:
        _init_world(folder, world_name)
        return
    from parley.core.specs import copy_suite

    try:
        written = copy_suite(folder)
    except OSError as exc:  # a read-only or full file system: one line, like every error of ours
        raise ParleyError(f"cannot write {folder}: {exc.strerror or exc}") from None
    click.echo(f"Wrote the shipped suite to {folder}/ ({len(written)} files).")
    click.echo("Next:")
    click.echo(f"  parley profiles validate {folder}    check every file")
    click.echo(f"  parley run {folder}                  run the suite offline")


def _init_world(folder: Path, name: str) -> None:
    import re
    from importlib.resources import files

    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]{0,40}", name):
        raise click.BadParameter(f"{name!r}: a world's name is letters, digits, - and _, starting with a letter", param_hint="--world")
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise ParleyError(f"{folder} is not empty: give a new or empty folder, nothing is overwritten")
    template = files("parley.worlds") / "template"
    written = {"world.py": "world.py.txt", "bot.py": "bot.py.txt", "cancel_booking.yaml": "cancel_booking.yaml.txt"}
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for target, source in written.items():
            (folder / target).write_text((template / source).read_text(encoding="utf-8").format(name=name), encoding="utf-8")
    except OSError as exc:
        raise ParleyError(f"cannot write {folder}: {exc.strerror or exc}") from None
    click.echo(f"Wrote a template of world {name} to {folder}/: world.py, cancel_booking.yaml, bot.py.")
    click.echo("Next:")
    click.echo(f"  parley worlds check {folder}/world.py                  every mistake, with its place")
    click.echo(f"  cd {folder} && parley run . --bot python:bot:reply      the profile, with the bot to start from")
