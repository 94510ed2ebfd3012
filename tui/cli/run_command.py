"""`parley run PATH...`: run a batch of simulated conversations and score them.

Prints the batch id as it starts, a progress bar (rich on a terminal; one plain line per
conversation otherwise), then a scored summary and where the markdown report was written.
`--single I` streams one conversation to the terminal instead. Ctrl-C stops launching and
gives the conversations in flight a grace period (a second Ctrl-C cancels them at once); the
batch is then `cancelled`, and `parley run --resume BATCH_ID` continues it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from parley.core.errors import ConfigError
from parley.tui.cli.batch_options import declared_options, given_options, grace_option
from parley.tui.cli.command_io import db_option
from parley.tui.cli.run_batch import run_and_exit
from parley.tui.cli.run_modes import RunRequest, lineage_request, parse_rate, parse_selection
from parley.tui.cli.run_option_help import RUN_OPTION_HELP
from parley.tui.cli.workers_option import placement_or_exit, workers_options

EPILOG = """\b
Models (--bot, --user, --judge): offline (default: no key, no network), openai/MODEL
(OPENAI_API_KEY), openrouter/MODEL (OPENROUTER_API_KEY), ollama/MODEL (OLLAMA_BASE_URL),
openai-api/SERVICE/MODEL (SERVICE_BASE_URL, SERVICE_API_KEY). --user profile runs each
profile's own `llm:` model.

\b
Bots you deployed elsewhere (--bot):
  rasa:URL        a Rasa REST webhook, e.g. rasa:http://127.0.0.1:5005/webhooks/rest/webhook
  taskyto:URL     a Taskyto server, e.g. taskyto:http://127.0.0.1:5000
  http:FILE.yaml  any HTTP API described in YAML (profiles/connectors/serve_bot.yaml)
  MODEL --bot-prompt FILE   an LLM with FILE as its system prompt and no tools
These run without parley's order database: world checks (final order statuses) and tool
checks are reported as not applicable. `parley serve-bot` serves the built-in bot as a
Rasa webhook to try them on.

\b
A bot in your own Python code (--bot python:PACKAGE.MODULE:NAME): NAME is called in-process
with the conversation so far (and `tools`, the order API's tools, when it declares them), so
every check applies to it; the module is found from this folder or on PYTHONPATH.

\b
Exit codes:
  0    no conversation failed and none broke: each passed its checks, or was unverified
       (nothing about the bot was checked) or had a simulator fault (counted apart;
       with --strict these fail too)
  1    the bot failed: a check failed (a timeout fails one), the bot broke (bot_error:
       an HTTP error, a timeout, a bad reply), or a pair or batch rule of --rules failed;
       or a run broke on the simulator's or parley's side (counted apart, but nothing
       was verified); also: invalid input files (each problem printed as file:line:col,
       rule files as file:line: rule.field), a missing API key, an endpoint
       that cannot be reached or that refuses its key (401/403), an unknown batch
       With --fail-under RATE: 1 when the pass rate (--fail-under-lower: its lower
       bound) is below RATE, 0 otherwise.
  2    usage error (a bad option, --single naming no conversation)
  3    stopped at --budget: the batch is `stopped_budget`; what finished is stored
  130  interrupted (Ctrl-C): the batch is `cancelled`; continue it with --resume
  141  stdout closed (`| head`): the batch is stopped and `cancelled`, quietly
"""


def model_name_check(ctx: click.Context, param: click.Parameter, value: str | tuple[str, ...]) -> str | tuple[str, ...]:
    """A role's model name (the bot's: any --bot value, each of several) checked as the option is read: a usage error otherwise."""
    from parley.core.models import parse_model_name

    if isinstance(value, tuple):  # --bot, which may be given once per bot (NAME=BOT names one)
        return tuple(str(model_name_check(ctx, param, bot)) for bot in value)
    value = (value or "offline").strip()
    if param.name == "user" and value == "profile":
        return value
    try:
        if param.name == "bot":
            from parley.core.bots import load_python_bot, parse_bot_spec
            from parley.tui.cli.bot_lineup import bot_target

            spec = parse_bot_spec(bot_target(value))  # a model name, a connector (rasa:, taskyto:, http:), python: or a world's bot
            if spec.kind == "python":
                load_python_bot(spec)  # imported now: a module that cannot be is a usage error, before anything runs
        elif param.name == "judge":
            from parley.core.evaluation import jurors_of

            for judge in jurors_of(value) or [value]:  # a jury (jury:A,B,C) is a judge too
                parse_model_name(judge)
        else:
            parse_model_name(value)
    except ConfigError as exc:
        raise click.BadParameter(str(exc)) from None
    return value


def jury_option(command: Any) -> Any:
    """--jury A,B,C: a jury of judge models deciding by majority (the same as --judge jury:A,B,C)."""

    def check(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
        if value is None:
            return None
        from parley.core.evaluation import jurors_of, jury_name
        from parley.core.models import parse_model_name

        try:
            name = jury_name([j.strip() for j in value.split(",")])
            for juror in jurors_of(name) or []:
                parse_model_name(juror)
        except ConfigError as exc:
            raise click.BadParameter(str(exc)) from None
        return name

    return click.option(
        "--jury",
        callback=check,
        metavar="A,B,C",
        help="Judge with a jury of models (two or more, comma-separated) deciding by majority over the jurors that answered; "
        "a juror's error is left out of the vote and counted. The same as --judge jury:A,B,C.",
    )(command)


def judge_or_jury(ctx: click.Context, judge: str | None, jury: str | None) -> str | None:
    """The judge a command was given: --jury's, or --judge's (a usage error to give both)."""
    from click.core import ParameterSource

    if jury is None:
        return judge
    if judge is not None and ctx.get_parameter_source("judge") == ParameterSource.COMMANDLINE:
        raise click.UsageError("give --judge MODEL or --jury A,B,C, not both")
    return jury


def _entries(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...]:
    """`--gen ROLE.KEY=VALUE`, `--price MODEL=IN/OUT` and `--limit KEY=VALUE` entries, each read now (a usage error
    naming the entry when it is not one). A bot's name in a --gen entry's ROLE is checked with
    the bots (parley.tui.cli.bot_lineup)."""
    from parley.core.records import generation_entry, read_limits, read_prices

    try:
        if param.name == "price":
            read_prices(value)
        elif param.name == "limit":
            read_limits(value)
        else:
            for entry in value:
                generation_entry(entry)  # its role, and its value, once the bots are known (bot_lineup)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None
    return value


RUN_CHECKS: dict[str, Callable[[click.Context, click.Parameter, Any], Any]] = {
    "bot": model_name_check,
    "user": model_name_check,
    "judge": model_name_check,
    "gen": _entries,
    "price": _entries,
    "limit": _entries,
}
"""How the options of a batch's run are read as they are given (`parley run`, `redteam`, `mutate`)."""


@click.command(epilog=EPILOG)
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path), metavar="PATH...")
@declared_options("run", checks=RUN_CHECKS)
@click.option(
    "--single",
    metavar="I",
    help="Run only conversation I (its position in `parley profiles expand PATH`, from 0, or its "
    "spec id) and stream it to the terminal as it happens; it is still stored.",
)
@click.option(
    "--resume",
    "resume_ref",
    metavar="BATCH_ID",
    help="Continue a stopped or crashed batch (id, prefix, or `latest`): the same specs and "
    "options; only conversations not completed are run (those whose run broke on the simulator's "
    "or parley's side, and cancelled ones, again; a bot error is a result and stays).",
)
@click.option(
    "--rerun",
    nargs=2,
    metavar="WHAT BATCH",
    help="A new batch of exactly BATCH's conversations that WHAT picks: failed (failed or bot_error), errors "
    "(runs that broke on the simulator's or parley's side), unverified, user-faults, evaluation-errors, or several "
    "joined by commas. Same sources, seeds and options; "
    "--bot, --bot-prompt, --user, --judge may change. `parley compare BATCH latest` then shows what was fixed.",
)
@click.option(
    "--replay",
    "replay_ref",
    metavar="BATCH",
    help="Replay BATCH's stored conversations to the bot (--bot NEW): each customer's words as they were, no "
    "simulator calls; where the new bot's answers diverge is recorded, and a customer with no words left for "
    "what the new bot did ends the conversation with replay_exhausted.",
)
@click.option(
    "--fail-under",
    "fail_under",
    callback=parse_rate,
    metavar="RATE",
    help="CI gate: exit 1 when the pass rate is below RATE (0.9 or 90%), else 0, instead of failing on any failed conversation.",
)
@click.option(
    "--fail-under-lower",
    is_flag=True,
    help="With --fail-under: gate on the lower bound of the pass rate's 95% Wilson interval (a small batch must pass by a margin).",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print what would run: the planned conversations, the model calls and tokens expected per role, and the cost "
    "from the price table (unknown for unpriced models). Nothing is run or stored.",
)
@click.option(
    "--report",
    "report_path",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Where to write the markdown report (default: reports/BATCH_ID.md beside the database).",
)
@grace_option(default=5.0, when="On Ctrl-C")
@click.option("--strict", is_flag=True, help=RUN_OPTION_HELP["strict"])
@jury_option
@workers_options
@db_option
@click.pass_context
def run(
    ctx: click.Context,
    paths: tuple[Path, ...],
    single: str | None,
    resume_ref: str | None,
    report_path: Path | None,
    rerun: tuple[str, str] | None,
    replay_ref: str | None,
    fail_under: float | None,
    fail_under_lower: bool,
    dry_run: bool,
    grace_s: float,
    strict: bool,
    jury: str | None,
    workers: int | None,
    ray_address: str | None,
    db_path: Path | None,
    **options: Any,
) -> None:
    """Run a batch of simulated conversations from profiles, playbooks or scenario files.

    PATH may be files or folders (searched recursively, as `parley profiles validate` does).
    Files of a folder that have problems are listed and left out, and the others run (the exit
    code is then 1); a file named explicitly that has a problem stops the batch before it runs.
    Each finished conversation is evaluated and stored at once in the SQLite database, so an
    interrupted batch loses nothing that finished: `--resume` continues it.
    """
    _check_modes(paths, resume_ref, rerun, replay_ref, single=single, workers=workers, ray_address=ray_address, cache=options["cache"])
    options["judge"] = judge_or_jury(ctx, options["judge"], jury)
    from parley.tui.cli.bot_lineup import bot_lineup

    lineup = bot_lineup(ctx, options)
    if len(lineup) > 1:
        several = next(
            (flag for flag, on in (("--single", single), ("--resume", resume_ref), ("--rerun", rerun), ("--replay", replay_ref)) if on),
            None,
        )
        if several is not None:
            raise click.UsageError(f"several --bot run a new batch per bot; {several} cannot be combined with them")
    options = lineup[0].values
    if fail_under_lower and fail_under is None:
        raise click.UsageError("--fail-under-lower needs --fail-under RATE")
    sharded = "--workers" if workers is not None else "--ray" if ray_address else None
    placement = placement_or_exit(workers, ray_address) if sharded is not None and not dry_run else None
    finish = functools.partial(
        run_and_exit,
        db_path,
        dry_run=dry_run,
        report_path=report_path,
        grace_s=grace_s,
        gate=(fail_under, fail_under_lower),
        strict=strict,
        placement=placement,
    )
    if rerun is not None or replay_ref is not None:
        if rerun is not None:
            request = lineage_request(ctx, "rerun", rerun[1], parse_selection(rerun[0]), options)
        else:
            request = lineage_request(ctx, "replay", replay_ref or "latest", [], options)
        if jury is not None:
            request.models["judge"] = jury
        return finish(request, concurrency=None)
    ignored = [o.cli_flag for o in given_options(ctx) if not o.taken_on_resume]
    if resume_ref is not None and ignored:
        click.echo(f"note: a resumed batch keeps its own options; ignoring {', '.join(ignored)}", err=True)
    from parley.core.records import BatchOptions
    from parley.core.settings import settings

    chosen = ctx.get_parameter_source("concurrency") != ParameterSource.DEFAULT or "concurrency" in settings().model_fields_set
    runtime_concurrency = options["concurrency"] if resume_ref is None or chosen else None
    if options["bot_prompt"] is not None and resume_ref is None:
        from parley.core.bots import parse_bot_spec

        try:
            parse_bot_spec(options["bot"], bot_prompt=str(options["bot_prompt"]))
        except ConfigError as exc:
            raise click.BadParameter(str(exc), param_hint="'--bot-prompt'") from None
    if resume_ref is not None:
        request = RunRequest(mode="resume", ref=resume_ref, budget_usd=options["budget_usd"])
    elif len(lineup) > 1:
        group = [(bot.name, BatchOptions.from_values(bot.values)) for bot in lineup]
        request = RunRequest(mode="new", paths=list(paths), group=group)
    else:
        request = RunRequest(mode="new", paths=list(paths), options=BatchOptions.from_values(options), single=single)
    finish(request, concurrency=runtime_concurrency)


def _check_modes(
    paths: tuple[Path, ...],
    resume_ref: str | None,
    rerun: tuple[str, str] | None,
    replay_ref: str | None,
    *,
    single: str | None,
    workers: int | None,
    ray_address: str | None,
    cache: bool,
) -> None:
    """A usage error unless the run is one thing (PATH, --resume, --rerun or --replay) and its
    options go together."""
    modes = [
        name
        for name, on in (
            ("PATH", bool(paths)),
            ("--resume", resume_ref is not None),
            ("--rerun", rerun is not None),
            ("--replay", replay_ref is not None),
        )
        if on
    ]
    if len(modes) > 1:
        raise click.UsageError(f"give PATHs for a new batch, or one of --resume, --rerun, --replay: not both {' and '.join(modes)}")
    if not modes:
        raise click.UsageError("missing PATH: the profiles, playbooks or scenario files to run (or --resume, --rerun, --replay BATCH)")
    if modes[0] != "PATH" and single is not None:
        raise click.UsageError(f"--single runs a new batch; it cannot be combined with {modes[0]}")
    sharded = "--workers" if workers is not None else "--ray" if ray_address else None
    if sharded is not None and single is not None:
        raise click.UsageError(f"--single streams one conversation here; it cannot be combined with {sharded}")
    if sharded is not None and cache:
        raise click.UsageError(
            f"--cache keeps replies in the database, which only this process writes; it cannot be combined with {sharded}"
        )
