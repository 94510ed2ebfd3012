"""The click options of every command that reads profiles and scenario files: the prompt
templates of scenario files and the `--personalities` folders, and how what the loader noticed
(skipped files, notes, warnings) is printed."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from parley.core.option_declarations import option
from parley.tui.cli.batch_options import click_option

if TYPE_CHECKING:
    from parley.core.specs import SpecSet

F = TypeVar("F", bound=Callable[..., Any])


def template_options(command: F) -> F:
    """--agent-template, --client-template, --evaluator-template (their declarations')."""
    for role in ("evaluator", "client", "agent"):
        command = click_option(option(f"{role}_template"))(command)
    return command


def personalities_option(command: F) -> F:
    """--personalities DIR (repeatable; its declaration's)."""
    return click_option(option("personality_dirs"))(command)


def loader_lines(result: SpecSet) -> list[str]:
    """What the loader noticed, one line each: skipped files, notes, warnings."""
    lines = [f"skipped {line}" for line in result.skipped]
    lines += [f"note: {line}" for line in result.notes]
    lines += [f"{line} (warning)" for line in result.warnings]
    return lines
