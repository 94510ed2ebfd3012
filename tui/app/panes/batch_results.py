"""A batch's results as the Batches pane holds them, without Textual: the rows, their counts by
outcome and score (kept up to date one row at a time), and the filtered, sorted view.

A running 10,000-conversation batch adds rows many times a second: adding is O(1) (a dict of
ids for duplicates, counters for the totals), and the view is only recomputed when the filter
or the sort changes, or when rows arrive under a filter or a sort (O(new rows) then, plus a sort).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from parley.core.records import ConversationRow

UNEVALUATED = "unevaluated"
OUTCOME_LABELS = {"infrastructure_error": "infra error", "evaluation_error": "eval error"}
"""What an Outcome column says of an outcome: its name with spaces (`bot error`, `user fault`),
these two shortened so the column stays narrow."""

SORTS: dict[str, str] = {
    "run": "run order",
    "score": "score, lowest first",
    "turns": "turns, most first",
    "time": "time, longest first",
    "tokens": "tokens, most first",
    "profile": "profile",
    "outcome": "outcome",
}
"""Sort keys and how the sort menu names them."""

_TOKEN = re.compile(r"^(outcome|profile|stop|score|trial):(.*)$", re.IGNORECASE)
_SCORE = re.compile(r"^(<=|>=|<|>|=)?\s*([0-9]+)$")


def plural(n: int, word: str, words: str | None = None) -> str:
    """`1 error`, `2 errors`, `1 batch`, `3 batches`."""
    return f"{n:,} {word if n == 1 else (words or word + 's')}"


def outcome_of(row: ConversationRow) -> str:
    return row.outcome or UNEVALUATED


def outcome_label(outcome: str | None) -> str:
    """What the results and sessions tables say of an outcome: passed, bot error, infra error..."""
    if outcome is None:
        return "-"
    return OUTCOME_LABELS.get(outcome, outcome.replace("_", " "))


def result_cells(row: ConversationRow) -> dict[str, str]:
    """A conversation as the results table shows it (durations to a tenth of a second)."""
    variables = ", ".join(f"{k}={v}" for k, v in row.variables.items()) or "-"
    return {
        "name": row.name,
        "trial": str(row.trial),
        "variables": variables,
        "stop": row.stop_reason,
        "outcome": outcome_label(row.outcome),
        "score": "-" if row.score is None else str(row.score),
        "turns": str(row.turns),
        "tokens": f"{row.input_tokens + row.output_tokens:,}",
        "cost": "unknown" if row.cost_usd is None else f"${row.cost_usd:.4f}",
        "time": f"{row.duration_s:.1f}s",
    }


@dataclass(frozen=True)
class ResultsFilter:
    """What the filter box says: free text (searched in names, variables, comments, errors and,
    through the store, the transcript) and `key:value` terms."""

    text: str = ""
    outcome: str | None = None
    profile: str | None = None
    stop: str | None = None
    score: tuple[str, int] | None = None  # (operator, value); ("=", 0) for unscored
    transcript_ids: frozenset[str] | None = None  # ids whose transcript matched `text`

    @property
    def active(self) -> bool:
        return bool(self.text or self.outcome or self.profile or self.stop or self.score)

    @classmethod
    def parse(cls, text: str, outcome: str | None = None) -> ResultsFilter:
        """`refund profile:cancel stop:max_turns score:<3 outcome:failed` -> a filter. An
        unknown key or a score that is not one is a ValueError saying which term."""
        words: list[str] = []
        fields: dict[str, Any] = {"outcome": outcome}
        for term in text.split():
            match = _TOKEN.match(term)
            if not match:
                words.append(term)
                continue
            key, value = match.group(1).lower(), match.group(2).strip()
            if not value:
                raise ValueError(f"{term!r}: say what {key} to keep, e.g. {key}:{_EXAMPLES[key]}")
            if key == "score":
                if value in ("-", "none", "unscored"):
                    fields["score"] = ("=", 0)
                    continue
                score = _SCORE.match(value)
                if not score:
                    raise ValueError(f"{term!r}: a score is 1, 2 or 3, optionally with <, <=, > or >= (score:<3)")
                fields["score"] = (score.group(1) or "=", int(score.group(2)))
            else:
                fields[key] = value.lower()
        return cls(text=" ".join(words), **{k: v for k, v in fields.items() if k != "trial"})

    def keeps(self, row: ConversationRow) -> bool:
        if self.outcome and outcome_of(row) != self.outcome:
            return False
        if self.profile and self.profile not in row.name.lower() and self.profile not in row.spec_id.lower():
            return False
        if self.stop and not row.stop_reason.lower().startswith(self.stop):
            return False
        if self.score is not None:
            op, value = self.score
            if value == 0:
                if row.score is not None:
                    return False
            elif row.score is None or not _compare(row.score, op, value):
                return False
        if self.text:
            if self.transcript_ids is not None and row.id in self.transcript_ids:
                return True
            needle = self.text.lower()
            hay = " ".join(
                [row.name, row.spec_id, *(f"{k}={v}" for k, v in row.variables.items()), row.comment or "", row.error or ""]
            ).lower()
            return needle in hay
        return True


_EXAMPLES = {"outcome": "failed", "profile": "cancel", "stop": "max_turns", "score": "<3", "trial": "2"}


def _compare(score: int, op: str, value: int) -> bool:
    return {"=": score == value, "<": score < value, "<=": score <= value, ">": score > value, ">=": score >= value}[op]


def _sort_key(key: str) -> Callable[[ConversationRow], Any]:
    if key == "run":
        return lambda r: (r.started_at, r.name, r.trial)
    if key == "score":
        return lambda r: (r.score is None, r.score or 0)
    if key == "turns":
        return lambda r: -r.turns
    if key == "time":
        return lambda r: -r.duration_s
    if key == "tokens":
        return lambda r: -(r.input_tokens + r.output_tokens)
    if key == "profile":
        return lambda r: (r.name, r.spec_id, r.trial)
    if key == "outcome":
        return lambda r: outcome_of(r)
    raise ValueError(f"unknown sort {key!r}: one of {', '.join(SORTS)}")


@dataclass
class BatchResults:
    """One batch's rows in run order, their totals, and the view the table shows."""

    batch_id: str | None = None
    rows: list[ConversationRow] = field(default_factory=list)
    outcomes: Counter[str] = field(default_factory=Counter)
    scores: Counter[int | None] = field(default_factory=Counter)
    trials: int = 1
    filter: ResultsFilter = field(default_factory=ResultsFilter)
    sort: str = "run"
    view: list[ConversationRow] = field(default_factory=list)
    _ids: set[str] = field(default_factory=set)

    def reset(self, batch_id: str | None, rows: Iterable[ConversationRow] = ()) -> None:
        self.batch_id = batch_id
        self.rows, self._ids = [], set()
        self.outcomes, self.scores = Counter(), Counter()
        self.trials = 1
        self.add(rows)
        self.refilter()

    def add(self, rows: Iterable[ConversationRow]) -> list[ConversationRow]:
        """Add rows not seen yet; returns the ones that belong at the end of the view (all of
        them with no filter and run order; otherwise the view is recomputed and [] returned)."""
        fresh = []
        for row in rows:
            if row.id in self._ids:
                continue
            self._ids.add(row.id)
            self.rows.append(row)
            self.outcomes[outcome_of(row)] += 1
            self.scores[row.score] += 1
            self.trials = max(self.trials, row.trial)
            fresh.append(row)
        kept = [r for r in fresh if self.filter.keeps(r)] if self.filter.active else fresh
        if self.sort == "run":
            self.view.extend(kept)
            return kept
        if kept:
            self.view.extend(kept)
            self.view.sort(key=_sort_key(self.sort))
        return []

    def refilter(self, flt: ResultsFilter | None = None, sort: str | None = None) -> None:
        if flt is not None:
            self.filter = flt
        if sort is not None:
            _sort_key(sort)  # an unknown sort is an error before anything changes
            self.sort = sort
        view = [r for r in self.rows if self.filter.keeps(r)] if self.filter.active else list(self.rows)
        if self.sort != "run":
            view.sort(key=_sort_key(self.sort))
        self.view = view

    def count_line(self) -> str:
        """`12 of 40 shown` (or `40 conversations` when nothing is filtered out)."""
        if self.filter.active or len(self.view) != len(self.rows):
            return f"{len(self.view):,} of {len(self.rows):,} shown"
        return plural(len(self.rows), "conversation")

    def outcome_choices(self) -> list[tuple[str, str]]:
        """(label, value) for the outcome filter: the outcomes these rows have, by name. (No
        counts in the labels: they would change the menu at every draw of a running batch.)"""
        return [(name, name) for name in sorted(self.outcomes)]

    def score_counts(self) -> dict[int, int]:
        return {s: self.scores.get(s, 0) for s in (1, 2, 3)}

    @property
    def unscored(self) -> int:
        return sum(n for s, n in self.scores.items() if s not in (1, 2, 3))


def stored_order(rows: Sequence[ConversationRow]) -> list[ConversationRow]:
    """Rows in the order they ran (the store lists newest first)."""
    return sorted(rows, key=lambda r: (r.started_at, r.name, r.trial))
