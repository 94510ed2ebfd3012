"""`parley run PATH...`: run a batch of simulated conversations and score them.

Prints the batch id as it starts, a progress bar (rich on a terminal; one plain line per
conversation otherwise), then a scored summary and where the markdown report was written.
`--single I` streams one conversation to the terminal instead. Ctrl-C stops launching and
gives the conversations in flight a grace period (a second Ctrl-C cancels them at once); the
batch is then `cancelled`, and `parley run --resume BATCH_ID` continues it.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from parley.core.errors import ConfigError, ParleyError
from parley.core.reports.cell_escaping import without_nul
from parley.core.settings import MAX_CONTEXT_TOKENS, settings
from parley.tui.cli.closed_pipe import EXIT_CLOSED_PIPE
from parley.tui.cli.run_modes import (
    EXIT_BUDGET,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    RunRequest,
    lineage_request,
    parse_rate,
    parse_selection,
    rate_gate,
)
from parley.tui.cli.sessions_command import console, db_option, open_store, print_verdict, tool_line
from parley.tui.cli.spec_options import personalities_option, template_options
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
Exit codes:
  0    no conversation failed and none broke: each passed its checks, or was unverified
       (nothing about the bot was checked) or had a simulator fault (counted apart;
       with --strict these fail too)
  1    the bot failed: a check failed (a timeout fails one) or the bot broke (bot_error:
       an HTTP error, a timeout, a bad reply); or a run broke on the simulator's or
       parley's side (counted apart, but nothing was verified); also: invalid input
       files (each problem printed as file:line:col), a missing API key, an endpoint
       that cannot be reached, an unknown batch
       With --fail-under RATE: 1 when the pass rate (--fail-under-lower: its lower
       bound) is below RATE, 0 otherwise.
  2    usage error (a bad option, --single naming no conversation)
  3    stopped at --budget: the batch is `stopped_budget`; what finished is stored
  130  interrupted (Ctrl-C): the batch is `cancelled`; continue it with --resume
  141  stdout closed (`| head`): the batch is stopped and `cancelled`, quietly
"""


BOT_HELP = (
    "The bot under test: a MODEL runs parley's built-in order bot (tools, order database); "
    "with --bot-prompt, a prompt bot; or a connector to a deployed chatbot: rasa:URL (a Rasa REST "
    "webhook), taskyto:URL (a Taskyto server), http:FILE.yaml (any HTTP API described in YAML)."
)


def _model_name(ctx: click.Context, param: click.Parameter, value: str) -> str:
    from parley.core.models.names import parse_model_name

    value = (value or "offline").strip()
    if param.name == "user_model" and value == "profile":
        return value
    try:
        if param.name == "bot_model":
            from parley.core.bots.bot_names import parse_bot_spec

            parse_bot_spec(value)  # a model name or a connector (rasa:, taskyto:, http:)
        else:
            parse_model_name(value)
    except ConfigError as exc:
        raise click.BadParameter(str(exc)) from None
    return value


class TokenCount(click.ParamType):
    """A whole number of tokens, 1 to MAX_CONTEXT_TOKENS: anything else (inf, nan, 0, -5, 8.5k)
    is a usage error saying what to give."""

    name = "tokens"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            number = value
        else:
            text = str(value).strip().replace("_", "")
            if not text.isascii() or not text.isdigit():
                self.fail(f"{value!r} is not a number of tokens: give a whole number such as 8192", param, ctx)
            number = int(text)
        if not 1 <= number <= MAX_CONTEXT_TOKENS:
            self.fail(f"{number} tokens is not a context length: give 1 to {MAX_CONTEXT_TOKENS}", param, ctx)
        return number


def context_option(role: str) -> Any:
    """`--ROLE-context TOKENS`: the role model's context length, which the prompts parley builds
    for it are condensed to fit. A whole number of tokens, at least 1 (inf, nan, 0 and negative
    numbers are usage errors)."""
    whose = {"bot": "the bot's model", "user": "the user simulator's model", "judge": "the judge's model"}[role]
    return click.option(
        f"--{role}-context",
        f"{role}_context",
        type=TokenCount(),
        default=lambda: getattr(settings(), f"{role}_context"),
        show_default=f"4096; env PARLEY_{role.upper()}_CONTEXT",
        metavar="TOKENS",
        help=f"Context length of {whose}, in tokens: its prompts are condensed to fit."
        + (" A conversation that does not fit even condensed is a judge error, never a score." if role == "judge" else ""),
    )


@click.command(epilog=EPILOG)
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path), metavar="PATH...")
@click.option(
    "--concurrency",
    "-c",
    type=click.IntRange(1, 10_000),
    default=lambda: settings().concurrency,
    show_default="4; env PARLEY_CONCURRENCY or CONCURRENCY",
    help="Most conversations in flight at once. Lowered automatically on rate limits (429s), raised back as calls succeed.",
)
@click.option(
    "--max-turns",
    type=click.IntRange(1, 1000),
    default=lambda: settings().max_turns,
    show_default="30; env PARLEY_MAX_TURNS or MAX_TURNS",
    help="Bot answers per conversation before it stops with max_turns.",
)
@click.option(
    "--timeout",
    "timeout_s",
    type=click.FloatRange(0.1, None),
    default=lambda: settings().timeout_sec,
    show_default="90.0; env PARLEY_TIMEOUT_SEC or TIMEOUT_SEC",
    metavar="SECONDS",
    help="Wall-clock limit of each conversation, a hung model call included (recorded as timeout). "
    "The judge gets the same limit of its own.",
)
@click.option(
    "--trials",
    "-k",
    type=click.IntRange(1, 1000),
    default=1,
    show_default=True,
    help="Run each conversation k times with distinct seeds; the report shows pass^k beside pass^1.",
)
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    help="Batch seed: the same seed and files give the same conversations (offline: byte for byte).",
)
@click.option("--bot", "bot_model", default="offline", show_default=True, callback=_model_name, metavar="MODEL|CONNECTOR", help=BOT_HELP)
@click.option(
    "--bot-prompt",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="With --bot MODEL: a prompt bot, the model with FILE as its system prompt and no tools "
    "(e.g. profiles/scenarios/templates/agent.txt). {NAME} placeholders are filled from each "
    "spec's variables, plus session_id, CURRENT_DATE and CUSTOMER_ID.",
)
@click.option(
    "--bot-timeout",
    "bot_timeout_s",
    type=click.FloatRange(0.1, None),
    default=30.0,
    show_default=True,
    metavar="SECONDS",
    help="A connector's limit per HTTP call; a call past it ends the conversation with error (an http: file's own `timeout` wins).",
)
@click.option(
    "--user",
    "user_model",
    default="offline",
    show_default=True,
    callback=_model_name,
    metavar="MODEL",
    help="Model of the simulated customer; `profile` uses each profile's own llm: model.",
)
@click.option(
    "--judge",
    "judge_model",
    default="offline",
    show_default=True,
    callback=_model_name,
    metavar="MODEL",
    help="Model of the judge (offline: scores from the checks alone).",
)
@context_option("bot")
@context_option("user")
@context_option("judge")
@click.option(
    "--cache/--no-cache",
    default=False,
    show_default=True,
    help="Record LLM replies in the database and replay identical requests: a re-run costs "
    "nothing and repeats exactly. Offline models are never cached.",
)
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
    "(runs that broke), unverified, user-faults, or several joined by commas. Same sources, seeds and options; "
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
    "--budget",
    "budget_usd",
    type=click.FloatRange(0, None, min_open=True),
    metavar="USD",
    help="Launch no new conversation once the measured cost reaches USD; the batch ends stopped_budget with what "
    "finished stored. Needs every model of the batch priced.",
)
@click.option(
    "--report",
    "report_path",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Where to write the markdown report (default: reports/BATCH_ID.md beside the database).",
)
@click.option("--prompt-version", metavar="LABEL", help="A label for the bot prompt under test (kept in the exports).")
@click.option(
    "--grace",
    "grace_s",
    type=click.FloatRange(0, None),
    default=5.0,
    show_default=True,
    metavar="SECONDS",
    help="On Ctrl-C, how long conversations in flight may finish before they are cancelled.",
)
@click.option(
    "--strict",
    is_flag=True,
    help="Unverified conversations (nothing about the bot was checked) and simulator faults fail the exit code too.",
)
@workers_options
@template_options
@personalities_option
@db_option
@click.pass_context
def run(
    ctx: click.Context,
    paths: tuple[Path, ...],
    concurrency: int,
    max_turns: int,
    timeout_s: float,
    trials: int,
    seed: int,
    bot_model: str,
    bot_prompt: Path | None,
    bot_timeout_s: float,
    user_model: str,
    judge_model: str,
    bot_context: int | None,
    user_context: int | None,
    judge_context: int | None,
    cache: bool,
    single: str | None,
    resume_ref: str | None,
    report_path: Path | None,
    prompt_version: str | None,
    rerun: tuple[str, str] | None,
    replay_ref: str | None,
    fail_under: float | None,
    fail_under_lower: bool,
    dry_run: bool,
    budget_usd: float | None,
    grace_s: float,
    strict: bool,
    workers: int | None,
    ray_address: str | None,
    db_path: Path | None,
    personality_dirs: tuple[Path, ...],
    agent_template: Path | None,
    client_template: Path | None,
    evaluator_template: Path | None,
) -> None:
    """Run a batch of simulated conversations from profiles, playbooks or scenario files.

    PATH may be files or folders (searched recursively, as `parley profiles validate` does).
    Files of a folder that have problems are listed and left out, and the others run (the exit
    code is then 1); a file named explicitly that has a problem stops the batch before it runs.
    Each finished conversation is evaluated and stored at once in the SQLite database, so an
    interrupted batch loses nothing that finished: `--resume` continues it.
    """
    from parley.core.records.batch import BatchOptions, LoadOptions, RoleModels

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
    if fail_under_lower and fail_under is None:
        raise click.UsageError("--fail-under-lower needs --fail-under RATE")
    sharded = "--workers" if workers is not None else "--ray" if ray_address else None
    if sharded is not None and single is not None:
        raise click.UsageError(f"--single streams one conversation here; it cannot be combined with {sharded}")
    if sharded is not None and cache:
        raise click.UsageError(
            f"--cache keeps replies in the database, which only this process writes; it cannot be combined with {sharded}"
        )
    placement = placement_or_exit(workers, ray_address) if sharded is not None and not dry_run else None
    if rerun is not None or replay_ref is not None:
        values = {
            "bot_model": bot_model,
            "bot_prompt": bot_prompt,
            "bot_timeout_s": bot_timeout_s,
            "user_model": user_model,
            "judge_model": judge_model,
            "bot_context": bot_context,
            "user_context": user_context,
            "judge_context": judge_context,
            "cache": cache,
            "concurrency": concurrency,
            "prompt_version": prompt_version,
            "budget_usd": budget_usd,
        }
        if rerun is not None:
            request = lineage_request(ctx, "rerun", rerun[1], parse_selection(rerun[0]), values)
        else:
            request = lineage_request(ctx, "replay", replay_ref or "latest", [], values)
        return _exit(
            db_path,
            request,
            dry_run=dry_run,
            concurrency=None,
            report_path=report_path,
            grace_s=grace_s,
            gate=(fail_under, fail_under_lower),
            strict=strict,
            placement=placement,
        )
    ignored = [
        f"--{name.replace('_', '-')}"
        for name in (
            "max_turns",
            "timeout_s",
            "trials",
            "seed",
            "bot_model",
            "bot_prompt",
            "bot_timeout_s",
            "user_model",
            "judge_model",
            "bot_context",
            "user_context",
            "judge_context",
            "cache",
            "prompt_version",
            "personality_dirs",
            "agent_template",
            "client_template",
            "evaluator_template",
        )
        if ctx.get_parameter_source(name) == ParameterSource.COMMANDLINE
    ]
    if resume_ref is not None and ignored:
        click.echo(f"note: a resumed batch keeps its own options; ignoring {', '.join(ignored)}", err=True)
    chosen = ctx.get_parameter_source("concurrency") != ParameterSource.DEFAULT or "concurrency" in settings().model_fields_set
    runtime_concurrency = concurrency if resume_ref is None or chosen else None
    if bot_prompt is not None and resume_ref is None:
        from parley.core.bots.bot_names import parse_bot_spec

        try:
            parse_bot_spec(bot_model, bot_prompt=str(bot_prompt))
        except ConfigError as exc:
            raise click.BadParameter(str(exc), param_hint="'--bot-prompt'") from None
    options = BatchOptions(
        budget_usd=budget_usd,
        models=RoleModels(
            bot=bot_model,
            bot_prompt=str(bot_prompt) if bot_prompt else None,
            bot_timeout_s=bot_timeout_s,
            user=user_model,
            judge=judge_model,
            bot_context=bot_context,
            user_context=user_context,
            judge_context=judge_context,
        ),
        concurrency=concurrency,
        trials=trials,
        seed=seed,
        max_turns=max_turns,
        timeout_s=timeout_s,
        cache=cache,
        prompt_version=prompt_version,
        loading=LoadOptions(
            agent_template=str(agent_template) if agent_template else None,
            client_template=str(client_template) if client_template else None,
            evaluator_template=str(evaluator_template) if evaluator_template else None,
            personality_dirs=[str(d) for d in personality_dirs],
        ),
    )
    if resume_ref is not None:
        request = RunRequest(mode="resume", ref=resume_ref, budget_usd=budget_usd)
    else:
        request = RunRequest(mode="new", paths=list(paths), options=options, single=single)
    _exit(
        db_path,
        request,
        dry_run=dry_run,
        concurrency=runtime_concurrency,
        report_path=report_path,
        grace_s=grace_s,
        gate=(fail_under, fail_under_lower),
        strict=strict,
        placement=placement,
    )


def _exit(
    db_path: Path | None,
    request: RunRequest,
    *,
    dry_run: bool,
    concurrency: int | None,
    report_path: Path | None,
    grace_s: float,
    gate: tuple[float | None, bool],
    strict: bool = False,
    placement: Any = None,
) -> None:
    """Run the request (or only plan it, with --dry-run) and exit with its code."""
    store = open_store(db_path)
    try:
        if dry_run:
            from parley.tui.cli.dry_run_view import print_dry_run

            code = asyncio.run(print_dry_run(store, request))
        else:
            code = asyncio.run(
                _main(
                    store,
                    request,
                    concurrency=concurrency,
                    report_path=report_path,
                    grace_s=grace_s,
                    gate=gate,
                    strict=strict,
                    placement=placement,
                )
            )
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        code = EXIT_INTERRUPTED
    finally:
        store.close()
    sys.exit(code)


NOTES_SHOWN = 3


def _fewer_notes(lines: list[str]) -> list[str]:
    """The loader's lines as `parley run` prints them: every skipped file, and the first few
    notes (where each personality was read from, ...) with a count of the rest, so a suite of
    many profiles does not open with a screen of notes."""
    notes = [line for line in lines if line.startswith("note: ")]
    if len(notes) <= NOTES_SHOWN:
        return lines
    hidden = set(notes[NOTES_SHOWN:])
    kept = [line for line in lines if line not in hidden]
    return [*kept, f"note: and {len(hidden)} more notes (`parley profiles validate PATH` prints them all)"]


async def _main(
    store: Any,
    request: RunRequest,
    *,
    concurrency: int | None,
    report_path: Path | None,
    grace_s: float,
    gate: tuple[float | None, bool] = (None, False),
    strict: bool = False,
    placement: Any = None,
) -> int:
    from parley.core.bots.connectors.base import aclose_connectors
    from parley.core.engine.batch_runner import BatchRunner
    from parley.core.models.openai_provider import aclose_clients

    single = request.single
    pool: Any = None
    try:
        prepared, code = await request.prepare_or_exit(store)
        if prepared is None:
            return code
        for line in _fewer_notes(prepared.notes):
            click.echo(line, err=True)
        for warning in prepared.warnings:
            click.echo(f"warning: {warning}", err=True)
        for error in prepared.left_out:
            click.echo(error.render(), err=True)
        if prepared.left_out:
            files = len({e.file for e in prepared.left_out})
            click.echo(f"left out: {files} file{'s' if files != 1 else ''} with problems (above); the others run", err=True)

        if placement is not None:
            from parley.core.engine.distributed.pool import WorkerPool
            from parley.core.engine.distributed.sharded_runner import ShardedRunner

            pool = WorkerPool(placement)
            try:
                runner: BatchRunner = ShardedRunner(store, prepared, pool=pool, concurrency=concurrency, grace_s=grace_s)
            except ParleyError as exc:  # a resumed batch that caches replies
                click.echo(f"error: {exc}", err=True)
                return EXIT_FAILED
        else:
            runner = BatchRunner(store, prepared, concurrency=concurrency, grace_s=grace_s, stream_transcripts=single is not None)
        out = console()
        out.on_closed = runner.cancel  # stdout closed (`| head -3`): stop the batch as a second Ctrl-C would
        display: _Display
        if single is not None:
            display = _SingleDisplay(out)
        elif out.is_terminal:
            display = _BarDisplay(out)
        else:
            display = _PlainDisplay(out)
        runner.subscribe(display.handle)
        verb = "resumed" if prepared.resumed else "started"
        if not prepared.resumed and prepared.batch.parent_id:
            made = "re-run of" if prepared.batch.options.rerun else "replay of"
            verb += f" ({made} {prepared.batch.parent_id})"
        db = store.path or ":memory:"
        todo = prepared.remaining
        extra = f", {prepared.already_done} already done" if prepared.resumed else ""
        out.print(
            f"batch {prepared.id} {verb}: {prepared.total} conversation{'s' if prepared.total != 1 else ''}"
            f"{extra}, {todo} to run, concurrency {concurrency or prepared.batch.options.concurrency}"
            f"{' in all' if pool is not None else ''} (db {db})",
            highlight=False,
        )

        loop = asyncio.get_running_loop()
        presses = 0

        def interrupted() -> None:
            nonlocal presses
            presses += 1
            if presses == 1:
                display.note(
                    f"stopping: no new conversations; {runner.in_flight} in flight get {grace_s:g} s to finish "
                    "(Ctrl-C again to cancel them now)"
                )
                runner.stop()
            else:
                display.note("cancelling the conversations in flight (they are saved as cancelled)")
                runner.cancel()

        handled: list[int] = []
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(sig, interrupted)
                handled.append(sig)
            except (NotImplementedError, RuntimeError):  # not the main thread, or Windows
                pass
        if pool is not None:
            display.note(f"starting {placement.describe()}; this process stores the results")
        try:
            result = await runner.run()
        except ParleyError as exc:  # the workers did not start: the batch is recorded failed
            display.close()
            click.echo(f"error: {exc}", err=True)
            return EXIT_FAILED
        finally:
            for sig in handled:
                loop.remove_signal_handler(sig)
            display.close()
    finally:
        if pool is not None:
            await pool.stop()
        await aclose_clients()
        await aclose_connectors()

    report_file = report_path or default_report_path(store, result.batch_id)
    summary_text, report_error = await asyncio.to_thread(_summary_and_report, store, result, report_file, single is not None)
    if out.closed:
        return EXIT_CLOSED_PIPE  # `| head`: the reader has what it wanted; the batch is stopped and stored
    out.print(summary_text, highlight=False, markup=False)
    if pool is not None:
        out.print(runner.workers_line(), highlight=False, markup=False)
    if report_error is not None:
        click.echo(f"error: {report_error}", err=True)
        return EXIT_FAILED
    if result.status == "cancelled":
        out.print(f"continue it with: parley run --resume {result.batch_id}", highlight=False)
        return EXIT_INTERRUPTED
    if result.status == "stopped_budget":
        out.print(f"stopped at the budget; continue it with: parley run --resume {result.batch_id} --budget USD", highlight=False)
        return EXIT_BUDGET
    threshold, lower = gate
    if threshold is not None:
        from parley.core.reports.stats import summarize

        summary = await asyncio.to_thread(summarize, store, result.batch_id)
        held, line = rate_gate(summary, threshold, lower=lower)
        out.print(line, highlight=False, markup=False)
        return EXIT_OK if held and result.status == "completed" else EXIT_FAILED
    if not result.ok(strict=strict):
        return EXIT_FAILED
    if prepared.left_out:
        out.print(f"{len(prepared.left_out)} problem(s) in files that were left out (listed before the batch)", highlight=False)
        return EXIT_FAILED
    return EXIT_OK


def default_report_path(store: Any, batch_id: str) -> Path:
    base = store.path.parent if store.path is not None else Path("sessions")
    return base / "reports" / f"{batch_id}.md"


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.1f}%"


def _interval(interval: Any) -> str:
    return "" if interval is None else f"{interval.low * 100:.1f}-{interval.high * 100:.1f}%"


def counts_lines(summary: Any) -> list[str]:
    """The outcomes, the pass rate with its interval and denominator, pass^k and the flaky specs,
    as terminal lines."""
    from parley.core.reports.stats import LEGACY_ERROR_NOTE, UNVERIFIED_HINT

    def n(count: int, one: str, many: str | None = None) -> str:
        return f"{count} {one if count == 1 else (many or one + 's')}"

    apart = [
        n(summary.unverified, "unverified", "unverified"),
        n(summary.user_faults, "simulator fault"),
        n(summary.user_errors, "simulator error"),
        n(summary.infrastructure_errors, "infrastructure error"),
    ]
    if summary.cancelled:
        apart.append(n(summary.cancelled, "cancelled", "cancelled"))
    if summary.evaluation_errors:
        apart.append(n(summary.evaluation_errors, "evaluation error"))
    if summary.legacy_errors:
        apart.append(n(summary.legacy_errors, "legacy error"))
    lines = [
        f"Conversations: {summary.done} of {summary.planned} done: {summary.passed} passed, {summary.failed} failed, "
        f"{n(summary.bot_errors, 'bot error')} (the bot's failures); counted apart: {', '.join(apart)}"
    ]
    if summary.unverified:
        lines.append(f"Unverified: {n(summary.unverified, 'conversation')} had no check about the bot: {UNVERIFIED_HINT}")
    if summary.legacy_errors:
        lines.append(f"Legacy errors: {LEGACY_ERROR_NOTE}")
    shown_k = summary.pass_k if len(summary.pass_k) <= 4 else [*summary.pass_k[:2], summary.pass_k[-1]]
    pass_k = "  ".join(f"pass^{p.k} {_pct(p.value)}" + (f" ({_interval(p.interval)})" if p.interval is not None else "") for p in shown_k)
    rate = f"Pass rate: {_pct(summary.pass_rate)} ({summary.passed} of {summary.pass_rate_denominator}"
    if summary.pass_rate_interval is not None:
        rate += f", 95% interval {_interval(summary.pass_rate_interval)}"
    lines.append(f"{rate})   {pass_k}")
    if summary.flaky_specs:
        shown = ", ".join(f"{f.spec_id} ({f.passed} of {f.trials} passed)" for f in summary.flaky_specs[:5])
        more = f", ... and {len(summary.flaky_specs) - 5} more" if len(summary.flaky_specs) > 5 else ""
        lines.append(f"Flaky specs ({len(summary.flaky_specs)}): {shown}{more}")
    elif summary.batch.options.trials >= 2:
        lines.append("Flaky specs: none (every spec's trials agree)")
    return lines


def _summary_and_report(store: Any, result: Any, report_file: Path, single: bool) -> tuple[str, str | None]:
    """Write the markdown report; return the scored summary for the terminal and, if the report
    could not be written, why."""
    from parley.core.reports.markdown import render_markdown
    from parley.core.reports.stats import summarize

    summary = summarize(store, result.batch_id)
    partial = report_file.with_name(report_file.name + ".partial")
    try:
        report_file.parent.mkdir(parents=True, exist_ok=True)
        partial.write_text(without_nul(render_markdown(summary)), encoding="utf-8")
        partial.replace(report_file)
        report_line = f"Report: {report_file}   (other formats: parley report {result.batch_id} --format json|csv|ndjson)"
        report_error = None
    except OSError as exc:  # a full disk, a read-only folder: the batch is stored, the file is not
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)
        reason = exc.strerror or str(exc)
        report_error = f"cannot write the report {report_file}: {reason}"
        report_line = f"Report: not written ({reason}); `parley report {result.batch_id}` prints it"

    lines: list[str] = [""]
    if single:
        lines.pop()
        for stored in store.iter_conversations(result.batch_id):
            from io import StringIO

            from rich.console import Console

            buffer = StringIO()
            view = Console(file=buffer, width=140, highlight=False, no_color=True, soft_wrap=True)
            view.print(f"{stored.spec.spec_id} trial {stored.trial}:")
            print_verdict(view, stored.verdict, stored.conversation.stop_reason, stored.conversation.error)
            lines.append(buffer.getvalue().rstrip("\n") + "\n")
    lines += summary_lines(summary)
    lines += _run_lines(result, report_line)
    return "\n".join(lines), report_error


def summary_lines(summary: Any) -> list[str]:
    """A batch's scored summary for a terminal (parley.core.reports.stats.BatchSummary): policy
    violations, counts, pass rate and pass^k, scores, the first failures. `parley run` prints it
    when a batch ends, `parley batches show` for any stored batch."""
    lines: list[str] = []
    if summary.policy_violations_total:
        lines.append(f"POLICY VIOLATIONS: {summary.policy_violations_total} (data the policy protects was changed)")
        for v in summary.policy_violations[:10]:
            lines.append(f"  - {v.spec_id} trial {v.trial} ({v.conversation_id[:12]}): {v.check}: {v.reason}")
    else:
        lines.append("Policy violations: none")
    if summary.not_applicable_checks:
        total = sum(c.checks for c in summary.not_applicable_checks)
        kinds = ", ".join(dict.fromkeys(c.kind for c in summary.not_applicable_checks))
        lines.append(
            f"Not applicable: {total} check{'s' if total != 1 else ''} ({kinds}) could not be decided; "
            f"{summary.passed_with_not_applicable} passed conversation(s) passed on the checks that applied (see the report)"
        )
    lines += counts_lines(summary)
    s = summary.score_statistics
    if s.count:
        lines.append(
            f"Scores: mean {s.mean:.2f}, median {s.median:.1f}, std {s.std:.2f}, min {s.min}, max {s.max} "
            f"({s.count} scored" + (f"; {summary.judge_errors} judge errors, unscored" if summary.judge_errors else "") + ")"
        )
    else:
        lines.append("Scores: none" + (f" ({summary.judge_errors} judge errors)" if summary.judge_errors else ""))
    if summary.judge_prompts:
        lines.append(judge_context_line(summary))
    if summary.failures_total:
        lines.append(f"Not passed (failed, broke or faulty): {summary.failures_total}")
        for f in summary.failures[:10]:
            reason = f.reasons[0] if f.reasons else "(no reason recorded)"
            lines.append(f"  - {f.spec_id} trial {f.trial} ({f.outcome}, {f.stop_reason}): {reason}")
        if summary.failures_total > 10:
            lines.append(f"  ... and {summary.failures_total - 10} more (see the report)")
    return lines


def judge_context_line(summary: Any) -> str:
    """How the LLM judge's prompts met its context: how many were condensed to fit, how many
    could not fit even condensed (judge errors)."""
    from parley.core.prompts import context_tokens

    models = summary.batch.options.models
    size = context_tokens(models.judge_context, models.endpoint_context.get("judge"))
    n = summary.judge_prompts
    line = (
        f"Judge context ({size} tokens): {n} judge prompt{'s' if n != 1 else ''}, {summary.judge_prompts_condensed} condensed to fit, "
        f"{summary.judge_prompts_too_long} could not fit even condensed"
    )
    if summary.judge_prompts_too_long:
        line += " (judge errors: no score; a larger --judge-context, if the model has one, lets them be judged)"
    return line


def _run_lines(result: Any, report_line: str) -> list[str]:
    lines: list[str] = []
    rate = result.ran / result.elapsed_s if result.elapsed_s > 0 else 0.0
    extras = []
    if result.rate_limited:
        extras.append(f"{result.rate_limited} rate limits (429) absorbed, concurrency went down to {result.lowest_limit}")
    if result.cache_hits or result.cache_misses:
        extras.append(f"cache: {result.cache_hits} replies replayed, {result.cache_misses} new")
    lines.append(
        f"Ran {result.ran} conversation{'s' if result.ran != 1 else ''} in {result.elapsed_s:.1f} s ({rate:.1f}/s); "
        f"batch {result.status}" + (f": {result.error}" if result.error else "") + ("; " + "; ".join(extras) if extras else "")
    )
    lines.append(report_line)
    return lines


# -- displays -----------------------------------------------------------------------------------


class _Display:
    def __init__(self, out: Any) -> None:
        self.out = out

    def handle(self, event: Any) -> None:  # pragma: no cover - overridden
        pass

    def note(self, text: str) -> None:
        self.out.print(text, highlight=False, markup=False)

    def close(self) -> None:
        pass


def _row_line(event: Any, done: int, total: int) -> str:
    width = len(str(total))
    if event.kind == "conversation_failed":
        return f"[{done:>{width}}/{total}] {event.stop_reason:<10} {event.spec_id} trial {event.trial}: {event.error}"
    row = event.row
    if event.outcome == "bot_error":
        return f"[{done:>{width}}/{total}] {'bot_error':<10} {event.spec_id} trial {event.trial}: {row.error}"
    score = "-" if event.score is None else str(event.score)
    return (
        f"[{done:>{width}}/{total}] {event.outcome:<10} {event.spec_id} trial {event.trial}: score {score}, "
        f"{row.turns} turn{'s' if row.turns != 1 else ''}, {event.stop_reason}, {row.duration_s:.2f} s"
    )


class _PlainDisplay(_Display):
    """One line per finished conversation: for logs and pipes."""

    def __init__(self, out: Any) -> None:
        super().__init__(out)
        self.done = 0
        self.total = 0

    def handle(self, event: Any) -> None:
        kind = event.kind
        if kind == "batch_started":
            self.total = event.total
            self.done = event.already_done
        elif kind in ("conversation_finished", "conversation_failed"):
            self.done += 1
            self.note(_row_line(event, self.done, self.total))
        elif kind == "concurrency_changed":
            pause = f"; launches paused {event.paused_for_s:.1f} s" if event.paused_for_s else ""
            self.note(f"concurrency {event.previous} -> {event.limit} ({event.reason}{pause})")
        elif kind == "batch_finished":
            self.note(
                f"batch {event.status}: {event.done} of {event.total} done, {event.passed} passed, "
                f"{event.failed} failed, {event.unverified} unverified, {event.user_faults} simulator faults, {event.errors} errors"
            )


class _BarDisplay(_Display):
    """A rich progress bar (✓ passed, ✗ the bot's failures, ? unverified or simulator faults,
    ! broken runs); every conversation that did not pass is listed above it as it ends."""

    def __init__(self, out: Any) -> None:
        super().__init__(out)
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(bar_width=24),
            MofNCompleteColumn(),
            TextColumn(
                "[green]✓{task.fields[passed]}[/] [red]✗{task.fields[failed]}[/] [cyan]?{task.fields[apart]}[/] "
                "[yellow]!{task.fields[errors]}[/]"
            ),
            TextColumn("{task.fields[rate]}"),
            TextColumn("eta {task.fields[eta]}"),
            TextColumn("limit {task.fields[limit]}"),
            console=out,
            transient=False,
        )
        self.task: Any = None
        self.done = 0
        self.total = 0

    def handle(self, event: Any) -> None:
        kind = event.kind
        if kind == "batch_started":
            self.total = event.total
            self.done = event.already_done
            self.progress.start()
            self.task = self.progress.add_task(
                "batch " + event.batch_id[:8],
                total=event.total,
                completed=event.already_done,
                passed=0,
                failed=0,
                apart=0,
                errors=0,
                rate="-",
                eta="-",
                limit=event.concurrency,
            )
        elif self.task is None:
            return
        elif kind == "progress":
            eta = "-" if event.eta_s is None else _duration(event.eta_s)
            self.progress.update(
                self.task,
                completed=event.done,
                passed=event.passed,
                failed=event.failed,
                apart=event.unverified + event.user_faults,
                errors=event.errors,
                rate=f"{event.rate_per_s:.1f}/s",
                eta=eta,
                limit=event.concurrency,
            )
        elif kind in ("conversation_finished", "conversation_failed"):
            self.done += 1
            if kind == "conversation_failed" or event.outcome != "passed":
                self.progress.console.print(_row_line(event, self.done, self.total), highlight=False, markup=False)
        elif kind == "concurrency_changed":
            self.progress.update(self.task, limit=event.limit)
            pause = f"; launches paused {event.paused_for_s:.1f} s" if event.paused_for_s else ""
            self.progress.console.print(f"concurrency {event.previous} -> {event.limit} ({event.reason}{pause})", highlight=False)
        elif kind == "batch_finished":
            self.close()

    def note(self, text: str) -> None:
        self.progress.console.print(text, highlight=False, markup=False)

    def close(self) -> None:
        self.progress.stop()


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


class _SingleDisplay(_Display):
    """One conversation streamed as it happens: customer lines, the bot's text, tool calls."""

    def __init__(self, out: Any) -> None:
        super().__init__(out)
        self.in_bot_line = False

    def _write(self, text: str) -> None:
        """Bot text as it streams, past rich (which would wrap it); a closed pipe is rich's case too."""
        if self.out.closed:
            return
        try:
            self.out.file.write(text)
            self.out.file.flush()
        except BrokenPipeError:
            self.out.on_broken_pipe()

    def _end_bot_line(self) -> None:
        if self.in_bot_line:
            self._write("\n")
            self.in_bot_line = False

    def handle(self, event: Any) -> None:
        kind = event.kind
        if kind == "conversation_started":
            self.out.print(f"── {event.spec_id} trial {event.trial} (conversation {event.conversation_id}) ──", highlight=False)
        elif kind == "transcript":
            self._step(event)
        elif kind in ("conversation_finished", "conversation_failed"):
            self._end_bot_line()
            ended = event.stop_reason + (f": {event.error}" if kind == "conversation_failed" else "")
            self.out.print(f"── ended: {ended} ──", highlight=False, markup=False)
        elif kind == "concurrency_changed":
            self._end_bot_line()
            self.note(f"(rate limited: waiting {event.paused_for_s:.1f} s)" if event.paused_for_s else f"({event.reason})")

    def _step(self, event: Any) -> None:
        if event.step == "user":
            self._end_bot_line()
            self.out.print(f"customer: {event.text}", highlight=False, markup=False)
        elif event.step == "tool_call" and event.tool is not None:
            self._end_bot_line()
            self.out.print(f"  {tool_line(event.tool)}", highlight=False, markup=False)
        elif event.step == "bot_text" and event.text and event.details.get("injected"):
            self._end_bot_line()
            self.out.print(f"bot (injected): {event.text}", highlight=False, markup=False)
        elif event.step == "bot_text" and event.text:
            if not self.in_bot_line:
                self._write("bot: ")
                self.in_bot_line = True
            self._write(event.text)
        elif event.step == "bot_done":
            self._end_bot_line()

    def note(self, text: str) -> None:
        self._end_bot_line()
        super().note(text)
