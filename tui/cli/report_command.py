"""`parley report [BATCH_ID|latest]`: a stored batch as markdown, HTML, JSON, CSV, NDJSON, JUnit
XML, an inspect_ai eval log, or conversation files in Sensei's format.

Markdown is the readable report (policy violations first, pass rate and pass^k, scores, per
profile, tokens and cost, stop reasons, failures with reasons); HTML is one self-contained page
to share, with charts and every conversation (parley.core.reports.html_report); JSON is one document with the
summary and every conversation; CSV and NDJSON have one conversation per row / line; JUnit XML
has one testcase per conversation, for CI systems (parley.core.reports.junit). All of them are
read from the store a page at a time. `inspect` writes an inspect_ai eval log
(`.eval`) into the directory --output names, for `inspect view` (parley.core.interop.inspect.export; needs
the optional extra `parley[inspect]`). `sensei` writes one file per conversation into the
(new or empty) folder --output names, in the format Sensei saves (parley.core.reports.sensei_export),
for Sensei's tools and `parley rules check`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO, cast

import click

from parley.tui.cli.command_io import db_option, open_store
from parley.tui.terminal_text import VisibleWriter, visible

if TYPE_CHECKING:
    from parley.core.store import Store

FORMATS = ("md", "html", "json", "csv", "ndjson", "junit", "inspect", "sensei")


def resolve_batch(store: Store, ref: str | None) -> str:
    """A batch id from an id, a unique prefix of 6+ characters, `latest` (the default) or
    `latest~N`."""
    return store.resolve_batch_ref(ref or "latest")


def write_report(store: Store, batch_id: str, fmt: str, out: TextIO) -> int:
    """Write batch `batch_id` to `out` in `fmt`; returns the conversations written (md: done)."""
    if fmt == "md":
        from parley.core.reports import render_markdown, summarize, without_nul

        summary = summarize(store, batch_id)
        out.write(without_nul(render_markdown(summary)))
        return summary.done
    if fmt == "html":
        from parley.core.reports import write_html

        return write_html(store, batch_id, out)
    if fmt == "junit":
        from parley.core.reports import write_junit

        return write_junit(store, batch_id, out)
    from parley.core.reports import export_csv, export_ndjson, write_json

    if fmt == "json":
        return write_json(store, batch_id, out)
    if fmt == "ndjson":
        return export_ndjson(store, batch_id, out)
    return export_csv(store, batch_id, out)


def report_to_file(store: Store, batch_id: str, path: Path, fmt: str = "md") -> int:
    """Write the report to `path` through a temporary file, so a reader never sees half of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    with partial.open("w", encoding="utf-8", newline="") as fh:
        n = write_report(store, batch_id, fmt, fh)
    partial.replace(path)
    return n


@click.command()
@click.argument("batch_ref", required=False, default="latest", metavar="[BATCH_ID|latest]")
@click.option(
    "--format",
    "-f",
    "fmt",
    type=click.Choice(FORMATS),
    default=None,
    help="md (default; the readable report), html (one self-contained page to share: charts, every conversation), "
    "json (summary and every conversation), csv or ndjson "
    "(one conversation per row / line), junit (JUnit XML for CI: a testcase per conversation), inspect "
    "(an inspect_ai eval log written into --output DIR, for `inspect view`), sensei (one file per conversation "
    "in Sensei's format, written into a new or empty folder --output DIR, for Sensei's tools and `parley rules "
    "check`). Default: from --output's suffix (.html: html, .xml: junit), else md.",
)
@click.option(
    "--output",
    "-o",
    type=click.Path(path_type=Path),
    metavar="FILE|DIR",
    help="Write to FILE instead of stdout; with --format inspect, the directory the log goes into; with --format "
    "sensei, the folder the conversation files go into.",
)
@db_option
def report(batch_ref: str, fmt: str | None, output: Path | None, db_path: Path | None) -> None:
    """Write a batch's report (markdown, HTML, JSON, CSV, NDJSON, JUnit or an inspect_ai eval log).

    BATCH_ID may be a unique prefix of 6+ characters; `latest` (the default) is the batch
    started last. An unknown batch is one line on stderr and exit code 1.
    """
    if fmt == "inspect":
        export_inspect(batch_ref, output, db_path)
        return
    if fmt == "sensei":
        export_sensei_files(batch_ref, output, db_path)
        return
    if output is not None and output.is_dir():
        raise click.BadParameter(f"{output} is a directory; give a file to write the report to", param_hint="--output")
    if fmt is None:
        suffix = output.suffix.lower().lstrip(".") if output is not None else ""
        fmt = {
            "md": "md",
            "markdown": "md",
            "html": "html",
            "htm": "html",
            "json": "json",
            "csv": "csv",
            "ndjson": "ndjson",
            "jsonl": "ndjson",
            "xml": "junit",
        }.get(suffix, "md")
    with open_store(db_path, read_only=True) as store:
        batch_id = resolve_batch(store, batch_ref)
        if output is None:  # the markdown, and any format on a terminal, with control characters spelled out
            shown = VisibleWriter(sys.stdout) if fmt == "md" or sys.stdout.isatty() else sys.stdout
            write_report(store, batch_id, fmt, cast(TextIO, shown))  # the writers call write() and flush() only
            sys.stdout.flush()
            return
        n = report_to_file(store, batch_id, output, fmt)
    click.echo(f"wrote {output} ({fmt}, batch {batch_id}, {n} conversation{'s' if n != 1 else ''})", err=True)


def export_inspect(batch_ref: str, output: Path | None, db_path: Path | None) -> None:
    """`--format inspect`: the batch as an inspect eval log in directory `output`; prints the
    file's path on stdout."""
    if output is None:
        raise click.UsageError("--format inspect writes an eval log into a directory: give it with --output DIR")
    from parley.core.interop.inspect import export_batch, require_inspect

    require_inspect()  # before touching the store: the install hint is all there is to say
    with open_store(db_path, read_only=True) as store:
        batch_id = resolve_batch(store, batch_ref)
        path, n = export_batch(store, batch_id, output)
    click.echo(str(path))
    click.echo(f"wrote {path} (inspect eval log, batch {batch_id}, {n} sample{'s' if n != 1 else ''})", err=True)


def export_sensei_files(batch_ref: str, output: Path | None, db_path: Path | None) -> None:
    """`--format sensei`: the batch's conversations as Sensei's files in folder `output`."""
    if output is None:
        raise click.UsageError("--format sensei writes one file per conversation into a folder: give it with --output DIR")
    from parley.core.reports import export_sensei

    with open_store(db_path, read_only=True) as store:
        batch_id = resolve_batch(store, batch_ref)
        folder, n = export_sensei(store, batch_id, output)  # a ParleyError is one line and exit 1 (parley.tui.cli.main)
    click.echo(visible(f"wrote {folder} (sensei, batch {batch_id}, {n} conversation file{'s' if n != 1 else ''})"), err=True)
