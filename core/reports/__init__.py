"""A batch's numbers and how they leave: statistics, markdown, JSON/CSV/NDJSON exports."""

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.core.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from parley.core.reports.cell_escaping import without_nul
    from parley.core.reports.compare import BatchComparison, PairChange, Rate, SideOfPair, compare_batches, verdict_line
    from parley.core.reports.compare_markdown import render_comparison
    from parley.core.reports.count_words import counts_line, short_counts
    from parley.core.reports.exports import export_csv, export_ndjson, result_record, write_json
    from parley.core.reports.junit import write_junit
    from parley.core.reports.markdown import rates_line, render_markdown
    from parley.core.reports.stats import LEGACY_ERROR_NOTE, UNVERIFIED_HINT, BatchReport, batch_summary, summarize

__all__ = [
    "BatchComparison",
    "BatchReport",
    "LEGACY_ERROR_NOTE",
    "PairChange",
    "Rate",
    "SideOfPair",
    "UNVERIFIED_HINT",
    "batch_summary",
    "compare_batches",
    "counts_line",
    "export_csv",
    "export_ndjson",
    "rates_line",
    "render_comparison",
    "render_markdown",
    "result_record",
    "short_counts",
    "summarize",
    "verdict_line",
    "without_nul",
    "write_json",
    "write_junit",
]

__getattr__, __dir__ = lazy_exports(__name__, __file__)
