"""People's labels in a file: CSV or JSONL (one JSON object a line), read and written the same
way, so labels can be made elsewhere (a spreadsheet, another tool) and shared.

Columns (CSV header / JSON keys), in this order:
- `conversation_id`: the stored conversation (its full id);
- `kind`: criterion, rubric or check (optional: a label of 1-3 is on the rubric, any other on a
  criterion);
- `criterion_id`: the criterion's stable id, or the rubric's (optional for a criterion: made
  from its text when left out; a check has none);
- `criterion`: the criterion's text, the rubric, or a check's name (optional when an id is given);
- `label`: met / not_met / not_applicable (spaces, dashes and case do not count; `n/a` is
  not_applicable), or 1, 2, 3 for the rubric;
- `labeller`: who labelled (optional when the reader is given one);
- `note`: optional;
- `labelled_at`: ISO 8601 (optional: now).
Unknown columns are refused, as misspelt names would be; a row whose label is empty is skipped
(a blank export's row nobody labelled: `blank_record`). `read_label_file` reads every row and
reports every bad one, each located (`labels.csv:7: label: expected met, not_met,
not_applicable or 1-3, got 'yes'`), raising `InvalidLabelFile` with nothing read when any is.
"""

from __future__ import annotations

import csv
import datetime
import io
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from parley.core.errors import ParleyError
from parley.core.records import CRITERION_LABELS, RUBRIC_LABELS, ItemKind, Label, LabelValue, criterion_id

__all__ = [
    "LABEL_COLUMNS",
    "InvalidLabelFile",
    "LabelFile",
    "LabelFormat",
    "LabelRow",
    "blank_record",
    "label_format",
    "read_label_file",
    "write_labels",
]

LABEL_COLUMNS = ("conversation_id", "kind", "criterion_id", "criterion", "label", "labeller", "note", "labelled_at")
LabelFormat = Literal["csv", "jsonl"]
PROBLEMS_SHOWN = 20
_KINDS: tuple[ItemKind, ...] = ("criterion", "rubric", "check")
_WORDS: dict[str, LabelValue] = {
    "met": "met",
    "not met": "not_met",
    "not applicable": "not_applicable",
    "n/a": "not_applicable",
    "na": "not_applicable",
    "1": "1",
    "2": "2",
    "3": "3",
}


class InvalidLabelFile(ParleyError):
    """A label file with bad rows: every problem, each with its file and line."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        shown = problems[:PROBLEMS_SHOWN]
        more = f"\n... and {len(problems) - PROBLEMS_SHOWN} more" if len(problems) > PROBLEMS_SHOWN else ""
        super().__init__("\n".join(shown) + more)


class LabelRow(BaseModel):
    """A label as read, with the line it was on (for located errors found later: a conversation
    the database does not hold)."""

    model_config = ConfigDict(frozen=True)

    line: int
    label: Label


class LabelFile(BaseModel):
    """A label file read: its labels, and how many rows were left blank (a row of a blank export
    nobody labelled: no label, skipped)."""

    rows: list[LabelRow]
    blank: int = 0


def label_format(path: str | Path) -> LabelFormat:
    """csv or jsonl, from the file's suffix (.csv; .jsonl, .ndjson, .json)."""
    suffix = Path(path).suffix.lower()
    if suffix == ".csv":
        return "csv"
    if suffix in (".jsonl", ".ndjson", ".json"):
        return "jsonl"
    raise ParleyError(f"{path}: a label file is .csv or .jsonl (one JSON object a line)")


def _value(raw: str) -> LabelValue | None:
    word = re.sub(r"[\s_\-]+", " ", raw.strip().lower()).strip()
    if word.endswith(".0") and word[:-2] in ("1", "2", "3"):  # a spreadsheet's 2.0
        word = word[:-2]
    return _WORDS.get(word)


def _row_label(fields: Mapping[str, Any], labeller: str | None, now: datetime.datetime) -> Label | list[str]:
    """The label of one row, or its problems (each `column: what is wrong`)."""
    problems: list[str] = []
    text = {k: ("" if v is None else str(v)).strip() for k, v in fields.items()}
    unknown = [k for k in fields if k not in LABEL_COLUMNS]
    if unknown:
        problems.append(f"{unknown[0]}: unknown column; the columns are {', '.join(LABEL_COLUMNS)}")
    conversation = text.get("conversation_id", "")
    if not conversation:
        problems.append("conversation_id: missing")
    value = _value(text.get("label", ""))
    if value is None:
        problems.append(f"label: expected met, not_met, not_applicable or 1-3, got {text.get('label', '')!r}")
    kind_text = text.get("kind", "").lower()
    kind: ItemKind | None
    if kind_text:
        kind = next((k for k in _KINDS if k == kind_text), None)
        if kind is None:
            problems.append(f"kind: expected criterion, rubric or check, got {text.get('kind')!r}")
    else:
        kind = "rubric" if value in RUBRIC_LABELS else "criterion"
    if kind is not None and value is not None:
        if kind == "rubric" and value not in RUBRIC_LABELS:
            problems.append(f"label: a rubric's label is a score, 1, 2 or 3, not {value}")
        elif kind != "rubric" and value not in CRITERION_LABELS:
            problems.append(f"label: a {kind}'s label is met, not_met or not_applicable, not {value}")
    item_text = " ".join(text.get("criterion", "").split())
    item_id = text.get("criterion_id", "")
    if kind == "check":
        item_id = item_id or item_text
        if not item_id:
            problems.append("criterion: a check's label names the check (its name, as parley shows it)")
    elif not item_id:
        if kind == "rubric":
            problems.append("criterion_id: a rubric's label names the rubric's id (`parley judge labels export` shows it)")
        elif item_text:
            item_id = criterion_id(item_text)
        else:
            problems.append("criterion: missing (give the criterion's id or its text)")
    who = text.get("labeller", "") or (labeller or "")
    if not who:
        problems.append("labeller: missing (or give the file's labeller with --labeller)")
    at = now
    if text.get("labelled_at"):
        try:
            at = datetime.datetime.fromisoformat(text["labelled_at"])
            at = at if at.tzinfo is not None else at.replace(tzinfo=datetime.UTC)
        except ValueError:
            problems.append(f"labelled_at: expected an ISO 8601 time, got {text['labelled_at']!r}")
    if problems or kind is None or value is None:
        return problems
    return Label(
        conversation_id=conversation,
        kind=kind,
        item_id=item_id,
        item_text=item_text,
        value=value,
        labeller=who,
        note=text.get("note", ""),
        labelled_at=at,
    )


def _csv_rows(text: str) -> Iterator[tuple[int, Mapping[str, Any] | str]]:
    reader = csv.DictReader(io.StringIO(text))
    for row in reader:
        line = reader.line_num
        extra = row.pop(None, None)
        if extra:
            yield line, f"{len(extra)} more value(s) than the header has columns"
            continue
        if all(not (v or "").strip() for v in row.values()):
            continue
        yield line, row


def _jsonl_rows(text: str) -> Iterator[tuple[int, Mapping[str, Any] | str]]:
    for line, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            yield line, f"not JSON ({exc.msg} at column {exc.colno})"
            continue
        yield line, value if isinstance(value, dict) else f"expected a JSON object, got {type(value).__name__}"


def read_label_file(path: str | Path, *, labeller: str | None = None, now: datetime.datetime | None = None) -> LabelFile:
    """Every label of a CSV or JSONL file (see the module doc), with its line; a row whose label
    is left empty is skipped (counted in `blank`). `labeller`: who labelled the rows that do not
    say. InvalidLabelFile when any row is bad, ParleyError when the file cannot be read or holds
    no label."""
    path = Path(path)
    form = label_format(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise ParleyError(f"cannot read {path}: {exc}") from None
    when = now or datetime.datetime.now(datetime.UTC)
    rows: list[LabelRow] = []
    problems: list[str] = []
    if form == "csv":
        header = next(csv.reader(io.StringIO(text)), [])
        missing = [c for c in ("conversation_id", "label") if c not in header]
        if missing:
            raise InvalidLabelFile([f"{path}:1: the header lacks {', '.join(missing)}; the columns are {', '.join(LABEL_COLUMNS)}"])
    seen: dict[tuple[str, str, str, str], int] = {}
    blank = 0
    for line, fields in _csv_rows(text) if form == "csv" else _jsonl_rows(text):
        if isinstance(fields, str):
            problems.append(f"{path}:{line}: {fields}")
            continue
        if not str(fields.get("label") or "").strip():
            blank += 1
            continue
        label = _row_label(fields, labeller, when)
        if isinstance(label, list):
            problems += [f"{path}:{line}: {p}" for p in label]
            continue
        key = (label.conversation_id, label.kind, label.item_id, label.labeller)
        if key in seen:
            problems.append(f"{path}:{line}: the same labeller's label on the same item as line {seen[key]}")
            continue
        seen[key] = line
        rows.append(LabelRow(line=line, label=label))
    if problems:
        raise InvalidLabelFile(problems)
    if not rows:
        raise ParleyError(f"{path}: no label in it" + (f" ({blank} row(s) left blank)" if blank else ""))
    return LabelFile(rows=rows, blank=blank)


def _record(label: Label) -> dict[str, str]:
    return {
        "conversation_id": label.conversation_id,
        "kind": label.kind,
        "criterion_id": "" if label.kind == "check" else label.item_id,
        "criterion": label.item_text or (label.item_id if label.kind == "check" else ""),
        "label": label.value,
        "labeller": label.labeller,
        "note": label.note,
        "labelled_at": label.labelled_at.isoformat(),
    }


def blank_record(conversation_id: str, kind: ItemKind, item_id: str, text: str) -> dict[str, str]:
    """A row to label elsewhere: the item named, its label (and labeller, note) left empty."""
    return {
        "conversation_id": conversation_id,
        "kind": kind,
        "criterion_id": "" if kind == "check" else item_id,
        "criterion": " ".join(text.split()),
        "label": "",
        "labeller": "",
        "note": "",
        "labelled_at": "",
    }


def write_labels(labels: Iterable[Label | dict[str, str]], form: LabelFormat) -> str:
    """`labels` as a CSV or JSONL file's text, in the columns `read_label_file` reads (a dict
    is a row as it is: `blank_record`'s)."""
    records = [label if isinstance(label, dict) else _record(label) for label in labels]
    if form == "jsonl":
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=LABEL_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(records)
    return out.getvalue()
