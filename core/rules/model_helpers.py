"""Rule helpers that ask a model: semantic_content, tone, language, only_talks_about,
utterance_index and responds_in_same_language.

They ask the judge's model (a `RuleModel`: one prompt in, its text out). Without one (offline)
they raise ModelNeeded, and without an answer (the endpoint failed) ModelFailed: the rule is
then `not_run`, never passed. What each returns is what Sensei's helper returns, so rules read
the same: semantic_content -> bool; tone -> a list of POSITIVE/NEGATIVE/NEUTRAL, one per text;
language -> a code (ENG, ESP, FR, GER, IT, POR, CHI, JAP or OTHER); only_talks_about -> True, or
a text naming the answers that strayed (a failure's reason); utterance_index -> the 1-based
turn, or -1; responds_in_same_language -> bool (True without asking when only one turn is left
once the bot's "Error: The server..." turns are set aside).
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

from parley.core.errors import ParleyError
from parley.core.rules.evaluation_limits import EvaluationBudget, NotDecided

log = logging.getLogger("parley.rules")

LANGUAGES = {
    "ENG": "English",
    "ESP": "Spanish",
    "FR": "French",
    "GER": "German",
    "IT": "Italian",
    "POR": "Portuguese",
    "CHI": "Chinese",
    "JAP": "Japanese",
    "OTHER": "another language",
}
MODEL_HELPERS = frozenset({"semantic_content", "tone", "language", "only_talks_about", "utterance_index", "responds_in_same_language"})
"""The helpers that need a model."""


class RuleModel(Protocol):
    """A model the rule helpers can ask: one prompt in, the text of its answer out (blocking)."""

    name: str

    def ask(self, prompt: str) -> str: ...


class ModelNeeded(NotDecided):
    """A helper needs a model and the evaluation has none."""

    def __init__(self, helper: str) -> None:
        super().__init__(f"{helper}() needs a model: give a judge model to decide it")
        self.helper = helper


class ModelFailed(NotDecided):
    """The model was asked and did not answer."""


class ModelAsking:
    """The model of one evaluation and the budget whose clock stops while it answers."""

    def __init__(self, model: RuleModel | None, budget: EvaluationBudget) -> None:
        self.model = model
        self.budget = budget

    def ask(self, helper: str, prompt: str) -> str:
        if self.model is None:
            raise ModelNeeded(helper)
        try:
            with self.budget.paused():
                return self.model.ask(prompt).strip()
        except ParleyError as exc:
            log.warning("rule helper %s: the model %s failed: %s", helper, self.model.name, exc)
            raise ModelFailed(f"{helper}(): the model {self.model.name} failed: {exc}") from None


def _yes(answer: str) -> bool:
    return answer.strip().strip(".!").lower() == "yes"


def semantic_content(asking: ModelAsking, text: Any, content: Any) -> bool:
    prompt = f"Does the text below convey this content: {content}?\nText: {text}\nAnswer only YES or NO."
    return _yes(asking.ask("semantic_content", prompt))


def tone(asking: ModelAsking, item: Any) -> list[str]:
    texts = _texts(item)
    answers = []
    for text in texts:
        prompt = f"What is the tone of this text?\n{text}\nAnswer only POSITIVE, NEGATIVE or NEUTRAL."
        answers.append(asking.ask("tone", prompt).upper())
    return answers


def language(asking: ModelAsking, text: Any) -> str:
    codes = ", ".join(f"{code} for {name}" for code, name in LANGUAGES.items())
    prompt = f"What language is this text in?\n{text}\nAnswer only with one code: {codes}."
    return asking.ask("language", prompt).upper()


def only_talks_about(asking: ModelAsking, interaction: Any, topics: Any, fallback: Any = None) -> bool | str:
    if isinstance(topics, str):
        topics = [topics]
    if not isinstance(topics, list):
        raise ValueError(f"Expecting a list of strings, or a string, but got {topics}")
    if not isinstance(interaction, list):
        raise ValueError(f"Expecting a list with the chatbot-user interaction, but got {interaction}")
    subjects = ", ".join(str(topic) for topic in topics)
    allowed = f' It may also say it did not understand, with phrases like "{fallback}".' if fallback is not None else ""
    prompt = (
        f"Here is a conversation between a user and an assistant:\n\n{transcript(interaction)}\n----\n"
        f'Does the assistant keep to these topics: "{subjects}", steering the user back when the user '
        f"strays? It may ask for clarification.{allowed}\n"
        "Answer only True if it does; otherwise list the assistant's answers that stray."
    )
    answer = asking.ask("only_talks_about", prompt)
    if answer.lower() == "true":
        return True
    return f"The following chatbot responses are out of scope: {answer}"


def utterance_index(asking: ModelAsking, interaction: Any, who: Any, what: Any) -> int:
    prompt = (
        f"Here is a numbered conversation between a user and an assistant:\n\n{transcript(interaction, numbered=True)}\n"
        f"At which turn did the {who} talk about {what}? Answer only the turn's number."
    )
    answer = asking.ask("utterance_index", prompt)
    return int(answer) if answer.isdecimal() else -1


def responds_in_same_language(asking: ModelAsking, interaction: Any) -> bool:
    kept = [step for step in interaction if not _server_error(step)]
    if len(kept) == 1:
        return True
    prompt = f"Does the chatbot below always answer in the language the human writes in?\n{transcript(kept)}\nAnswer only YES or NO."
    return _yes(asking.ask("responds_in_same_language", prompt))


def _server_error(step: Any) -> bool:
    """A bot turn that is the connector's error text (always English), left out of the check."""
    return any(key.lower() in ("chatbot", "assistant") and value.startswith("Error: The server") for key, value in step.items())


def _texts(item: Any) -> list[Any]:
    if isinstance(item, str):
        return [item]
    if not isinstance(item, list):
        raise ValueError(f"Expecting a list of strings, or a string, but got {item}")
    return item


def transcript(interaction: Any, *, numbered: bool = False) -> str:
    """The turns as `who : text` lines (numbered from 1 when asked)."""
    lines: list[str] = []
    for step in interaction:
        for key, value in step.items():
            lines.append(f"{len(lines) + 1} - {key} : {value}" if numbered else f"{key} : {value}")
    return "\n".join(lines)
