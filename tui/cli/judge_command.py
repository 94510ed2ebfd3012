"""`parley judge`: judges people can trust. People label conversations (in the app, or in a file
imported here), and each judge is measured against them per criterion.

    parley judge labels import FILE [--labeller NAME]     CSV or JSONL labels into the database
    parley judge labels export FILE [--labeller NAME]     the stored labels out (`-`: stdout)
    parley judge calibrate --labels SOURCE --judge MODEL [--judge MODEL2] [--jury A,B,C] [--cache]
    parley judge calibrations [ID] [--judge MODEL]        the stored calibrations, or one in full

`calibrate` judges the labelled conversations again (no bot or customer is called), measures the
judge per criterion and overall (agreement, Cohen's kappa with its 95% interval, the confusion
matrix, every disagreement, false passes first) and stores the calibration under the judge's
model, endpoint, prompt version and generation settings: later batches judged by the same
judge show its kappa beside each verdict (engine: parley.core.engine.calibration_run).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from parley.core.errors import ConfigError, ParleyError
from parley.tui.cli.command_io import db_option, open_store, write_atomically
from parley.tui.cli.run_command import jury_option
from parley.tui.terminal_text import visible

if TYPE_CHECKING:  # loaded when a command runs, not when `parley --help` starts
    from parley.core.records import Calibration, Label
    from parley.core.store import Store

F = TypeVar("F", bound=Callable[..., Any])
STORED = "stored"

EPILOG = """\b
Label files (CSV header or JSONL keys): conversation_id, kind (criterion | rubric | check),
criterion_id, criterion (the text, or a check's name), label (met | not_met | not_applicable,
or 1-3 for the rubric), labeller, note, labelled_at. Export some to see them filled in.
"""


@click.group(epilog=EPILOG)
def judge() -> None:
    """Label conversations by hand and measure judges against the labels."""


@judge.group()
def labels() -> None:
    """Import and export people's labels (CSV or JSONL)."""


def _labeller_option(command: F) -> F:
    return click.option("--labeller", metavar="NAME", help="Who labelled the rows that do not say (a file's `labeller` column wins).")(
        command
    )


def _import(store: Store, path: Path, labeller: str | None) -> list[Label]:
    """The file's labels, stored; ParleyError with every bad row located (a conversation the
    database does not hold too), nothing stored then."""
    from parley.core.specs import InvalidLabelFile, read_label_file
    from parley.core.store import missing_conversations, save_labels

    read = read_label_file(path, labeller=labeller)
    rows = read.rows
    if read.blank:
        click.echo(f"{read.blank} row(s) of {path} have no label yet: skipped", err=True)
    missing = set(missing_conversations(store, [r.label.conversation_id for r in rows]))
    if missing:
        raise InvalidLabelFile(
            [
                f"{path}:{r.line}: conversation_id: no stored conversation {r.label.conversation_id!r} in {store.path or 'the database'}"
                for r in rows
                if r.label.conversation_id in missing
            ]
        )
    labels = [r.label for r in rows]
    save_labels(store, labels)
    return labels


@labels.command("import", short_help="Store the labels of a CSV or JSONL file.")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path), metavar="FILE")
@_labeller_option
@db_option
def import_labels(path: Path, labeller: str | None, db_path: Path | None) -> None:
    """Store the labels of FILE (.csv or .jsonl), each replacing the same labeller's label on the same item.

    Every bad row is reported as FILE:LINE: column: what is wrong, and nothing is stored then.
    """
    with open_store(db_path) as store:
        imported = _import(store, path, labeller)
    conversations = len({label.conversation_id for label in imported})
    click.echo(f"imported {len(imported)} label(s) on {conversations} conversation(s) from {path}")


@labels.command("export", short_help="Write the stored labels (or blank rows to label) to a file.")
@click.argument("path", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path), metavar="FILE")
@click.option("--labeller", metavar="NAME", help="Only this labeller's labels.")
@click.option(
    "--blank",
    "blank_batch",
    metavar="BATCH",
    help="Instead: a row to fill in for every item a person can label on each conversation of BATCH "
    "(criteria, the rubric, expect: checks), the label left empty: label them elsewhere, then import the file.",
)
@click.option("--format", "fmt", type=click.Choice(["csv", "jsonl"]), help="Default: from FILE's suffix (csv for `-`).")
@db_option
def export_labels(path: Path, labeller: str | None, blank_batch: str | None, fmt: str | None, db_path: Path | None) -> None:
    """Write the stored labels to FILE (.csv or .jsonl; `-` for stdout), as `labels import` reads them."""
    from parley.core.specs import blank_record, label_format, write_labels
    from parley.core.store import all_labels

    form = fmt or ("csv" if str(path) == "-" else label_format(path))
    rows: list[Label | dict[str, str]]
    with open_store(db_path, read_only=True) as store:
        if blank_batch is not None:
            from parley.core.evaluation import label_items

            rows = [
                blank_record(stored.conversation.id, item.kind, item.item_id, item.text)
                for stored in store.iter_conversations(store.resolve_batch_ref(blank_batch))
                for item in label_items(stored.spec, stored.verdict)
            ]
        else:
            rows = list(all_labels(store, labeller=labeller))
    text = write_labels(rows, "jsonl" if form == "jsonl" else "csv")
    if str(path) == "-":  # to a terminal or a pipe: nothing in it acts on the terminal
        from parley.core.reports import inert_json

        click.echo(inert_json(text) if form == "jsonl" else visible(text), nl=False)
        return
    write_atomically(path, text)
    what = "row(s) to label" if blank_batch is not None else "label(s)"
    click.echo(f"wrote {len(rows)} {what} to {path}", err=True)


def _judge_names(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...]:
    from parley.core.evaluation import jurors_of
    from parley.core.models import parse_model_name

    names = tuple(v.strip() for v in value)
    try:
        for name in names:
            for judge_name in jurors_of(name) or [name]:
                parse_model_name(judge_name)
    except ConfigError as exc:
        raise click.BadParameter(str(exc)) from None
    return names


@judge.command(short_help="Measure judges against people's labels, per criterion; store the calibration.")
@click.option(
    "--labels",
    "source",
    required=True,
    metavar="SOURCE",
    help="A label file (.csv or .jsonl: imported, then its labels used), or `stored`: every label in the database.",
)
@click.option(
    "--judge",
    "judges",
    multiple=True,
    callback=_judge_names,
    metavar="MODEL",
    help="A judge to calibrate (repeatable: several are measured on the same labels, side by side).",
)
@jury_option
@click.option("--cache", is_flag=True, help="Keep the judges' replies in the database: calibrating again costs nothing.")
@click.option("--concurrency", "-c", type=click.IntRange(1, 256), default=4, show_default=True, help="Conversations judged at once.")
@_labeller_option
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@db_option
def calibrate(
    source: str,
    judges: tuple[str, ...],
    jury: str | None,
    cache: bool,
    concurrency: int,
    labeller: str | None,
    fmt: str,
    db_path: Path | None,
) -> None:
    """Measure each judge against people's labels, per criterion, and store the calibration.

    The labelled conversations are judged again by each judge (no bot or customer is called);
    for each criterion, the rubric and the criteria together it reports the labels, agreement,
    Cohen's kappa with a bootstrap 95% interval, the confusion matrix and every disagreement,
    false passes first. Two labellers on the same items give their own kappa: the ceiling.
    """
    from parley.core.engine import calibrate_judges
    from parley.core.models import aclose_clients
    from parley.core.settings import settings
    from parley.core.store import all_labels

    names = [*judges, *([jury] if jury else [])]
    if not names:
        raise click.UsageError("name a judge to calibrate: --judge MODEL (repeatable) or --jury A,B,C")
    timeout = settings().timeout_sec

    def progress(name: str, done: int, total: int) -> None:
        click.echo(f"[{done}/{total}] judged again by {name}", err=True)

    async def measure(store: Store, found: list[Label], label_source: str) -> list[Calibration]:
        try:
            return await calibrate_judges(
                store,
                names,
                found,
                source=label_source,
                cache=cache,
                concurrency=concurrency,
                timeout_s=timeout,
                on_judged=progress,
            )
        finally:
            await aclose_clients()

    with open_store(db_path) as store:
        if source == STORED:
            found = all_labels(store)
            label_source = "stored labels"
        else:
            path = Path(source)
            if not path.is_file():
                raise click.BadParameter(f"{source} is not a file (give a .csv or .jsonl label file, or `stored`)", param_hint="'--labels'")
            found = _import(store, path, labeller)
            label_source = str(path)
        if not found:
            raise ParleyError("no label stored yet: label conversations in the app, or import a file (`parley judge labels import`)")
        calibrations = asyncio.run(measure(store, found, label_source))
    from parley.core.reports import calibration_report, inert_json, judges_compared

    if fmt == "json":  # a quote of a bot's: its terminal-acting characters as JSON escapes
        click.echo(inert_json("[" + ",\n".join(c.model_dump_json(indent=2) for c in calibrations) + "]"))
        return
    for calibration in calibrations:
        click.echo(visible(calibration_report(calibration)))
    if len(calibrations) > 1:
        click.echo("Judges compared (kappa per item):")
        click.echo(visible(judges_compared(calibrations)))


@judge.command(short_help="List the stored calibrations, or show one in full.")
@click.argument("ref", required=False, metavar="[ID]")
@click.option("--judge", "judge_model", metavar="MODEL", help="Only the calibrations of this judge model.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@db_option
def calibrations(ref: str | None, judge_model: str | None, fmt: str, db_path: Path | None) -> None:
    """List the stored calibrations (newest first), or show calibration ID in full (an id, a prefix of 6+ characters, or `latest`)."""
    from parley.core.reports import calibration_report, calibrations_table, inert_json
    from parley.core.store import get_calibration, list_calibrations

    with open_store(db_path, read_only=True) as store:
        if ref is not None:
            one = get_calibration(store, ref)
            click.echo(inert_json(one.model_dump_json(indent=2)) if fmt == "json" else visible(calibration_report(one)), nl=fmt == "json")
            return
        found = list_calibrations(store, judge=judge_model)
    if fmt == "json":
        click.echo(inert_json("[" + ",\n".join(c.model_dump_json(indent=2) for c in found) + "]"))
        return
    sys.stdout.write(visible(calibrations_table(found)))
