"""The figures the store reads out of a batch for its reports: one light row per conversation
(outcome, score, turns, time, cost, failed checks), tokens and cost per role, the listed
failures and policy violations, the checks that could not apply, measured usage per spec.

These are what the store's named queries (parley.core.store.batch_queries) give back, so no
module outside the store writes SQL to get them.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from parley.core.records.conversation import BROKEN_STOPS

UNEVALUATED = "unevaluated"
"""The outcome of a conversation stored without a verdict whose run did not break."""


def effective_outcome(outcome: str | None, stop_reason: str | None) -> str:
    """A conversation's outcome as every summary counts it: its verdict's; without a verdict, the
    stop reason of a run that broke, else unevaluated."""
    if outcome:
        return outcome
    return stop_reason if stop_reason in BROKEN_STOPS else UNEVALUATED


class SummaryRow(BaseModel):
    """One conversation as a batch's summary counts it (parley.core.evaluation.BatchSummary):
    plain enough to be read back from an exported file (JSON, NDJSON or CSV: extra fields are
    ignored, an empty cell is a missing value)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    spec_id: str
    trial: int = 1
    outcome: str = UNEVALUATED
    """The effective outcome (parley.core.records.verdict.Outcome): the verdict's; a run that
    broke and has no verdict, its stop reason; otherwise unevaluated."""
    score: int | None = None
    turns: int = 0
    duration_s: float = 0.0
    cost_usd: float | None = None
    """None when a price was unknown for any call (never 0 for "unknown")."""
    stop_reason: str | None = None
    judge_error: bool = False
    """The judge failed (no score), whatever the outcome."""
    judge_prompt_fit: str | None = None
    """How the conversation met an LLM judge's context (parley.core.records.verdict.JudgePromptFit:
    whole, condensed, too_long); None: no model judge was asked."""
    criteria_prompt_fit: str | None = None
    """The same for the judge's call on the criteria in words; None: no such call was made."""
    checkpoint_prompt_fits: list[str] = Field(default_factory=list)
    """The same for each call on a playbook's `judge` checkpoints."""
    name: str = ""
    spec_index: int = 0

    @model_validator(mode="before")
    @classmethod
    def _plain(cls, data: Any) -> Any:
        """An exported row as it is: 003's names (`total_turns`, `duration_seconds`), empty CSV
        cells as missing, no outcome as the effective one."""
        if not isinstance(data, dict):
            return data
        row = {k: v for k, v in data.items() if v != ""}
        for ours, theirs in (("turns", "total_turns"), ("duration_s", "duration_seconds"), ("name", "scenario")):
            if ours not in row and theirs in row:
                row[ours] = row[theirs]
        row["outcome"] = effective_outcome(row.get("outcome"), row.get("stop_reason"))
        verdict = row.get("verdict")
        if "judge_error" not in row and isinstance(verdict, dict) and isinstance(verdict.get("judge"), dict):
            row["judge_error"] = verdict["judge"].get("error") is not None
        if isinstance(verdict, dict) and isinstance(verdict.get("judge"), dict):
            row.setdefault("judge_prompt_fit", verdict["judge"].get("prompt_fit"))
            row.setdefault("criteria_prompt_fit", verdict["judge"].get("criteria_prompt_fit"))
            row.setdefault("checkpoint_prompt_fits", verdict["judge"].get("checkpoint_prompt_fits") or [])
        if not row.get("name"):
            row["name"] = row.get("spec_id", "")
        if "spec_index" not in row:  # the spec's index: in the exported spec, else the id's `#N` (make_spec_id)
            spec = row.get("spec")
            index = spec.get("index") if isinstance(spec, dict) else None
            _, hash_, tail = str(row.get("spec_id", "")).rpartition("#")
            row["spec_index"] = index if index is not None else (int(tail) if hash_ and tail.isdigit() else 0)
        return row


class OutcomeRow(SummaryRow):
    """One stored conversation as the statistics and the comparison read it: no transcript.

    `outcome` is the effective one: the verdict's, a broken run's stop reason when it was stored
    without a verdict, or `unevaluated`."""

    id: str
    name: str
    spec_index: int
    stop_reason: str
    input_tokens: int
    output_tokens: int
    bot_latency_s: float = 0.0
    """The bot's response time summed over the conversation's turns."""
    bot_latency_min_s: float | None = None
    bot_latency_max_s: float | None = None
    failed_checks: frozenset[str] = frozenset()
    """Names of the checks that failed."""
    met_criteria: frozenset[str] = frozenset()
    """Criteria in words the judge found met."""
    policy_violations: int = 0
    first_divergence: int | None = None
    """A replayed conversation: the first bot turn (1-based) whose answer differed from the
    stored one; None: none did (or not a replay)."""


class RoleUsage(BaseModel):
    role: str
    models: list[str] = Field(default_factory=list)
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    unreported_calls: int = 0
    cost_usd: float | None = 0.0
    """None: at least one call had no known price (the total is unknown, not 0)."""


class PolicyViolation(BaseModel):
    conversation_id: str
    spec_id: str
    name: str
    trial: int
    check: str
    reason: str


class FailureEntry(BaseModel):
    conversation_id: str
    spec_id: str
    name: str
    trial: int
    outcome: str  # any outcome but passed and unverified
    stop_reason: str
    reasons: list[str]
    evidence: dict[str, str] = Field(default_factory=dict)
    """A criterion not met's reason (as in `reasons`) -> the judge's evidence (`turn 3: "quote"`),
    shown under it."""

    goals_only_stated: list[str] = Field(default_factory=list)
    """The goals its offline customer only stated, not acting them out (a note, not a reason)."""


class CriterionCounts(BaseModel):
    """One criterion in words over a batch: how often the judge found it met, not met or not
    applicable, and how often it was not decided (not run, or a judge error)."""

    criterion: str
    builtin: bool = False
    met: int = 0
    not_met: int = 0
    not_applicable: int = 0
    not_run: int = 0
    errors: int = 0
    calibration: str | None = None
    """How the judge was calibrated on it ("κ 0.72", "uncalibrated", "below threshold (κ 0.41 <
    0.6)", "κ undefined"); None when no judge decided it."""


class LimitCounts(BaseModel):
    """One limit check over a batch (`expect.limits`, `--limit`): how often it held, was over, or
    was not decided, and the largest figure measured (its worst)."""

    name: str
    limit: str
    """The key: reply_seconds, p95_reply_seconds, cost_usd, tokens or turns_to_pass."""
    held: int = 0
    over: int = 0
    not_decided: int = 0
    worst: float | None = None
    timing_dependent: bool = False


class NotRead(BaseModel):
    """What no role of a batch read, said beside its pass rate so that a pass is never taken for
    more than it is: the criteria in words not run because no LLM judge was there to read them,
    and the languages of conversations the claims check does not read (with how many each)."""

    criteria_need_judge: int = 0
    claims_languages: dict[str, int] = Field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.criteria_need_judge or self.claims_languages)

    @property
    def note(self) -> str:
        """`3 criteria not run (need an LLM judge); claims not read in: Japanese (2 conversations)`."""
        parts = []
        n = self.criteria_need_judge
        if n:
            parts.append(f"{n} {'criterion' if n == 1 else 'criteria'} not run (need an LLM judge)")
        if self.claims_languages:
            listed = ", ".join(f"{language} ({k} conversation{'s' if k != 1 else ''})" for language, k in self.claims_languages.items())
            parts.append(f"claims not read in: {listed}")
        return "; ".join(parts)


class StatedGoals(BaseModel):
    """A spec whose offline customer only stated some of its goals, not acting them out:
    information, not a fault (parley.core.users.acted_goals)."""

    spec_id: str
    conversations: int
    goals: list[str]


class CheckFailureCount(BaseModel):
    kind: str
    name: str
    count: int


class NotApplicableCount(BaseModel):
    """One kind of check that could not be applied: how many such checks, in how many
    conversations, which (the first few names) and why. Runs that broke are left out: their
    checks are moot anyway."""

    kind: str
    checks: int
    conversations: int
    names: list[str]
    more_names: int = 0
    reason: str


class MeasuredUsage(BaseModel):
    """What earlier conversations of one spec used in one role with one model (runs that broke
    left out): the ground of a dry run's *expected* figures."""

    conversations: int
    calls: int
    input_tokens: int
    output_tokens: int
