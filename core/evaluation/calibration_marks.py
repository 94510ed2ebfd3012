"""Verdicts that carry their calibration: each criterion's and rubric's verdict of a judge marked
with what was measured of that judge on that item (parley.core.records.CalibrationMark).

A batch's judge has a `JudgeKey` (model, endpoint, prompt version, generation settings); its
`CalibrationPolicy` holds, per item, the latest calibration of a judge with the same key
(`policy_for`), the batch's `--min-kappa` and whether it `--require-calibrated`. `mark_checks`
then stamps every check a judge decided (a criterion's; the judge's score, under the rubric's
id) with `details["calibration"]`: its state, kappa and text ("κ 0.72", "uncalibrated",
"below threshold (κ 0.41 < 0.6)", "κ undefined"); every report, export and view reads it there
(`calibration_text`). With `require`, a check whose judge is not calibrated at or above the
threshold is `untrusted`: it may fail a conversation, never make it pass (the conversation is
unverified unless another check decided it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from parley.core.evaluation.criteria import CRITERION_KIND
from parley.core.evaluation.judge import OFFLINE_JUDGE_NAME
from parley.core.evaluation.labelled_items import rubric_item
from parley.core.records import DEFAULT_MIN_KAPPA, Calibration, CalibrationMark, CalibrationState, CheckResult, ConversationSpec, JudgeKey

__all__ = [
    "CALIBRATION_DETAIL",
    "CALIBRATION_NOTE",
    "CalibrationPolicy",
    "ItemMeasure",
    "calibration_of",
    "calibration_text",
    "mark_checks",
    "marked_name",
    "policy_for",
    "score_calibration",
]

CALIBRATION_NOTE = (
    "Judge calibration: Cohen's kappa between the judge and people's labels on that criterion (`parley judge calibrate`); "
    "uncalibrated: nobody has measured this judge (model, endpoint, prompts, settings) on it; below threshold: under "
    "--min-kappa; κ undefined: the labels held one value only."
)
"""What a report says of its judge-calibration column, once."""
CALIBRATION_DETAIL = "calibration"
"""The key of a check's `details` that holds its calibration mark."""


class ItemMeasure(BaseModel):
    """What the latest calibration measured of a judge on one item."""

    model_config = ConfigDict(frozen=True)

    kappa: float | None
    one_class: bool = False
    weighted: bool = False
    calibration_id: str


class CalibrationPolicy(BaseModel):
    """A batch's judge (`key`), what was measured of it per item id, and what the batch does
    with it: the threshold (`min_kappa`) and whether only calibrated verdicts count towards a
    pass (`require`)."""

    model_config = ConfigDict(frozen=True)

    key: JudgeKey
    measured: dict[str, ItemMeasure] = Field(default_factory=dict)
    min_kappa: float = DEFAULT_MIN_KAPPA
    require: bool = False

    def mark(self, item_id: str) -> CalibrationMark:
        """How this judge's verdict on item `item_id` reads (see the module doc)."""
        found = self.measured.get(item_id)
        if found is None:
            return CalibrationMark(state="uncalibrated", min_kappa=self.min_kappa)
        state: CalibrationState = "undefined"
        if not found.one_class and found.kappa is not None:
            state = "calibrated" if found.kappa >= self.min_kappa else "below_threshold"
        return CalibrationMark(
            state=state, kappa=found.kappa, min_kappa=self.min_kappa, weighted=found.weighted, calibration_id=found.calibration_id
        )


def policy_for(
    key: JudgeKey, calibrations: Sequence[Calibration], *, min_kappa: float = DEFAULT_MIN_KAPPA, require: bool = False
) -> CalibrationPolicy:
    """The policy of a judge of `key` from the stored calibrations: per item, the latest
    calibration of the same key that measured it (calibrations of other keys are ignored)."""
    measured: dict[str, ItemMeasure] = {}
    for calibration in sorted(calibrations, key=lambda c: c.created_at, reverse=True):
        if calibration.key.digest != key.digest:
            continue
        for item in calibration.items:
            if item.item_id not in measured and item.labels > 0:
                measured[item.item_id] = ItemMeasure(
                    kappa=item.kappa, one_class=item.one_class, weighted=item.weighted, calibration_id=calibration.id
                )
    return CalibrationPolicy(key=key, measured=measured, min_kappa=min_kappa, require=require)


def _item_of(check: CheckResult, rubric_id: str) -> str | None:
    """The item a judge's check is about (None: no judge decided it)."""
    details = check.details or {}
    if details.get("judge") in (None, OFFLINE_JUDGE_NAME) or check.outcome == "not_run":
        return None
    if check.kind == CRITERION_KIND:
        return str(details.get("criterion_id") or "") or None
    if check.kind == "judge_score":
        return rubric_id
    return None


def mark_checks(checks: Sequence[CheckResult], spec: ConversationSpec, policy: CalibrationPolicy) -> list[CheckResult]:
    """`checks` with each judge's verdict marked (see the module doc)."""
    rubric_id = rubric_item(spec)[0]
    out = []
    for check in checks:
        item = _item_of(check, rubric_id)
        if item is None:
            out.append(check)
            continue
        mark = policy.mark(item)
        details: dict[str, Any] = {**check.details, CALIBRATION_DETAIL: {**mark.model_dump(), "text": mark.text, "item_id": item}}
        update: dict[str, Any] = {"details": details}
        if policy.require and not mark.trusted:
            update["untrusted"] = True
        out.append(check.model_copy(update=update))
    return out


def calibration_of(check: CheckResult | Mapping[str, Any]) -> Mapping[str, Any] | None:
    """A check's calibration mark as stored (a CheckResult or its JSON), None when it has none."""
    details = check.details if isinstance(check, CheckResult) else (check.get("details") or {})
    found = details.get(CALIBRATION_DETAIL) if isinstance(details, Mapping) else None
    return found if isinstance(found, Mapping) else None


def calibration_text(check: CheckResult | Mapping[str, Any]) -> str | None:
    """ "κ 0.72", "uncalibrated", "below threshold (κ 0.41 < 0.6)" or "κ undefined": how a
    check's judge was calibrated on it; None for a check no judge decided, or stored unmarked."""
    found = calibration_of(check)
    return str(found["text"]) if found is not None and found.get("text") else None


def marked_name(check: CheckResult | Mapping[str, Any]) -> str:
    """A check's name as reports list it: `The bot apologises [κ 0.72]`, the judge's calibration
    in brackets when a judge decided it (the name alone otherwise)."""
    name = check.name if isinstance(check, CheckResult) else str(check.get("name"))
    text = calibration_text(check)
    return f"{name} [{text}]" if text else name


def score_calibration(checks: Sequence[CheckResult] | Sequence[Mapping[str, Any]]) -> str | None:
    """How the judge that gave a verdict's score was calibrated on its rubric (the mark of the
    verdict's judge-score check), None when none is marked."""
    for check in checks:
        kind = check.kind if isinstance(check, CheckResult) else check.get("kind")
        if kind == "judge_score" and (text := calibration_text(check)):
            return text
    return None
