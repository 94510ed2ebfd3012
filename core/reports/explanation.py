"""One conversation's result in words, for a person reading a test's failure: its outcome and
why, each check that failed (or could not be decided) with its reason and evidence, and the
transcript's last turns. The pytest plugin's failure report and the Python API's `explain()`
print it; the JUnit report's failure text says the same in its own layout (parley.core.reports.junit).
"""

from __future__ import annotations

from parley.core.records import CheckResult, StoredConversation
from parley.core.reports.junit import LAST_TURNS, last_turns

__all__ = ["explain_conversation"]

_WHY = {
    "passed": "every check that applied held",
    "failed": "a check about the bot failed",
    "bot_error": "the bot under test broke",
    "unverified": "nothing about the bot was checked (add expectations, or use an LLM judge for criteria)",
    "user_fault": "the simulated customer misbehaved; not counted against the bot",
    "user_error": "the user simulator failed",
    "infrastructure_error": "the run broke on parley's side",
    "cancelled": "the run was stopped",
    "evaluation_error": "a check could not be decided",
    "unevaluated": "no verdict was stored",
}


def _check_line(check: CheckResult) -> str:
    line = f"- {check.outcome}: {check.name}: {check.reason}"
    quote, turn = check.details.get("quote"), check.details.get("turn")
    if isinstance(quote, str) and quote:
        line += f"\n    evidence{f' (turn {turn})' if turn is not None else ''}: {quote!r}"
    return line


def explain_conversation(stored: StoredConversation, *, turns: int = LAST_TURNS) -> str:
    """`stored` in words (see the module doc): outcome, failing and undecided checks with their
    reasons and evidence, the stop, and the last `turns` lines of the transcript."""
    conversation, verdict = stored.conversation, stored.verdict
    outcome = verdict.outcome if verdict is not None else "unevaluated"
    lines = [f"{stored.spec.spec_id} trial {stored.trial}: {outcome}: {_WHY.get(outcome, outcome)}"]
    if conversation.error:
        lines.append(f"error: {conversation.error}")
    elif verdict is not None and verdict.error:
        lines.append(f"error: {verdict.error}")
    if verdict is not None:
        shown = [c for c in verdict.checks if c.outcome in ("fail", "error")]
        if shown:
            lines.append("Checks that failed:")
            lines += [_check_line(c) for c in shown]
        held = [c for c in verdict.checks if c.outcome == "pass"]
        if outcome == "passed" and held:
            lines.append("Checks that held:")
            lines += [_check_line(c) for c in held]
        undecided = [c for c in verdict.checks if c.outcome in ("not_run", "not_applicable")]
        if undecided:
            lines.append("Not decided:")
            lines += [_check_line(c) for c in undecided]
        lines += [
            f"- {f.label} (turn {f.turn}): {f.kind}: {f.text}" if f.turn else f"- {f.label}: {f.kind}: {f.text}"
            for f in verdict.user_faults
        ]
    score = verdict.score if verdict is not None and verdict.score is not None else "-"
    lines.append(f"stop reason: {conversation.stop_reason}, score: {score}, {conversation.bot_turns} bot turns")
    tail = last_turns(stored, turns)
    if tail:
        lines.append("Last turns:")
        lines += [f"  {line}" for line in tail]
    lines.append(f"conversation {conversation.id} (parley sessions show {conversation.id[:12]})")
    return "\n".join(lines)
