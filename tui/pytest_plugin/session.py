"""The pytest session's one stored batch (parley.core.library.BatchSession, opened at first use).

Without xdist, every collected parley item is submitted when the test loop starts, so the
conversations run concurrently under the batch's one adaptive limit while pytest reports them one
by one, in order, as each finishes; the `parley` fixture's conversations join the same batch. So
a CI run is one batch, and `parley compare latest~1 latest` compares two runs. Under pytest-xdist
each worker cannot know its share in advance: it submits each item as it comes, stores a batch
of its own, and hands its id to the controller, whose summary names every batch.

With `--parley-rules`, the session's batch is open-ended: which conversations it holds is known
only when pytest is done with them. So its pair and batch rules are decided when the session
ends (pytest_sessionfinish), as the batch is closed, over every conversation it stored, exactly
as `parley run --rules` decides them once its batch is in (and stored the same way); pytest's
summary shows them, with the `yields` of each failure, and a failed one fails the session
(exit code 1), as it fails `parley run`. Under xdist each worker's batch decides its own, over the
worker's share (pairs across two workers are never formed); the controller shows each worker's
and fails the session when any failed. A session pytest stopped early (-x, Ctrl-C) is cancelled
and decides none, as a stopped `parley run` does.

A bot under test may leave a thread running that is no daemon (one it started and never ended):
Python would wait for it for ever once pytest is done. When pytest runs as its own process
(`pytest ...`, `python -m pytest ...`), such a thread is named and the process ends with pytest's
exit code without waiting for it (parley.core.bots.exit_at_shutdown); a pytest run from code
(`pytest.main(...)`) leaves its caller's process alone.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest

from parley.tui.pytest_plugin.items import ParleyItem
from parley.tui.pytest_plugin.options import read_options

__all__ = ["batch_session", "end_session", "result_of", "submit_collected", "summary_lines", "worker_batch"]

_SESSION = pytest.StashKey[Any]()
_START_ERROR = pytest.StashKey[str]()
_ENDED = pytest.StashKey[dict[str, Any]]()
_WORKERS = pytest.StashKey[list[dict[str, Any]]]()
_EXIT_STATUS = pytest.StashKey[list[int]]()
WORKER_KEY = "parley_batch"
"""Where a worker's batch travels to the controller (xdist's workeroutput)."""


def batch_session(config: pytest.Config) -> Any:
    """This process's BatchSession, made at first use from the `--parley-*` options."""
    if _SESSION not in config.stash:
        from parley.core.library import BatchSession

        _exit_past_leftover_threads(config)
        config.stash[_SESSION] = BatchSession(**read_options(config).session_keywords())
    return config.stash[_SESSION]


def _exit_past_leftover_threads(config: pytest.Config) -> None:
    """When pytest is this process (see the module), end it at shutdown past the threads a bot left."""
    if list(config.invocation_params.args) != sys.argv[1:]:
        return  # pytest.main(...) from someone's code: their process, not ours to end
    import threading

    from parley.core.bots import exit_at_shutdown

    status = config.stash[_EXIT_STATUS] = [0]
    exit_at_shutdown(lambda: status[0], say=lambda line: sys.stderr.write(f"parley: {line}\n"), besides=threading.enumerate())


def _started(config: pytest.Config) -> Any | None:
    """The session, started (its batch stored); None, with the reason kept, when it cannot be."""
    from parley.core.errors import ParleyError

    if _START_ERROR in config.stash:
        return None
    session = batch_session(config)
    try:
        session.start()
    except ParleyError as exc:  # a missing key, an unreachable endpoint, a database refused: every item says it
        config.stash[_START_ERROR] = f"parley could not start this session's batch: {exc}"
        return None
    return session


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def submit_collected(session: pytest.Session) -> None:
    """Submit every collected parley item, in order, unless this is an xdist worker (which submits
    each as it comes) or the loop will not run (--collect-only, collection errors)."""
    config = session.config
    if config.option.collectonly or (session.testsfailed and not config.option.continue_on_collection_errors):
        return
    items = [item for item in session.items if isinstance(item, ParleyItem)]
    if not items or _is_worker(config):
        return
    started = _started(config)
    if started is None:
        return
    for item in items:
        item.future = started.submit(item.spec, item.trial)


def result_of(item: ParleyItem) -> Any:
    """The item's stored conversation, waited for (submitted now if it was not yet)."""
    if item.future is None:
        started = _started(item.config)
        if started is None:
            pytest.fail(item.config.stash[_START_ERROR], pytrace=False)
        item.future = started.submit(item.spec, item.trial)
    return item.future.result()


def end_session(pytest_session: pytest.Session, exitstatus: int) -> None:
    """End this process's batch: what was submitted finishes and is stored, unless pytest was
    interrupted or stopped early (-x, --maxfail: then it is cancelled), and its pair and batch
    rules are decided; a worker hands its batch to the controller. A failed pair or batch rule
    (this process's, or on the controller any worker's) fails the session."""
    config = pytest_session.config
    session = config.stash.get(_SESSION, None)
    if session is not None and session.batch_id is not None:
        _close(pytest_session, session)
    if _rules_failed(config) and pytest_session.exitstatus == pytest.ExitCode.OK:
        pytest_session.exitstatus = pytest.ExitCode.TESTS_FAILED
    if _EXIT_STATUS in config.stash:
        config.stash[_EXIT_STATUS][0] = int(pytest_session.exitstatus)


def _rules_failed(config: pytest.Config) -> int:
    """Pair and batch rules that failed in the batches this run stored (its own, its workers')."""
    workers: list[dict[str, Any]] = config.stash[_WORKERS] if _WORKERS in config.stash else []
    ended = [config.stash[_ENDED], *workers] if _ENDED in config.stash else workers
    return sum(int(e.get("rules_failed") or 0) for e in ended)


def _close(pytest_session: pytest.Session, session: Any) -> None:
    config = pytest_session.config
    stopped = pytest_session.shouldstop or pytest_session.shouldfail or pytest_session.exitstatus == pytest.ExitCode.INTERRUPTED
    try:
        result = session.close(cancel=bool(stopped))
    except Exception as exc:  # the store broke at the very end: said in the summary, never a traceback
        import logging

        logging.getLogger("parley.pytest").exception("closing the session's batch failed")
        config.stash[_ENDED] = {"batch": session.batch_id, "db": str(session.db), "error": str(exc)}
        return
    ended: dict[str, Any] = {"batch": session.batch_id, "db": str(session.db)}
    if result is not None and session.summary is not None:
        from parley.core.reports import BatchReport, rule_lines, short_counts

        summary = session.summary
        ended.update(status=result.status, done=summary.done, planned=summary.planned, counts=short_counts(summary))
        if isinstance(summary, BatchReport):  # a session with --parley-rules: its pair and batch rules, as `parley run` shows them
            ended.update(rules=rule_lines(summary.rules, summary.rule_labels), rules_failed=len(session.failed_rules))
    config.stash[_ENDED] = ended
    if _is_worker(config):
        workeroutput = getattr(config, "workeroutput", None)
        if workeroutput is not None:
            workeroutput[WORKER_KEY] = {**ended, "worker": config.workerinput.get("workerid", "?")}  # type: ignore[attr-defined]


def worker_batch(node: Any) -> None:
    """On the xdist controller: keep the batch a finished worker stored."""
    ended = getattr(node, "workeroutput", {}).get(WORKER_KEY)
    if ended:
        config = node.config
        config.stash.setdefault(_WORKERS, []).append(ended)


def _lines(ended: dict[str, Any]) -> list[str]:
    """A stored batch in pytest's summary: its counts, then its pair and batch rules (if any)."""
    if "error" in ended:
        return [f"parley: batch {ended['batch']} in {ended['db']}: could not be closed: {ended['error']}"]
    counts = ""
    if "counts" in ended:
        counts = f" ({ended['status']}): {ended['done']} of {ended['planned']} conversations stored: {ended['counts']}"
    who = f"worker {ended['worker']}: " if "worker" in ended else ""
    lines = [f"parley: {who}batch {ended['batch']}{counts}, in {ended['db']}"]
    lines += [f"parley: {who}{line}" if not line.startswith(" ") else line for line in ended.get("rules", [])]
    return lines


def summary_lines(config: pytest.Config) -> list[str]:
    """The batches this pytest run stored, for pytest's summary (none: nothing)."""
    lines = []
    if _START_ERROR in config.stash:
        lines.append(config.stash[_START_ERROR])
    if _ENDED in config.stash and not _is_worker(config):
        ended = config.stash[_ENDED]
        lines += _lines(ended)
        lines.append(
            f"parley: `parley report {ended['batch'][:12]}` reports it; `parley compare latest~1 latest` compares it with the run before"
        )
    workers: list[dict[str, Any]] = config.stash[_WORKERS] if _WORKERS in config.stash else []
    for ended in sorted(workers, key=lambda e: str(e.get("worker"))):
        lines += _lines(ended)
    failed = _rules_failed(config)
    if failed and not _is_worker(config):
        rules = f"{failed} pair or batch rule{'s' if failed != 1 else ''}"
        apart = " (each worker's batch counted apart)" if workers else ""
        lines.append(f"parley: the session fails: {rules} of --parley-rules failed{apart}, as they fail `parley run --rules`")
    return lines
