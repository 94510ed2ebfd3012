"""BatchRulesScreen: a batch's pair and batch rules (`parley run --rules`), opened with `u` in
Batches: a row per rule with how its decisions came out, then each failure with the rule's
`yields` text and the conversations it is about, and why any decision was not run. Text from
rule files and conversations is shown as written (Content, never markup)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from parley.core.reports import rule_result_line

if TYPE_CHECKING:
    from parley.core.rules import RuleSummary

SCOPES = {2: "pairs", "all": "the batch"}
"""Short for the table's narrow column (the report says "each ordered pair")."""


def rules_line(rules: list[RuleSummary]) -> str:
    """The status line's words for a batch's pair and batch rules (empty: none)."""
    if not rules:
        return ""
    failed = sum(1 for rule in rules if rule.failed)
    return f"rules over pairs and the batch: {len(rules)}, {failed} failed (u: see them)"


class BatchRulesScreen(Screen[None]):
    """Escape goes back to Batches."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back")]
    DEFAULT_CSS = """
    #rules-title { height: auto; padding: 0 1; text-style: bold; }
    #rules-table { height: auto; max-height: 50%; }
    #rules-details { height: 1fr; padding: 0 1; }
    BatchRulesScreen .rule-failure { height: auto; }
    BatchRulesScreen .rule-heading { height: auto; text-style: bold; padding: 1 0 0 0; }
    """

    def __init__(self, batch_id: str, rules: list[RuleSummary], labels: dict[str, str]) -> None:
        super().__init__(id="batch-rules-screen")
        self.batch_id = batch_id
        self.rules = rules
        self.labels = labels

    def compose(self) -> ComposeResult:
        yield Static(Content(f"Batch {self.batch_id[:12]}: rules over pairs of conversations and over the batch"), id="rules-title")
        yield DataTable(id="rules-table", cursor_type="row", zebra_stripes=True)
        with VerticalScroll(id="rules-details"):
            for rule in self.rules:
                if not rule.failures and not rule.not_run_reasons:
                    continue
                yield Static(Content(f"{rule.rule_file} ({rule.name}): {rule.description}"), classes="rule-heading")
                for result in rule.failures:
                    yield Static(Content(f"fail  {rule_result_line(result, self.labels)}"), classes="rule-failure")
                more = rule.count("fail") - len(rule.failures)
                if more > 0:
                    yield Static(Content(f"... and {more} more failures (parley report {self.batch_id[:12]})"), classes="rule-failure")
                for reason in rule.not_run_reasons:
                    yield Static(Content(f"not run  {reason}"), classes="rule-failure")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#rules-table", DataTable)
        table.add_columns("Rule file", "Name", "Over", "Pass", "Fail", "N/A", "Not run")
        for rule in self.rules:
            table.add_row(
                Content(rule.rule_file),
                Content(rule.name),
                SCOPES[rule.conversations],
                str(rule.count("pass")),
                str(rule.count("fail")),
                str(rule.count("not_applicable")),
                str(rule.count("not_run")),
            )
        table.focus()
