"""A batch's pictures, drawn with matplotlib from its summary and report: the score histogram
(1, 2, 3 and no score; a PNG for `parley summarise --histogram`, SVG in the HTML report), the
outcomes, and how turns and the bot's response time spread (SVG, inlined in the HTML report).

Every bar is a number the summary holds (parley.core.evaluation.BatchSummary) or the report's
bins (parley.core.reports.distributions): nothing is counted here.

matplotlib is imported only when a picture is drawn, so start-up never pays for it. Figures are
made with its object-oriented API (no pyplot: no global figure list, nothing shared between the
app's worker threads) and saved through the Agg (PNG) or SVG backend, never an interactive one.
In SVG, text stays text (`svg.fonttype: none`): no glyph outlines, and the page's own font, so
nothing is fetched. Titles that come from a file or a batch are drawn as written (`parse_math`
off: a `$` in a name is a dollar sign).
"""

from __future__ import annotations

import hashlib
import io
import re
from collections.abc import Sequence
from contextlib import AbstractContextManager
from html import escape
from typing import TYPE_CHECKING, Any, Literal, cast

from parley.core.evaluation import BatchSummary, Interval
from parley.core.reports.distributions import Histogram

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

PictureFormat = Literal["png", "svg"]

HISTOGRAM_SIZE_PX = (800, 500)
"""The PNG score histogram's size in pixels (8 x 5 inches at 100 dpi)."""
DPI = 100

SCORE_BARS = ("1", "2", "3", "no score")
SCORE_COLOURS = ("#c0392b", "#d68910", "#1e8449", "#909497")
"""Score 1 red, 2 amber, 3 green, no score grey."""

OUTCOME_COLOURS: dict[str, str] = {
    "passed": "#1e8449",
    "failed": "#c0392b",
    "bot_error": "#a04000",
    "unverified": "#7f8c8d",
    "user_fault": "#7d3c98",
    "user_error": "#5b2c6f",
    "infrastructure_error": "#2e4053",
    "cancelled": "#909497",
    "evaluation_error": "#b7950b",
    "error": "#566573",
    "unevaluated": "#aab7b8",
}
"""One colour per outcome, the same in the charts and the HTML report's badges: green passed,
reds the bot's failures, greys and purples what is counted apart."""
BAR_COLOUR = "#2874a6"
BASE_COLOUR = "#a9cce3"
INK = "#1c2833"
GRID = "#d5d8dc"

_RC = {
    "svg.fonttype": "none",
    "svg.hashsalt": "parley",  # the same chart gives the same ids, so the same report the same bytes
    "font.family": "sans-serif",
    "font.size": 11,
    "axes.edgecolor": GRID,
    "axes.labelcolor": INK,
    "text.color": INK,
    "xtick.color": INK,
    "ytick.color": INK,
}


def score_counts(summary: BatchSummary) -> list[int]:
    """The bars of the score histogram, in SCORE_BARS order: the summary's distribution and unscored."""
    return [summary.score_distribution.get(f"score_{s}", 0) for s in (1, 2, 3)] + [summary.unscored]


def score_histogram(summary: BatchSummary, title: str, fmt: PictureFormat = "png") -> bytes:
    """The score distribution (1, 2, 3, no score) with each bar's count above it, titled `title`
    and the number of conversations. PNG: HISTOGRAM_SIZE_PX."""
    with _style():
        fig = _figure(HISTOGRAM_SIZE_PX[0] / DPI, HISTOGRAM_SIZE_PX[1] / DPI, left_pt=56, bottom_pt=44, top_pt=30)
        ax = fig.add_subplot()
        _bars(ax, list(SCORE_BARS), score_counts(summary), list(SCORE_COLOURS))
        ax.set_xlabel("Judge's score")
        ax.set_ylabel("Conversations")
        ax.set_title(f"{title}: {_conversations(summary.done)}", parse_math=False, loc="left")
        return _save(fig, fmt)


def score_histogram_svg(summary: BatchSummary, label: str) -> str:
    """The score histogram for the HTML report (smaller, no title: the page heads it)."""
    with _style():
        fig = _figure(4.6, 2.6)
        ax = fig.add_subplot()
        _bars(ax, list(SCORE_BARS), score_counts(summary), list(SCORE_COLOURS))
        ax.set_xlabel("Judge's score")
        ax.set_ylabel("Conversations")
        return inline_svg(_save(fig, "svg"), label)


def outcomes_svg(outcomes: Sequence[tuple[str, int]], label: str) -> str:
    """One horizontal bar per outcome (in the order given), each with its count."""
    with _style():
        names = [name for name, _ in outcomes]
        longest = max((len(n) for n in names), default=6)
        fig = _figure(4.6, 0.5 + 0.32 * max(len(outcomes), 1), left_pt=14 + 6.2 * longest, bottom_pt=8, top_pt=6)
        ax = fig.add_subplot()
        counts = [n for _, n in outcomes]
        bars = ax.barh(names, counts, color=[OUTCOME_COLOURS.get(n, BAR_COLOUR) for n in names], height=0.7)
        ax.bar_label(bars, labels=[str(n) for n in counts], padding=3, fontsize=10)
        ax.invert_yaxis()
        ax.set_xlim(0, max(max(counts, default=0), 1) * 1.15)
        ax.xaxis.set_visible(False)
        _plain(ax, grid="x")
        ax.spines["left"].set_visible(True)
        return inline_svg(_save(fig, "svg"), label)


def histogram_svg(histogram: Histogram, xlabel: str, label: str, *, whole: bool = False) -> str:
    """The report's bins as adjacent bars; `whole`: the bins are whole numbers (turns), labelled
    by value."""
    with _style():
        fig = _figure(4.6, 2.6)
        ax = fig.add_subplot()
        edges, counts = histogram.edges, histogram.counts
        if counts:
            widths = [b - a for a, b in zip(edges, edges[1:], strict=False)]
            ax.bar(edges[:-1], counts, width=widths, align="edge", color=BAR_COLOUR, edgecolor="white", linewidth=0.6)
            if whole and all(w == 1 for w in widths):
                ax.set_xticks([e + 0.5 for e in edges[:-1]], [f"{e:g}" for e in edges[:-1]])
                _thin_ticks(ax, len(counts))
            else:
                from matplotlib.ticker import MaxNLocator

                ax.xaxis.set_major_locator(MaxNLocator(nbins=5, integer=whole))
        ax.set_xlabel(xlabel)
        ax.set_ylabel("Conversations")
        _plain(ax, grid="y")
        return inline_svg(_save(fig, "svg"), label)


def rates_svg(rows: Sequence[tuple[str, Interval | None, float | None, Interval | None, float | None]], label: str) -> str:
    """Base and new side by side for each rate (`(name, base interval, base value, new interval,
    new value)`), in percent, each bar with its 95% interval as a whisker."""
    with _style():
        fig = _figure(4.6, 2.6, left_pt=40, bottom_pt=24, top_pt=28)
        ax = fig.add_subplot()
        width = 0.38
        for offset, side, colour, pick in ((-width / 2, "base", BASE_COLOUR, 1), (width / 2, "new", BAR_COLOUR, 3)):
            xs, values, low, high = [], [], [], []
            for i, row in enumerate(rows):
                value, interval = row[pick + 1], row[pick]
                if value is None:
                    continue
                xs.append(i + offset)
                values.append(value * 100)  # type: ignore[operator]
                low.append(max(0.0, (value - interval.low) * 100) if interval else 0.0)  # type: ignore[union-attr,operator]
                high.append(max(0.0, (interval.high - value) * 100) if interval else 0.0)  # type: ignore[union-attr,operator]
            ax.bar(
                xs, values, width=width, color=colour, label=side, yerr=[low, high], error_kw={"ecolor": INK, "capsize": 3, "elinewidth": 1}
            )
        ax.set_xticks(range(len(rows)), [row[0] for row in rows])
        ax.set_ylim(0, 105)
        ax.set_ylabel("%")
        ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, frameon=False, fontsize=10)
        _plain(ax, grid="y")
        return inline_svg(_save(fig, "svg"), label)


def inline_svg(svg: bytes, label: str) -> str:
    """An SVG file as an element to put inside an HTML page: the XML prolog dropped, the ids made
    the chart's own (several charts in one page must not share an id), and a role and label for
    screen readers."""
    text = svg.decode("utf-8")
    text = text[text.index("<svg") :]
    text = re.sub(r"\s*<metadata>.*?</metadata>", "", text, count=1, flags=re.S)  # matplotlib's name and licence
    prefix = "c" + hashlib.sha256(label.encode()).hexdigest()[:8]
    text = re.sub(r'\bid="([^"]+)"', rf'id="{prefix}-\1"', text)
    text = re.sub(r"url\(#([^)]+)\)", rf"url(#{prefix}-\1)", text)
    text = re.sub(r'href="#([^"]+)"', rf'href="#{prefix}-\1"', text)
    return text.replace("<svg ", f'<svg role="img" aria-label="{escape(label)}" ', 1)


# ---- drawing ------------------------------------------------------------------------------------


def _style() -> AbstractContextManager[Any]:
    import matplotlib

    return matplotlib.rc_context(cast(Any, _RC))  # its keys are a Literal of every rcParam


def _figure(width_in: float, height_in: float, *, left_pt: float = 48, bottom_pt: float = 36, top_pt: float = 12) -> Figure:
    """A figure whose axes leave fixed margins (in points) for tick labels and axis titles: set
    once, not solved per chart (matplotlib's constrained layout costs more than the drawing)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width_in, height_in), dpi=DPI)
    width_pt, height_pt = width_in * 72, height_in * 72
    fig.subplots_adjust(left=left_pt / width_pt, right=1 - 12 / width_pt, bottom=bottom_pt / height_pt, top=1 - top_pt / height_pt)
    return fig


def _bars(ax: Axes, names: list[str], counts: list[int], colours: list[str]) -> None:
    bars = ax.bar(names, counts, color=colours, width=0.7)
    ax.bar_label(bars, labels=[str(n) for n in counts], padding=2, fontsize=10)
    ax.set_ylim(0, max(max(counts), 1) * 1.15)
    _plain(ax, grid="y")


def _plain(ax: Axes, *, grid: Literal["x", "y"]) -> None:
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    ax.grid(axis=grid, color=GRID, linewidth=0.6)
    ax.set_axisbelow(True)
    ax.tick_params(length=0)
    if grid == "y":
        from matplotlib.ticker import MaxNLocator

        ax.yaxis.set_major_locator(MaxNLocator(integer=True, nbins=5))


def _thin_ticks(ax: Axes, bins: int) -> None:
    """Every value labelled while they fit; every n-th beyond."""
    step = max(1, -(-bins // 15))
    for i, tick in enumerate(ax.xaxis.get_major_ticks()):
        tick.label1.set_visible(i % step == 0)


def _save(fig: Figure, fmt: PictureFormat) -> bytes:
    buffer = io.BytesIO()
    # No date and no software name in the file: the same chart is the same bytes.
    metadata = {"Date": None} if fmt == "svg" else {"Software": None}
    fig.savefig(buffer, format=fmt, dpi=DPI, metadata=metadata, facecolor="white")
    return buffer.getvalue()


def _conversations(n: int) -> str:
    return f"{n} conversation{'s' if n != 1 else ''}"
