"""What the names in a rule mean while it judges a conversation, a pair or a batch.

A name is, first, a helper (helpers win over a conversation's values of the same name, as in
Sensei); then `conv` (the conversations judged: [this one], or [first, second] for a pair) and
`interaction` (this conversation's turns; a pair has none); then the conversation's own
values (`sensei_variables`); then a safe builtin. A pair rule sees only `conv` and the helpers.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from parley.core.rules.conversation_view import ConversationView
from parley.core.rules.helper_functions import HELPERS
from parley.core.rules.model_helpers import RuleModel
from parley.core.rules.safe_builtins import SAFE_BUILTINS
from parley.core.rules.sensei_conversation import SenseiConversation, sensei_variables

FUNCTION_NAMES = frozenset(HELPERS) | frozenset(SAFE_BUILTINS)
"""The functions a rule may call."""


class Subject:
    """A conversation prepared for rules: its name, its values and its `conv[i]` view."""

    __slots__ = ("name", "variables", "view")

    def __init__(self, conversation: SenseiConversation) -> None:
        self.name = conversation.name
        self.variables = sensei_variables(conversation)
        self.view = ConversationView(self.variables)


class RuleScope:
    """The names of one evaluation (see the module)."""

    __slots__ = ("conv", "interaction", "variables", "batch", "model")

    def __init__(
        self,
        *,
        conv: list[ConversationView],
        interaction: Any,
        variables: Mapping[str, Any],
        batch: list[Subject],
        model: RuleModel | None,
    ) -> None:
        self.conv = conv
        self.interaction = interaction
        self.variables = variables
        self.batch = batch
        self.model = model

    def lookup(self, name: str) -> Any:
        helper = HELPERS.get(name)
        if helper is not None:
            return helper
        if name == "conv":
            return self.conv
        if name == "interaction":
            return self.interaction
        if name in self.variables:
            return self.variables[name]
        builtin = SAFE_BUILTINS.get(name)
        if builtin is not None:
            return builtin
        raise NameError(f"name '{name}' is not defined")

    def batch_scopes(self) -> Iterator[RuleScope]:
        """A scope for each conversation of the batch, as `exists()` conditions see them."""
        for member in list(self.batch):
            yield conversation_scope(member, self.batch, self.model)


def conversation_scope(subject: Subject, batch: list[Subject], model: RuleModel | None) -> RuleScope:
    return RuleScope(
        conv=[subject.view], interaction=subject.variables["interaction"], variables=subject.variables, batch=batch, model=model
    )


def pair_scope(first: Subject, second: Subject, model: RuleModel | None) -> RuleScope:
    return RuleScope(conv=[first.view, second.view], interaction=[], variables={}, batch=[], model=model)
