"""A parley conversation's verdict as inspect_ai scores, and its record as sample metadata.

One shape for both ways a parley conversation reaches inspect (the eval-log export and the
inspect task), so logs from either read alike. Three scores per sample, each a column in
inspect's log viewer:

- `passed`: C (every applicable check held) or I (a check failed, or the bot broke: bot_error).
  Everything parley counts apart is *unscored*, as in parley's pass rate, which counts
  passed / (passed + failed + bot errors): an unverified conversation, a simulator's fault, a
  run that broke on the simulator's or parley's side, a check that could not be decided.
  Metrics: accuracy, stderr. With `--epochs k --epochs-reducer pass_k_k` (e.g. `pass_k_3`)
  its accuracy is pass^k.
- `judge_score`: the judge's 1-3, or unscored when the judge failed (never a 1). Metrics: mean,
  stderr. (A pass_k reducer means nothing on it: every score is at least 1.)
- `checks`: the share of decided checks that held (0-1). Each check is in the score: the
  explanation lists them all, a line each, and the metadata holds each check in full (kind,
  name, outcome, reason, policy_violation). A dict value keyed by check name would not
  aggregate: specs have different checks. Metric: mean.

The eval-log export adds one score per criterion in words the batch has (`criterion: TEXT`):
C when the judge found it met, I when not met, unscored otherwise (not applicable, not run, a
judge error, or a conversation whose spec does not have it); the explanation is the judge's
reasoning and evidence. Metric: accuracy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from inspect_ai.scorer import CORRECT, INCORRECT, Score

from parley.core.evaluation import CRITERION_KIND, calibration_text, criterion_state, score_calibration
from parley.core.interop.inspect.messages import jsonable
from parley.core.records import BOT_FAILURES, BROKEN_STOPS, CheckResult, Conversation, ConversationSpec, Verdict

SCORE_METRICS: dict[str, tuple[str, ...]] = {
    "passed": ("accuracy", "stderr"),
    "judge_score": ("mean", "stderr"),
    "checks": ("mean",),
}
"""Each score's name and its metrics (inspect_ai's built-in metric names)."""

_MARKS = {"pass": "✅", "fail": "❌", "not_applicable": "➖", "not_run": "⏹️", "error": "⚠️"}
CRITERION_SCORE = "criterion: "
"""A criterion's score is named `criterion: ` and its text."""
CRITERION_METRICS: tuple[str, ...] = ("accuracy",)


def effective_outcome(conversation: Conversation, verdict: Verdict | None) -> str:
    """The conversation's outcome as parley's reports count it (parley.core.records.verdict.Outcome),
    or unevaluated when it has no verdict."""
    return verdict.outcome if verdict is not None else "unevaluated"


def check_line(check: CheckResult) -> str:
    """One check as a markdown list item: mark, name, reason."""
    flag = " (policy violation)" if check.policy_violation and check.outcome == "fail" else ""
    return f"- {_MARKS.get(check.outcome, '?')} {check.name}{flag}: {check.reason}"


def verdict_scores(conversation: Conversation, verdict: Verdict | None) -> dict[str, Score]:
    """The three scores of one conversation (see the module doc)."""
    outcome = effective_outcome(conversation, verdict)
    checks = list(verdict.checks) if verdict is not None else []
    failed = [c for c in checks if c.outcome == "fail"]
    error = conversation.error if conversation.stop_reason in BROKEN_STOPS else None
    error = error or (verdict.error if verdict is not None else None)

    summary = [verdict.comment] if verdict is not None and verdict.comment else []
    if error:
        summary.append(f"Error: {error}")
    summary += [check_line(c) for c in failed]
    passed_meta = {
        "outcome": outcome,
        "policy_violations": [c.name for c in failed if c.policy_violation],
        "error": error,
    }
    explanation = "\n".join(summary) or None
    if outcome == "passed" or outcome in BOT_FAILURES:
        passed = Score(value=CORRECT if outcome == "passed" else INCORRECT, answer=outcome, explanation=explanation, metadata=passed_meta)
    else:
        passed = Score.unscored(answer=outcome, explanation=explanation or outcome, metadata=passed_meta)

    judge = verdict.judge if verdict is not None else None
    judge_meta = {
        "judge": judge.judge if judge else None,
        "error": judge.error if judge else None,
        "calibration": score_calibration(verdict.checks) if verdict is not None else None,
    }
    score = verdict.score if verdict is not None else None
    if score is not None:
        judge_score = Score(value=score, answer=str(score), explanation=verdict.comment if verdict else None, metadata=judge_meta)
    else:
        offline = judge is not None and judge.judge == "offline"
        why = (judge.error if judge and judge.error else None) or (
            "no score: no LLM judge (the checks decide)" if offline else "no judge score"
        )
        judge_score = Score.unscored(explanation=why, metadata=judge_meta)

    decided = [c for c in checks if c.outcome in ("pass", "fail")]
    held = sum(1 for c in decided if c.outcome == "pass")
    checks_meta = {"checks": [c.model_dump(mode="json", exclude={"details"}) for c in checks]}
    checks_text = "\n".join(check_line(c) for c in checks) or "no checks"
    if decided:
        checks_score = Score(value=held / len(decided), answer=f"{held}/{len(decided)} held", explanation=checks_text, metadata=checks_meta)
    else:
        checks_score = Score.unscored(answer="0/0", explanation=checks_text, metadata=checks_meta)
    return {"passed": passed, "judge_score": judge_score, "checks": checks_score}


def criterion_scores(verdict: Verdict | None, criteria: Sequence[str]) -> dict[str, Score]:
    """One score per criterion in `criteria` (see the module doc)."""
    checks = {c.name: c for c in (verdict.checks if verdict is not None else []) if c.kind == CRITERION_KIND}
    scores: dict[str, Score] = {}
    for text in criteria:
        check = checks.get(text)
        name = CRITERION_SCORE + text
        if check is None:
            scores[name] = Score.unscored(answer="-", explanation="this conversation's spec does not have this criterion")
            continue
        state = criterion_state(check.outcome, check.details)
        meta = {
            "state": state,
            "turn": check.details.get("turn"),
            "quote": check.details.get("quote"),
            "calibration": calibration_text(check),
        }
        if check.outcome in ("pass", "fail"):
            scores[name] = Score(
                value=CORRECT if check.outcome == "pass" else INCORRECT, answer=state, explanation=check.reason, metadata=meta
            )
        else:
            scores[name] = Score.unscored(answer=state, explanation=check.reason, metadata=meta)
    return scores


def sample_input(spec: ConversationSpec) -> str:
    """What a sample's input says: the spec's goals (a playbook's first customer line), else
    its name."""
    return "\n".join(spec.goals) if spec.goals else spec.name


def spec_metadata(spec: ConversationSpec) -> dict[str, Any]:
    """What a sample says about its spec: where it came from and its variables."""
    return {
        "spec_id": spec.spec_id,
        "name": spec.name,
        "kind": spec.kind,
        "source": spec.source,
        "seed": spec.seed,
        "customer_id": spec.world.customer_id,
        "variables": dict(spec.variables),
        "variable_values": jsonable(spec.variable_values),
        "goals": list(spec.goals),
        "language": spec.language,
    }


def conversation_metadata(conversation: Conversation, verdict: Verdict | None, trial: int) -> dict[str, Any]:
    """What a sample says about how its conversation went: stop reason, turns, usage per role
    (parley's roles, cost included), extracted outputs, policy violations."""
    usage = {role: u.model_dump(mode="json") for role, u in conversation.usage.items()}
    if verdict is not None and verdict.judge is not None:
        usage["judge"] = verdict.judge.usage.model_dump(mode="json")
    meta: dict[str, Any] = {
        "trial": trial,
        "conversation_id": conversation.id,
        "stop_reason": conversation.stop_reason,
        "error": conversation.error,
        "turns": conversation.bot_turns,
        "duration_s": conversation.duration_s,
        "bot_model": conversation.bot_model,
        "user_simulator": conversation.user_simulator,
        "outcome": effective_outcome(conversation, verdict),
        "usage": usage,
        "tool_calls": len(conversation.tool_calls),
    }
    if verdict is not None:
        meta["outputs"] = [o.model_dump(mode="json") for o in verdict.outputs]
        meta["policy_violations"] = [c.name for c in verdict.policy_violations]
    if "goal_table" in conversation.metadata:
        meta["goal_table"] = jsonable(conversation.metadata["goal_table"])
    return meta
