"""A playbook's judge checkpoints: criteria in words decided on the conversation as it stood at a
`judge` step (parley.core.specs.playbook.JudgeStep), in the middle of the conversation.

The playbook runner only records where each checkpoint was reached (`metadata["checkpoints"]`:
its step and how many messages the transcript had then); the criteria are decided here, after
the conversation, on the transcript cut at that place (`conversation_at`), by the same criteria
judge, prompt and evidence check as the end's criteria. Deciding afterwards on the cut rather
than at that moment in the run:
- keeps one evaluation path: a checkpoint is judged where every other criterion is, under the
  judge's own time limit and cache, its cost counted as the judge's, and the conversation's run
  never waits on (or breaks because of) a judge;
- lets `parley rescore` decide it again, with another judge, on the stored transcript, exactly
  as the run decided it: what the judge sees is a function of the stored conversation alone;
- loses nothing: what the judge is shown is the same either way (a prefix of the transcript, its
  tool calls with their results); only the records' final state is left out, as it may hold what
  came later (the prompt says the state at that point is what the tool calls show).

Each criterion is its own check, kind `criterion`, named `at step N: CRITERION` (so it is told
from an end-of-conversation criterion with the same words), with the evidence the end's have: a
turn and a quote, checked against the cut transcript (a quote from after the checkpoint is "not
in the transcript", a judge error). It is a check the author asked for: held, it can make a pass.
Offline (no criteria judge) it is `not_run` with NEEDS_LLM_JUDGE; a checkpoint the conversation
never reached, or a run that broke, is `not_run` saying so; never passed. A checkpoint reached
before a timeout is decided: the transcript up to it is whole. Its prompt is fitted to the
judge's context as the end's is (too long even condensed: a judge error on its criteria), and
the batch's count of judge prompts condensed or too long counts it beside the score's and the
end's criteria call.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import TypeAdapter, ValidationError

from parley.core.evaluation.claims import sees_actions
from parley.core.evaluation.criteria import CriteriaJudgement, Criterion, criteria_checks, undecided_criteria
from parley.core.evaluation.criteria_judge import CriteriaJudge, ask_criteria_judge
from parley.core.evaluation.criteria_prompt import CHECKPOINT_KEY, CheckpointCut
from parley.core.evaluation.judge import NEEDS_LLM_JUDGE
from parley.core.records import CheckResult, Conversation, ConversationSpec, first_error
from parley.core.specs import JudgeStep, PlaybookCheckpoint, judge_steps

__all__ = ["checkpoint_checks", "checkpoint_name", "conversation_at"]

_CHECKPOINTS = TypeAdapter(list[PlaybookCheckpoint])


def checkpoint_name(step: int, criterion: str) -> str:
    """A checkpoint criterion's check name: `at step 3: The bot asked which order it is`."""
    return f"at step {step}: {criterion}"


def conversation_at(conversation: Conversation, checkpoint: PlaybookCheckpoint) -> Conversation:
    """The conversation as it stood at `checkpoint`: its first messages, the tool calls made in
    them, the injected messages among them, no final state, and a CheckpointCut that tells the
    judge's prompt so."""
    messages = conversation.messages[: checkpoint.messages]
    calls = {call.id for message in messages for call in message.tool_calls}
    injected = conversation.metadata.get("injected_messages") or []
    cut = CheckpointCut(step=checkpoint.step, sees_actions=sees_actions(conversation))
    return conversation.model_copy(
        update={
            "messages": messages,
            "tool_calls": [record for record in conversation.tool_calls if record.call_id in calls],
            "final_state": None,
            "metadata": {
                CHECKPOINT_KEY: cut.model_dump(),
                "injected_messages": [p for p in injected if isinstance(p, int) and p < checkpoint.messages],
            },
        }
    )


def _reached(conversation: Conversation) -> dict[int, PlaybookCheckpoint] | str:
    """The checkpoints the conversation reached, by step; what is wrong with the record when it
    cannot be read."""
    raw = conversation.metadata.get("checkpoints") or []
    try:
        return {c.step: c for c in _CHECKPOINTS.validate_python(raw)}
    except ValidationError as err:
        first = first_error(err, "record")
        return f"unreadable checkpoint record ({first.where}: {first.message})"


def _at_step(checks: Sequence[CheckResult], step: int, checkpoint: PlaybookCheckpoint | None) -> list[CheckResult]:
    place = {"step": step} if checkpoint is None else {"step": step, "messages": checkpoint.messages}
    return [check.model_copy(update={"name": checkpoint_name(step, check.name), "details": {**check.details, **place}}) for check in checks]


async def checkpoint_checks(
    decider: CriteriaJudge | None, conversation: Conversation, spec: ConversationSpec, broke: str | None
) -> tuple[list[CheckResult], list[CriteriaJudgement]]:
    """A check per criterion of each `judge` step of `spec` (in step order), and the judgements
    they came from (what each cost, how its prompt met the judge's context): each checkpoint
    reached is one call of `decider` on the conversation cut there (see the module doc).
    `broke`: why the run broke, None when it did not."""
    steps: list[tuple[int, JudgeStep]] = judge_steps(spec)
    if not steps:
        return [], []
    reached = _reached(conversation)
    checks: list[CheckResult] = []
    judgements: list[CriteriaJudgement] = []
    for number, step in steps:
        criteria = [Criterion(number=n, text=text) for n, text in enumerate(step.criteria, 1)]
        checkpoint = reached.get(number) if isinstance(reached, dict) else None
        if broke is not None:
            decided = undecided_criteria(criteria, f"Not run: the run itself broke ({broke}).")
        elif isinstance(reached, str):
            decided = [c.model_copy(update={"outcome": "error", "reason": reached}) for c in undecided_criteria(criteria, reached)]
        elif checkpoint is None:
            decided = undecided_criteria(criteria, f"Not run: the conversation stopped ({conversation.stop_reason}) before step {number}.")
        elif decider is None:
            decided = undecided_criteria(criteria, NEEDS_LLM_JUDGE)
        else:
            cut = conversation_at(conversation, checkpoint)
            judgement = await ask_criteria_judge(decider, cut, spec, criteria)
            decided = criteria_checks(criteria, judgement, cut)
            judgements.append(judgement)
        checks += _at_step(decided, number, checkpoint)
    return checks, judgements
