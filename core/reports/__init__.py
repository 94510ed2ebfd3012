"""A batch's numbers and how they leave: statistics, markdown, HTML, JSON/CSV/NDJSON exports, charts; results files read back."""

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.core.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from parley.core.reports.attack_compare import AttackComparison, StrategyRegression, compare_attacks
    from parley.core.reports.attack_stats import AttackRate, AttackReport, attack_line, attack_report
    from parley.core.reports.cell_escaping import TERMINAL_ACTING, csv_line, inert_json, inert_xml, without_nul
    from parley.core.reports.charts import HISTOGRAM_SIZE_PX, score_histogram
    from parley.core.reports.check_turns import Turn, check_target
    from parley.core.reports.compare import BatchComparison, PairChange, Rate, SideOfPair, compare_batches, verdict_line
    from parley.core.reports.compare_html import render_comparison_html
    from parley.core.reports.compare_markdown import render_comparison
    from parley.core.reports.count_words import counts_line, short_counts
    from parley.core.reports.explanation import explain_conversation
    from parley.core.reports.exports import export_csv, export_ndjson, result_record, write_json
    from parley.core.reports.group_comparison import (
        GroupComparison,
        compare_group,
        group_lines,
        render_group_html,
        render_group_markdown,
    )
    from parley.core.reports.html_report import write_html
    from parley.core.reports.judge_calibration import calibration_report, calibrations_table, judges_compared, kappa_cell
    from parley.core.reports.junit import write_junit
    from parley.core.reports.leaderboard import LEADERBOARD_K, LeaderboardRow, leaderboard_row
    from parley.core.reports.markdown import (
        SCOPES,
        rates_line,
        render_markdown,
        rule_lines,
        rule_outcome_counts,
        rule_result_line,
        rules_section,
    )
    from parley.core.reports.markdown import histogram as text_histogram
    from parley.core.reports.results_file import SERVICE_RULE, FileSummary, ResultsFile, read_results, summarise_file, summary_cells
    from parley.core.reports.sensei_export import export_sensei
    from parley.core.reports.session_playbooks import chat_playbook, session_playbook
    from parley.core.reports.stats import LEGACY_ERROR_NOTE, UNVERIFIED_HINT, BatchReport, batch_summary, summarize

__all__ = [
    "calibration_report",
    "calibrations_table",
    "judges_compared",
    "kappa_cell",
    "GroupComparison",
    "compare_group",
    "group_lines",
    "render_group_html",
    "render_group_markdown",
    "LEADERBOARD_K",
    "LeaderboardRow",
    "leaderboard_row",
    "AttackComparison",
    "AttackRate",
    "AttackReport",
    "StrategyRegression",
    "attack_line",
    "attack_report",
    "compare_attacks",
    "TERMINAL_ACTING",
    "BatchComparison",
    "BatchReport",
    "FileSummary",
    "HISTOGRAM_SIZE_PX",
    "LEGACY_ERROR_NOTE",
    "PairChange",
    "Rate",
    "SCOPES",
    "SERVICE_RULE",
    "SideOfPair",
    "UNVERIFIED_HINT",
    "Turn",
    "batch_summary",
    "check_target",
    "compare_batches",
    "counts_line",
    "explain_conversation",
    "export_csv",
    "export_ndjson",
    "export_sensei",
    "chat_playbook",
    "session_playbook",
    "rates_line",
    "render_comparison",
    "render_comparison_html",
    "read_results",
    "render_markdown",
    "result_record",
    "rule_lines",
    "rule_outcome_counts",
    "rule_result_line",
    "rules_section",
    "ResultsFile",
    "short_counts",
    "summarise_file",
    "summary_cells",
    "score_histogram",
    "summarize",
    "text_histogram",
    "verdict_line",
    "csv_line",
    "inert_json",
    "inert_xml",
    "without_nul",
    "write_html",
    "write_json",
    "write_junit",
]

if not TYPE_CHECKING:  # type checkers see the imports above; at run time each name is imported on first use
    __getattr__, __dir__ = lazy_exports(__name__, __file__)
