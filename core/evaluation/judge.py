"""Judges: a score of 1-3 and a comment for a finished conversation.

`OfflineJudge` gives no score: no model judged anything, so its answer is the checks' result in
words (the comment), and the checks alone decide the outcome (no model, same answer every time).
`LLMJudge` asks a chat model, against the profile's rubric (`expect.judge.rubric`), else the
scenario file's evaluator prompt (`spec.extra["evaluator_prompt"]`), else the rubric it was
built with, else `DEFAULT_RUBRIC` (the five criteria of the 003 evaluator). A judge that fails
(the provider, or a reply that cannot be read even after one reminder) returns
`JudgeResult(error=...)` with no score: a failure is never turned into a score.

The transcript is numbered by turn (turn N starts at the customer's N-th message). An LLM judge's
prompt is fitted to its model's context (`context_tokens`, less room for the answer) by
parley.core.prompts.condenser, which says in the prompt what it condensed and keeps every turn's
number; a conversation that does not fit even condensed, or that the endpoint refuses as too
long, is a judge error saying so (`prompt_fit` "too_long"), never sent in vain or retried.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

from parley.core.errors import ContextLengthExceeded, ParleyError
from parley.core.evaluation.checks import WORLD_KINDS, checks_about_the_bot
from parley.core.evaluation.criteria_judge import JUDGE_GENERATION, LLMCriteriaJudge
from parley.core.evaluation.judge_parsing import JudgeParseError, parse_judge_reply
from parley.core.evaluation.judge_prompt import fit_judge_messages, fit_off_the_loop, too_long_subject
from parley.core.evaluation.transcript_turns import clip, quoted, render_turns, tool_call_line
from parley.core.models import ChatModel
from parley.core.prompts import (
    ANSWER_TOKENS,
    DEFAULT_CONTEXT_TOKENS,
    Condensed,
    Turn,
    prompt_budget,
    split_turns,
)
from parley.core.records import (
    ChatMessage,
    CheckResult,
    Conversation,
    ConversationSpec,
    GenerateConfig,
    JudgePromptFit,
    JudgeResult,
    ToolCallRecord,
    Usage,
)

__all__ = [
    "DEFAULT_RUBRIC",
    "NEEDS_LLM_JUDGE",
    "Judge",
    "LLMJudge",
    "OfflineJudge",
    "choose_rubric",
    "fit_judge_prompt",
    "format_transcript",
    "judge_generation",
    "judge_messages",
    "offline_judgement",
    "rubric_not_read",
]

OFFLINE_JUDGE_NAME = "offline"

NEEDS_LLM_JUDGE = "needs an LLM judge (`--judge MODEL`)"
"""Why a check only a model can decide (a rubric, a criterion in words) is not run offline."""
"""What `parley profiles validate` says of a rubric (`expect.judge`) and of criteria (`expect.criteria`)."""

# Modelled on the 003 evaluator: five criteria, and what each score means.
DEFAULT_RUBRIC = """\
Judge the assistant on five criteria:
1. Professionalism: polite, clear, on topic, no invented facts.
2. Request accuracy and completeness: it did what the customer asked, correctly and fully, and
   nothing the customer did not ask for (for example, it changed or cancelled only what the
   customer confirmed, and followed the shop's policies).
3. Customer satisfaction: the customer would leave with a clear answer.
4. Efficiency: no needless questions, repetition or detours.
5. Problem resolution: the customer's problem was solved, or the assistant said clearly why it
   could not be and what the customer can do instead.

Scores:
1 = major service issues, or the request was not handled or handled wrongly;
2 = the request was handled, with minor communication or efficiency problems;
3 = professional, complete, accurate and efficient."""

_RUBRIC_SCALE = "Scores: 3 = fully meets the rubric; 2 = meets it with minor problems; 1 = fails it, or has major service issues."
_ANSWER_FORMAT = (
    "Reply with only a JSON object, no other text, of exactly this form:\n"
    '{"score": 2, "comment": "one or two sentences saying why"}\n'
    "where score is the integer 1, 2 or 3."
)
_REMINDER = (
    'Your reply could not be read ({why}). Answer again with only the JSON object {{"score": 1|2|3, "comment": "..."}} and nothing else.'
)
_MAX_MESSAGE_CHARS = 4000
_MAX_ECHOED_REPLY_CHARS = 600  # an unreadable reply shown back with the reminder: its start is enough


@runtime_checkable
class Judge(Protocol):
    """Scores a finished conversation, given its deterministic checks. Should not raise:
    a failure is a `JudgeResult` with `error` set (evaluate() also catches what escapes)."""

    async def judge(self, conversation: Conversation, spec: ConversationSpec, checks: Sequence[CheckResult]) -> JudgeResult: ...


# -- offline --------------------------------------------------------------------------------


def offline_judgement(checks: Sequence[CheckResult]) -> JudgeResult:
    """The checks' result in words, and no score: without a model nobody judged, so no score is
    made up (a score is only ever a judge's). The comment lists the failed checks (a policy
    violation or a record's final state that was not reached first), or says that every applicable
    check held, or that none about the bot applied."""
    applicable = [c for c in checks if c.outcome not in ("not_applicable", "not_run")]
    failed = [c for c in applicable if c.outcome == "fail"]
    undecided = [c for c in applicable if c.outcome == "error"]
    if not failed and not checks_about_the_bot(checks):
        return JudgeResult(judge=OFFLINE_JUDGE_NAME, comment="No check about the bot applied (no score: no LLM judge).")
    if failed:
        failed = sorted(failed, key=lambda c: not (c.policy_violation or c.kind in WORLD_KINDS))  # the gravest first
        names = "; ".join(c.name + (" [policy violation]" if c.policy_violation else "") for c in failed)
        comment = f"{len(failed)} of {len(applicable)} checks failed: {names}."
    elif undecided:
        comment = f"{len(applicable) - len(undecided)} of {len(applicable)} checks passed; none failed."
    else:
        comment = "All 1 check passed." if len(applicable) == 1 else f"All {len(applicable)} checks passed."
    if undecided:
        comment += " Could not decide: " + "; ".join(c.name for c in undecided) + "."
    return JudgeResult(judge=OFFLINE_JUDGE_NAME, comment=comment)


def rubric_not_read(min_score: int) -> CheckResult:
    """The `expect.judge` check under the offline judge: it reads no rubric, so the check is not
    run (never passed on a score derived from the other checks)."""
    return CheckResult(
        kind="judge_score",
        name=f"judge score >= {min_score}",
        outcome="not_run",
        reason=NEEDS_LLM_JUDGE,
        details={"min_score": min_score, "judge": OFFLINE_JUDGE_NAME},
    )


class OfflineJudge:
    """The judge without a model: `offline_judgement` of the checks (no score)."""

    name = OFFLINE_JUDGE_NAME

    async def judge(self, conversation: Conversation, spec: ConversationSpec, checks: Sequence[CheckResult]) -> JudgeResult:
        return offline_judgement(checks)


# -- the prompt -----------------------------------------------------------------------------


def choose_rubric(spec: ConversationSpec, fallback: str | None = None) -> tuple[str, str]:
    """(rubric text, where it came from): the profile's, the scenario's evaluator prompt,
    `fallback`, or the default."""
    if spec.expect is not None and spec.expect.judge is not None and spec.expect.judge.rubric.strip():
        return spec.expect.judge.rubric.strip(), "profile"
    prompt = spec.extra.get("evaluator_prompt")
    if isinstance(prompt, str) and prompt.strip():
        return prompt.strip(), "scenario"
    if fallback and fallback.strip():
        return fallback.strip(), "judge"
    return DEFAULT_RUBRIC, "default"


def _tool_lines(records: Mapping[str, ToolCallRecord], turn_messages: Sequence[ChatMessage], message: ChatMessage) -> list[str]:
    """One line per tool call of `message`: the call, and the result as the turn holds it
    (shortened, or pointing back to an earlier turn, when the transcript was condensed)."""
    results = {m.tool_call_id: m.content for m in turn_messages if m.role == "tool" and m.tool_call_id}
    lines = []
    for call in message.tool_calls:
        record = records.get(call.id)
        result = results.get(call.id)
        if result is None and record is not None:
            result = record.result
        lines.append(tool_call_line(call, record, result, _MAX_MESSAGE_CHARS))
    return lines


def _render_transcript(conversation: Conversation, fitted: Condensed) -> str:
    records = {r.call_id: r for r in conversation.tool_calls}

    def turn_lines(turn: Turn) -> list[str]:
        lines: list[str] = []
        for message in turn.messages:
            if message.role == "user" and message.content:
                lines.append(f"Customer: {quoted(message.content, _MAX_MESSAGE_CHARS)}")
            elif message.role == "assistant":
                if message.content:
                    lines.append(f"Assistant: {quoted(message.content, _MAX_MESSAGE_CHARS)}")
                lines += _tool_lines(records, turn.messages, message)
        return lines

    return render_turns(fitted, turn_lines)


def format_transcript(conversation: Conversation) -> str:
    """The conversation as a judge reads it, whole: a `Turn N:` line opening each turn, then
    `Customer:` and `Assistant:` lines, each tool call and its result on its own line under the
    assistant message that made it."""
    head, turns = split_turns(conversation.messages)
    return _render_transcript(conversation, Condensed(head=head, turns=turns, budget=0))


def fit_judge_prompt(
    conversation: Conversation,
    spec: ConversationSpec,
    checks: Sequence[CheckResult],
    *,
    rubric: str | None = None,
    show_checks: bool = True,
    budget: int | None = None,
    tail: Sequence[ChatMessage] = (),
) -> tuple[list[ChatMessage], Condensed]:
    """The messages a model judge is sent (followed by `tail`, a reminder's exchange), with
    the transcript condensed until they take at most `budget` tokens (None: no limit), and what
    the condensing did (`fits` False: not even condensed)."""
    text, source = choose_rubric(spec, rubric)
    if source == "default":
        rubric_part = text
    elif source == "scenario":
        rubric_part = text  # the scenario's evaluator prompt carries its own scale
    else:
        rubric_part = f"Rubric:\n{text}\n\n{_RUBRIC_SCALE}"
    system = (
        "You evaluate a conversation between a customer-service chatbot (the Assistant) and a "
        "customer (the Customer, played by a simulator). Judge only the Assistant.\n\n"
        f"{rubric_part}\n\n{_ANSWER_FORMAT}"
    )
    asked = []
    shown = [c for c in checks if c.outcome in ("pass", "fail")]
    if show_checks and shown:
        asked.append(
            "Automatic checks (already verified against the world's database and the transcript; each one's reason, "
            "which may quote the conversation, as a JSON string):\n"
            + "\n".join(f"- {c.outcome.upper()} {quoted(c.name, 300)}: {quoted(c.reason, 1000)}" for c in shown)
        )
    asked.append("Now give your evaluation as the JSON object.")
    return fit_judge_messages(
        conversation,
        spec,
        system=system,
        transcript=conversation.messages,
        render=functools.partial(_render_transcript, conversation),
        asked=asked,
        budget=budget,
        tail=tail,
    )


def judge_messages(
    conversation: Conversation,
    spec: ConversationSpec,
    checks: Sequence[CheckResult],
    *,
    rubric: str | None = None,
    show_checks: bool = True,
) -> list[ChatMessage]:
    """The system and user messages a model judge is sent, the transcript whole."""
    return fit_judge_prompt(conversation, spec, checks, rubric=rubric, show_checks=show_checks)[0]


# -- model judge ----------------------------------------------------------------------------


def judge_generation(given: GenerateConfig | None = None) -> GenerateConfig:
    """A model judge's generation settings: temperature 0 and its output cap (PARLEY_JUDGE_MAX_TOKENS,
    the default of `judge.max_tokens`), with those `given` (`--gen judge.KEY=VALUE`) in their place."""
    from parley.core.settings import settings

    return JUDGE_GENERATION.model_copy(update={"max_tokens": settings().judge_max_tokens}).overlaid(given)


class LLMJudge:
    """A judge over any ChatModel. JSON is asked for in the prompt (the model layer has no
    `response_format` option); the reply is parsed leniently, and an unreadable reply is
    retried once with a reminder before the judge gives up with an error. The prompt is fitted
    to `context_tokens` (see the module doc). Its answers are capped (`config.max_tokens`, by
    default JUDGE_GENERATION's): a judge that rambles stops there, not at the timeout."""

    def __init__(
        self,
        model: ChatModel,
        rubric: str | None = None,
        *,
        config: GenerateConfig | None = JUDGE_GENERATION,
        show_checks: bool = True,
        context_tokens: int = DEFAULT_CONTEXT_TOKENS,
    ) -> None:
        self.model = model
        self.rubric = rubric
        self.config = config
        self.show_checks = show_checks
        self.context_tokens = context_tokens

    @property
    def name(self) -> str:
        return self.model.name

    @property
    def criteria_judge(self) -> LLMCriteriaJudge:
        """The criteria in words, decided by the same model in a call of their own, its prompt
        fitted to the same context."""
        return LLMCriteriaJudge(self.model, config=self.config, context_tokens=self.context_tokens)

    def _too_long(self, why: str, usage: Usage, unreadable: str = "") -> JudgeResult:
        """A judge error: the prompt does not fit (`unreadable`: why the first answer could not be
        read, when it is the reminder's prompt that does not)."""
        return JudgeResult(
            judge=self.name,
            error=f"{too_long_subject(unreadable)} does not fit the judge's {self.context_tokens}-token context ({why})",
            usage=usage,
            prompt_fit="too_long",
        )

    async def judge(self, conversation: Conversation, spec: ConversationSpec, checks: Sequence[CheckResult]) -> JudgeResult:
        max_tokens = self.config.max_tokens if self.config is not None else None
        budget = prompt_budget(self.context_tokens, max_tokens=max_tokens)
        tail: list[ChatMessage] = []
        usage = Usage()
        fit: JudgePromptFit = "whole"
        problem = ""
        for _ in range(2):  # the first try and one reminder
            messages, fitted = await fit_off_the_loop(
                functools.partial(
                    fit_judge_prompt, conversation, spec, checks, rubric=self.rubric, show_checks=self.show_checks, tail=tail
                ),
                budget,
            )
            if fitted.condensed:
                fit = "condensed"
            if not fitted.fits:
                return self._too_long(
                    f"about {fitted.tokens_after} tokens even condensed, {max_tokens or ANSWER_TOKENS} kept for the answer", usage, problem
                )
            try:
                reply = await self.model.generate(messages, None, self.config)
            except ContextLengthExceeded:
                return self._too_long("the endpoint refused the prompt as too long", usage, problem)
            except ParleyError as err:  # ProviderError after retries, ConfigError (no key)
                return JudgeResult(judge=self.name, error=f"the judge model failed: {err}", usage=usage, prompt_fit=fit)
            usage = usage + reply.usage
            try:
                parsed = parse_judge_reply(reply.text)
            except JudgeParseError as err:
                problem = str(err)
                tail = [
                    ChatMessage(role="assistant", content=clip(reply.text or "", _MAX_ECHOED_REPLY_CHARS)),
                    ChatMessage(role="user", content=_REMINDER.format(why=problem)),
                ]
                continue
            return JudgeResult(judge=self.name, score=parsed.score, comment=parsed.comment, usage=usage, prompt_fit=fit)
        return JudgeResult(judge=self.name, error=f"unreadable reply after a reminder: {problem}", usage=usage, prompt_fit=fit)
