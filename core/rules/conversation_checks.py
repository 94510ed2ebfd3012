"""Rules as checks of the conversation they are about (`parley run --rules`).

Each active `conversations: 1` rule decides each conversation once it ends; its result becomes
a check of that conversation's verdict, named `rule:` and the rule file's path under the rules
folder (several files may share a rule's `name`; the name is shown in the check's reason). A
rule is a check the author asked for: held, it can make a conversation pass; failed, it fails
it, with the rule's `yields` text; not applicable and not run neither pass nor fail.

A conversation that did not run to an end of its own (it broke, was cancelled or timed out) is
not judged by rules: each is `not_run`, saying why, and the conversation's own outcome stands.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from parley.core.records import CheckResult
from parley.core.rules.model_helpers import RuleModel
from parley.core.rules.results import RuleOutcome, RuleResult
from parley.core.rules.rule_evaluation import evaluate_rule, prepare
from parley.core.rules.rule_file import CompiledRule
from parley.core.rules.sensei_conversation import SenseiConversation

RULE_CHECK_KIND: Final = "rule"
CHECK_PREFIX = "rule:"


def conversation_rules(rules: Sequence[CompiledRule]) -> list[CompiledRule]:
    """The active rules decided per conversation."""
    return [rule for rule in rules if rule.active and rule.conversations == 1]


def group_rules(rules: Sequence[CompiledRule]) -> list[CompiledRule]:
    """The active rules decided over pairs of conversations or over the batch."""
    return [rule for rule in rules if rule.active and rule.conversations != 1]


def rule_checks(rules: Sequence[CompiledRule], conversation: SenseiConversation, model: RuleModel | None) -> list[CheckResult]:
    """Each per-conversation rule's decision about `conversation`, as checks (see the module)."""
    subjects = prepare([conversation])
    checks: list[CheckResult] = []
    for rule in conversation_rules(rules):
        report = evaluate_rule(rule, subjects, model)
        checks.extend(check_of(rule, result) for result in report.results)
    return checks


def rules_not_run(rules: Sequence[CompiledRule], why: str) -> list[CheckResult]:
    """A `not_run` check for each per-conversation rule, for a conversation rules cannot judge."""
    return [
        _check(rule, "not_run", f"{rule.name}: not run: {why}", details={"rule": rule.name, "description": rule.description})
        for rule in conversation_rules(rules)
    ]


def check_of(rule: CompiledRule, result: RuleResult) -> CheckResult:
    """A rule's result about one conversation as a check of it."""
    details: dict[str, object] = {"rule": rule.name, "description": rule.description}
    if result.yields is not None:
        details["yields"] = result.yields
    if result.outcome == "pass":
        reason = f"{rule.name}: held ({rule.description})"
    elif result.outcome == "fail":
        said = result.yields or result.reason or "oracle violated"
        if result.yields and result.reason and result.reason != "oracle violated":
            said = f"{result.yields} ({result.reason})"
        reason = f"{rule.name}: {said}"
    elif result.outcome == "not_applicable":
        reason = f"{rule.name}: not applicable: {result.reason or 'its conditions do not hold'}"
    else:
        reason = f"{rule.name}: not run: {result.reason or 'it could not be decided'}"
    return _check(rule, result.outcome, reason, details=details)


def _check(rule: CompiledRule, outcome: RuleOutcome, reason: str, *, details: dict[str, object]) -> CheckResult:
    return CheckResult(kind=RULE_CHECK_KIND, name=f"{CHECK_PREFIX}{rule.rule_file}", outcome=outcome, reason=reason, details=details)
