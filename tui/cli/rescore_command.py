"""`parley rescore BATCH`: judge a stored batch's conversations again into a new batch.

No bot or simulated customer is called: each stored conversation is evaluated again, with the
expectations stored with its spec (or, with `--criteria-from`, the `expect:` blocks re-read from
those files, matched by spec id), the Sensei rule files of `--rules` (else the batch's own) and
the judge given (else the batch's). The new batch names
BATCH as its parent, so `parley compare BATCH latest` shows what the new judging changed. It
prints, exits and resumes as `parley run` does (the engine is parley.core.engine.rescore).
"""

from __future__ import annotations

from pathlib import Path

import click

from parley.core.errors import ConfigError
from parley.core.option_declarations import option
from parley.tui.cli.batch_options import click_option
from parley.tui.cli.command_io import db_option
from parley.tui.cli.run_batch import run_and_exit
from parley.tui.cli.run_command import judge_or_jury, jury_option
from parley.tui.cli.run_modes import RunRequest

EPILOG = """\b
Exit codes: as `parley run`'s: 0 nothing failed, 1 a conversation failed or could not be
judged, or a pair or batch rule of --rules failed (or the input was invalid: an unknown batch,
--criteria-from or rule files with problems), 2 usage error, 130 interrupted (continue it with `parley run --resume`).
\b
With --cache, the judge's replies are kept in the database: re-scoring again with the same
judge and expectations makes no model call.
"""


def _judge_name(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    from parley.core.evaluation import jurors_of
    from parley.core.models import parse_model_name

    if value is None:
        return None
    try:
        for judge in jurors_of(value.strip()) or [value.strip()]:  # a jury (jury:A,B,C) is a judge too
            parse_model_name(judge)
    except ConfigError as exc:
        raise click.BadParameter(str(exc)) from None
    return value.strip()


@click.command(epilog=EPILOG)
@click.argument("batch_ref", metavar="BATCH", default="latest")
@click.option(
    "--judge",
    "judge_model",
    callback=_judge_name,
    metavar="MODEL",
    help="The judge (default: BATCH's). An LLM decides criteria in words and scores; offline, they are not run.",
)
@click.option(
    "--criteria-from",
    "criteria_from",
    multiple=True,
    type=click.Path(exists=True, path_type=Path),
    metavar="PROFILES",
    help="Profiles, playbooks or scenario files (or folders) whose `expect:` blocks replace the stored ones, "
    "matched by spec id (repeatable). Default: the expectations stored with BATCH's specs.",
)
@click.option(
    "--rules",
    "rules_path",
    type=click.Path(exists=True, path_type=Path),
    metavar="DIR",
    help="Sensei rule files (a file, or a folder searched for .yaml/.yml) to decide the conversations with, as "
    "`parley run --rules` does. Default: the rules BATCH was run with, if any.",
)
@click.option("--cache", is_flag=True, help="Keep the judge's replies in the database and replay identical requests.")
@click.option(
    "--concurrency",
    "-c",
    type=click.IntRange(1, 10_000),
    metavar="N",
    help="Conversations judged at once (default: BATCH's concurrency).",
)
@click.option(
    "--report",
    "report_path",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Where to write the markdown report (default: reports/BATCH_ID.md beside the database).",
)
@click.option("--strict", is_flag=True, help="Unverified conversations and simulator faults fail the exit code too.")
@jury_option
@click_option(option("min_kappa"), default=None, help=option("min_kappa").help + " Default: BATCH's.")
@click.option(
    "--require-calibrated/--count-uncalibrated",
    "require_calibrated",
    default=None,
    help=option("require_calibrated").help + " Default: BATCH's.",
)
@db_option
@click.pass_context
def rescore(
    ctx: click.Context,
    batch_ref: str,
    judge_model: str | None,
    criteria_from: tuple[Path, ...],
    rules_path: Path | None,
    cache: bool,
    concurrency: int | None,
    report_path: Path | None,
    strict: bool,
    jury: str | None,
    min_kappa: float | None,
    require_calibrated: bool | None,
    db_path: Path | None,
) -> None:
    """Judge a stored batch again, into a new batch.

    BATCH's stored conversations are evaluated again, calling no bot and no customer. BATCH is an id, a unique prefix of 6+ characters, `latest` (the default) or `latest~N`.
    """
    updates: dict[str, object] = {"cache": cache}
    if rules_path is not None:
        updates["rules"] = str(rules_path)
    if concurrency is not None:
        updates["concurrency"] = concurrency
    if min_kappa is not None:
        updates["min_kappa"] = min_kappa
    if require_calibrated is not None:
        updates["require_calibrated"] = require_calibrated
    judge_model = judge_or_jury(ctx, judge_model, jury)
    request = RunRequest(
        mode="rescore",
        ref=batch_ref,
        models={"judge": judge_model} if judge_model else {},
        updates=updates,
        criteria_from=list(criteria_from),
    )
    run_and_exit(db_path, request, dry_run=False, concurrency=None, report_path=report_path, grace_s=5.0, gate=(None, False), strict=strict)
