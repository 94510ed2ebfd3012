"""A results file read back and summarised (`parley summarise FILE`): parley's own exports (JSON,
NDJSON, CSV) and the batch simulation service's result files (seed 003), each conversation made
the row the one batch summary counts (parley.core.records.SummaryRow,
parley.core.evaluation.BatchSummary).

Which kind of file: by its suffix (.json, .ndjson or .jsonl, .csv), otherwise by its first
character. JSON is a document with `results` (parley's and 003's) or a bare list of results.

Which shape of row: parley's rows carry `outcome` or `stop_reason` and are read as they are.
The service's rows (`session_id`, `scenario`, `status`, `score`, `comment`, `total_turns` or
`turns`, `duration_seconds`, `evaluation_status`, `tokens`, `cost` where present) say nothing of
outcomes, so they get one by parley's rules:
- `status` completed: the judge's score is the check, as under an LLM judge in parley: a score
  of `DEFAULT_MIN_SCORE` (2) or more passes, below it fails; no score: unevaluated;
- `evaluation_status` failed: the judge failed, so an evaluation error and no score (the service
  wrote 1 for a failed evaluation: a failure is never a score here);
- `status` timeout: failed, as a parley conversation past its time limit fails "conversation
  completed";
- `status` failed or error: the run broke, and the service does not say who broke it: a legacy
  error, counted apart (never the bot's failure on a guess); cancelled: cancelled.

A file of another shape is one line naming the file (and the line or the result) and what is
missing; an empty one says so.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from parley.core.errors import ParleyError
from parley.core.evaluation import BatchSummary
from parley.core.records import DEFAULT_MIN_SCORE, SummaryRow, first_error

FileFormat = Literal["json", "ndjson", "csv"]
Shape = Literal["parley", "003"]

SHAPE_NAMES: dict[Shape, str] = {"parley": "parley's export", "003": "the simulation service's result fields"}
SERVICE_FIELDS = ("session_id", "scenario", "status", "score", "comment", "total_turns", "duration_seconds")
"""The service's result fields (its README), the ones a row of its shape is read by."""
SERVICE_STATUSES = {"completed": None, "timeout": "timeout", "failed": "error", "error": "error", "cancelled": "cancelled"}
"""The service's `status` -> parley's stop reason (None: it ran to an end)."""
SERVICE_RULE = (
    f"the simulation service's rows: a score of {DEFAULT_MIN_SCORE} or more passes (parley's minimum for a judge's "
    "score), a timeout fails, a run that broke (status failed or error) is a legacy error: counted apart, as the "
    "file does not say who broke it"
)
_SUFFIXES: dict[str, FileFormat] = {".json": "json", ".ndjson": "ndjson", ".jsonl": "ndjson", ".csv": "csv"}
_WHAT = "a results file has one record per conversation, with `session_id` (the simulation service's) or `spec_id` (parley's)"


class ResultsFile(BaseModel):
    """What a results file held: one row per conversation, and what it says of its batch."""

    path: str
    format: FileFormat
    shape: Shape
    rows: list[SummaryRow]
    batch_id: str | None = None
    planned: int | None = None
    """The batch's planned conversations, where the file says (parley's JSON document)."""
    trials: int | None = None
    seed: int | str | None = None
    """The batch's seed (parley's JSON document): pass^k's intervals are seeded by it."""


class FileSummary(BatchSummary):
    """A results file's summary: the batch summary of its rows, with the file's name and the
    simulation service's summary fields (its `GET /batches/ID/summary`) beside parley's. As
    everywhere, `failed_scenarios` counts conversations whose run broke (`broken`)."""

    file: str
    format: FileFormat
    shape: Shape
    batch_id: str | None = None
    seeded_by_batch: bool
    """pass^k's intervals are seeded by the batch's seed, as its report is (the file held it)."""
    total_scenarios: int
    successful_scenarios: int
    failed_scenarios: int
    success_rate: float | None


def summarise_file(path: str | Path) -> FileSummary:
    """The summary of the results file at `path` (see the module doc)."""
    read = read_results(path)
    summary = BatchSummary.from_rows(read.rows, planned=read.planned, trials=read.trials, seed=read.seed or 0)
    return summary.extended(
        FileSummary,
        file=read.path,
        format=read.format,
        shape=read.shape,
        batch_id=read.batch_id,
        seeded_by_batch=read.seed is not None,
        total_scenarios=summary.planned,
        successful_scenarios=summary.passed,
        failed_scenarios=summary.broken,
        success_rate=summary.pass_rate,
    )


def read_results(path: str | Path) -> ResultsFile:
    """Every conversation of the results file at `path`, as summary rows."""
    path = Path(path)
    name = str(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ParleyError(f"{name}: not UTF-8 text (byte {exc.object[exc.start]:#04x} at offset {exc.start}); {_WHAT}") from None
    except OSError as exc:
        raise ParleyError(f"{name}: cannot be read: {exc.strerror or exc}") from None
    if not text.strip():
        raise ParleyError(f"{name} is empty: there are no conversations to summarise")
    fmt = _SUFFIXES.get(path.suffix.lower()) or _sniff(text)
    head: Mapping[str, Any] = {}
    if fmt == "json":
        head, records = _json_results(name, text)
    elif fmt == "ndjson":
        records = _ndjson_results(name, text)
    else:
        records = _csv_results(name, text)
    rows: list[SummaryRow] = []
    shape: Shape | None = None
    batches: set[object] = set()
    for where, record in records:
        if shape is None and isinstance(record, dict):
            shape = "parley" if "outcome" in record or "stop_reason" in record else "003"
        rows.append(_row(name, where, record, shape or "003"))
        batches.add(record.get("batch_id"))
    if not rows or shape is None:
        raise ParleyError(f"{name} holds no conversations: there is nothing to summarise")
    options = head.get("options") if isinstance(head.get("options"), dict) else {}
    return ResultsFile(
        path=name,
        format=fmt,
        shape=shape,
        rows=rows,
        batch_id=_text_or_none(head.get("batch_id")) or (_text_or_none(batches.pop()) if len(batches) == 1 else None),
        planned=_count_or_none(head.get("total_scenarios")),
        trials=_count_or_none(options.get("trials")) if options else None,
        seed=options.get("seed") if options and isinstance(options.get("seed"), int | str) else None,
    )


def _sniff(text: str) -> FileFormat:
    first = text.lstrip()[:1]
    if first == "[":
        return "json"
    if first == "{":  # one document, or one object a line
        try:
            json.loads(text)
        except json.JSONDecodeError:
            return "ndjson"
        return "json"
    return "csv"


def _json_results(name: str, text: str) -> tuple[Mapping[str, Any], Iterator[tuple[str, Any]]]:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParleyError(f"{name}:{exc.lineno}:{exc.colno}: not JSON: {exc.msg}") from None
    except RecursionError:
        raise ParleyError(f"{name}: not a results file: its JSON is nested too deeply") from None
    if isinstance(doc, list):
        return {}, ((f"result {i}", r) for i, r in enumerate(doc, 1))
    if isinstance(doc, dict) and isinstance(doc.get("results"), list):
        return doc, ((f"results[{i}]", r) for i, r in enumerate(doc["results"]))
    raise ParleyError(f"{name}: not a results file: a JSON document with no `results` list; {_WHAT}")


def _ndjson_results(name: str, text: str) -> Iterator[tuple[str, Any]]:
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            yield f"{number}", json.loads(line)
        except json.JSONDecodeError as exc:
            raise ParleyError(f"{name}:{number}:{exc.colno}: not JSON: {exc.msg}") from None
        except RecursionError:
            raise ParleyError(f"{name}:{number}: not a results line: its JSON is nested too deeply") from None


def _csv_results(name: str, text: str) -> Iterator[tuple[str, Any]]:
    reader = csv.DictReader(text.splitlines())
    header = reader.fieldnames or []
    if "session_id" not in header and "spec_id" not in header:
        shown = ", ".join(h for h in header[:6] if h) + (", ..." if len(header) > 6 else "")
        raise ParleyError(f"{name}:1: not a results file: no `session_id` or `spec_id` column (its columns: {shown or 'none'}); {_WHAT}")
    try:
        for record in reader:
            if None in record:  # more cells than the header has
                raise ParleyError(f"{name}:{reader.line_num}: more cells than the header's {len(header)} columns")
            yield f"{reader.line_num}", record
    except csv.Error as exc:
        raise ParleyError(f"{name}:{reader.line_num}: not CSV: {exc}") from None


def _row(name: str, where: str, record: Any, shape: Shape) -> SummaryRow:
    at = f"{name}:{where}" if where.isdigit() else f"{name}: {where}"
    if not isinstance(record, dict):
        raise ParleyError(f"{at}: not a result: a {type(record).__name__} where an object was expected; {_WHAT}")
    if "session_id" not in record and "spec_id" not in record:
        raise ParleyError(f"{at}: no `session_id` or `spec_id`; {_WHAT}")
    record = {**record, "score": _score(at, record.get("score"))}
    fields = record if shape == "parley" else _service_fields(at, record)
    if "spec_id" not in fields:
        fields["spec_id"] = fields.get("scenario") or fields["session_id"]
    try:
        row = SummaryRow.model_validate(fields)
    except ValidationError as exc:
        first = first_error(exc, "the row")
        raise ParleyError(f"{at}: {first.where}: {first.message} (got {first.input!r})") from None
    for what, value in (("turns", row.turns), ("duration", row.duration_s), ("cost", row.cost_usd)):
        if value is not None and not (math.isfinite(value) and value >= 0):
            raise ParleyError(f"{at}: {what} {value!r} is not a finite number of 0 or more")
    return row


def _score(at: str, value: Any) -> int | None:
    """The judge's score, 1 to 3 (a CSV cell's "2" and a JSON 2.0 alike); None when missing."""
    if value is None or value == "":
        return None
    try:
        number = float(str(value).strip()) if not isinstance(value, bool) else math.nan
    except ValueError:
        number = math.nan
    if number not in (1.0, 2.0, 3.0):
        raise ParleyError(f"{at}: score {value!r} is not 1, 2 or 3 (the judge's scale)")
    return int(number)


def _service_fields(at: str, record: Mapping[str, Any]) -> dict[str, Any]:
    """A row of the simulation service's shape as parley's fields (see the module doc)."""
    status = str(record.get("status") or "").strip().lower()
    if status not in SERVICE_STATUSES:
        missing = "no `status`" if not status else f"status {record.get('status')!r} is not one of {', '.join(SERVICE_STATUSES)}"
        raise ParleyError(f"{at}: {missing} (the simulation service's rows say how each run ended)")
    stop = SERVICE_STATUSES[status]
    fields = {k: v for k, v in record.items() if k not in ("status", "outcome", "stop_reason")}
    judge_failed = str(record.get("evaluation_status") or "").strip().lower() == "failed"
    score = record.get("score")
    if stop in ("error", "cancelled"):
        outcome = stop
    elif stop == "timeout":
        outcome = "failed"
    elif judge_failed:
        outcome = "evaluation_error"
    elif score is not None:
        outcome = "passed" if score >= DEFAULT_MIN_SCORE else "failed"
    else:
        outcome = "unevaluated"
    fields.update(outcome=outcome, stop_reason=stop, judge_error=judge_failed)
    if judge_failed:
        fields["score"] = None
    if "cost_usd" not in fields and "cost" in fields:
        fields["cost_usd"] = fields["cost"]
    return fields


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _count_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def summary_cells(summary: FileSummary) -> Iterable[tuple[str, Any]]:
    """The summary as (field, value) pairs, nested fields named with dots (`score_statistics.mean`,
    `pass_k.0.value`): its CSV form, one field a row."""

    def walk(prefix: str, value: Any) -> Iterator[tuple[str, Any]]:
        if isinstance(value, dict):
            for key, inner in value.items():
                yield from walk(f"{prefix}.{key}" if prefix else str(key), inner)
        elif isinstance(value, list):
            if not value:
                yield prefix, ""
            for i, inner in enumerate(value):
                yield from walk(f"{prefix}.{i}", inner)
        else:
            yield prefix, "" if value is None else value

    return walk("", summary.model_dump(mode="json"))
