"""What evaluating a rule file decides: one `RuleResult` per conversation, pair or batch, and a
`RuleReport` per rule file. Plain records, so they can be stored with the conversations they
concern and shown in reports, JSON and the app.

Outcomes: `pass`, `fail` (with the rule's `yields` text and the oracle's reason), `not_applicable`
(its `when` or `if` did not hold, or, for one conversation or a batch, its oracle could not be
computed on it, as Sensei's checker decides) and `not_run` (it could not be decided: a helper
needs a model and none was given, the model failed, or the evaluation went past its bounds).
A `not_run` result is never a pass.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

RuleOutcome = Literal["pass", "fail", "not_applicable", "not_run"]
OUTCOMES: tuple[RuleOutcome, ...] = ("pass", "fail", "not_applicable", "not_run")
ResultKind = Literal["conversation", "pair", "batch"]
RuleCount = Literal[1, 2, "all"]


class RuleResult(BaseModel):
    """One decision of one rule about one conversation, an ordered pair, or a batch."""

    model_config = ConfigDict(frozen=True)

    rule_file: str = Field(description="The rule file's path under the rules folder: the rule's key (names may repeat).")
    rule_name: str
    kind: ResultKind = Field(description="What the decision is about: one conversation, an ordered pair, or a batch.")
    conversations: list[str] = Field(description="The conversation(s) decided over: one, [first, second], or a batch's.")
    outcome: RuleOutcome
    reason: str | None = Field(
        default=None, description="Why: the oracle's value on a failure, the condition that did not hold, why it was not run."
    )
    yields: str | None = Field(default=None, description="The rule's `yields` text, on a failure.")

    @property
    def check_name(self) -> str:
        """The name of this rule as a check of a conversation: `rule:` and the rule file."""
        return f"rule:{self.rule_file}"

    def sensei_item(self) -> str | list[str]:
        """How sensei-check's results name what was decided: a file, [first, second], or the batch's list."""
        return self.conversations[0] if self.kind == "conversation" else list(self.conversations)


class RuleReport(BaseModel):
    """Everything one rule file decided over a set of conversations."""

    rule_file: str
    name: str
    description: str
    conversations: RuleCount
    needs_model: list[str] = Field(default_factory=list, description="The model helpers the rule calls.")
    results: list[RuleResult] = Field(default_factory=list)

    def count(self, outcome: RuleOutcome) -> int:
        return sum(1 for result in self.results if result.outcome == outcome)

    def of(self, outcome: RuleOutcome) -> list[RuleResult]:
        return [result for result in self.results if result.outcome == outcome]

    def sensei_entry(self) -> dict[str, Any]:
        """sensei-check's shape: name, pass, fail, not_applicable (and not_run when any was not)."""
        entry: dict[str, Any] = {"name": self.name}
        for outcome in ("pass", "fail", "not_applicable"):
            entry[outcome] = [result.sensei_item() for result in self.results if result.outcome == outcome]
        not_run = self.of("not_run")
        if not_run:
            entry["not_run"] = [result.sensei_item() for result in not_run]
            entry["not_run_reason"] = not_run[0].reason
        return entry


class RuleSummary(BaseModel):
    """A pair or batch rule as a batch's report shows it: how its decisions came out, the first
    failures (with `yields`), and why any was not run. The decisions themselves may number one
    per ordered pair of conversations: a report reads this, an export streams them."""

    rule_file: str
    name: str
    description: str
    conversations: RuleCount
    needs_model: list[str] = Field(default_factory=list)
    counts: dict[str, int] = Field(default_factory=dict, description="Decisions per outcome (pass, fail, not_applicable, not_run).")
    decision: RuleResult | None = Field(default=None, description="A batch rule's one decision about the batch.")
    failures: list[RuleResult] = Field(default_factory=list, description="The first failures, in order.")
    not_run_reasons: list[str] = Field(default_factory=list, description="Why decisions were not run, each reason once.")

    def count(self, outcome: RuleOutcome) -> int:
        return self.counts.get(outcome, 0)

    @property
    def failed(self) -> bool:
        """Whether the rule failed: a pair failed, or the batch did."""
        return self.count("fail") > 0
