"""Whether two batches were judged by differently calibrated judges (`parley compare`).

A change in a criterion's or the score's verdicts between two batches may be the judge's, not
the bot's: another judge model, endpoint, prompt or temperature, or the same judge measured
differently since. `calibration_difference` reads each batch's judge (its calibration key) and
how it was calibrated on each item it decided (the marks its verdicts carry), and says where
they differ; None when they do not, or neither batch was judged by a model.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from parley.core.records import BatchRecord
from parley.core.store import Store, criterion_counts, judge_keys, rubric_calibration

__all__ = ["CalibrationDifference", "ItemMarks", "calibration_difference"]

SCORE_ITEM = "score"


class ItemMarks(BaseModel):
    """One item (a criterion, or the score) whose calibration differs: its mark in each batch
    (None: that batch's judge did not decide it)."""

    item: str
    base: str | None
    new: str | None


class CalibrationDifference(BaseModel):
    """The two batches' judges and the items on which their calibrations differ."""

    base_judges: list[str] = Field(default_factory=list)
    new_judges: list[str] = Field(default_factory=list)
    items: list[ItemMarks] = Field(default_factory=list)

    def sentence(self) -> str:
        """One paragraph saying so, the differing items listed."""
        judges = f"{', '.join(self.base_judges) or 'no model'} in the base, {', '.join(self.new_judges) or 'no model'} in the new batch"
        marks = "; ".join(f"{i.item}: {i.base or 'not judged'} vs {i.new or 'not judged'}" for i in self.items)
        return (
            f"The two batches were judged by differently calibrated judges ({judges}): {marks}. "
            "A change in these verdicts may be the judges', not the bot's."
        )


def _marks(store: Store, batch_id: str) -> dict[str, str]:
    marks = {c.criterion: c.calibration for c in criterion_counts(store, batch_id) if c.calibration}
    rubric = rubric_calibration(store, batch_id)
    if rubric:
        marks[SCORE_ITEM] = rubric
    return marks


def calibration_difference(store: Store, base: BatchRecord, new: BatchRecord) -> CalibrationDifference | None:
    """Where the two batches' judges' calibrations differ (see the module doc)."""
    base_marks, new_marks = _marks(store, base.id), _marks(store, new.id)
    if not base_marks and not new_marks:
        return None
    base_keys, new_keys = judge_keys(store, base.id), judge_keys(store, new.id)
    items = [
        ItemMarks(item=item, base=base_marks.get(item), new=new_marks.get(item))
        for item in dict.fromkeys([*base_marks, *new_marks])
        if base_marks.get(item) != new_marks.get(item) and item in base_marks and item in new_marks
    ]
    if not items:
        return None
    return CalibrationDifference(
        base_judges=sorted({k.describe() for k in base_keys}),
        new_judges=sorted({k.describe() for k in new_keys}),
        items=items,
    )
