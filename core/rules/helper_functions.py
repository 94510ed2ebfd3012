"""The rule helpers as functions a rule may call, bound to the conversation being judged.

Sensei gives some helpers their conversation implicitly (`conversation_length()` counts the
turns of the conversation the rule is looking at); here every helper reads it from the scope of
the evaluation (`RuleScope`): its `interaction`, its `conv`, its batch (the conversations a
`conversations: all` rule has kept so far, which `exists`, `num_exist` and `is_unique` look
through), and its model. Parameter names are Sensei's, so keyword calls read the same.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from parley.core.rules import conversation_helpers, model_helpers, value_helpers
from parley.core.rules.expression_compiler import CompiledExpression, Frame, RuleFunction
from parley.core.rules.model_helpers import ModelAsking

if TYPE_CHECKING:
    from parley.core.rules.rule_scope import RuleScope


class Helper(RuleFunction):
    """A helper: `body(frame, scope, *args, **kwargs)`; what it returns is charged to the budget."""

    def __init__(self, name: str, body: Callable[..., Any]) -> None:
        self.name = name
        self.body = body

    def call(self, frame: Frame, args: list[Any], kwargs: dict[str, Any]) -> Any:
        return frame.budget.charge(self.body(frame, frame.scope, *args, **kwargs))


def _conversation_length(frame: Frame, scope: RuleScope, who: Any = "both") -> int:
    return conversation_helpers.conversation_length(scope.interaction, who)


def _chatbot_returns(frame: Frame, scope: RuleScope, what: Any, and_not: Any = None) -> list[int]:
    return conversation_helpers.chatbot_returns(scope.interaction, what, and_not)


def _repeated_answers(frame: Frame, scope: RuleScope, method: Any = "exact", threshold: Any = 0.4) -> dict[Any, list[Any]]:
    return conversation_helpers.repeated_answers(scope.interaction, frame.budget, method, threshold)


def _data_collected(frame: Frame, scope: RuleScope) -> bool:
    return conversation_helpers.data_collected(scope.conv[0].attribute("data_output"))


def _missing_slots(frame: Frame, scope: RuleScope) -> list[Any]:
    return conversation_helpers.missing_slots(scope.conv[0].attribute("data_output"))


def _extract_float(frame: Frame, scope: RuleScope, string: Any) -> float | None:
    return value_helpers.extract_float(string)


def _currency(frame: Frame, scope: RuleScope, string: Any) -> str | None:
    return value_helpers.currency(string)


def _length(frame: Frame, scope: RuleScope, item: Any, kind: Any = "min") -> float | int:
    return value_helpers.length(item, kind)


def _semantic_content(frame: Frame, scope: RuleScope, variable: Any, content: Any) -> bool:
    return model_helpers.semantic_content(ModelAsking(scope.model, frame.budget), variable, content)


def _tone(frame: Frame, scope: RuleScope, item: Any) -> list[str]:
    return model_helpers.tone(ModelAsking(scope.model, frame.budget), item)


def _language(frame: Frame, scope: RuleScope, string: Any) -> str:
    return model_helpers.language(ModelAsking(scope.model, frame.budget), string)


def _only_talks_about(frame: Frame, scope: RuleScope, topics: Any, fallback: Any = None) -> bool | str:
    return model_helpers.only_talks_about(ModelAsking(scope.model, frame.budget), scope.interaction, topics, fallback)


def _utterance_index(frame: Frame, scope: RuleScope, who: Any, what: Any) -> int:
    return model_helpers.utterance_index(ModelAsking(scope.model, frame.budget), scope.interaction, who, what)


def _responds_in_same_language(frame: Frame, scope: RuleScope) -> bool:
    return model_helpers.responds_in_same_language(ModelAsking(scope.model, frame.budget), scope.interaction)


def _num_exist(frame: Frame, scope: RuleScope, condition: CompiledExpression) -> int:
    """How many of the batch's conversations `condition` holds for."""
    count = 0
    for member in scope.batch_scopes():
        frame.budget.tick()
        if condition.evaluate(member, frame.budget):
            count += 1
    return count


def _exists(frame: Frame, scope: RuleScope, condition: CompiledExpression) -> bool:
    """Whether `condition` holds for one of the batch's conversations (the first one decides)."""
    for member in scope.batch_scopes():
        frame.budget.tick()
        if condition.evaluate(member, frame.budget):
            return True
    return False


def _is_unique(frame: Frame, scope: RuleScope, property: Any) -> bool:
    """Whether no two of the batch's conversations have the same value named `property`
    (conversations without it, or with it empty, do not count)."""
    seen: dict[Any, str] = {}
    for member in scope.batch:
        frame.budget.tick()
        if property not in member.variables:
            continue
        value = member.variables[property]
        if value in seen:
            return False
        if value is not None:
            seen[value] = member.name
    return True


HELPERS: dict[str, RuleFunction] = {
    helper.name: helper
    for helper in (
        Helper("conversation_length", _conversation_length),
        Helper("chatbot_returns", _chatbot_returns),
        Helper("repeated_answers", _repeated_answers),
        Helper("data_collected", _data_collected),
        Helper("missing_slots", _missing_slots),
        Helper("extract_float", _extract_float),
        Helper("currency", _currency),
        Helper("length", _length),
        Helper("semantic_content", _semantic_content),
        Helper("tone", _tone),
        Helper("language", _language),
        Helper("only_talks_about", _only_talks_about),
        Helper("utterance_index", _utterance_index),
        Helper("responds_in_same_language", _responds_in_same_language),
        Helper("exists", _exists),
        Helper("num_exist", _num_exist),
        Helper("is_unique", _is_unique),
    )
}
"""Every helper by the name rules call it."""
