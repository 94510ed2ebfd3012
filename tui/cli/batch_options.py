"""The click options of a batch, made from their declarations (parley.core.option_declarations):
`parley run`'s and `parley submit`'s, the roles' models of `parley serve`, and the types the
pytest plugin checks its `--parley-*` values with.

    @declared_options("run", checks={"bot": check_bot})     every option `parley run` takes
    @declared_options("submit", defaults=False)             `parley submit`'s: unset is the service's default
    @role_model_options(default="offline", where="...")     --bot, --user, --judge
    @grace_option(default=5.0, when="On Ctrl-C")            --grace

Each option's click parameter is named as its declaration (`max_turns`, `bot`, `rules`), so a
command takes them as `**options` and hands them on (BatchOptions.from_values). What a resume, a
re-run and a replay make of an option given on their command line is its declaration's too
(`given_options`, `lineage`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from parley.core.option_declarations import BATCH_OPTIONS, BatchOption, Surface, option, options_on
from parley.tui.cli.finite_numbers import FiniteFloatRange, TokenCount

F = TypeVar("F", bound=Callable[..., Any])
ModelCheck = Callable[[click.Context, click.Parameter, Any], Any]


def click_type(declared: BatchOption) -> click.ParamType | None:
    """What the option takes on a command line (None: a flag)."""
    kind = declared.kind
    if kind is bool:
        return None
    if kind is int and declared.name.endswith("_context"):
        return TokenCount()
    if kind is int:
        if declared.minimum is None and declared.maximum is None:
            return click.INT
        low = int(declared.minimum) if declared.minimum is not None else None
        high = int(declared.maximum) if declared.maximum is not None else None
        return click.IntRange(low, high, min_open=declared.above_minimum)
    if kind is float:
        return FiniteFloatRange(declared.minimum, declared.maximum, min_open=declared.above_minimum)
    if kind is Path:
        return click.Path(exists=declared.exists, file_okay=declared.path != "folder", dir_okay=declared.path != "file", path_type=Path)
    return click.STRING


def _setting(name: str) -> Callable[[], Any]:
    """The default of an option read from the environment when the command runs (parley.core.settings
    loads pydantic: not at start-up)."""

    def read() -> Any:
        from parley.core.settings import settings

        return getattr(settings(), name)

    return read


def _shown_default(declared: BatchOption) -> str | bool:
    if declared.shown_default:
        return declared.shown_default
    if declared.env:
        return f"{declared.default}; env {' or '.join(declared.env)}"
    return declared.default not in (None, ())


def _per_bot_default(declared: BatchOption) -> str | bool:
    """What `--help` says of a per-bot option's default (its click default is (): none given)."""
    shown = _shown_default(declared)
    if shown is True:
        return str(declared.default)
    return shown


DECLARED: Any = object()
"""`click_option`'s default: the declared one (read from the environment when it has variables)."""


SEVERAL_BOTS = (
    " Give --bot several times to run the same specs against each bot, one batch each, compared side by side (NAME=BOT names one)."
)
PER_BOT = " With several --bot: once for every bot, or once per bot (in their order, or NAME=VALUE)."


def click_option(
    declared: BatchOption,
    *,
    default: Any = DECLARED,
    check: ModelCheck | None = None,
    help: str | None = None,
    per_bot: bool = False,
) -> Callable[[F], F]:
    """The option as a click option, with its declared default unless `default` is given (None:
    unset, and whoever runs the batch decides). `per_bot`: a setting of the bot that `parley run`
    takes once per bot of several (repeatable, as text: parley.tui.cli.bot_lineup reads each value
    with `click_type` once it knows whose it is; unset is ())."""
    if per_bot:
        extra_help = SEVERAL_BOTS if declared.name == "bot" else PER_BOT
        return click.option(
            declared.cli_flag,
            *([declared.short] if declared.short else []),
            declared.name,
            default=(),
            show_default=_per_bot_default(declared) if default is DECLARED else False,
            metavar=declared.metavar,
            multiple=True,
            callback=check,
            help=(help or declared.help) + extra_help,
        )
    flags = [f"{declared.cli_flag}/{declared.off_flag}" if declared.off_flag else declared.cli_flag]
    if declared.short:
        flags.append(declared.short)
    shown: str | bool = False
    if default is DECLARED:
        default = _setting(declared.setting) if declared.setting else declared.default
        shown = _shown_default(declared)
    elif default is not None:
        shown = True
    extra: dict[str, Any] = {}
    if declared.kind is bool and not declared.off_flag:
        extra["is_flag"] = True
    kind = click_type(declared)
    if kind is not None:
        extra["type"] = kind
    return click.option(
        *flags,
        declared.name,
        default=default,
        show_default=shown,
        metavar=declared.metavar,
        multiple=declared.many,
        callback=check,
        help=help or declared.help,
        **extra,
    )


def _apply(command: F, options: Sequence[Callable[[F], F]]) -> F:
    """Apply `options` so that they list in `--help` in the order given."""
    for decorate in reversed(options):
        command = decorate(command)
    return command


def declared_options(
    surface: Surface, *, defaults: bool = True, checks: dict[str, ModelCheck] | None = None, roles_where: str | None = None
) -> Callable[[F], F]:
    """Every option declared on `surface` (`run`, `submit`), in declaration order; `checks`
    validate a value as the command understands it (by option name); `roles_where`, when given,
    makes the roles' help `Model of <role><roles_where>.` (a service decides which bots it takes)."""
    checks = checks or {}

    def help_of(o: BatchOption) -> str | None:
        return f"Model of {o.role}{roles_where}." if roles_where is not None and o.role is not None else None

    def decorate(command: F) -> F:
        default = DECLARED if defaults else None
        options = [
            click_option(o, default=default, check=checks.get(o.name), help=help_of(o), per_bot=surface == "run" and o.per_bot)
            for o in options_on(surface)
        ]
        return _apply(command, options)

    return decorate


def role_model_options(*, default: str | None, where: str, check: ModelCheck | None = None) -> Callable[[F], F]:
    """--bot, --user, --judge for a command that sets the default of the batches it runs (`parley
    serve`): `where` ends each help text (" for batches that name none")."""

    def decorate(command: F) -> F:
        roles = [o for o in BATCH_OPTIONS if o.role is not None]
        return _apply(command, [click_option(o, default=default, check=check, help=f"Model of {o.role}{where}.") for o in roles])

    return decorate


def given_options(ctx: click.Context, names: Sequence[str] | None = None) -> list[BatchOption]:
    """The declared options among `names` (default: all) the person typed on the command line."""
    from click.core import ParameterSource

    chosen = [option(n) for n in names] if names is not None else list(BATCH_OPTIONS)
    return [o for o in chosen if ctx.get_parameter_source(o.name) == ParameterSource.COMMANDLINE]


def grace_option(*, default: float, when: str) -> Callable[[F], F]:
    """--grace SECONDS: how long conversations in flight may finish when the batch is stopped."""
    return click.option(
        "--grace",
        "grace_s",
        type=FiniteFloatRange(0, None),
        default=default,
        show_default=True,
        metavar="SECONDS",
        help=f"{when}, how long conversations in flight may finish before they are cancelled.",
    )
