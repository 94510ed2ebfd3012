"""`parley summarise FILE`: a results file you already have, summarised, with the simulation
service's options (its `summarise_results.py`, seed 003) and their meanings:

    parley summarise results.ndjson                                 the summary on the terminal
    parley summarise results.csv --histogram score_dist.png         and the score distribution as a PNG
    parley summarise results.ndjson --format json --output summary.json   saved as JSON
    parley summarise results.json --format csv                      as CSV on stdout (one field a row)

FILE is any results file parley exports (`parley report --format json|csv|ndjson`, the service's
`GET /batches/ID/results`) or one the simulation service wrote (parley.core.reports.results_file
reads them). The summary is the one every surface shows of a batch
(parley.core.evaluation.BatchSummary), under the same words (`parley batches show`'s lines).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from parley.tui.cli.command_io import write_atomically
from parley.tui.terminal_text import visible

if TYPE_CHECKING:
    from parley.core.reports import FileSummary

FORMATS = ("csv", "json")
PICTURES = {".png": "png", ".svg": "svg"}


def summary_text(summary: FileSummary, fmt: str) -> str:
    """The summary in `fmt`: json (the summary's fields, the simulation service's names beside them) or csv
    (`field,value` rows, nested fields named with dots)."""
    if fmt == "json":
        return summary.model_dump_json(indent=2) + "\n"
    from parley.core.reports import csv_line, summary_cells

    return csv_line(["field", "value"]) + "".join(csv_line(cells) for cells in summary_cells(summary))


def summary_lines(summary: FileSummary) -> list[str]:
    """What the terminal shows: where the numbers come from, then the batch's summary lines."""
    from parley.core.reports import SERVICE_RULE
    from parley.tui.cli.batch_summary import counts_lines, figures_lines

    shape = "parley's export" if summary.shape == "parley" else "the simulation service's result fields"
    batch = f", batch {summary.batch_id}" if summary.batch_id else ""
    lines = [f"{summary.file}: {summary.format.upper()}, {shape}{batch}", *counts_lines(summary), *figures_lines(summary)]
    if summary.shape == "003":
        lines.append(f"Outcomes: {SERVICE_RULE}.")
    if len(summary.pass_k) > 1 and not summary.seeded_by_batch:
        lines.append("pass^k's intervals are seeded with 0: this file does not hold its batch's seed (parley's JSON report does).")
    return lines


@click.command()
@click.argument("results_file", type=click.Path(exists=True, dir_okay=False, path_type=Path), metavar="FILE")
@click.option(
    "--format",
    "-f",
    "fmt",
    type=click.Choice(FORMATS),
    default=None,
    help="Write the summary as csv or json (to --output, else to stdout instead of the lines for people).",
)
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Save the summary to FILE, in --format (default: from FILE's suffix, .csv or else json).",
)
@click.option(
    "--histogram",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE.png",
    help="Draw the score distribution (1, 2, 3, no score) into FILE.png (or .svg).",
)
@click.option("--quiet", "-q", is_flag=True, help="Print nothing on the terminal but errors.")
def summarise(results_file: Path, fmt: str | None, output: Path | None, histogram: Path | None, quiet: bool) -> None:
    """Summarise a results file: outcomes, pass rate, scores, turns, duration, cost.

    FILE is a JSON, CSV or NDJSON results file: parley's export or the batch simulation service's.
    A file of another shape is one line saying what is missing (exit 1).
    """
    picture = PICTURES.get(histogram.suffix.lower()) if histogram is not None else None
    if histogram is not None and picture is None:
        raise click.BadParameter(f"{histogram.name}: the histogram is a .png (or .svg) file", param_hint="--histogram")
    from parley.core.reports import score_histogram, summarise_file

    summary = summarise_file(results_file)
    say = (lambda text: None) if quiet else (lambda text: click.echo(visible(text), err=True))
    if output is not None:
        saved_as = fmt or ("csv" if output.suffix.lower() == ".csv" else "json")
        write_atomically(output, summary_text(summary, saved_as))
        say(f"wrote {output} (the summary as {saved_as})")
    if fmt is not None and output is None:
        text = summary_text(summary, fmt)
        sys.stdout.write(visible(text) if sys.stdout.isatty() else text)
    elif fmt is None and not quiet:  # a --format asked for is the whole answer, here or in --output
        click.echo(visible("\n".join(summary_lines(summary))))
    if histogram is not None:
        title = f"batch {summary.batch_id[:12]}" if summary.batch_id else results_file.name
        write_atomically(histogram, score_histogram(summary, title, picture or "png"))  # type: ignore[arg-type]
        say(f"wrote {histogram} (the score distribution of {summary.done} conversations)")
