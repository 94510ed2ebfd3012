"""A judge measured against people's labels: the figures of one calibration (pure).

`measure_judge(labels, judged, key)` sets each label on a criterion or a rubric beside the
judge's decision on the same item of the same conversation (`judged`: the conversation's spec
and the verdict the judge gave when it re-judged it) and reports per item and overall (every
criterion pooled; the rubric, a score, on its own):
- `labels`: the pairs compared; a label whose item the judge could not decide (an error, a
  split jury) is counted in `judge_errors` instead, never as agreeing or not;
- `agreement`, Cohen's `kappa` (quadratic-weighted on the rubric's 1-3) and a seeded bootstrap
  95% `interval` (parley.core.evaluation.agreement); `not_applicable` is a category of its own;
  kappa is undefined (`one_class`) when the labels hold one value only;
- the `confusion` matrix (rows: the person's labels; columns: the judge's decisions);
- every disagreement, the judge's quote and reason beside the person's label and note, false
  passes first (the judge passed what the person did not: met over not met, a higher score);
- `labellers_kappa`: with two labellers on the same items, their own kappa: the ceiling.
Labels on `expect:` checks are kept with the labels but measure no judge. A label on an item the
conversation's spec no longer has (a criterion edited without an `id:`, another rubric) is left
out and said so in `notes`.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence

from parley.core.evaluation.agreement import agreement_share, bootstrap_kappa, confusion_matrix, kappa_of_pairs
from parley.core.evaluation.criteria import CRITERION_KIND, criteria_of
from parley.core.evaluation.jury import ERROR_VOTE
from parley.core.evaluation.labelled_items import judged_value, rubric_item
from parley.core.records import (
    Calibration,
    ConversationSpec,
    Disagreement,
    ItemCalibration,
    ItemKind,
    JudgeKey,
    Label,
    LabelValue,
    Verdict,
    categories_of,
)

__all__ = ["measure_judge"]

DEFAULT_RESAMPLES = 2000


def _seed(item_id: str) -> int:
    """The bootstrap's seed for an item: the same item always gives the same interval."""
    return int.from_bytes(hashlib.sha256(item_id.encode()).digest()[:4], "big")


def _false_pass(kind: ItemKind, label: LabelValue, judged: LabelValue) -> bool:
    if kind == "rubric":
        return int(judged) > int(label)
    return judged == "met" and label == "not_met"


def _gap(kind: ItemKind, disagreement: Disagreement) -> int:
    """How far apart a rubric's two scores are (the farthest listed first); 0 for a criterion."""
    return abs(int(disagreement.judged) - int(disagreement.label)) if kind == "rubric" else 0


def _evidence(verdict: Verdict, kind: ItemKind, item_id: str, text: str) -> tuple[str | None, str]:
    """The judge's quote and reason on an item of its verdict."""
    if kind == "rubric":
        judge = verdict.judge
        return None, (judge.comment or "") if judge is not None else ""
    for check in verdict.checks:
        if check.kind == CRITERION_KIND and ((check.details or {}).get("criterion_id") == item_id or check.name == text):
            details = check.details or {}
            return details.get("quote"), str(details.get("reasoning") or check.reason)
    return None, ""


def _labellers_kappa(labels: Sequence[Label], kind: ItemKind) -> tuple[float | None, int]:
    """The kappa between the two labellers with the most labels here, on the items both labelled."""
    by_labeller: dict[str, dict[tuple[str, str], LabelValue]] = defaultdict(dict)
    for label in labels:
        by_labeller[label.labeller][(label.conversation_id, label.item_id)] = label.value
    if len(by_labeller) < 2:
        return None, 0
    first, second = sorted(by_labeller, key=lambda name: (-len(by_labeller[name]), name))[:2]
    shared = sorted(set(by_labeller[first]) & set(by_labeller[second]))
    pairs = [(by_labeller[first][k], by_labeller[second][k]) for k in shared]
    if not pairs:
        return None, 0
    return kappa_of_pairs(pairs, categories_of(kind), weighted=kind == "rubric"), len(pairs)


def _figures(
    kind: ItemKind | None,
    item_id: str,
    text: str,
    pairs: Sequence[tuple[LabelValue, LabelValue]],
    *,
    resamples: int,
) -> ItemCalibration:
    """Counts, agreement, kappa and its interval, the confusion matrix of `pairs` (person, judge)."""
    categories = categories_of(kind or "criterion")
    weighted = kind == "rubric"
    matrix = confusion_matrix(pairs, categories)
    one_class = len({person for person, _ in pairs}) < 2
    return ItemCalibration(
        kind=kind or "overall",
        item_id=item_id,
        text=text,
        categories=list(categories),
        labels=len(pairs),
        agreement=agreement_share(matrix),
        kappa=None if one_class else kappa_of_pairs(pairs, categories, weighted=weighted),
        weighted=weighted,
        interval=None if one_class else bootstrap_kappa(pairs, categories, weighted=weighted, resamples=resamples, seed=_seed(item_id)),
        one_class=one_class,
        confusion=matrix,
    )


def _juror_errors(verdicts: Sequence[Verdict]) -> dict[str, int]:
    """How often each juror of a jury failed (its score, each criterion), over the verdicts."""
    errors: Counter[str] = Counter()
    for verdict in verdicts:
        votes = [verdict.judge.jurors] if verdict.judge is not None else []
        votes += [c.details["jurors"] for c in verdict.checks if c.kind == CRITERION_KIND and isinstance(c.details.get("jurors"), dict)]
        for said in votes:
            errors.update(juror for juror, vote in said.items() if str(vote).startswith(ERROR_VOTE))
    return dict(sorted(errors.items()))


def _known_items(spec: ConversationSpec) -> dict[tuple[ItemKind, str], str]:
    """The items a judge decides on a conversation of `spec`, with their text as it stands."""
    known: dict[tuple[ItemKind, str], str] = {("criterion", c.id): c.text for c in criteria_of(spec, builtin=True)}
    rubric_id, rubric = rubric_item(spec)
    known[("rubric", rubric_id)] = " ".join(rubric.split())
    return known


def _item_of(label: Label, known: Mapping[tuple[ItemKind, str], str]) -> tuple[ItemKind, str] | None:
    """The item a label is on: by its id, else (a criterion) by its text (a label file that gave
    the text alone, of a criterion whose author gave it an `id:`)."""
    if (label.kind, label.item_id) in known:
        return label.kind, label.item_id
    text = " ".join(label.item_text.split()).casefold()
    if label.kind == "criterion" and text:
        return next((item for item, known_text in known.items() if item[0] == "criterion" and known_text.casefold() == text), None)
    return None


def measure_judge(
    labels: Sequence[Label],
    judged: Mapping[str, tuple[ConversationSpec, Verdict]],
    key: JudgeKey,
    *,
    source: str = "",
    resamples: int = DEFAULT_RESAMPLES,
) -> Calibration:
    """The judge of `key` measured against `labels` (see the module doc). `judged`: conversation
    id -> (its spec, the verdict the judge gave it); a label on a conversation not in it is left out."""
    pairs: dict[tuple[ItemKind, str], list[tuple[LabelValue, LabelValue]]] = defaultdict(list)
    errors: Counter[tuple[ItemKind, str]] = Counter()
    texts: dict[tuple[ItemKind, str], str] = {}
    disagreements: dict[tuple[ItemKind, str], list[Disagreement]] = defaultdict(list)
    by_item: dict[tuple[ItemKind, str], list[Label]] = defaultdict(list)
    stale = 0
    on_checks = 0
    for label in labels:
        if label.kind == "check":
            on_checks += 1
            continue
        if label.conversation_id not in judged:
            continue
        spec, verdict = judged[label.conversation_id]
        known = _known_items(spec)
        item = _item_of(label, known)
        if item is None:
            stale += 1
            continue
        if item[1] != label.item_id:  # a label that named its criterion by text: under the criterion's id
            label = label.model_copy(update={"item_id": item[1]})
        by_item[item].append(label)
        texts.setdefault(item, known[item])
        decision = judged_value(verdict, label.kind, label.item_id, label.item_text)
        if decision is None:
            errors[item] += 1
            continue
        pairs[item].append((label.value, decision))
        if decision != label.value:
            quote, reason = _evidence(verdict, label.kind, label.item_id, label.item_text)
            disagreements[item].append(
                Disagreement(
                    conversation_id=label.conversation_id,
                    labeller=label.labeller,
                    label=label.value,
                    judged=decision,
                    quote=quote,
                    reason=reason,
                    note=label.note,
                    false_pass=_false_pass(label.kind, label.value, decision),
                )
            )
    items = []
    for item in sorted(by_item, key=lambda i: (i[0] == "rubric", texts[i])):
        kind, item_id = item
        figures = _figures(kind, item_id, texts[item], pairs[item], resamples=resamples)
        listed = sorted(disagreements[item], key=lambda d: (not d.false_pass, -_gap(kind, d), d.conversation_id, d.labeller))
        ceiling, shared = _labellers_kappa(by_item[item], kind)
        items.append(
            figures.model_copy(
                update={"judge_errors": errors[item], "disagreements": listed, "labellers_kappa": ceiling, "labellers_items": shared}
            )
        )
    criteria = [i for i in by_item if i[0] == "criterion"]
    overall = None
    if criteria:
        pooled = [p for i in criteria for p in pairs[i]]
        overall = _figures(None, "overall", "every criterion", pooled, resamples=resamples)
        ceiling, shared = _labellers_kappa([label for i in criteria for label in by_item[i]], "criterion")
        overall = overall.model_copy(
            update={"judge_errors": sum(errors[i] for i in criteria), "labellers_kappa": ceiling, "labellers_items": shared}
        )
    notes = []
    if stale:
        notes.append(f"{stale} label(s) on criteria or rubrics the conversations' specs no longer have were left out")
    if on_checks:
        notes.append(f"{on_checks} label(s) on expect: checks measure no judge and were left out")
    used = {label.conversation_id for label in labels if label.conversation_id in judged}
    return Calibration(
        key=key,
        source=source,
        conversations=len(used),
        items=items,
        overall=overall,
        juror_errors=_juror_errors([judged[c][1] for c in sorted(used)]),
        notes=notes,
    )
