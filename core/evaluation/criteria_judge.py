"""The criteria judge: one model call per conversation decides every criterion.

`LLMCriteriaJudge` sends the prompt of parley.core.evaluation.criteria_prompt and reads the
reply with parley.core.evaluation.criteria. A reply that leaves some criterion without a readable
decision gets one reminder saying what is missing; what is still missing after it has no
decision (its check is a judge error), and a model that fails is a judge error for every
criterion: a failure is never turned into "not met". An LLM judge (parley.core.evaluation.judge)
offers one as its `criteria_judge`, over the same model and context; the offline judge has none,
so offline the criteria are not run.

The prompt is fitted to the model's context (`context_tokens`, less room for the answer), the
reminder's exchange included: a conversation that does not fit even condensed, or that the
endpoint refuses as too long, is a judge error on every criterion saying so ("the conversation
does not fit the judge's N-token context"), never sent in vain or retried.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from parley.core.errors import ContextLengthExceeded, ParleyError
from parley.core.evaluation.criteria import CriteriaJudgement, Criterion, CriterionAnswer, parse_criteria_reply
from parley.core.evaluation.criteria_prompt import REMINDER, fit_criteria_prompt
from parley.core.evaluation.judge_prompt import fit_off_the_loop, too_long_subject
from parley.core.models import ChatModel
from parley.core.prompts import ANSWER_TOKENS, DEFAULT_CONTEXT_TOKENS, prompt_budget
from parley.core.records import ChatMessage, Conversation, ConversationSpec, GenerateConfig, JudgePromptFit, Usage
from parley.core.settings import DEFAULT_JUDGE_MAX_TOKENS

__all__ = ["JUDGE_GENERATION", "CriteriaJudge", "LLMCriteriaJudge", "ask_criteria_judge"]

JUDGE_GENERATION = GenerateConfig(temperature=0.0, max_tokens=DEFAULT_JUDGE_MAX_TOKENS)
"""A model judge's defaults: the same answer to the same conversation, as far as its server
allows, and a bounded one (a small local model that rambles stops there, not at the timeout)."""

log = logging.getLogger("parley.evaluation.criteria_judge")

_MAX_ECHOED_REPLY_CHARS = 2000  # an unreadable reply shown back with the reminder: enough to see what went wrong


@runtime_checkable
class CriteriaJudge(Protocol):
    """Decides criteria on a finished conversation. Should not raise: a failure is a
    `CriteriaJudgement` with `error` set (evaluate() also catches what escapes)."""

    name: str

    async def judge_criteria(
        self, conversation: Conversation, spec: ConversationSpec, criteria: Sequence[Criterion]
    ) -> CriteriaJudgement: ...


async def ask_criteria_judge(
    decider: CriteriaJudge, conversation: Conversation, spec: ConversationSpec, criteria: Sequence[Criterion]
) -> CriteriaJudgement:
    """`decider`'s judgement of `criteria` on `conversation`; whatever it raises or returns
    instead is a judge error on every criterion, never a decision."""
    name = str(getattr(decider, "name", type(decider).__name__))
    try:
        judgement = await decider.judge_criteria(conversation, spec, criteria)
    except asyncio.CancelledError:
        raise
    except Exception as err:  # noqa: BLE001 - a judge's bug is its error, never a decision
        log.warning("the criteria judge %s failed", name, exc_info=True)
        return CriteriaJudgement(judge=name, error=f"{type(err).__name__}: {err}")
    if not isinstance(judgement, CriteriaJudgement):
        return CriteriaJudgement(judge=name, error=f"the criteria judge returned {type(judgement).__name__}")
    return judgement


class LLMCriteriaJudge:
    """Criteria decided by a chat model (see the module doc)."""

    def __init__(
        self,
        model: ChatModel,
        *,
        config: GenerateConfig | None = JUDGE_GENERATION,
        context_tokens: int = DEFAULT_CONTEXT_TOKENS,
    ) -> None:
        self.model = model
        self.config = config
        self.name = model.name
        self.context_tokens = context_tokens

    def _too_long(self, why: str, unreadable: str = "") -> str:
        """Why the prompt does not fit (`unreadable`: why the first answer could not be read,
        when it is the reminder's prompt that does not)."""
        return f"{too_long_subject(unreadable)} does not fit the judge's {self.context_tokens}-token context ({why})"

    def _config(self, criteria: int) -> GenerateConfig | None:
        """The call's generation settings: the answer's cap is the judge's for each criterion asked."""
        if self.config is None or self.config.max_tokens is None:
            return self.config
        return self.config.model_copy(update={"max_tokens": self.config.max_tokens * max(1, criteria)})

    async def judge_criteria(self, conversation: Conversation, spec: ConversationSpec, criteria: Sequence[Criterion]) -> CriteriaJudgement:
        config = self._config(len(criteria))
        max_tokens = config.max_tokens if config is not None else None
        budget = prompt_budget(self.context_tokens, max_tokens=max_tokens)
        tail: list[ChatMessage] = []
        numbers = [c.number for c in criteria]
        usage = Usage()
        answers: dict[int, CriterionAnswer] = {}
        fit: JudgePromptFit = "whole"
        judgement = CriteriaJudgement(judge=self.name, prompt_fit=fit)
        problems = ""  # why the first answer could not be read in full, once it was not
        for attempt in range(2):  # the first try and one reminder
            messages, fitted = await fit_off_the_loop(
                functools.partial(fit_criteria_prompt, conversation, spec, criteria, tail=tail), budget
            )
            too_long = None
            if fitted.condensed:
                fit = "condensed"
            if not fitted.fits:
                too_long = self._too_long(
                    f"about {fitted.tokens_after} tokens even condensed, {max_tokens or ANSWER_TOKENS} kept for the answer", problems
                )
            else:
                try:
                    reply = await self.model.generate(messages, None, config)
                except ContextLengthExceeded:
                    too_long = self._too_long("the endpoint refused the prompt as too long", problems)
                except ParleyError as err:  # ProviderError after retries, ConfigError (no key)
                    if attempt == 0:
                        return CriteriaJudgement(judge=self.name, error=f"the judge model failed: {err}", usage=usage, prompt_fit=fit)
                    why = f"the judge model failed on the reminder: {err}"
                    missing = {n: why for n in numbers if n not in judgement.answers}
                    return judgement.model_copy(update={"unanswered": missing, "usage": usage})
            if too_long is not None:
                if attempt == 0:
                    return CriteriaJudgement(judge=self.name, error=too_long, usage=usage, prompt_fit="too_long")
                missing = {n: too_long for n in numbers if n not in judgement.answers}
                return judgement.model_copy(update={"unanswered": missing, "usage": usage, "prompt_fit": "too_long"})
            usage = usage + reply.usage
            parsed = parse_criteria_reply(reply.text, len(criteria))
            answers = {**answers, **parsed.answers}  # the reminder's answer wins; what it left out stays
            judgement = CriteriaJudgement(judge=self.name, answers=dict(sorted(answers.items())), usage=usage, prompt_fit=fit)
            missing_now = {n: parsed.problems.get(n, f"no decision on criterion {n}") for n in numbers if n not in answers}
            if not missing_now:
                return judgement
            if attempt == 1:
                return judgement.model_copy(
                    update={"unanswered": {n: f"unreadable after a reminder: {why}" for n, why in missing_now.items()}}
                )
            problems = "; ".join(dict.fromkeys(missing_now.values()))
            text = reply.text or ""
            tail = [
                ChatMessage(
                    role="assistant", content=text if len(text) <= _MAX_ECHOED_REPLY_CHARS else text[:_MAX_ECHOED_REPLY_CHARS] + "…"
                ),
                ChatMessage(role="user", content=REMINDER.format(why=problems, count=len(criteria))),
            ]
        return judgement  # not reached: the loop returns on its second pass
