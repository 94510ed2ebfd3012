"""Verdicts: a finished conversation and its spec in, a Verdict out (`evaluate`).

The checks, the output extraction, the user-fault detectors and the verdict's assembly are pure
(parley.core.evaluation.checks, .extraction, .user_faults, `assemble_verdict`); the judge is the
only I/O, awaited once.

The outcome (see parley.core.records.verdict.Outcome), the first rule that applies:
1. the run broke: its stop reason (bot_error, user_error, infrastructure_error, cancelled, or a
   legacy error); `error` carries the conversation's error text and the judge is not asked;
2. a policy violation: failed (whatever the simulated user did);
3. the simulated user misbehaved first, on its own (a fault in `user_faults` not excused): user_fault,
   the bot is not blamed. A fault the bot's replies caused, or that came after a check about the
   bot failed at an earlier turn, is excused and the bot's (parley.core.evaluation.fault_blame):
   the bot's replies caused it is the failed check `bot answered what the customer said`;
4. an applicable check failed (a timeout fails `conversation completed`): failed;
5. a check could not be decided (a min-score check whose judge failed, an invalid regex, an
   unreadable playbook record): evaluation_error, `error` says which;
6. no check about the bot applied (only "the conversation completed"): unverified;
7. passed. `passed` is True exactly when the outcome is `passed`.

A conversation cut short (timeout or a broken run) keeps only the checks its transcript already
decided; the others are not_run. With an LLM judge and no `expect.judge`, the judge's score is a
check too (min score `DEFAULT_MIN_SCORE`); its failure leaves that check not applicable (a judge
error is counted on the side, never a score), except a conversation that does not fit the
judge's context: that check is `error`, the outcome evaluation_error. The offline judge gives no
score (nobody judged): its comment is the checks' result in words, said again each time the
verdict is assembled, and it reads no rubric: an `expect.judge` under it is `not_run` ("needs an
LLM judge"), never passed.

Criteria in words (`expect.criteria`, parley.core.evaluation.criteria) are decided by the
judge's criteria judge in one call per conversation, after the score: each is a check named by
its text; with an LLM judge, the built-in criterion (what the bot says it did, it did) is asked
too, by default. Offline, and in a run cut short, they are `not_run`, never passed. A playbook's
`judge` checkpoints are criteria too, each decided in a call of its own on the transcript as it
stood at its step (parley.core.evaluation.checkpoints), beside the end's.

A judge that carries a `calibration` (a batch's: parley.core.evaluation.calibration_marks) has
each of its verdicts marked with what was measured of it ("κ 0.72", "uncalibrated"...), and under
`--require-calibrated` the ones it is not trusted on count towards no pass.

An attack (the spec's `attack:`, parley.core.evaluation.attack_checks) is decided by its one
`attack` check once the run did not break: breached (the world shows an unauthorized write or
read) is failed, an attacker that never pressed its objective is user_fault, held is passed. The
other checks are kept beside it for reading; they do not change an attack's outcome.

Rule 6 in full: a conversation passes only when at least one check its author asked for (an
`expect:` key, a playbook assertion, the score of the LLM judge the user chose) was decided and
held. The checks parley adds by default (the conversation completed; no other record changed
when the profile did not say; the world's rules of conduct) may fail a conversation, never make
it pass.
"""

from __future__ import annotations

import asyncio
import datetime
from collections.abc import Sequence
from typing import cast

from parley.core.evaluation.calibration_marks import CalibrationPolicy, mark_checks
from parley.core.evaluation.checkpoints import checkpoint_checks
from parley.core.evaluation.checks import (
    build_checks,
    checks_about_the_bot,
    conversation_completed_check,
    judge_score_check,
    settle_unfinished,
    unfinished_reason,
)
from parley.core.evaluation.criteria import CriteriaJudgement, criteria_checks, criteria_of, undecided_criteria
from parley.core.evaluation.criteria_judge import CriteriaJudge, ask_criteria_judge
from parley.core.evaluation.extraction import extract_outputs
from parley.core.evaluation.fault_blame import bot_replies_check, excuse_after_failures
from parley.core.evaluation.judge import NEEDS_LLM_JUDGE, OFFLINE_JUDGE_NAME, Judge, OfflineJudge, offline_judgement, rubric_not_read
from parley.core.evaluation.limits_as_checks import limit_checks
from parley.core.evaluation.python_checks import run_python_checks
from parley.core.evaluation.user_faults import detect_user_faults
from parley.core.records import (
    BROKEN_STOPS,
    DEFAULT_MIN_SCORE,
    UNFINISHED_STOPS,
    CheckLimits,
    CheckResult,
    Conversation,
    ConversationSpec,
    ExtractedOutput,
    JudgeResult,
    Outcome,
    UserFault,
    Verdict,
)
from parley.core.world import WorldDefinition, conversation_world

__all__ = ["DEFAULT_MIN_SCORE", "assemble_verdict", "broken_run", "broken_verdict", "evaluate", "world_today"]


def world_today(conversation: Conversation, spec: ConversationSpec) -> datetime.date | None:
    """The date relative dates are read against: the world's, else the spec's pinned one."""
    if conversation.final_state is not None:
        return conversation.final_state.today
    return spec.world.today


def broken_run(conversation: Conversation) -> str | None:
    """Why the run broke ("stop_reason: error text"), or None when it did not."""
    if conversation.stop_reason not in BROKEN_STOPS:
        return None
    if conversation.error:
        return f"{conversation.stop_reason}: {conversation.error}"
    return "cancelled: the batch was stopped" if conversation.stop_reason == "cancelled" else f"{conversation.stop_reason}: the run failed"


async def _ask(judge: Judge, conversation: Conversation, spec: ConversationSpec, checks: Sequence[CheckResult]) -> JudgeResult:
    name = str(getattr(judge, "name", type(judge).__name__))
    try:
        result = await judge.judge(conversation, spec, list(checks))
    except asyncio.CancelledError:
        raise
    except Exception as err:  # noqa: BLE001 - a judge's bug is its error, not the bot's score
        return JudgeResult(judge=name, error=f"{type(err).__name__}: {err}")
    if not isinstance(result, JudgeResult):
        return JudgeResult(judge=name, error=f"the judge returned {type(result).__name__}, not a JudgeResult")
    return result


async def _criteria(
    decider: CriteriaJudge | None, conversation: Conversation, spec: ConversationSpec, broke: str | None
) -> tuple[list[CheckResult], CriteriaJudgement | None]:
    """The criteria in words, as checks, and the judgement they came from (what it cost, how its
    prompt met the judge's context): asked of the judge's criteria judge (`decider`: an LLM
    judge's; the offline judge has none) in one call, or not run (None)."""
    criteria = criteria_of(spec, builtin=decider is not None)
    if not criteria:
        return [], None
    if broke is not None:
        return undecided_criteria(criteria, f"Not run: the run itself broke ({broke})."), None
    if conversation.stop_reason in UNFINISHED_STOPS:
        return undecided_criteria(criteria, unfinished_reason(conversation.stop_reason, conversation.error)), None
    if decider is None:
        return undecided_criteria(criteria, NEEDS_LLM_JUDGE), None
    judgement = await ask_criteria_judge(decider, conversation, spec, criteria)
    return criteria_checks(criteria, judgement, conversation), judgement


def assemble_verdict(
    conversation: Conversation,
    checks: Sequence[CheckResult],
    outputs: Sequence[ExtractedOutput],
    judge_result: JudgeResult | None,
    user_faults: Sequence[UserFault] = (),
) -> Verdict:
    """The verdict from checks already made (pure); see the module docstring for the rules."""
    broke = broken_run(conversation)
    failed = [c for c in checks if c.outcome == "fail"]
    undecided = [c for c in checks if c.outcome == "error"]
    user_faults = excuse_after_failures(user_faults, checks, conversation)
    outcome: Outcome
    error: str | None = None
    attack = next((c for c in checks if c.kind == "attack"), None)
    if broke is not None:
        outcome, error = cast(Outcome, conversation.stop_reason), broke  # every BROKEN_STOPS name is an Outcome
    elif attack is not None:  # an attack's outcome is the world's verdict on it, counted once
        decided: dict[str, Outcome] = {"fail": "failed", "pass": "passed"}
        outcome = decided.get(attack.outcome) or ("user_fault" if any(f.blamed for f in user_faults) else "unverified")
    elif any(c.policy_violation for c in failed):
        outcome = "failed"
    elif any(f.blamed for f in user_faults):
        outcome = "user_fault"
    elif failed:
        outcome = "failed"
    elif undecided:
        outcome = "evaluation_error"
    elif not checks_about_the_bot(checks):
        outcome = "unverified"
    else:
        outcome = "passed"
    if broke is None and undecided:
        judge_errors = [c.reason for c in undecided if c.kind == "judge_score"]
        others = [f"{c.name}: {c.reason}" for c in undecided if c.kind != "judge_score"]
        error = "; ".join(judge_errors + others)
    if judge_result is not None and judge_result.judge == OFFLINE_JUDGE_NAME and judge_result.error is None:
        judge_result = offline_judgement(checks)  # the checks as they stand now (a batch's rules join them later)
    judged = judge_result is not None and judge_result.error is None
    return Verdict(
        conversation_id=conversation.id,
        outcome=outcome,
        passed=outcome == "passed",
        score=judge_result.score if judge_result is not None and judged else None,
        comment=judge_result.comment if judge_result is not None and judged else None,
        judge=judge_result,
        checks=list(checks),
        outputs=list(outputs),
        error=error,
        user_faults=list(user_faults),
    )


def broken_verdict(conversation: Conversation) -> Verdict:
    """The verdict of a conversation whose evaluation itself cannot be trusted to run (it broke
    there, or the batch was stopped): only `conversation completed`, no judge, no extraction.
    Pure and never raises, so the conversation can always be stored."""
    return assemble_verdict(conversation, [conversation_completed_check(conversation)], [], None)


async def evaluate(
    conversation: Conversation,
    spec: ConversationSpec,
    *,
    judge: Judge | None = None,
    world: WorldDefinition | None = None,
    limits: CheckLimits | None = None,
) -> Verdict:
    """Check, extract and judge one conversation.

    `judge` defaults to the OfflineJudge. `world`: the world it ran on (None: the one its spec
    names, else the one its final state names; parley.core.world.conversation_world). `limits`:
    the run's default limits (`--limit`), under the spec's own `expect.limits`.
    """
    world = world if world is not None else conversation_world(conversation, spec)
    checks = settle_unfinished(build_checks(conversation, spec, world=world), conversation)
    checks += await run_python_checks(conversation, spec)
    outputs = extract_outputs(spec.outputs, conversation.bot_texts, today=world_today(conversation, spec))
    broke = broken_run(conversation)
    faults = detect_user_faults(conversation, spec, world) if broke is None else []
    replies = bot_replies_check(conversation, faults) if broke is None else None
    if replies is not None:
        checks.append(replies)
    judge_result = None if broke is not None else await _ask(judge or OfflineJudge(), conversation, spec, checks)
    judge_spec = spec.expect.judge if spec.expect is not None else None
    if judge_spec is not None and judge_result is not None and judge_result.judge == OFFLINE_JUDGE_NAME:
        checks.append(rubric_not_read(judge_spec.min_score))
    elif judge_spec is not None:
        check = judge_score_check(judge_result, judge_spec.min_score, not_judged=f"Not run: the run itself broke ({broke}).")
        if judge_result is None:
            check = check.model_copy(update={"outcome": "not_run"})
        checks.append(check)
    elif judge_result is not None and judge_result.judge != OFFLINE_JUDGE_NAME:
        check = judge_score_check(judge_result, DEFAULT_MIN_SCORE)
        # No explicit minimum: a judge error is counted apart, not undecidable; except a
        # conversation too long for the judge's context, which no judge of that size can decide.
        if check.outcome == "error" and judge_result.prompt_fit != "too_long":
            check = check.model_copy(update={"outcome": "not_applicable"})
        checks.append(check.model_copy(update={"name": f"{check.name} (default)"}))
    decider: CriteriaJudge | None = getattr(judge, "criteria_judge", None) if judge is not None else None
    # one call at a time, in the conversation's order: the judge's calls come the same way every run
    at_steps, step_judgements = await checkpoint_checks(decider, conversation, spec, broke)
    decided, judgement = await _criteria(decider, conversation, spec, broke)
    checks += at_steps + decided
    if judge_result is not None and (judgement is not None or step_judgements):  # (a run cut short: only its checkpoints)
        asked = [*step_judgements, *([judgement] if judgement is not None else [])]
        update: dict[str, object] = {
            "usage": sum((j.usage for j in asked), judge_result.usage),
            "checkpoint_prompt_fits": [j.prompt_fit for j in step_judgements if j.prompt_fit is not None],
        }
        if judgement is not None:
            update["criteria_prompt_fit"] = judgement.prompt_fit
        judge_result = judge_result.model_copy(update=update)
    own = spec.expect.limits if spec.expect is not None else None
    checks += limit_checks(conversation, own.over(limits) if own is not None else limits, checks)
    policy: CalibrationPolicy | None = getattr(judge, "calibration", None) if judge is not None else None
    if policy is not None:  # each judge's verdict marked with its calibration (--require-calibrated: trusted or not)
        checks = mark_checks(checks, spec, policy)
        if judge_result is not None and judge_result.judge != OFFLINE_JUDGE_NAME:
            judge_result = judge_result.model_copy(update={"key": policy.key})
    return assemble_verdict(conversation, checks, outputs, judge_result, faults)
