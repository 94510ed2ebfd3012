"""The cells of parley's markdown tables, formatted one way: the batch report's (parley.core.reports.markdown)
and the comparison's (parley.core.reports.compare_markdown). Nothing else lives here, so the
comparison reads them without the report's statistics."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["cell", "money", "percent", "table_lines"]


def cell(text: object) -> str:
    """Text safe inside a markdown table cell: one line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def table_lines(header: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    """A markdown table: its header, the rule under it, a line per row."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return lines


def percent(value: float | None) -> str:
    """`87.5%`, or `n/a` for no value."""
    return "n/a" if value is None else f"{value * 100:.1f}%"


def money(value: float | None) -> str:
    """`$0.0123`, or `unknown` (never 0 for a cost that is not known)."""
    return "unknown" if value is None else f"${value:.4f}"
