"""`parley run`'s batch, from the request to the exit code: plan it (or only estimate it, with
--dry-run), run it on one event loop with a display subscribed to its events, stop it on Ctrl-C,
SIGTERM or SIGHUP (a grace period, then a second signal cancels what is in flight; a hung-up
terminal is written to no more), write the markdown
report and print the scored summary, and turn how it ended into `parley run`'s exit code
(parley.tui.cli.run_modes)."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import click

from parley.core.errors import ParleyError
from parley.core.reports import without_nul
from parley.tui.cli.batch_summary import run_lines, summary_lines
from parley.tui.cli.closed_pipe import EXIT_CLOSED_PIPE, silence_terminal
from parley.tui.cli.command_io import console, open_store
from parley.tui.cli.conversation_view import print_verdict
from parley.tui.cli.run_displays import BarDisplay, Display, PlainDisplay, SingleDisplay
from parley.tui.cli.run_modes import EXIT_BUDGET, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, RunRequest, rate_gate
from parley.tui.terminal_text import for_rich, visible

if TYPE_CHECKING:
    from parley.core.engine import BatchResult, BatchRunner, PreparedBatch
    from parley.core.engine.distributed import Placement, ShardedRunner, WorkerPool
    from parley.core.store import Store


def run_and_exit(
    db_path: Path | None,
    request: RunRequest,
    *,
    dry_run: bool,
    concurrency: int | None,
    report_path: Path | None,
    grace_s: float,
    gate: tuple[float | None, bool],
    strict: bool = False,
    placement: Placement | None = None,
) -> None:
    """Run the request (or only plan it, with --dry-run) and exit with its code."""
    store = open_store(db_path)
    if threading.current_thread() is threading.main_thread():  # signals reach the main thread only
        signal.signal(signal.SIGTERM, _terminated)  # as Ctrl-C wherever the run is (the batch's own loop handles it while it runs)
        signal.signal(signal.SIGHUP, _hung_up)
    try:
        from parley.tui.cli.run_group import group_of, run_group

        stored_group = group_of(store, request)
        if request.group is not None or stored_group:
            code = asyncio.run(
                run_group(
                    store,
                    request,
                    stored_group,
                    dry_run=dry_run,
                    concurrency=concurrency,
                    grace_s=grace_s,
                    gate=gate,
                    strict=strict,
                    placement=placement,
                )
            )
        elif dry_run:
            from parley.tui.cli.dry_run_view import print_dry_run

            code = asyncio.run(print_dry_run(store, request))
        else:
            code = asyncio.run(
                run_batch(
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


def _terminated(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _hung_up(signum: int, frame: object) -> None:
    silence_terminal()
    raise KeyboardInterrupt


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


async def run_batch(
    store: Store,
    request: RunRequest,
    *,
    concurrency: int | None,
    report_path: Path | None,
    grace_s: float,
    gate: tuple[float | None, bool] = (None, False),
    strict: bool = False,
    placement: Placement | None = None,
    prepared: PreparedBatch | None = None,
) -> int:
    """Run the request's batch (`prepared`: planned already, as a group's members are) to its
    exit code, printing its progress and summary and writing its report."""
    from parley.core.bots.connectors import aclose_connectors
    from parley.core.engine import BatchRunner
    from parley.core.models import aclose_clients

    single = request.single
    pool: WorkerPool | None = None
    sharded: ShardedRunner | None = None
    try:
        if prepared is None:
            prepared, code = await request.prepare_or_exit(store)
            if prepared is None:
                return code
        for line in _fewer_notes(prepared.notes):
            click.echo(visible(line), err=True)
        for warning in prepared.warnings:
            click.echo(visible(f"warning: {warning}"), err=True)
        for error in prepared.left_out:
            click.echo(visible(error.render()), err=True)
        if prepared.left_out:
            files = len({e.file for e in prepared.left_out})
            click.echo(f"left out: {files} file{'s' if files != 1 else ''} with problems (above); the others run", err=True)

        if placement is not None:
            from parley.core.engine.distributed import ShardedRunner, WorkerPool

            pool = WorkerPool(placement)
            try:
                sharded = ShardedRunner(store, prepared, pool=pool, concurrency=concurrency, grace_s=grace_s)
            except ParleyError as exc:  # a resumed batch that caches replies
                click.echo(visible(f"error: {exc}"), err=True)
                return EXIT_FAILED
            runner: BatchRunner = sharded
        else:
            runner = BatchRunner(store, prepared, concurrency=concurrency, grace_s=grace_s, stream_transcripts=single is not None)
        out = console()
        out.on_closed = runner.cancel  # stdout closed (`| head -3`): stop the batch as a second Ctrl-C would
        display: Display
        if single is not None:
            display = SingleDisplay(out)
        elif out.is_terminal:
            display = BarDisplay(out)
        else:
            display = PlainDisplay(out)
        runner.subscribe(display.handle)
        verb = "resumed" if prepared.resumed else "started"
        if not prepared.resumed and prepared.batch.parent_id:
            options = prepared.batch.options
            made = "re-score of" if options.rescore_of else "re-run of" if options.rerun else "replay of"
            verb += f" ({made} {prepared.batch.parent_id})"
        db = store.path or ":memory:"
        todo = prepared.remaining
        extra = f", {prepared.already_done} already done" if prepared.resumed else ""
        doing = "to judge again" if prepared.batch.options.rescore_of else "to run"
        out.print(
            f"batch {prepared.id} {verb}: {prepared.total} conversation{'s' if prepared.total != 1 else ''}"
            f"{extra}, {todo} {doing}, concurrency {concurrency or prepared.batch.options.concurrency}"
            f"{' in all' if pool is not None else ''} (db {for_rich(db)})",
            highlight=False,
        )

        loop = asyncio.get_running_loop()
        presses = 0

        def interrupted(hung_up: bool = False) -> None:
            nonlocal presses
            presses += 1
            if hung_up:  # the terminal is gone: a closed window or ssh session stops the run as SIGTERM does
                silence_terminal()
            if presses == 1:
                runner.stop()
                display.note(
                    f"stopping: no new conversations; {runner.in_flight} in flight get {grace_s:g} s to finish "
                    "(Ctrl-C again to cancel them now)"
                )
            else:
                runner.cancel()
                display.note("cancelling the conversations in flight (they are saved as cancelled)")

        handled: list[signal.Signals] = []
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            try:
                loop.add_signal_handler(sig, interrupted, sig == signal.SIGHUP)
                handled.append(sig)
            except (NotImplementedError, RuntimeError):  # not the main thread, or Windows
                pass
        if placement is not None:
            display.note(f"starting {placement.describe()}; this process stores the results")
        try:
            result = await runner.run()
        except ParleyError as exc:  # the workers did not start: the batch is recorded failed
            display.close()
            click.echo(visible(f"error: {exc}"), err=True)
            return EXIT_FAILED
        finally:
            for sig in handled:
                loop.remove_signal_handler(sig)
            if signal.SIGTERM in handled:
                signal.signal(signal.SIGTERM, _terminated)
                signal.signal(signal.SIGHUP, _hung_up)
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
    out.print(visible(summary_text), highlight=False, markup=False)
    if sharded is not None:
        out.print(sharded.workers_line(), highlight=False, markup=False)
    if report_error is not None:
        click.echo(visible(f"error: {report_error}"), err=True)
        return EXIT_FAILED
    if result.status == "cancelled":
        out.print(f"continue it with: parley run --resume {result.batch_id}", highlight=False)
        return EXIT_INTERRUPTED
    if result.status == "stopped_budget":
        out.print(f"stopped at the budget; continue it with: parley run --resume {result.batch_id} --budget USD", highlight=False)
        return EXIT_BUDGET
    threshold, lower = gate
    if threshold is not None:
        from parley.core.reports import summarize

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


def default_report_path(store: Store, batch_id: str) -> Path:
    base = store.path.parent if store.path is not None else Path("sessions")
    return base / "reports" / f"{batch_id}.md"


def _summary_and_report(store: Store, result: BatchResult, report_file: Path, single: bool) -> tuple[str, str | None]:
    """Write the markdown report; return the scored summary for the terminal and, if the report
    could not be written, why."""
    from parley.core.reports import render_markdown, summarize

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
            view = Console(file=buffer, width=140, highlight=False, no_color=True, soft_wrap=True, emoji=False)
            view.print(f"{for_rich(stored.spec.spec_id)} trial {stored.trial}:")
            conversation = stored.conversation
            print_verdict(view, stored.verdict, conversation.stop_reason, conversation.error, conversation.metadata)
            lines.append(buffer.getvalue().rstrip("\n") + "\n")
    lines += summary_lines(summary)
    lines += run_lines(result, report_line)
    return "\n".join(lines), report_error
