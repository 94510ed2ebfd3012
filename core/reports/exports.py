"""A batch's results as JSON, NDJSON or CSV, read from the store a page at a time.

The shapes follow the batch simulation service parley replaces (seed 003), then add parley's:
- each result starts with 003's fields: session_id, scenario, status, score, comment,
  total_turns, duration_seconds; then parley's (spec, trial, seed, variables, stop reason,
  outcome, usage per role, cost, transcript, tool calls, verdict...);
- the CSV starts with 003's columns (session_id, scenario, prompt_version, score, comment, turns,
  start_ts, status, duration_seconds, evaluation_status), then parley's, then a column per
  criterion in words the batch was checked on (`criterion: TEXT`: met, not met, not applicable,
  not run, judge error; empty for a conversation whose spec does not have it);
- each JSON/NDJSON result lists its criteria with their evidence (`criteria`: the state, the
  turn and quote the judge gave, its reasoning), besides every check in `verdict`;
- the JSON document starts with 003's batch status fields, then the summary, `rules` (the pair
  and batch rules of a batch run with `--rules`, each decision listed in sensei-check's shape,
  conversations by their `session_id`) and `results`.

Differences from 003, on purpose: a missing score is left empty (003 wrote 1: a judge failure
is never a score here); an unknown cost is null / an empty cell, never 0; no export timestamp
is added, so exporting the same batch twice gives the same bytes.

NDJSON and CSV stream: memory stays flat however many conversations the batch has. JSON streams
too through `write_json`; `export_json` returns the text for smaller batches.
"""

from __future__ import annotations

import io
import json
import pathlib
from collections.abc import Callable, Iterator
from typing import Any, Literal, TextIO

from parley.core.evaluation import CRITERION_KIND, criterion_summary, marked_name, score_calibration
from parley.core.records import BatchRecord, ConversationRow, ResultRow, StoredConversation
from parley.core.reports.cell_escaping import csv_line, inert_json, without_nul
from parley.core.reports.stats import summarize
from parley.core.store import JUDGE_ROLE, Store, batch_rule_summaries, criterion_counts, iter_rule_results, rubric_calibration

ExportFormat = Literal["json", "ndjson", "csv"]
ROLES = ("bot", "user", JUDGE_ROLE)

CSV_003_COLUMNS = (
    "session_id",
    "scenario",
    "prompt_version",
    "score",
    "comment",
    "turns",
    "start_ts",
    "status",
    "duration_seconds",
    "evaluation_status",
)
CSV_PARLEY_COLUMNS = (
    "batch_id",
    "spec_id",
    "name",
    "kind",
    "source",
    "trial",
    "seed",
    "variables",
    "stop_reason",
    "outcome",
    "passed",
    "error",
    "tool_calls",
    "customer_id",
    "bot_model",
    "user_model",
    "judge_model",
    *(f"{role}_{kind}_tokens" for role in ROLES for kind in ("input", "output")),
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "policy_violations",
    "failed_checks",
    "user_faults",
)
CSV_COLUMNS = CSV_003_COLUMNS + CSV_PARLEY_COLUMNS


def run_status(stop_reason: str) -> str:
    """003's `status` of a conversation, by who failed: completed (it ran to an end), failed (the
    bot under test broke: bot_error), timeout (the bot hung), error (the run broke on the
    simulator's or parley's side: user_error, infrastructure_error, a legacy error), cancelled."""
    if stop_reason == "bot_error":
        return "failed"
    if stop_reason in ("timeout", "cancelled"):
        return stop_reason
    if stop_reason in ("user_error", "infrastructure_error", "error"):
        return "error"
    return "completed"


def evaluation_status(outcome: str | None, stop_reason: str) -> str:
    """003's `evaluation_status`: success (a verdict about the bot was reached: passed, failed,
    bot_error, unverified, user_fault), failed (a check could not be decided: evaluation_error),
    not_evaluated (no verdict, or the run broke on the simulator's or parley's side)."""
    if outcome is None or outcome in ("user_error", "infrastructure_error", "cancelled", "error"):
        return "not_evaluated"
    if outcome == "evaluation_error":
        return "failed"
    return "success"


def _one_line(text: str | None) -> str:
    # 003 cleaned newlines out of comments so each CSV row stays on one line.
    return (text or "").replace("\r", " ").replace("\n", " ")


def _batch_header(batch: BatchRecord, done: int, broken: int) -> dict[str, Any]:
    """003's batch status fields, then parley's. `failed_scenarios` is 003's: conversations whose
    run broke (the summary's `broken`), never the failed checks (`summary.failed`)."""
    b = batch.model_dump(mode="json")
    return {
        "batch_id": batch.id,
        "status": batch.status,
        "progress": round(100.0 * done / batch.planned, 1) if batch.planned else (100.0 if done else 0.0),
        "total_scenarios": batch.planned,
        "completed_scenarios": done,
        "failed_scenarios": broken,
        "created_at": b["created_at"],
        "started_at": b["started_at"],
        "completed_at": b["finished_at"],
        "sources": b["sources"],
        "options": b["options"],
        "error": batch.error,
    }


def result_record(stored: StoredConversation, batch: BatchRecord | None = None) -> dict[str, Any]:
    """One conversation as an export object: 003's result fields first, transcript included."""
    conv, verdict, spec = stored.conversation, stored.verdict, stored.spec
    c = conv.model_dump(mode="json")  # one dump per record: cheaper than one per message
    v = verdict.model_dump(mode="json") if verdict is not None else None
    light = ConversationRow.of(stored.batch_id, spec, conv, verdict, stored.trial)
    usage = c["usage"]
    if verdict is not None and verdict.judge is not None:
        usage[JUDGE_ROLE] = v["judge"]["usage"]  # type: ignore[index]
    return {
        "session_id": conv.id,
        "scenario": spec.name,
        "status": run_status(conv.stop_reason),
        "score": light.score,
        "comment": light.comment,
        "total_turns": light.turns,
        "duration_seconds": conv.duration_s,
        "batch_id": stored.batch_id,
        "prompt_version": batch.options.prompt_version if batch else None,
        "start_time": c["started_at"],
        "end_time": c["ended_at"],
        "evaluation_status": evaluation_status(light.outcome, conv.stop_reason),
        "spec_id": spec.spec_id,
        "name": spec.name,
        "kind": spec.kind,
        "source": spec.source,
        "trial": stored.trial,
        "seed": spec.seed,
        "variables": spec.variables,
        "stop_reason": conv.stop_reason,
        "outcome": light.outcome,
        "passed": light.passed,
        "error": light.error,
        "customer_id": conv.customer_id,
        "models": {
            "bot": conv.bot_model,
            "user": conv.user_simulator,
            "judge": verdict.judge.judge if verdict and verdict.judge else None,
        },
        "usage": usage,
        "input_tokens": light.input_tokens,
        "output_tokens": light.output_tokens,
        "cost_usd": light.cost_usd,
        "policy_violations": light.policy_violations,
        "failed_checks": [f"{marked_name(ch)}: {ch.reason}" for ch in verdict.failed_checks] if verdict else [],
        "judge_calibration": score_calibration(verdict.checks) if verdict else None,
        "not_run_checks": [ch.name for ch in verdict.checks if ch.outcome == "not_run"] if verdict else [],
        "criteria": [criterion_summary(ch) for ch in verdict.checks if ch.kind == CRITERION_KIND] if verdict else [],
        "user_faults": [f.model_dump(mode="json") for f in verdict.user_faults] if verdict else [],
        "system_prompt": c["system_prompt"],
        "messages": c["messages"],
        "tool_calls": c["tool_calls"],
        "turn_timings": c["turns"],
        "final_state": c["final_state"],
        "verdict": v,
        "metadata": c["metadata"],
        "spec": spec.model_dump(mode="json"),
    }


Paths = Callable[[Any], Any]
"""How an export shows the path values of a record (the service: without its absolute paths)."""


def _as_they_are(record: Any) -> Any:
    return record


def _dumps(value: Any, **kw: Any) -> str:
    return inert_json(json.dumps(value, ensure_ascii=False, **kw))


# ---- NDJSON -----------------------------------------------------------------------------------


def iter_ndjson(store: Store, batch_id: str, *, paths: Paths | None = None) -> Iterator[str]:
    """One JSON line (with its newline) per conversation, in spec order then trial."""
    batch = store.get_batch(batch_id)
    shown = paths or _as_they_are
    for stored in store.iter_conversations(batch.id):
        yield _dumps(shown(result_record(stored, batch))) + "\n"


def export_ndjson(store: Store, batch_id: str, out: TextIO, *, paths: Paths | None = None) -> int:
    """Write the batch as NDJSON to `out`; returns how many conversations were written."""
    n = 0
    for line in iter_ndjson(store, batch_id, paths=paths):
        out.write(line)
        n += 1
    return n


# ---- JSON -------------------------------------------------------------------------------------


def write_json(store: Store, batch_id: str, out: TextIO, *, paths: Paths | None = None) -> int:
    """Write the batch as one JSON document, streaming `results`; returns their count."""
    shown = paths or _as_they_are
    summary = summarize(store, batch_id)
    batch = summary.batch
    head = _batch_header(batch, summary.done, summary.broken)
    head["summary"] = summary.model_dump(mode="json", exclude={"batch"})
    head["rules"] = rules_document(store, batch.id)
    text = _dumps(shown(head), indent=2)
    out.write(text[: text.rindex("}")].rstrip() + ',\n  "results": [')
    n = 0
    for stored in store.iter_conversations(batch.id):
        out.write(("\n    " if n == 0 else ",\n    ") + _dumps(shown(result_record(stored, batch))))
        n += 1
    out.write(("\n  " if n else "") + f'],\n  "total_results": {n}\n}}\n')
    return n


def rules_document(store: Store, batch_id: str) -> dict[str, Any]:
    """The batch's pair and batch rules, by rule file: sensei-check's results (`pass`, `fail`,
    `not_applicable`, and `not_run` with its reasons), each conversation by its session_id, a
    pair as [first, second], a batch decision as the list it was decided over; then each
    failure with its `yields` text. Empty when the batch has none."""
    out: dict[str, Any] = {}
    for rule in batch_rule_summaries(store, batch_id, failures_kept=0):
        entry: dict[str, Any] = {"name": rule.name, "description": rule.description, "conversations": rule.conversations}
        entry.update({outcome: [] for outcome in ("pass", "fail", "not_applicable", "not_run")})
        failures: list[dict[str, Any]] = []
        reasons: dict[str, None] = {}
        for result in iter_rule_results(store, batch_id, rule.rule_file):
            entry[result.outcome].append(result.sensei_item())
            if result.outcome == "fail":
                failures.append({"conversations": result.conversations, "yields": result.yields, "reason": result.reason})
            elif result.outcome == "not_run":
                reasons[result.reason or ""] = None
        entry["not_run_reasons"] = list(reasons)
        entry["failures"] = failures
        out[rule.rule_file] = entry
    return out


def export_json(store: Store, batch_id: str) -> str:
    """The batch as one JSON document: 003's batch fields, the summary, every conversation
    with transcript, tool calls and verdict under `results`."""
    buffer = io.StringIO()
    write_json(store, batch_id, buffer)
    return buffer.getvalue()


# ---- CSV --------------------------------------------------------------------------------------


def _csv_row(row: ResultRow, batch: BatchRecord) -> dict[str, Any]:
    out: dict[str, Any] = {
        "session_id": row.id,
        "scenario": row.name,
        "prompt_version": batch.options.prompt_version or "default",
        "score": "" if row.score is None else row.score,
        "comment": _one_line(row.comment),
        "turns": row.turns,
        "start_ts": row.started_at.isoformat(),
        "status": run_status(row.stop_reason),
        "duration_seconds": row.duration_s,
        "evaluation_status": evaluation_status(row.verdict_outcome, row.stop_reason),
        "batch_id": row.batch_id,
        "spec_id": row.spec_id,
        "name": row.name,
        "kind": row.kind,
        "source": row.source,
        "trial": row.trial,
        "seed": row.seed,
        "variables": json.dumps(row.variables, ensure_ascii=False),
        "stop_reason": row.stop_reason,
        "outcome": row.outcome or "",
        "passed": "" if row.passed is None else str(row.passed).lower(),
        "error": _one_line(row.error),
        "tool_calls": row.tool_call_count,
        "customer_id": row.customer_id,
        "bot_model": row.bot_model,
        "user_model": row.user_model,
        "judge_model": row.judge_model or "",
        "input_tokens": row.input_tokens,
        "output_tokens": row.output_tokens,
        "cost_usd": "" if row.cost_usd is None else row.cost_usd,
        "policy_violations": row.policy_violations,
        "failed_checks": _one_line("; ".join(row.failed_checks)),
        "user_faults": _one_line("; ".join(row.user_faults)),
    }
    for role in ROLES:
        u = row.usage.get(role)
        out[f"{role}_input_tokens"] = "" if u is None else u.input_tokens
        out[f"{role}_output_tokens"] = "" if u is None else u.output_tokens
    return out


CRITERION_COLUMN = "criterion: "
CALIBRATION_COLUMN = "judge calibration: "


def export_csv(store: Store, batch_id: str, out: TextIO, *, paths: Paths | None = None) -> int:
    """Write one CSV row per conversation (003's columns first, then parley's, then one per
    criterion in words, then the judge's calibration on each criterion and on the score when a
    judge decided them) to `out`; returns the number of rows. An unknown cost or a missing
    score is an empty cell."""
    batch = store.get_batch(batch_id)
    counts = criterion_counts(store, batch.id)
    criteria = {CRITERION_COLUMN + without_nul(c.criterion): c.criterion for c in counts}
    # the judge's calibration on each criterion (and its rubric), when a judge decided them
    calibrated = {CALIBRATION_COLUMN + without_nul(c.criterion): c.calibration for c in counts if c.calibration}
    rubric = rubric_calibration(store, batch.id)
    if rubric:
        calibrated[CALIBRATION_COLUMN + "score"] = rubric
    columns = [*CSV_COLUMNS, *criteria, *calibrated]
    out.write(csv_line(columns))
    n = 0
    for row in store.iter_result_rows(batch.id):
        cells = _csv_row(row, batch)
        cells.update({column: row.criteria.get(c, "") for column, c in criteria.items()})
        cells.update(calibrated)
        shown = paths(cells) if paths is not None else cells
        out.write(csv_line(shown[column] for column in columns))
        n += 1
    return n


# ---- to a file --------------------------------------------------------------------------------


def export_file(store: Store, batch_id: str, path: str | pathlib.Path, fmt: ExportFormat | None = None) -> int:
    """Write the batch to `path` in `fmt` (default: from the suffix: .json, .ndjson/.jsonl,
    .csv); returns the number of conversations written."""
    path = pathlib.Path(path)
    if fmt is None:
        suffix = path.suffix.lower().lstrip(".")
        fmt = {"json": "json", "ndjson": "ndjson", "jsonl": "ndjson", "csv": "csv"}.get(suffix)  # type: ignore[assignment]
        if fmt is None:
            from parley.core.errors import ParleyError

            raise ParleyError(f"cannot tell the export format from '{path.name}': use .json, .ndjson or .csv")
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as fh:
        if fmt == "json":
            return write_json(store, batch_id, fh)
        if fmt == "ndjson":
            return export_ndjson(store, batch_id, fh)
        return export_csv(store, batch_id, fh)
