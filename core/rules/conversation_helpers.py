"""Rule helpers over one conversation's turns and outputs, as Sensei defines them.

`interaction` is the conversation's list of turns, each a mapping such as {"User": "hi"} or
{"Assistant": "hello"}; the bot's turns are those keyed `Assistant` or `chatbot` (any case).
- conversation_length(who): turns in all ('both'), or the turns keyed `who` (user, assistant
  or chatbot, any case);
- chatbot_returns(what, and_not): indexes of the turns in which the bot's text contains `what`
  (and, with `and_not`, no `and_not` after it);
- repeated_answers(method, threshold): {first phrase: [later phrases alike]} for each bot
  phrase that came back, alike meaning similarity >= threshold by `method`;
- data_collected() / missing_slots(): whether every output of `data_output` has a value / the
  names of those that have none (None or the text 'None').
Odd input raises (a turn that is not a mapping, a bot message that is not text where text is
needed): the rule is then not applicable, as in Sensei.
"""

from __future__ import annotations

from typing import Any

from parley.core.rules.evaluation_limits import EvaluationBudget
from parley.core.rules.text_similarity import comparator

BOT_KEYS = ("chatbot", "assistant")
_WHO = ("user", "chatbot", "assistant", "both")


def conversation_length(interaction: Any, who: Any = "both") -> int:
    who = who.lower()
    if who not in _WHO:
        raise ValueError(f"Expected 'user', 'chatbot' or 'both', but got '{who}'")
    if who == "both":
        return len(interaction)
    return sum(1 for step in interaction for key, _ in step.items() if key.lower() == who)


def chatbot_returns(interaction: Any, what: Any, and_not: Any = None) -> list[int]:
    found = []
    for index, step in enumerate(interaction):
        for key, value in step.items():
            if key.lower() in BOT_KEYS and what in value:
                if and_not is None or _first_without_second(value, what, and_not):
                    found.append(index)
    return found


def _first_without_second(text: str, first: str, second: str) -> bool:
    at = text.find(first)
    return at != -1 and text.find(second, at + len(first)) == -1


def repeated_answers(interaction: Any, budget: EvaluationBudget, method: Any = "exact", threshold: Any = 0.4) -> dict[Any, list[Any]]:
    similarity = comparator(method)
    phrases: dict[Any, list[Any]] = {}
    for step in interaction:
        for key, value in step.items():
            if key.lower() in BOT_KEYS:
                alike = None
                for known in phrases:
                    budget.tick()
                    if similarity(value, known) >= threshold:
                        alike = known
                        break
                if alike is not None:
                    phrases[alike].append(value)
                else:
                    phrases[value] = []
    return {phrase: repeats for phrase, repeats in phrases.items() if repeats}


def data_collected(outputs: Any) -> bool:
    return not missing_slots(outputs, first_only=True)


def missing_slots(outputs: Any, *, first_only: bool = False) -> list[Any]:
    missing = []
    for data in outputs:
        for key, value in data.items():
            if value is None or value == "None":
                missing.append(key)
                if first_only:
                    return missing
    return missing
