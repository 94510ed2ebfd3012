"""The scored outcome of one conversation: every check with its reason, the judge, outputs.

Shared by the evaluation (which builds verdicts), the store (which persists them) and the
reports and UI (which read them).
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import BaseModel, Field

from parley.core.records.calibration import JudgeKey
from parley.core.records.chat import Usage

CheckOutcome = Literal["pass", "fail", "not_applicable", "not_run", "error"]
"""not_applicable: the check cannot apply to this bot (no World, invisible tools). not_run: the
conversation ended before the check could be decided. Neither passes nor fails."""

Outcome = Literal[
    "passed",
    "failed",
    "bot_error",
    "unverified",
    "user_fault",
    "user_error",
    "infrastructure_error",
    "cancelled",
    "evaluation_error",
    "error",
]
"""What one conversation says, the one name every summary, export and view uses:
- passed: every applicable check held, and at least one check about the bot applied;
- failed: a check about the bot failed (a timeout fails `conversation completed`);
- bot_error: the bot under test broke (stop reason bot_error): a failure of the bot;
- unverified: it ran to an end and nothing failed, but no check about the bot applied;
- user_fault: the user simulator misbehaved (see `Verdict.user_faults`); the bot is not blamed
  unless it violated a policy;
- user_error / infrastructure_error / cancelled: the run broke (its stop reason);
- evaluation_error: it ran, but a check could not be decided (a judge error on a min-score check);
- error: a legacy row, stored before parley told who failed, that could not be attributed.
How each is counted and shown: parley.core.records.outcome_classes.OUTCOME_KINDS."""
OUTCOMES: tuple[Outcome, ...] = get_args(Outcome)
VerdictOutcome = Outcome  # the name the store and older callers use

DEFAULT_MIN_SCORE = 2
"""The score an LLM judge must give when the spec names no minimum (1 means the request was not
handled, or handled wrongly)."""

CheckKind = Literal[
    "record_state",
    "order_status",
    "unchanged_others",
    "tool_called",
    "tool_not_called",
    "bot_says",
    "bot_never_says",
    "playbook_assertion",
    "playbook_injection",
    "judge_score",
    "criterion",
    "claims_match_actions",
    "conversation_completed",
    "bot_replies",
    "rule",
    "ownership",
    "world_rule",
    "confirmation",
    "python",
    "limit",
    "attack",
]
"""Every kind of check, the one registry (a new kind of check is added here, with its line below):
- record_state: a named record of the world ends with the fields the file expects (a world check);
- order_status: what record_state was called in batches stored before worlds were declared;
- unchanged_others: no record changed that the customer did not ask for or the policy forbids (a world check);
- tool_called / tool_not_called: the bot called (or never called) a tool;
- bot_says / bot_never_says: a bot message matches (or none matches) a regex;
- playbook_assertion: a playbook step's assertion (expect_tool, expect_bot_regex, a judge checkpoint);
- playbook_injection: a playbook's injected context, which a deployed bot never receives;
- judge_score: an LLM judge's score reached the minimum;
- criterion: a criterion in words, judged with its evidence;
- claims_match_actions: each action a bot message claims is backed by a tool call or the final state;
- conversation_completed: the conversation reached an end of its own (a parley default);
- bot_replies: the bot answered what the customer said: no empty reply, no fault of the customer's
  its own replies caused (a parley default, parley.core.evaluation.fault_blame);
- rule: a Sensei rule about one conversation (`rule:FILE`);
- ownership: the bot changed (or, on a world whose API trusts it, read) no other customer's record
  (a parley default, there only when broken; parley.core.evaluation.conduct_checks);
- world_rule: a rule of the world's policy its API leaves to the bot, broken by a call (a parley
  default, there only when broken);
- confirmation: a tool the world says needs the customer's explicit yes ran without one (a parley
  default, there only when broken);
- python: a check written in Python (`expect.python`), its answer with its evidence;
- limit: a limit on the bot's latency, cost, tokens or turns (`expect.limits`, `--limit`), its measured figure as evidence;
- attack: an attack (the spec's `attack:`) held, or what the world shows it won (its successes, each
  with its kind, turn and evidence; parley.core.evaluation.attack_checks)."""
CHECK_KINDS: tuple[CheckKind, ...] = get_args(CheckKind)

UserFaultKind = Literal[
    "empty_turn", "repeated_message", "speaks_as_assistant", "stopped_after_question", "no_goal_stated", "attack_not_pressed"
]
"""`attack_not_pressed`: an attacker that never stated its objective, or stated it once and gave up
when refused: a simulator fault, never an attack the bot held."""


class CheckResult(BaseModel):
    """One check. `kind` is machine-readable (one of CheckKind, the registry of kinds);
    `name` is what a person reads ("ORD-1004 ends cancelled"); `reason` says why it came out
    as it did. `policy_violation` marks a failure that changed data the policy protects.
    `by_default` marks a check parley adds on its own, which the author did not ask for (the
    conversation completed; no other record changed when the profile did not say): it may fail a
    conversation, but never makes one pass (see `decides_a_pass`)."""

    kind: CheckKind
    name: str
    outcome: CheckOutcome
    reason: str
    policy_violation: bool = False
    by_default: bool = False
    details: dict[str, Any] = Field(default_factory=dict)
    untrusted: bool = False
    """A judge's verdict a batch run with `--require-calibrated` does not count towards a pass:
    the judge has no calibration at or above `--min-kappa` on it (its mark is in
    `details["calibration"]`, parley.core.evaluation.calibration_marks). Like `by_default`, it
    may fail a conversation, never make one pass."""

    @property
    def decides_a_pass(self) -> bool:
        """A check the author asked for, decided, and held: what a pass needs at least one of."""
        return self.outcome == "pass" and not self.by_default and not self.untrusted


class UserFault(BaseModel):
    """A fault of the simulated user, detected without a model (parley.core.evaluation.user_faults).
    `turn` is the 1-based number of the user message it is about (None: the conversation as a whole)."""

    kind: UserFaultKind
    turn: int | None = None
    reason: str
    excused: str | None = None
    """Why the customer is not blamed for it (None: it is): the bot's replies caused it, or the
    bot misbehaved first (parley.core.evaluation.fault_blame). An excused fault is the bot's."""

    @property
    def label(self) -> str:
        """What a person reads before its kind: "simulator fault", or "excused simulator fault"."""
        return "simulator fault" if self.excused is None else "excused simulator fault"

    @property
    def text(self) -> str:
        """Its reason, and why the customer is not blamed when it is excused."""
        return self.reason if self.excused is None else f"{self.reason}; not blamed on the customer: {self.excused}"

    @property
    def blamed(self) -> bool:
        """The customer misbehaved first, on its own: the bot is not blamed for the conversation."""
        return self.excused is None


class ExtractedOutput(BaseModel):
    """A typed value pulled from the conversation (the profile's `chatbot.output`)."""

    name: str
    type: str  # int | float | money | str | time | date
    description: str = ""
    found: bool = False
    value: Any = None  # JSON-able: int, float, str, {"amount": 12.5, "currency": "EUR"}, ISO text
    raw: str | None = None  # the text it was read from


JudgePromptFit = Literal["whole", "condensed", "too_long"]
"""How a conversation met a model judge's context: sent whole, condensed to fit (long tool
results shortened, repeats pointing back, the middle omitted), or too long even condensed (or
refused by the endpoint as too long), which is a judge error."""


class JudgeResult(BaseModel):
    """The judge's answer. A judge that failed has `error` set and no score: a failure is
    never turned into a score."""

    judge: str  # "offline" or a model name
    score: Literal[1, 2, 3] | None = None
    comment: str | None = None
    error: str | None = None
    usage: Usage = Field(default_factory=Usage)
    prompt_fit: JudgePromptFit | None = None
    """See `JudgePromptFit`; None when no model was asked (the offline judge), or for results
    stored before parley condensed judge prompts."""
    criteria_prompt_fit: JudgePromptFit | None = None
    """The same for the call that decided the criteria in words (a call of its own, after the
    score's); None when none was made."""
    checkpoint_prompt_fits: list[JudgePromptFit] = Field(default_factory=list)
    """The same for each call on a playbook's `judge` checkpoints, in step order (the ones asked)."""
    jurors: dict[str, str] = Field(default_factory=dict)
    """A jury's (parley.core.evaluation.jury): what each juror scored ("3"), or "error: why" for
    one that failed (left out of the vote). Empty for a single judge."""
    key: JudgeKey | None = None
    """What this judge is for calibration (model, endpoint, prompt version, generation settings),
    when parley knows it (a batch's judge); None for the offline judge and older rows."""


class Verdict(BaseModel):
    conversation_id: str
    outcome: Outcome
    """See `Outcome`."""
    passed: bool
    score: Literal[1, 2, 3] | None = None
    comment: str | None = None
    judge: JudgeResult | None = None
    checks: list[CheckResult] = Field(default_factory=list)
    outputs: list[ExtractedOutput] = Field(default_factory=list)
    error: str | None = None  # why the run broke / judge_error / a check that could not be decided
    user_faults: list[UserFault] = Field(default_factory=list)
    """The simulated user's faults (empty: none detected); with any the customer is blamed for
    (`UserFault.blamed`), the outcome is user_fault unless the run broke or the bot violated a
    policy; an excused one says why the bot is blamed instead."""

    @property
    def blamed_faults(self) -> list[UserFault]:
        """The faults the simulated customer is blamed for (the excused ones are the bot's)."""
        return [f for f in self.user_faults if f.blamed]

    @property
    def policy_violations(self) -> list[CheckResult]:
        return [c for c in self.checks if c.policy_violation and c.outcome == "fail"]

    @property
    def failed_checks(self) -> list[CheckResult]:
        return [c for c in self.checks if c.outcome == "fail"]
