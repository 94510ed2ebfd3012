"""A jury: several judges decide together, by majority over the jurors that answered.

A jury is named `jury:A,B,C` (two or more distinct models, none offline) and is a judge like any
other: `--judge jury:A,B,C` (or `--jury A,B,C`) in `parley run`, `parley rescore` and `parley
judge calibrate`. Each juror is asked as a judge of its own, all at once:
- the score: the value a strict majority of the jurors that gave one gave; no majority (1, 2
  and 3 from three jurors, or 2 against 2) is a judge error saying how the jury split;
- each criterion: the decision a strict majority of the jurors that decided it made, with the
  quote and reasoning of the first of them whose quote is in the transcript; a split is a judge
  error on that criterion.
A juror that fails (its endpoint, an unreadable reply, a criterion it left undecided) is left
out of that vote and counted, never a vote: `JudgeResult.jurors` and each criterion's
`details["jurors"]` say what every juror answered ("3", "met", or "error: why"). Every juror
failing is a judge error.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from typing import Literal, cast

from parley.core.errors import ConfigError
from parley.core.evaluation.criteria import CriteriaJudgement, Criterion, CriterionAnswer, locate_quote
from parley.core.evaluation.criteria_judge import CriteriaJudge, ask_criteria_judge
from parley.core.evaluation.judge import Judge
from parley.core.evaluation.transcript_turns import turn_texts
from parley.core.records import CheckResult, Conversation, ConversationSpec, JudgeResult, Usage

__all__ = ["JURY_PREFIX", "Jury", "JuryCriteriaJudge", "jurors_of", "jury_name"]

JURY_PREFIX = "jury:"
ERROR_VOTE = "error: "


def jury_name(jurors: Sequence[str]) -> str:
    """`jury:A,B,C`."""
    return JURY_PREFIX + ",".join(jurors)


def jurors_of(name: str) -> list[str] | None:
    """The jurors' model names of a jury's name (None: `name` is no jury). ConfigError for a
    jury of fewer than two distinct models, or with an offline juror."""
    if not name.startswith(JURY_PREFIX):
        return None
    jurors = [j.strip() for j in name.removeprefix(JURY_PREFIX).split(",") if j.strip()]
    if len(set(jurors)) < 2 or len(set(jurors)) != len(jurors):
        raise ConfigError(f"a jury is two or more distinct judge models, comma-separated (jury:A,B,C); got {name!r}")
    if "offline" in jurors:
        raise ConfigError("the offline judge decides no criterion and gives no score of its own: it cannot sit on a jury")
    return jurors


def _majority(votes: Sequence[str]) -> str | None:
    """The value more than half of `votes` hold (None: none does)."""
    if not votes:
        return None
    value, count = Counter(votes).most_common(1)[0]
    return value if count * 2 > len(votes) else None


def _split(votes: dict[str, str]) -> str:
    return ", ".join(f"{juror}: {vote}" for juror, vote in votes.items())


async def _safe_judge(juror: Judge, conversation: Conversation, spec: ConversationSpec, checks: Sequence[CheckResult]) -> JudgeResult:
    name = str(getattr(juror, "name", type(juror).__name__))
    try:
        return await juror.judge(conversation, spec, checks)
    except asyncio.CancelledError:
        raise
    except Exception as err:  # noqa: BLE001 - a juror's bug is its error, never a vote
        return JudgeResult(judge=name, error=f"{type(err).__name__}: {err}")


class JuryCriteriaJudge:
    """The jurors' criteria judges, deciding by majority (see the module doc)."""

    def __init__(self, name: str, jurors: Sequence[CriteriaJudge]) -> None:
        self.name = name
        self.jurors = list(jurors)

    async def judge_criteria(self, conversation: Conversation, spec: ConversationSpec, criteria: Sequence[Criterion]) -> CriteriaJudgement:
        judgements = await asyncio.gather(*(ask_criteria_judge(j, conversation, spec, criteria) for j in self.jurors))
        texts = turn_texts(conversation)
        answers: dict[int, CriterionAnswer] = {}
        unanswered: dict[int, str] = {}
        votes: dict[int, dict[str, str]] = {}
        for criterion in criteria:
            n = criterion.number
            said: dict[str, str] = {}
            decided: list[tuple[str, CriterionAnswer]] = []
            for juror, judgement in zip(self.jurors, judgements, strict=True):
                name = str(getattr(juror, "name", type(juror).__name__))
                answer = judgement.answers.get(n) if judgement.error is None else None
                if answer is None:
                    said[name] = ERROR_VOTE + (judgement.error or judgement.unanswered.get(n, "no decision"))
                else:
                    said[name] = answer.verdict
                    decided.append((name, answer))
            votes[n] = said
            verdict = _majority([a.verdict for _, a in decided])
            if verdict is None:
                unanswered[n] = f"the jury split ({_split(said)})" if decided else f"every juror failed ({_split(said)})"
                continue
            majority = [a for _, a in decided if a.verdict == verdict]
            located = [a for a in majority if not a.quote or locate_quote(texts, a.quote, a.turns) is not None]
            chosen = (located or majority)[0]
            reasoning = f"{len(majority)} of {len(self.jurors)} jurors. {chosen.reasoning}".strip()
            answers[n] = chosen.model_copy(update={"reasoning": reasoning})
        usage = sum((j.usage for j in judgements), Usage())
        fits = [j.prompt_fit for j in judgements if j.prompt_fit is not None]
        fit = "too_long" if "too_long" in fits else ("condensed" if "condensed" in fits else (fits[0] if fits else None))
        return CriteriaJudgement(judge=self.name, answers=answers, unanswered=unanswered, usage=usage, prompt_fit=fit, votes=votes)


class Jury:
    """A judge made of several (see the module doc). `jurors`: the judges, each with its own
    model; each may offer a `criteria_judge`, and the jury's criteria judge asks those that do."""

    def __init__(self, jurors: Sequence[Judge]) -> None:
        self.jurors = list(jurors)
        self.name = jury_name([str(getattr(j, "name", type(j).__name__)) for j in self.jurors])

    @property
    def criteria_judge(self) -> JuryCriteriaJudge | None:
        inner = [c for c in (getattr(j, "criteria_judge", None) for j in self.jurors) if c is not None]
        return JuryCriteriaJudge(self.name, inner) if inner else None

    async def judge(self, conversation: Conversation, spec: ConversationSpec, checks: Sequence[CheckResult]) -> JudgeResult:
        results = await asyncio.gather(*(_safe_judge(j, conversation, spec, checks) for j in self.jurors))
        said = {
            r.judge: (str(r.score) if r.error is None and r.score is not None else ERROR_VOTE + (r.error or "no score")) for r in results
        }
        scored = [r for r in results if r.error is None and r.score is not None]
        usage = sum((r.usage for r in results), Usage())
        fits = [r.prompt_fit for r in results if r.prompt_fit is not None]
        fit = (
            "too_long"
            if fits and all(f == "too_long" for f in fits)
            else ("condensed" if "condensed" in fits else (fits[0] if fits else None))
        )
        majority = _majority([str(r.score) for r in scored])
        if majority is None:
            why = f"the jury split ({_split(said)})" if scored else f"every juror failed ({_split(said)})"
            return JudgeResult(judge=self.name, error=why, usage=usage, prompt_fit=fit, jurors=said)
        score = cast(Literal[1, 2, 3], int(majority))
        agreeing = [r for r in scored if r.score == score]
        comment = f"{len(agreeing)} of {len(self.jurors)} jurors scored {score}. {agreeing[0].comment or ''}".strip()
        return JudgeResult(judge=self.name, score=score, comment=comment, usage=usage, prompt_fit=fit, jurors=said)
