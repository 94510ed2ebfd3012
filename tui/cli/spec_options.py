"""The click options of every command that reads profiles and scenario files: the prompt
templates of scenario files and the `--personalities` folders, and how what the loader noticed
(skipped files, notes, warnings) is printed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from parley.core.specs import SpecSet

F = TypeVar("F", bound=Callable[..., Any])


def template_options(command: F) -> F:
    """--agent-template, --client-template, --evaluator-template."""
    for role in ("evaluator", "client", "agent"):
        command = click.option(
            f"--{role}-template",
            type=click.Path(dir_okay=False, path_type=Path),
            metavar="FILE",
            help=f"Scenario files: use FILE as the {role} prompt template (instead of a prompts/ folder's or the shipped one).",
        )(command)
    return command


def personalities_option(command: F) -> F:
    """--personalities DIR (repeatable)."""
    return click.option(
        "--personalities",
        "personality_dirs",
        multiple=True,
        type=click.Path(file_okay=False, exists=True, path_type=Path),
        metavar="DIR",
        help="A folder to look for files a profile names (personality:, list functions) when they are not "
        "in the working directory or beside the profile (repeatable). parley's shipped personalities come last.",
    )(command)


def loader_lines(result: SpecSet) -> list[str]:
    """What the loader noticed, one line each: skipped files, notes, warnings."""
    lines = [f"skipped {line}" for line in result.skipped]
    lines += [f"note: {line}" for line in result.notes]
    lines += [f"{line} (warning)" for line in result.warnings]
    return lines
