"""The figures the store reads out of a batch for its reports: one light row per conversation
(outcome, score, turns, time, cost, failed checks), tokens and cost per role, the listed
failures and policy violations, the checks that could not apply, measured usage per spec.

These are what the store's named queries (parley.core.store.batch_queries) give back, so no
module outside the store writes SQL to get them.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

UNEVALUATED = "unevaluated"
"""The outcome of a conversation stored without a verdict whose run did not break."""


class OutcomeRow(BaseModel):
    """One stored conversation as the statistics and the comparison read it: no transcript.

    `outcome` is the effective one: the verdict's, a broken run's stop reason when it was stored
    without a verdict, or `unevaluated`."""

    model_config = ConfigDict(frozen=True)

    id: str
    spec_id: str
    spec_index: int
    name: str
    trial: int
    outcome: str
    stop_reason: str
    score: int | None
    turns: int
    duration_s: float
    cost_usd: float | None
    """None when a price was unknown for any call (never 0 for "unknown")."""
    input_tokens: int
    output_tokens: int
    bot_latency_s: float = 0.0
    """The bot's response time summed over the conversation's turns."""
    bot_latency_min_s: float | None = None
    bot_latency_max_s: float | None = None
    failed_checks: frozenset[str] = frozenset()
    """Names of the checks that failed."""
    judge_error: bool = False
    """The judge failed (no score), whatever the outcome."""
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
