"""What a person can label on one conversation, and what the judge decided on each.

- each criterion in words the judge decides (the spec's, and the built-in one an LLM judge
  asks), known by its stable id (parley.core.evaluation.criteria.criterion_id);
- the judge's rubric: a score of 1-3 (the profile's rubric, the scenario's evaluator prompt, or
  parley's default), known by its `id:` or its text (`rubric_item`);
- each `expect:` check a person can decide from the transcript (an order's final status, a tool
  called or not, what the bot said), known by its name.

`judged_value` reads the judge's decision on an item from a verdict, in a label's own words
(met / not_met / not_applicable, or "1"-"3"): what `parley judge calibrate` sets beside each
label. None when the judge could not decide it (an error, not run): never counted as agreeing
or disagreeing.
"""

from __future__ import annotations

import hashlib
from typing import cast

from pydantic import BaseModel, ConfigDict

from parley.core.evaluation.criteria import CRITERION_KIND, criteria_of, criterion_state
from parley.core.evaluation.judge import DEFAULT_RUBRIC, OFFLINE_JUDGE_NAME, choose_rubric
from parley.core.records import CheckResult, ConversationSpec, ItemKind, LabelValue, Verdict

__all__ = ["LABELLED_CHECK_KINDS", "LabelItem", "judged_value", "label_items", "rubric_item"]

LABELLED_CHECK_KINDS = frozenset({"order_status", "unchanged_others", "tool_called", "tool_not_called", "bot_says", "bot_never_says"})
"""The `expect:` checks a person can decide from the transcript and the final state."""
DEFAULT_RUBRIC_ID = "rubric-default"
_STATES: dict[str, LabelValue] = {"met": "met", "not met": "not_met", "not applicable": "not_applicable"}


class LabelItem(BaseModel):
    """One item of a conversation a person can label: its kind, stable id, the text shown (the
    criterion, the rubric, the check's name) and what was decided (`judged`, in a label's words;
    None: not decided)."""

    model_config = ConfigDict(frozen=True)

    kind: ItemKind
    item_id: str
    text: str
    judged: LabelValue | None = None
    reason: str = ""


def rubric_item(spec: ConversationSpec) -> tuple[str, str]:
    """(id, text) of the rubric an LLM judge scores `spec` against: the profile's `id:`, else
    `rubric-default` for parley's default, else `rubric-` and 8 hex digits of the text."""
    text, source = choose_rubric(spec)
    judge = spec.expect.judge if spec.expect is not None else None
    if source == "profile" and judge is not None and judge.id:
        return judge.id, text
    if text == DEFAULT_RUBRIC:
        return DEFAULT_RUBRIC_ID, text
    return "rubric-" + hashlib.sha256(" ".join(text.split()).casefold().encode()).hexdigest()[:8], text


def _check_value(check: CheckResult) -> LabelValue | None:
    if check.kind == CRITERION_KIND:
        return _STATES.get(criterion_state(check.outcome, check.details))
    checked: dict[str, LabelValue] = {"pass": "met", "fail": "not_met"}
    return checked.get(check.outcome)


def judged_value(verdict: Verdict | None, kind: ItemKind, item_id: str, text: str = "") -> LabelValue | None:
    """The decision `verdict` holds on an item (see the module doc): a criterion's check found
    by its id (else by its text), the judge's score for the rubric, a check by its name."""
    if verdict is None:
        return None
    if kind == "rubric":
        judge = verdict.judge
        if judge is None or judge.error is not None or judge.score is None or judge.judge == OFFLINE_JUDGE_NAME:
            return None
        return cast(LabelValue, str(judge.score))
    for check in verdict.checks:
        if kind == "criterion" and check.kind == CRITERION_KIND:
            if (check.details or {}).get("criterion_id") == item_id or (text and check.name == text):
                return _check_value(check)
        elif kind == "check" and check.kind != CRITERION_KIND and check.name == item_id:
            return _check_value(check)
    return None


def _criterion_check(verdict: Verdict | None, item_id: str, text: str) -> CheckResult | None:
    for check in verdict.checks if verdict is not None else []:
        if check.kind == CRITERION_KIND and ((check.details or {}).get("criterion_id") == item_id or check.name == text):
            return check
    return None


def label_items(spec: ConversationSpec, verdict: Verdict | None, *, builtin: bool = True) -> list[LabelItem]:
    """Every item a person can label on a conversation of `spec` (see the module doc), with what
    its stored `verdict` decided; `builtin`: the built-in criterion too (an LLM judge asks it)."""
    items: list[LabelItem] = []
    for criterion in criteria_of(spec, builtin=builtin):
        check = _criterion_check(verdict, criterion.id, criterion.text)
        items.append(
            LabelItem(
                kind="criterion",
                item_id=criterion.id,
                text=criterion.text,
                judged=_check_value(check) if check is not None else None,
                reason=check.reason if check is not None else "",
            )
        )
    rubric_id, rubric = rubric_item(spec)
    judge = verdict.judge if verdict is not None else None
    items.append(
        LabelItem(
            kind="rubric",
            item_id=rubric_id,
            text=rubric,
            judged=judged_value(verdict, "rubric", rubric_id),
            reason=(judge.comment or judge.error or "") if judge is not None else "",
        )
    )
    for check in verdict.checks if verdict is not None else []:
        if check.kind in LABELLED_CHECK_KINDS and not check.by_default:
            items.append(LabelItem(kind="check", item_id=check.name, text=check.name, judged=_check_value(check), reason=check.reason))
    return items
