"""People's labels on conversations, and what a judge was measured to be worth against them.

- `Label`: one person's decision on one item of one conversation: a criterion in words (met,
  not met, not applicable), the judge's rubric (a score of 1-3) or an `expect:` check (met, not
  met, not applicable), with who labelled it, when, and a note. Two labellers may label the same
  item: each label is kept.
- `JudgeKey`: what a judge is for calibration: its model (or jury), endpoint, prompt version and
  generation settings. A calibration holds for the verdicts of the same key only.
- `ItemCalibration` and `Calibration`: the figures of one calibration run (`parley judge
  calibrate`), per item and overall: counts, agreement, Cohen's kappa with its interval, the
  confusion matrix, the disagreements, and the kappa between two labellers (the ceiling).
- `CalibrationMark`: how one verdict of a judge reads beside its calibration: "κ 0.72",
  "uncalibrated", "below threshold (κ 0.41 < 0.6)", "κ undefined".
"""

from __future__ import annotations

import datetime
import hashlib
import json
import uuid
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from parley.core.option_declarations import option

__all__ = [
    "BUILTIN_CRITERION_ID",
    "CALIBRATION_STATES",
    "CHECK_LABELS",
    "CRITERION_LABELS",
    "DEFAULT_MIN_KAPPA",
    "RUBRIC_LABELS",
    "Calibration",
    "CalibrationMark",
    "CalibrationState",
    "Disagreement",
    "ItemCalibration",
    "ItemKind",
    "JudgeKey",
    "Label",
    "LabelValue",
    "categories_of",
    "criterion_id",
]

DEFAULT_MIN_KAPPA: float = option("min_kappa").default
"""The kappa below which a judge's verdicts on an item are marked below threshold (`--min-kappa`)."""

ItemKind = Literal["criterion", "rubric", "check"]
"""What a label is about: a criterion in words, the judge's rubric (its score), an `expect:` check."""
LabelValue = Literal["met", "not_met", "not_applicable", "1", "2", "3"]
"""A person's decision: met / not_met / not_applicable on a criterion or a check, 1-3 on a rubric."""
CRITERION_LABELS: tuple[LabelValue, ...] = ("met", "not_met", "not_applicable")
CHECK_LABELS = CRITERION_LABELS
RUBRIC_LABELS: tuple[LabelValue, ...] = ("1", "2", "3")
LABEL_VALUES: tuple[LabelValue, ...] = get_args(LabelValue)


def categories_of(kind: ItemKind) -> tuple[LabelValue, ...]:
    """The values a label on an item of `kind` takes, in order (a rubric's are ordered)."""
    return RUBRIC_LABELS if kind == "rubric" else CRITERION_LABELS


BUILTIN_CRITERION_ID = "claims"
"""The id of parley's built-in criterion (what the bot says it did, it did)."""


def criterion_id(text: str) -> str:
    """The id of a criterion its author gave none: `c-` and 8 hex digits of its text (case and
    spacing do not count). Editing the text makes another criterion; an `id:` keeps it."""
    plain = " ".join(text.split()).casefold()
    return "c-" + hashlib.sha256(plain.encode()).hexdigest()[:8]


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


class Label(BaseModel):
    """One person's label on one item of one stored conversation (see the module doc).
    `item_id` is the criterion's stable id (its `id:`, else derived from its text), the rubric's
    id, or a check's name; `item_text` the criterion's text, the rubric or the check's name as
    the labeller saw it."""

    model_config = ConfigDict(frozen=True)

    conversation_id: str
    kind: ItemKind
    item_id: str
    item_text: str = ""
    value: LabelValue
    labeller: str
    note: str = ""
    labelled_at: datetime.datetime = Field(default_factory=_now)


class JudgeKey(BaseModel):
    """What a judge is, for calibration: its model name (`jury:A,B,C` for a jury), the endpoint
    it was called at (None: not known, or several), the version of parley's judge prompts and
    its generation settings (temperature, max tokens...). A calibration applies to verdicts of
    the same key only: another endpoint, prompt or temperature is another judge."""

    model_config = ConfigDict(frozen=True)

    model: str
    endpoint: str | None = None
    prompt_version: str = ""
    generation: dict[str, Any] = Field(default_factory=dict)

    @property
    def digest(self) -> str:
        """A short stable name of the key (16 hex digits), the same for equal keys."""
        text = json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def describe(self) -> str:
        """`openai/gpt-4o-mini at https://api.openai.com/v1, prompts p-1a2b3c, temperature=0.0`."""
        settings = ", ".join(f"{k}={v}" for k, v in sorted(self.generation.items())) or "default settings"
        where = f" at {self.endpoint}" if self.endpoint else ""
        return f"{self.model}{where}, prompts {self.prompt_version or '?'}, {settings}"


class Disagreement(BaseModel):
    """One item on which the judge and a person differ: the person's label and note beside the
    judge's decision, its quote and reason. `false_pass`: the judge passed what the person did
    not (met over not met, or a higher score)."""

    conversation_id: str
    labeller: str
    label: LabelValue
    judged: LabelValue
    quote: str | None = None
    reason: str = ""
    note: str = ""
    false_pass: bool = False


class ItemCalibration(BaseModel):
    """One item's figures (a criterion, the rubric, or every criterion pooled: `overall`).

    `labels` counts the (label, judge decision) pairs compared; a label whose item the judge
    could not decide counts in `judge_errors` instead. `kappa` is Cohen's (quadratic-weighted
    for the rubric: `weighted`), None when undefined (`one_class`: the labels hold one value
    only). `confusion[i][j]`: labels of `categories[i]` the judge decided as `categories[j]`.
    `labellers_kappa`: the kappa between the first two labellers on the items both labelled
    (`labellers_items`), the ceiling a judge can be held to."""

    kind: ItemKind | Literal["overall"]
    item_id: str
    text: str = ""
    categories: list[LabelValue] = Field(default_factory=list)
    labels: int = 0
    judge_errors: int = 0
    agreement: float | None = None
    kappa: float | None = None
    weighted: bool = False
    interval: tuple[float, float] | None = None
    one_class: bool = False
    confusion: list[list[int]] = Field(default_factory=list)
    disagreements: list[Disagreement] = Field(default_factory=list)
    labellers_kappa: float | None = None
    labellers_items: int = 0


class Calibration(BaseModel):
    """One calibration of one judge (`parley judge calibrate`): its key, the labels it was
    measured on (`source`), the conversations re-judged, the figures per item and overall, and
    for a jury how often each juror failed (`juror_errors`: never counted as a vote)."""

    id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    created_at: datetime.datetime = Field(default_factory=_now)
    key: JudgeKey
    source: str = ""
    conversations: int = 0
    items: list[ItemCalibration] = Field(default_factory=list)
    overall: ItemCalibration | None = None
    juror_errors: dict[str, int] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)
    """What was left out and why (labels on items the specs no longer have, on checks)."""

    def item(self, item_id: str) -> ItemCalibration | None:
        """The figures of item `item_id` (None: not labelled in this calibration)."""
        return next((i for i in self.items if i.item_id == item_id), None)


CalibrationState = Literal["calibrated", "below_threshold", "undefined", "uncalibrated"]
CALIBRATION_STATES: tuple[CalibrationState, ...] = get_args(CalibrationState)


class CalibrationMark(BaseModel):
    """How a judge's verdict on one item reads beside what was measured of that judge: its
    kappa (`calibrated`), under `min_kappa` (`below_threshold`), undefined (the labels held one
    value only), or no calibration of this judge on this item (`uncalibrated`). `trusted` is
    the first only: what `--require-calibrated` lets count towards a pass."""

    model_config = ConfigDict(frozen=True)

    state: CalibrationState
    kappa: float | None = None
    min_kappa: float = DEFAULT_MIN_KAPPA
    weighted: bool = False
    calibration_id: str | None = None

    @property
    def trusted(self) -> bool:
        return self.state == "calibrated"

    @property
    def text(self) -> str:
        """ "κ 0.72" (κw for a rubric's weighted kappa), "below threshold (κ 0.41 < 0.6)",
        "κ undefined" or "uncalibrated"."""
        symbol = "κw" if self.weighted else "κ"
        if self.state == "uncalibrated" or (self.kappa is None and self.state != "undefined"):
            return "uncalibrated"
        if self.state == "undefined":
            return f"{symbol} undefined"
        if self.state == "below_threshold":
            return f"below threshold ({symbol} {self.kappa:.2f} < {self.min_kappa:g})"
        return f"{symbol} {self.kappa:.2f}"
