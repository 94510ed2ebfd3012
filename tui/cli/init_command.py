"""`parley init [DIR]`: copy the shipped suite into a folder a user can edit and run."""

from __future__ import annotations

from pathlib import Path

import click

from parley.core.errors import ParleyError


@click.command()
@click.argument("folder", default=Path("parley-suite"), type=click.Path(file_okay=True, path_type=Path))
def init(folder: Path) -> None:
    """Copy parley's shipped suite into FOLDER (default: ./parley-suite) to edit and run.

    The suite holds the order-service profiles, personalities, playbooks, a scenario file with its
    prompt templates, and a connector example. FOLDER must be new or empty: nothing is overwritten.
    """
    from parley.core.specs import copy_suite

    try:
        written = copy_suite(folder)
    except OSError as exc:  # a read-only or full file system: one line, like every error of ours
        raise ParleyError(f"cannot write {folder}: {exc.strerror or exc}") from None
    click.echo(f"Wrote the shipped suite to {folder}/ ({len(written)} files).")
    click.echo("Next:")
    click.echo(f"  parley profiles validate {folder}    check every file")
    click.echo(f"  parley run {folder}                  run the suite offline")
