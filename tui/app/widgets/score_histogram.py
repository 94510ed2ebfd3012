"""ScoreHistogram: how many conversations of a batch the judge scored 1, 2 and 3, as bars."""

from __future__ import annotations

from collections.abc import Iterable

from textual.content import Content
from textual.widgets import Static

from parley.tui.app.widgets.in_place import update_in_place

SCORES = (1, 2, 3)
BAR_WIDTH = 12


def score_counts(scores: Iterable[int | None]) -> dict[int, int]:
    """Counts of 1, 2 and 3 among `scores` (unscored conversations are not counted)."""
    counts = dict.fromkeys(SCORES, 0)
    for score in scores:
        if score in counts:
            counts[score] += 1
    return counts


def render_histogram(counts: dict[int, int], *, width: int = BAR_WIDTH) -> str:
    """One line per score: the score, a bar scaled to the largest count, the count. Only scores a
    judge gave are charted: conversations nobody scored (the offline judge gives none) say so."""
    unscored = counts.get(0, 0)
    if unscored and not any(counts.get(score, 0) for score in SCORES):
        return f"no score: no LLM judge\nscored these {unscored}\n(the checks decide)"
    top = max(counts.get(score, 0) for score in SCORES)
    lines = []
    for score in SCORES:
        n = counts.get(score, 0)
        filled = round(width * n / top) if top else 0
        lines.append(f"{score} {'█' * filled}{'·' * (width - filled)} {n}")
    if unscored:
        lines.append(f"unscored {unscored}")
    return "\n".join(lines)


class ScoreHistogram(Static):
    """The score distribution of the batch shown; `counts` is the last one drawn."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(Content(render_histogram(dict.fromkeys(SCORES, 0))), id=id)
        self.border_title = "Scores"
        self.counts: dict[int, int] = dict.fromkeys(SCORES, 0)
        self._unscored = 0

    def show_counts(self, counts: dict[int, int], unscored: int = 0) -> None:
        """Redraw from counts kept elsewhere (a running batch's, updated one row at a time)."""
        counts = {s: counts.get(s, 0) for s in SCORES}
        if counts == self.counts and unscored == self._unscored:
            return
        self.counts, self._unscored = counts, unscored
        update_in_place(self, Content(render_histogram({**self.counts, 0: unscored})))

    def show_scores(self, scores: Iterable[int | None]) -> None:
        """Redraw from every conversation's score."""
        scores = list(scores)
        counts = score_counts(scores)
        self.counts = counts
        unscored = sum(1 for s in scores if s not in counts)
        self.update(Content(render_histogram({**counts, 0: unscored})))
