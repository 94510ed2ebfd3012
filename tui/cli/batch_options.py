"""The options of a batch, declared once for every command that starts one: `parley run` (here),
`parley serve` (the defaults of the batches it is sent) and `parley submit` (a batch sent to a
service). Each group is a decorator, as inspect_ai's `common_options` is:

    @role_model_options(default="offline", where="")     --bot, --user, --judge
    @context_options                                     --bot-context, --user-context, --judge-context
    @limit_options(defaults=True)                        --concurrency, --max-turns, --timeout, --trials, --seed
    @grace_option(default=5.0, when="On Ctrl-C")         --grace
    @prompt_version_option                               --prompt-version

A command that takes the service's defaults (`submit`) declares them without defaults: what it
does not give, the service decides. What each option means is written once, in
parley.tui.cli.run_option_help; what each takes, in the `*_TYPE` values below (the pytest
plugin checks its `--parley-*` values with them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import click

from parley.tui.cli.finite_numbers import FiniteFloatRange, TokenCount
from parley.tui.cli.run_option_help import RUN_OPTION_HELP

F = TypeVar("F", bound=Callable[..., Any])
ModelCheck = Callable[[click.Context, click.Parameter, Any], Any]

CONCURRENCY_TYPE = click.IntRange(1, 10_000)
MAX_TURNS_TYPE = click.IntRange(1, 1000)
TIMEOUT_TYPE = FiniteFloatRange(0.1, None)
TRIALS_TYPE = click.IntRange(1, 1000)
SEED_TYPE = click.INT
BOT_TIMEOUT_TYPE = FiniteFloatRange(0.1, None)

ROLES = (
    ("bot", "bot_model", "the bot under test"),
    ("user", "user_model", "the simulated customer"),
    ("judge", "judge_model", "the judge"),
)


def _setting(name: str) -> Callable[[], Any]:
    """The default of an option read from the environment when the command runs (parley.core.settings
    loads pydantic-settings: not at start-up)."""

    def read() -> Any:
        from parley.core.settings import settings

        return getattr(settings(), name)

    return read


def _apply(command: F, options: Sequence[Callable[[F], F]]) -> F:
    """Apply `options` so that they list in `--help` in the order given."""
    for option in reversed(options):
        command = option(command)
    return command


def role_model_options(
    *,
    default: str | None,
    where: str,
    check: ModelCheck | None = None,
    helps: dict[str, str] | None = None,
    bot_metavar: str = "MODEL",
) -> Callable[[F], F]:
    """--bot, --user, --judge: the model of each role. `default` None leaves a role to whoever
    runs the batch (a service's own default); `where` ends each help text (" for batches that
    name none"); `check` validates a value as the command understands it; `helps` replaces a
    role's help text whole (run's --bot names the connectors too)."""
    helps = helps or {}

    def decorate(command: F) -> F:
        options = [
            click.option(
                f"--{role}",
                dest,
                default=default,
                show_default=default is not None,
                callback=check,
                metavar=bot_metavar if role == "bot" else "MODEL",
                help=helps.get(role, f"Model of {what}{where}."),
            )
            for role, dest, what in ROLES
        ]
        return _apply(command, options)

    return decorate


def context_options(command: F) -> F:
    """--bot-context, --user-context, --judge-context TOKENS: each role model's context length,
    to which the prompts parley builds for it are condensed (default: PARLEY_ROLE_CONTEXT, else
    what the role's endpoint reports before launch, else 4096)."""
    options = [
        click.option(
            f"--{role}-context",
            f"{role}_context",
            type=TokenCount(),
            default=_setting(f"{role}_context"),
            show_default=f"reported by the endpoint, else 4096; env PARLEY_{role.upper()}_CONTEXT",
            metavar="TOKENS",
            help=f"Context length of the model of {what}, in tokens: the prompts parley builds for it are condensed to fit."
            + (" A conversation that does not fit even condensed is a judge error, never a score." if role == "judge" else ""),
        )
        for role, _, what in ROLES
    ]
    return _apply(command, options)


def limit_options(*, defaults: bool) -> Callable[[F], F]:
    """--concurrency, --max-turns, --timeout, --trials, --seed. With `defaults`, each has parley's
    default (the first three from the environment: parley.core.settings); without, an option
    not given is None (the service's default)."""

    def default(value: Any) -> Any:
        return value if defaults else None

    def decorate(command: F) -> F:
        options = [
            click.option(
                "--concurrency",
                "-c",
                type=CONCURRENCY_TYPE,
                default=default(_setting("concurrency")),
                show_default="4; env PARLEY_CONCURRENCY or CONCURRENCY" if defaults else False,
                help=RUN_OPTION_HELP["concurrency"],
            ),
            click.option(
                "--max-turns",
                type=MAX_TURNS_TYPE,
                default=default(_setting("max_turns")),
                show_default="30; env PARLEY_MAX_TURNS or MAX_TURNS" if defaults else False,
                help=RUN_OPTION_HELP["max-turns"],
            ),
            click.option(
                "--timeout",
                "timeout_s",
                type=TIMEOUT_TYPE,
                default=default(_setting("timeout_sec")),
                show_default="90.0; env PARLEY_TIMEOUT_SEC or TIMEOUT_SEC" if defaults else False,
                metavar="SECONDS",
                help=RUN_OPTION_HELP["timeout"],
            ),
            click.option(
                "--trials",
                "-k",
                type=TRIALS_TYPE,
                default=default(1),
                show_default=defaults,
                help=RUN_OPTION_HELP["trials"],
            ),
            click.option(
                "--seed",
                type=SEED_TYPE,
                default=default(0),
                show_default=defaults,
                help=RUN_OPTION_HELP["seed"],
            ),
        ]
        return _apply(command, options)

    return decorate


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


def prompt_version_option(command: F) -> F:
    """--prompt-version LABEL."""
    return click.option("--prompt-version", metavar="LABEL", help="A label for the bot prompt under test (kept in the exports).")(command)
