"""What a run from code gives back: the records parley already has (the stored conversation, its
verdict with every check and its evidence, the outcome; the batch's summary with its intervals),
with the few things a test asks of them: did it pass, what did the bot last say, which tools did
it call, and why, in words (`explain()`, the text a failed test prints).
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from parley.core.evaluation import BatchSummary
from parley.core.records import PASSED, CheckResult, StoredConversation, ToolCallRecord
from parley.core.reports import counts_line, explain_conversation, rule_lines
from parley.core.rules import RuleSummary

__all__ = ["ConversationResult", "RunResult"]

EXPLAINED_AT_MOST = 20
"""Conversations a batch's `explain()` spells out (the others are counted)."""


class ConversationResult(StoredConversation):
    """One conversation as stored: `spec`, `conversation` (messages, tool calls, final state),
    `verdict` (outcome, checks, score), `trial` and `batch_id`."""

    def __repr__(self) -> str:  # a failed assert shows this: what it is, not every field
        return f"ConversationResult({self.spec.spec_id!r}, trial={self.trial}, outcome={self.outcome!r})"

    @property
    def outcome(self) -> str:
        """The conversation's outcome (passed, failed, bot_error, unverified, user_fault, ...)."""
        return self.verdict.outcome if self.verdict is not None else "unevaluated"

    @property
    def passed(self) -> bool:
        """Every check that applied held, and at least one the author asked for was decided."""
        return self.outcome in PASSED

    @property
    def reply(self) -> str | None:
        """The bot's last message (None when it said nothing)."""
        texts = self.conversation.bot_texts
        return texts[-1] if texts else None

    @property
    def tool_calls(self) -> list[ToolCallRecord]:
        """Every tool call the bot made, in order, with its result."""
        return list(self.conversation.tool_calls)

    @property
    def checks(self) -> list[CheckResult]:
        """Every check of the verdict, with its outcome, reason and details (evidence)."""
        return list(self.verdict.checks) if self.verdict is not None else []

    @property
    def failed_checks(self) -> list[CheckResult]:
        return [c for c in self.checks if c.outcome == "fail"]

    def explain(self) -> str:
        """Why it came out as it did, in words: the outcome, the failed (and undecided) checks with
        their reasons and evidence, and the transcript's last turns."""
        return explain_conversation(self)


class RunResult(BaseModel):
    """A batch run from code: its id (`parley report ID`, `parley compare`), how it ended, its
    summary (counts, pass rate with its 95% interval, pass^k), every conversation, and its pair
    and batch rules (`rules=`) as they were decided."""

    batch_id: str
    status: str
    """completed, cancelled, failed..."""
    summary: BatchSummary
    conversations: list[ConversationResult] = Field(default_factory=list)
    rules: list[RuleSummary] = Field(default_factory=list)
    """The pair (`conversations: 2`) and batch (`all`) rules of `rules=`: their counts, first
    failures with their `yields` text, why any was not run. A rule about one conversation is a
    check of that conversation instead (`rule:FILE`)."""
    rule_labels: dict[str, str] = Field(default_factory=dict)
    """`SPEC_ID trial N` of each conversation the rules' listed decisions name, by its id."""

    @property
    def failed_rules(self) -> list[RuleSummary]:
        """The pair and batch rules that failed (a pair, or the batch): each fails the run."""
        return [rule for rule in self.rules if rule.failed]

    @property
    def passed(self) -> bool:
        """Every conversation passed (an unverified one did not: nothing about the bot was
        checked) and no pair or batch rule failed."""
        return (
            self.status == "completed" and bool(self.conversations) and all(c.passed for c in self.conversations) and not self.failed_rules
        )

    def ok(self, *, strict: bool = False) -> bool:
        """What `parley run`'s exit code 0 says: nothing failed and nothing broke (a failed pair
        or batch rule included); unverified conversations and the simulator's faults fail only
        when `strict` (the summary's counts decide it: OutcomeCounts.ok)."""
        return self.status == "completed" and not self.failed_rules and self.summary.ok(strict=strict)

    def explain(self) -> str:
        """The batch in words: its counts (as every parley surface words them) and pass rate,
        its pair and batch rules as `parley run` says them (each that failed with its first
        failure's `yields`), then each conversation that did not pass."""
        s = self.summary
        rate = "n/a" if s.pass_rate is None else f"{s.pass_rate * 100:.1f}%"
        lines = [f"batch {self.batch_id} {self.status}: {counts_line(s)}; pass rate {rate}"]
        lines += rule_lines(self.rules, self.rule_labels)
        others = [c for c in self.conversations if not c.passed]
        for result in others[:EXPLAINED_AT_MOST]:
            lines += ["", result.explain()]
        if len(others) > EXPLAINED_AT_MOST:
            lines += ["", f"... and {len(others) - EXPLAINED_AT_MOST} more (parley report {self.batch_id})"]
        return "\n".join(lines)
