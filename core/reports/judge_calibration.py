"""A judge's calibration as text: what `parley judge calibrate` prints, `parley judge
calibrations ID` shows and the app's calibration screen holds.

- `calibration_report(calibration)`: the judge's key, then a table of every item (criterion or
  rubric) and the criteria pooled (labels, agreement, kappa with its 95% interval, judge
  errors, the two labellers' own kappa: the ceiling), then for each item its confusion matrix
  and every disagreement, false passes first, the judge's quote and reason beside the person's
  label and note;
- `calibrations_table(calibrations)`: one line per stored calibration (newest first);
- `judges_compared(calibrations)`: several judges calibrated on the same labels, side by side
  (each item's kappa per judge).
Text from a conversation or a judge (quotes, reasons, notes) is data: it is shown as written,
on one line, never interpreted.
"""

from __future__ import annotations

from collections.abc import Sequence

from parley.core.records import Calibration, Disagreement, ItemCalibration

__all__ = ["calibration_report", "calibrations_table", "judges_compared", "kappa_cell"]

_SHORT = {"met": "met", "not_met": "not met", "not_applicable": "n/a"}
_TEXT_CHARS = 60


def _one_line(text: str, limit: int | None = None) -> str:
    flat = " ".join(str(text).split())
    return flat if limit is None or len(flat) <= limit else flat[: limit - 1] + "…"


def kappa_cell(item: ItemCalibration) -> str:
    """`0.63 [0.21, 1.00]`, `undefined (one label value)`, or `-` when nothing was compared."""
    if item.labels == 0:
        return "-"
    if item.one_class or item.kappa is None:
        return "undefined (one label value)"
    shown = f"{item.kappa:.2f}"
    if item.interval is not None:
        shown += f" [{item.interval[0]:.2f}, {item.interval[1]:.2f}]"
    return shown


def _row(name: str, item: ItemCalibration) -> list[str]:
    agreement = f"{item.agreement * 100:.0f}%" if item.agreement is not None else "-"
    symbol = "κw " if item.weighted else ""
    ceiling = f"{item.labellers_kappa:.2f} ({item.labellers_items})" if item.labellers_kappa is not None else "-"
    return [name, str(item.labels), agreement, symbol + kappa_cell(item), str(item.judge_errors), ceiling]


def _table(rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(widths[i]) if i == 0 else cell.rjust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in rows]


def _item_name(item: ItemCalibration) -> str:
    if item.kind == "rubric":
        return f"rubric ({item.item_id})"
    return f"{_one_line(item.text, _TEXT_CHARS)} ({item.item_id})"


def _confusion(item: ItemCalibration) -> list[str]:
    names = [_SHORT.get(c, c) for c in item.categories]
    rows = [["person \\ judge", *names]]
    rows += [[name, *(str(n) for n in counts)] for name, counts in zip(names, item.confusion, strict=True)]
    return ["  " + line for line in _table(rows)]


def _disagreement(d: Disagreement) -> str:
    said = f"person {_SHORT.get(d.label, d.label)}, judge {_SHORT.get(d.judged, d.judged)}"
    parts = [f"  - {'FALSE PASS ' if d.false_pass else ''}{d.conversation_id} ({d.labeller}): {said}"]
    if d.quote:
        parts.append(f'quote "{_one_line(d.quote, 160)}"')
    if d.reason:
        parts.append(f"judge: {_one_line(d.reason, 240)}")
    if d.note:
        parts.append(f"note: {_one_line(d.note, 200)}")
    return "; ".join(parts)


def calibration_report(calibration: Calibration) -> str:
    """The whole calibration as text (see the module doc)."""
    lines = [
        f"Calibration {calibration.id} ({calibration.created_at:%Y-%m-%d %H:%M} UTC)",
        f"Judge: {calibration.key.describe()}",
        f"Labels: {calibration.source or 'stored'}; {calibration.conversations} conversation(s) judged again",
    ]
    if calibration.juror_errors:
        lines.append("Juror errors (left out of the votes): " + ", ".join(f"{j} {n}" for j, n in calibration.juror_errors.items()))
    lines += [f"Note: {note}" for note in calibration.notes]
    if not calibration.items:
        lines.append("No label on a criterion or rubric of these conversations: nothing was measured.")
        return "\n".join(lines) + "\n"
    rows = [["Item", "Labels", "Agree", "Kappa [95% interval]", "Judge errors", "Labellers' kappa"]]
    rows += [_row(_item_name(item), item) for item in calibration.items]
    if calibration.overall is not None:
        rows.append(_row("every criterion", calibration.overall))
    lines += ["", *_table(rows)]
    for item in calibration.items:
        lines += ["", f"{_item_name(item)}: rows are the person's labels, columns the judge's", *_confusion(item)]
        if item.disagreements:
            lines.append(f"  Disagreements ({len(item.disagreements)}, false passes first):")
            lines += [_disagreement(d) for d in item.disagreements]
    return "\n".join(lines) + "\n"


def calibrations_table(calibrations: Sequence[Calibration]) -> str:
    """One line per calibration: id, when, judge, endpoint, prompt version, labels, overall kappa."""
    if not calibrations:
        return "No calibration stored yet: label conversations, then run `parley judge calibrate --labels stored --judge MODEL`.\n"
    rows = [["Id", "When (UTC)", "Judge", "Endpoint", "Prompts", "Labels", "Criteria kappa", "Rubric kappa"]]
    for c in calibrations:
        rubric = next((i for i in c.items if i.kind == "rubric"), None)
        labels = sum(i.labels for i in c.items)
        rows.append(
            [
                c.id[:12],
                f"{c.created_at:%Y-%m-%d %H:%M}",
                c.key.model,
                c.key.endpoint or "-",
                c.key.prompt_version,
                str(labels),
                kappa_cell(c.overall) if c.overall is not None else "-",
                kappa_cell(rubric) if rubric is not None else "-",
            ]
        )
    return "\n".join(_table(rows)) + "\n"


def judges_compared(calibrations: Sequence[Calibration]) -> str:
    """Each item's kappa per judge, the judges side by side (several calibrated on the same labels)."""
    items: dict[str, str] = {}
    for c in calibrations:
        for item in c.items:
            items.setdefault(item.item_id, _item_name(item))
    rows = [["Item", *(c.key.model for c in calibrations)]]
    for item_id, name in items.items():
        cells = []
        for c in calibrations:
            found = c.item(item_id)
            cells.append(kappa_cell(found) if found is not None else "-")
        rows.append([name, *cells])
    rows.append(["every criterion", *(kappa_cell(c.overall) if c.overall is not None else "-" for c in calibrations)])
    return "\n".join(_table(rows)) + "\n"
