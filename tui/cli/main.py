"""The `parley` command line.

Start-up stays fast: each command's module is imported only when that command runs, from the
registry COMMANDS below (click's "lazily loading subcommands"), which also holds each command's
one-line help, so `parley --help` lists them all without importing one (tests/test_cli.py holds
it to that). Heavy imports (Textual, FastAPI, uvicorn, openai) are deferred further into the
commands that need them, so `parley --help` is instant and a missing API key never breaks
start-up.
"""

from __future__ import annotations

import datetime as dt
import importlib
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import click

from parley.core.errors import ParleyError, SettingError
from parley.tui.cli.date_option import parse_date
from parley.tui.cli.spec_options import personalities_option
from parley.tui.cli.workers_option import placement_or_exit, workers_options
from parley.tui.terminal_text import redacted_output, visible

F = TypeVar("F", bound=Callable[..., Any])
EXIT_USAGE = 2  # click's own exit code for a usage error
CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


class Listed(NamedTuple):
    """A command in the registry: where it is defined ("module:name", imported on first use; None
    for the two defined in this module) and its one line in `parley --help`."""

    target: str | None
    summary: str


# Every command in the order `parley --help` lists them (most used first). A command added to
# parley is added here, with its line: `parley --help` never imports a command's module.
COMMANDS: dict[str, Listed] = {
    "chat": Listed(None, "Open the app on a live chat with the bot under test."),
    "run": Listed("parley.tui.cli.run_command:run", "Run a batch of simulated conversations from profiles, playbooks or scenario files."),
    "report": Listed(
        "parley.tui.cli.report_command:report",
        "Write a batch's report (markdown, HTML, JSON, CSV, NDJSON, JUnit or an inspect_ai eval log).",
    ),
    "summarise": Listed(
        "parley.tui.cli.summarise_command:summarise", "Summarise a results file: outcomes, pass rate, scores, turns, duration, cost."
    ),
    "init": Listed(
        "parley.tui.cli.init_command:init", "Copy parley's shipped suite into FOLDER (default: ./parley-suite) to edit and run."
    ),
    "batches": Listed("parley.tui.cli.batches_command:batches", "List stored batches and show one (ids: a prefix, `latest`, `latest~N`)."),
    "compare": Listed("parley.tui.cli.compare_command:compare", "Compare batch NEW with batch BASE, conversation by conversation."),
    "mutate": Listed("parley.tui.cli.mutate_command:mutate", "Run the suite against mutants of the bot: which misbehaviours it catches."),
    "rescore": Listed("parley.tui.cli.rescore_command:rescore", "Judge a stored batch again, into a new batch."),
    "judge": Listed(
        "parley.tui.cli.judge_command:judge",
        "Label conversations by hand and measure judges against the labels (calibrate, calibrations, labels).",
    ),
    "redteam": Listed(
        "parley.tui.cli.redteam_command:redteam", "Attack the bot with simulated attackers; the world decides whether it held."
    ),
    "profiles": Listed(
        "parley.tui.cli.profiles_command:profiles",
        "Validate profiles, playbooks and scenario files, and show the conversations they make.",
    ),
    "sessions": Listed("parley.tui.cli.sessions_command:sessions", "List, show and export stored chats and conversations."),
    "rules": Listed("parley.tui.cli.rules_command:rules", "Check conversations against Sensei rule files (sensei-check)."),
    "mockapi": Listed(None, "Serve the mock order API (FastAPI + SQLite, 10-day cancellation policy)."),
    "serve": Listed("parley.tui.cli.serve_command:serve", "Serve the batch REST API (003's routes under /api) over parley's database."),
    "serve-bot": Listed(
        "parley.tui.cli.serve_bot_command:serve_bot", "Serve the built-in order bot behind a Rasa-compatible REST webhook."
    ),
    "worlds": Listed(
        "parley.tui.cli.worlds_command:worlds", "The worlds a bot acts on: list them, show one, check one you wrote, serve one."
    ),
    "import": Listed("parley.tui.cli.tau2_command:import_group", "Write a parley suite from another benchmark's files (tau2-bench)."),
    "tau2": Listed("parley.tui.cli.tau2_command:tau2", "tau2-bench's tasks: replay their gold actions, say which are valid."),
    "submit": Listed("parley.tui.cli.service_client:submit", "Launch a batch on a running parley service."),
    "status": Listed("parley.tui.cli.service_client:status", "Show a batch's status and progress on a running parley service."),
    "fetch": Listed("parley.tui.cli.service_client:fetch", "Download a batch's results from a running parley service."),
}


class ParleyGroup(click.Group):
    """Loads each command of COMMANDS when it is first asked for, and turns our own errors into
    one clear line and a non-zero exit (2 for a bad setting, as for a bad option), never a
    traceback; so is what a damaged database gives as it is read (parley.core.store.file_health). Whatever a command writes to stdout and stderr goes through the redactor."""

    def invoke(self, ctx: click.Context) -> Any:
        from parley.core.store import opened_count

        opened = opened_count()  # the databases this command opens are the ones to look at if it fails
        with redacted_output():  # no secret the command resolves reaches its terminal, however printed
            try:
                return super().invoke(ctx)
            except SettingError as exc:  # a bad PARLEY_* variable: a usage error, like a bad option
                click.echo(visible(f"error: {exc}"), err=True)
                sys.exit(EXIT_USAGE)
            except ParleyError as exc:  # its text may quote a file or a bot: spelled out, never acted on
                click.echo(visible(f"error: {exc}"), err=True)
                sys.exit(1)
            except (sqlite3.DatabaseError, ValueError):  # what a damaged database gives as it is read
                from parley.core.store import damage_line

                damage = damage_line(since=opened)
                if damage is None:
                    raise  # the file is whole: a fault of parley's, shown as such
                click.echo(visible(f"error: {damage}"), err=True)
                sys.exit(1)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        listed = COMMANDS.get(cmd_name)
        if cmd_name not in self.commands and listed is not None and listed.target is not None:
            module, name = listed.target.split(":")
            command = getattr(importlib.import_module(module), name)
            self.add_command(command, cmd_name)
        command = super().get_command(ctx, cmd_name)
        if command is not None and listed is not None:
            command.short_help = listed.summary  # the registry's line, wherever the command is listed
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands and their lines, from the registry: no command's module is imported."""
        width = formatter.width - 6 - max(len(name) for name in COMMANDS)
        rows = [(name, click.Command(name, help=listed.summary).get_short_help_str(width)) for name, listed in COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def _app_options(command: F) -> F:
    """--profiles-dir and --db for the app: what it browses and where it keeps sessions."""
    command = click.option(
        "--db",
        "db_path",
        type=click.Path(dir_okay=False, path_type=Path),
        help="SQLite file chats and batch results are kept in (default: $PARLEY_DB, else sessions/parley.db).",
    )(command)
    command = click.option(
        "--profiles-dir",
        "profile_dirs",
        multiple=True,
        type=click.Path(file_okay=False, exists=True, path_type=Path),
        help="A folder of profiles to browse besides profiles/ (repeatable).",
    )(command)
    return personalities_option(command)


@click.group(cls=ParleyGroup, invoke_without_command=True, context_settings=CONTEXT_SETTINGS)
@click.version_option(package_name="parley", prog_name="parley")
@_app_options
@workers_options
@click.pass_context
def cli(
    ctx: click.Context,
    profile_dirs: tuple[Path, ...],
    db_path: Path | None,
    personality_dirs: tuple[Path, ...],
    workers: int | None,
    ray_address: str | None,
) -> None:
    """parley: test customer-service chatbots with simulated customers.

    With no command, opens the terminal app (chat, profiles, batches, sessions); with
    --workers/--ray, the batches it launches run over worker processes.
    Every role runs offline by default: no key, no network.
    """
    from parley.core.log_file import configure_logging
    from parley.core.settings import settings

    configure_logging(db_path or settings().db_path)  # commands that open another database move it beside that one
    if ctx.invoked_subcommand is None:
        from parley.tui.app.app import ParleyApp

        placement = placement_or_exit(workers, ray_address) if workers is not None or ray_address else None
        ParleyApp(profile_dirs=profile_dirs, db_path=db_path, personality_dirs=personality_dirs, placement=placement).run()
    elif workers is not None or ray_address:
        raise click.UsageError("--workers and --ray before a command open the app; give them to `parley run` or `parley serve`")


@cli.command()
@click.option("--customer", default=None, help="Customer the chat acts as (default: the world's own default customer).")
@click.option(
    "--world", default=None, metavar="NAME|FILE.py", help="The world the chat runs on (default: the order world; parley worlds list)."
)
@click.option(
    "--bot",
    "bot_model",
    default="offline",
    show_default=True,
    metavar="MODEL|CONNECTOR",
    help="The bot under test: a model (offline, openai/MODEL, ...), a Python callable (python:PACKAGE.MODULE:NAME) "
    "or a deployed bot (rasa:URL, taskyto:URL, http:FILE.yaml).",
)
@_app_options
def chat(
    customer: str | None,
    world: str | None,
    bot_model: str,
    profile_dirs: tuple[Path, ...],
    db_path: Path | None,
    personality_dirs: tuple[Path, ...],
) -> None:
    """Open the app on a live chat with the bot under test."""
    from parley.core.log_file import configure_logging
    from parley.core.settings import settings
    from parley.tui.app.app import ParleyApp

    configure_logging(db_path or settings().db_path)

    ParleyApp(
        initial_pane="chat",
        customer=customer,
        bot_model=bot_model,
        world=world,
        profile_dirs=profile_dirs,
        db_path=db_path,
        personality_dirs=personality_dirs,
    ).run()


@cli.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to bind (loopback by default).")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="Port to listen on.")
@click.option(
    "--db",
    "db_path",
    default=Path("sessions/orders.db"),
    show_default=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="SQLite file the orders persist in; created from the fixture when missing.",
)
@click.option("--today", callback=parse_date, metavar="YYYY-MM-DD", help="Pin the date order ages count from.")
@click.option("--reset", is_flag=True, help="Reload the fixture, discarding changes in --db.")
def mockapi(host: str, port: int, db_path: Path, today: dt.date | None, reset: bool) -> None:
    """Serve the mock order API (FastAPI + SQLite, 10-day cancellation policy)."""
    from parley.mockapi.order_store import DatabaseRefused
    from parley.mockapi.server import serve

    try:
        serve(host=host, port=port, db_path=db_path, today=today, reset=reset)
    except DatabaseRefused as exc:  # the mock API imports nothing of parley, so not a ParleyError
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)


def main() -> None:
    # A closed stdout: click ends a command that writes to it directly quietly (exit 1); those
    # that print through rich end with 141 (parley.tui.cli.closed_pipe).
    try:
        cli(prog_name="parley")
    except SystemExit as done:
        _exit_past_leftover_threads(done)
        raise


def _exit_past_leftover_threads(done: SystemExit) -> None:
    """The command is over: a thread a Python bot left running (no daemon) would keep the process
    alive for ever at exit (a CI job hangs); name it and end with the command's exit code now."""
    import threading

    if threading.active_count() == 1:
        return
    from parley.core.bots import exit_now, left_running_line, threads_left

    left = threads_left()
    if left:
        click.echo(left_running_line(left), err=True)
        code = done.code
        exit_now(code if isinstance(code, int) else 0 if code is None else 1, left)


if __name__ == "__main__":
    main()
