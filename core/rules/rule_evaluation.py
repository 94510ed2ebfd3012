"""Evaluating rules over conversations, with the verdicts of Sensei's rule checker.

- `conversations: 1`: each conversation. Its `when`, then its `if`, must hold (an error in
  either counts as not holding): else not_applicable. Then the oracle: pass when its value
  `== True`, fail otherwise (with `yields`), not_applicable when it raises.
- `conversations: 2`: each ordered pair of different conversations, seeing `conv[0]` and
  `conv[1]`; as above, except that an oracle that raises fails the pair.
- `conversations: all`: the conversations whose `when` and `if` hold are the batch (the others
  are each not_applicable); the oracle is evaluated once, in the scope of the last conversation
  (as Sensei does), with `exists`/`num_exist`/`is_unique` looking through the batch: pass when
  it is true, fail when false, not_applicable (for the batch) when it raises.
Inactive rules are skipped. An evaluation that needs a model it does not have, whose model
fails, or that passes its bounds, is `not_run`; for a batch rule, one conversation whose `when`
or `if` could not be decided leaves the batch undecided too.

Where this departs from sensei-check, on purpose: every helper can be called from `when` and
`if` too (Sensei's `conversation_length()`, `chatbot_returns()` and the like exist only in the
oracle); a batch rule's batch starts empty for each rule (Sensei carries it over from the batch
rule before); a pair whose oracle raises fails even when it is the first pair (Sensei crashes).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from parley.core.rules.evaluation_limits import NotDecided
from parley.core.rules.expression_compiler import CompiledExpression
from parley.core.rules.model_helpers import RuleModel
from parley.core.rules.results import ResultKind, RuleOutcome, RuleReport, RuleResult
from parley.core.rules.rule_file import CompiledRule
from parley.core.rules.rule_scope import RuleScope, Subject, conversation_scope, pair_scope
from parley.core.rules.sensei_conversation import SenseiConversation
from parley.core.rules.value_costs import bounded_repr, bounded_text, clip

log = logging.getLogger("parley.rules")

MAX_REASON_CHARS = 300
"""Characters of a result's reason (what the oracle returned, what it raised)."""
MAX_YIELDS_CHARS = 2_000
"""Characters of a failure's `yields` text kept (Sensei prints it whole; a rule can build a million)."""


def prepare(conversations: Sequence[SenseiConversation]) -> list[Subject]:
    """The conversations as rules see them (their values built once for every rule)."""
    return [Subject(conversation) for conversation in conversations]


def evaluate_rules(
    rules: Sequence[CompiledRule], conversations: Sequence[SenseiConversation], model: RuleModel | None = None
) -> list[RuleReport]:
    """A report per active rule, in the order given; inactive rules are skipped."""
    subjects = prepare(conversations)
    return [evaluate_rule(rule, subjects, model) for rule in rules if rule.active]


def evaluate_rule(rule: CompiledRule, subjects: Sequence[Subject], model: RuleModel | None = None) -> RuleReport:
    """Every decision of one rule over `subjects` (see the module)."""
    judge = _Judge(rule)
    if rule.conversations == 1:
        for subject in subjects:
            judge.decide(conversation_scope(subject, [], model), "conversation", [subject.name])
    elif rule.conversations == 2:
        for first in subjects:
            for second in subjects:
                if first is not second:
                    judge.decide(pair_scope(first, second, model), "pair", [first.name, second.name])
    else:
        judge.decide_batch(subjects, model)
    return RuleReport(
        rule_file=rule.rule_file,
        name=rule.name,
        description=rule.description,
        conversations=rule.conversations,
        needs_model=rule.needs_model,
        results=judge.results,
    )


class _Judge:
    def __init__(self, rule: CompiledRule) -> None:
        self.rule = rule
        self.results: list[RuleResult] = []

    def record(
        self, kind: ResultKind, names: list[str], outcome: RuleOutcome, reason: str | None = None, yields: str | None = None
    ) -> None:
        self.results.append(
            RuleResult(
                rule_file=self.rule.rule_file,
                rule_name=self.rule.name,
                kind=kind,
                conversations=names,
                outcome=outcome,
                reason=reason,
                yields=yields,
            )
        )

    def applies(self, scope: RuleScope) -> str | None:
        """None when `when` and `if` hold, else why not. NotDecided passes through."""
        for key, expression in (("when", self.rule.when), ("if", self.rule.condition)):
            held, why = _holds(expression, scope)
            if not held:
                return f"{key} {why}"
        return None

    def decide(self, scope: RuleScope, kind: ResultKind, names: list[str]) -> None:
        try:
            why_not = self.applies(scope)
        except NotDecided as exc:
            self.record(kind, names, "not_run", str(exc))
            return
        if why_not is not None:
            self.record(kind, names, "not_applicable", why_not)
            return
        try:
            value = self.rule.oracle.evaluate(scope)
        except NotDecided as exc:
            self.record(kind, names, "not_run", str(exc))
            return
        except Exception as exc:  # the rule's own error: a verdict by Sensei's semantics, recorded as its reason
            log.debug("rule %s on %s: the oracle raised %r", self.rule.rule_file, names, exc)
            outcome: RuleOutcome = "fail" if kind == "pair" else "not_applicable"
            self.record(kind, names, outcome, f"the oracle raised {_error(exc)}")
            return
        if value == True:  # noqa: E712 - Sensei passes what equals True (1 and 1.0 too), not what is truthy
            self.record(kind, names, "pass")
        else:
            self.record(kind, names, "fail", _failure_reason(value), self.yields(scope))

    def decide_batch(self, subjects: Sequence[Subject], model: RuleModel | None) -> None:
        batch: list[Subject] = []
        undecided: NotDecided | None = None
        for subject in subjects:
            try:
                why_not = self.applies(conversation_scope(subject, batch, model))
            except NotDecided as exc:
                self.record("conversation", [subject.name], "not_run", str(exc))
                undecided = exc
                continue
            if why_not is None:
                batch.append(subject)
            else:
                self.record("conversation", [subject.name], "not_applicable", why_not)
        names = [subject.name for subject in batch]
        if undecided is not None:
            self.record("batch", names, "not_run", f"the batch is not known: {undecided}")
            return
        if not subjects:
            self.record("batch", names, "not_applicable", "there are no conversations")
            return
        scope = conversation_scope(subjects[-1], batch, model)
        try:
            value = self.rule.oracle.evaluate(scope)
        except NotDecided as exc:
            self.record("batch", names, "not_run", str(exc))
            return
        except Exception as exc:  # the rule's own error: a verdict by Sensei's semantics, recorded as its reason
            log.debug("rule %s on the batch: the oracle raised %r", self.rule.rule_file, exc)
            self.record("batch", names, "not_applicable", f"the oracle raised {_error(exc)}")
            return
        if value:
            self.record("batch", names, "pass")
        else:
            self.record("batch", names, "fail", _failure_reason(value), self.yields(scope))

    def yields(self, scope: RuleScope) -> str | None:
        """The rule's `yields` text for a failure; empty when it cannot be computed (as in Sensei)."""
        if self.rule.yields is None:
            return None
        try:
            return bounded_text(self.rule.yields.evaluate(scope), MAX_YIELDS_CHARS)
        except Exception as exc:  # a failure's text must not change its verdict (NotDecided included)
            log.debug("rule %s: yields raised %r", self.rule.rule_file, exc)
            return ""


def _holds(expression: CompiledExpression, scope: RuleScope) -> tuple[bool, str]:
    try:
        value = expression.evaluate(scope)
    except NotDecided:
        raise
    except Exception as exc:  # Sensei counts a condition that raises as one that does not hold
        return False, f"raised {_error(exc)}"
    return (True, "") if value else (False, "is false")


def _failure_reason(value: Any) -> str:
    if value is False or value is None:
        return "oracle violated"
    if isinstance(value, str):
        return clip(value, MAX_REASON_CHARS)
    return clip(f"oracle returned {bounded_repr(value, MAX_REASON_CHARS)}", MAX_REASON_CHARS)


def _error(exc: BaseException) -> str:
    return clip(f"{type(exc).__name__}: {clip(str(exc), MAX_REASON_CHARS)}", MAX_REASON_CHARS)
