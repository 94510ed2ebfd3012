"""`parley compare BASE NEW`: what got better, what broke, and whether it is more than noise.

    parley compare latest~1 latest                     markdown on stdout
    parley compare BASE NEW --format json --output cmp.json
    parley compare BASE NEW --output cmp.html          one self-contained page to share
    parley compare BASELINE latest --fail-on-regression   a CI gate: exit 1 on a regression beyond noise
    parley compare --group latest                      a group of batches side by side (several --bot)

Batch ids may be unique prefixes (6+ characters), `latest` or `latest~N`. The comparison itself
is parley.core.reports.compare; the markdown, parley.core.reports.compare_markdown; the HTML,
parley.core.reports.compare_html.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from parley.tui.cli.command_io import db_option, open_store, write_atomically
from parley.tui.cli.finite_numbers import FiniteFloatRange
from parley.tui.terminal_text import visible

EXIT_OK = 0
EXIT_REGRESSED = 1

EPILOG = """\b
Exit codes:
  0  compared (with --fail-on-regression: no spec regressed beyond noise)
  1  with --fail-on-regression: some spec regressed beyond noise; also an unknown batch
  2  usage error
"""


@click.command(epilog=EPILOG)
@click.argument("base_ref", metavar="BASE", required=False)
@click.argument("new_ref", metavar="NEW", required=False)
@click.option(
    "--group",
    "group_ref",
    metavar="GROUP",
    help="Compare a group of batches side by side instead (`parley run PATHS --bot A --bot B` makes one): its id, "
    "one of its batches, or latest. Each bot's pass rate with its interval, each spec's outcomes in a row, and every "
    "two bots compared with the paired test.",
)
@click.option(
    "--format",
    "-f",
    "fmt",
    type=click.Choice(["md", "html", "json"]),
    default=None,
    help="md (default; readable), html (one self-contained page to share) or json (every change). Default: from --output's suffix.",
)
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE", help="Write to FILE instead of stdout.")
@click.option(
    "--fail-on-regression",
    is_flag=True,
    help="Exit 1 when some spec, or some attack strategy of a red-team batch, regressed beyond noise (see --alpha): "
    "a gate for CI against a stored baseline.",
)
@click.option(
    "--alpha",
    type=FiniteFloatRange(0, 1, min_open=True),
    default=0.05,
    show_default=True,
    help="Significance level of the paired test. A regression is beyond noise when the exact McNemar test says "
    "the new batch is worse at this level, or the spec's own trials do; --alpha 1 counts every regression "
    "(a deterministic bot, where nothing is noise).",
)
@db_option
def compare(
    base_ref: str | None,
    new_ref: str | None,
    group_ref: str | None,
    fmt: str | None,
    output: Path | None,
    fail_on_regression: bool,
    alpha: float,
    db_path: Path | None,
) -> None:
    """Compare batch NEW with batch BASE, conversation by conversation.

    Conversations are matched by spec id and trial. Lists regressions (passed -> failed or
    bot_error), fixes, new and missing specs, other outcome changes, score and check changes;
    the pass rate and pass^k of both with their intervals; whether the change is beyond noise
    (exact McNemar test); tokens, cost and latency side by side.
    """
    from parley.core.reports import compare_batches, render_comparison, verdict_line

    if fmt is None:
        suffix = output.suffix.lower() if output is not None else ""
        fmt = {".json": "json", ".html": "html", ".htm": "html"}.get(suffix, "md")
    if group_ref is not None:
        if base_ref is not None or fail_on_regression:
            raise click.UsageError("--group compares the batches of a group: give no BASE NEW, and no --fail-on-regression")
        return _compare_group(group_ref, fmt, output, alpha, db_path)
    if base_ref is None or new_ref is None:
        raise click.UsageError("give BASE and NEW (two batches), or --group GROUP")
    with open_store(db_path, read_only=True) as store:
        comparison = compare_batches(store, base_ref, new_ref, alpha=alpha)
    if fmt == "json":
        text = comparison.model_dump_json(indent=2) + "\n"
    elif fmt == "html":
        from parley.core.reports import render_comparison_html  # its charts and page load for HTML only

        text = render_comparison_html(comparison)
    else:
        text = render_comparison(comparison)
    _emit(text, fmt, output)
    click.echo(visible(verdict_line(comparison)), err=True)
    if comparison.regressed_strategies:
        click.echo(f"attack strategies regressed beyond noise: {', '.join(comparison.regressed_strategies)}", err=True)
    regressed = fail_on_regression and bool(comparison.regressed_beyond_noise or comparison.regressed_strategies)
    sys.exit(EXIT_REGRESSED if regressed else EXIT_OK)


def _compare_group(group_ref: str, fmt: str, output: Path | None, alpha: float, db_path: Path | None) -> None:
    """A group side by side, in `fmt`, on stdout or to `output` (exit 0)."""
    from parley.core.reports import compare_group, group_lines, render_group_html, render_group_markdown

    with open_store(db_path, read_only=True) as store:
        comparison = compare_group(store, group_ref, alpha=alpha)
    if fmt == "json":
        text = comparison.model_dump_json(indent=2) + "\n"
    elif fmt == "html":
        text = render_group_html(comparison)
    else:
        text = render_group_markdown(comparison)
    _emit(text, fmt, output)
    if output is not None:
        click.echo(visible("\n".join(group_lines(comparison))), err=True)


def _emit(text: str, fmt: str, output: Path | None) -> None:
    """The report on stdout (the markdown, and JSON on a terminal, with control characters
    spelled out), or written to `output`."""
    if output is None:
        sys.stdout.write(visible(text) if fmt == "md" or sys.stdout.isatty() else text)
        sys.stdout.flush()
    else:
        write_atomically(output, text)
        click.echo(f"wrote {output} ({fmt})", err=True)
