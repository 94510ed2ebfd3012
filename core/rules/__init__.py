"""Sensei rule files: loading, a safe expression evaluator, the helpers, evaluation over conversations."""

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.core.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from parley.core.rules.conversation_checks import (
        CHECK_PREFIX,
        RULE_CHECK_KIND,
        conversation_rules,
        group_rules,
        rule_checks,
        rules_not_run,
    )
    from parley.core.rules.expression_compiler import CompiledExpression, ExpressionRefused, compile_expression
    from parley.core.rules.model_bridge import ChatModelAsker, model_loop
    from parley.core.rules.model_helpers import MODEL_HELPERS, RuleModel
    from parley.core.rules.parley_conversation import (
        SenseiDocuments,
        as_sensei_conversation,
        dump_sensei,
        sensei_documents,
        spec_counts,
    )
    from parley.core.rules.results import OUTCOMES, RuleOutcome, RuleReport, RuleResult, RuleSummary
    from parley.core.rules.rule_evaluation import evaluate_rule, evaluate_rules, prepare
    from parley.core.rules.rule_file import CompiledRule, RuleFileError, RuleSet, load_rules, parse_rule
    from parley.core.rules.rule_scope import FUNCTION_NAMES
    from parley.core.rules.sensei_conversation import (
        ConversationFileError,
        SenseiConversation,
        conversation_files,
        parse_conversation,
        read_conversation_file,
        sensei_variables,
    )

__all__ = [
    "CHECK_PREFIX",
    "FUNCTION_NAMES",
    "MODEL_HELPERS",
    "OUTCOMES",
    "RULE_CHECK_KIND",
    "ChatModelAsker",
    "CompiledExpression",
    "CompiledRule",
    "ConversationFileError",
    "ExpressionRefused",
    "RuleFileError",
    "RuleModel",
    "RuleOutcome",
    "RuleReport",
    "RuleResult",
    "RuleSet",
    "RuleSummary",
    "SenseiConversation",
    "SenseiDocuments",
    "as_sensei_conversation",
    "compile_expression",
    "conversation_files",
    "conversation_rules",
    "dump_sensei",
    "evaluate_rule",
    "evaluate_rules",
    "group_rules",
    "load_rules",
    "model_loop",
    "parse_conversation",
    "parse_rule",
    "prepare",
    "read_conversation_file",
    "rule_checks",
    "rules_not_run",
    "sensei_documents",
    "sensei_variables",
    "spec_counts",
]

if not TYPE_CHECKING:  # type checkers see the imports above; at run time each name is imported on first use
    __getattr__, __dir__ = lazy_exports(__name__, __file__)
