"""Scoring a conversation and a batch: checks, output extraction, judges, pass^k and intervals, the batch's summary."""

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.core.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from parley.core.evaluation.attack_checks import attack_check, attack_successes
    from parley.core.evaluation.batch_summary import (
        PASS_RATE_BASIS,
        BatchSummary,
        CountedRow,
        FlakySpec,
        NumberStatistics,
        PassAtK,
        ScoreStatistics,
        pass_hat_k_from_counts,
    )
    from parley.core.evaluation.checkpoints import checkpoint_checks, checkpoint_name, conversation_at
    from parley.core.evaluation.claims import CLAIMS_KIND, claims_check, find_claims, hold_claims
    from parley.core.evaluation.criteria import (
        ATTACK_CRITERION,
        CLAIMS_CRITERION,
        CRITERION_KIND,
        CriteriaJudgement,
        Criterion,
        CriterionAnswer,
        criteria_checks,
        criteria_of,
        criterion_state,
        criterion_summary,
        evidence_text,
        locate_quote,
        parse_criteria_reply,
        undecided_criteria,
    )
    from parley.core.evaluation.criteria_judge import CriteriaJudge, LLMCriteriaJudge
    from parley.core.evaluation.criteria_prompt import criteria_messages
    from parley.core.evaluation.intervals import Interval, bootstrap_pass_hat_k, stats_seed, wilson_interval
    from parley.core.evaluation.judge import NEEDS_LLM_JUDGE, Judge, LLMJudge, OfflineJudge
    from parley.core.evaluation.offline_roles import offline_limits, offline_limits_by_file
    from parley.core.evaluation.pass_k import pass_hat_k
    from parley.core.evaluation.unobservable import (
        evaluate_observed,
        hide_unobservable,
        unseen_context_warnings,
        with_checks,
    )
    from parley.core.evaluation.verdicts import assemble_verdict, broken_verdict, evaluate

__all__ = [
    "attack_check",
    "attack_successes",
    "ATTACK_CRITERION",
    "CLAIMS_CRITERION",
    "CRITERION_KIND",
    "CriteriaJudge",
    "CriteriaJudgement",
    "Criterion",
    "CriterionAnswer",
    "LLMCriteriaJudge",
    "NEEDS_LLM_JUDGE",
    "criteria_checks",
    "criteria_messages",
    "criteria_of",
    "criterion_state",
    "criterion_summary",
    "evidence_text",
    "locate_quote",
    "parse_criteria_reply",
    "undecided_criteria",
    "checkpoint_checks",
    "checkpoint_name",
    "conversation_at",
    "CLAIMS_KIND",
    "claims_check",
    "find_claims",
    "hold_claims",
    "PASS_RATE_BASIS",
    "BatchSummary",
    "CountedRow",
    "FlakySpec",
    "Interval",
    "Judge",
    "NumberStatistics",
    "LLMJudge",
    "OfflineJudge",
    "PassAtK",
    "ScoreStatistics",
    "assemble_verdict",
    "bootstrap_pass_hat_k",
    "broken_verdict",
    "evaluate",
    "evaluate_observed",
    "hide_unobservable",
    "unseen_context_warnings",
    "offline_limits",
    "offline_limits_by_file",
    "pass_hat_k",
    "pass_hat_k_from_counts",
    "stats_seed",
    "wilson_interval",
    "with_checks",
]

if not TYPE_CHECKING:  # type checkers see the imports above; at run time each name is imported on first use
    __getattr__, __dir__ = lazy_exports(__name__, __file__)
