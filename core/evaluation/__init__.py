"""Scoring a conversation and a batch: checks, output extraction, judges, pass^k and intervals, the batch's summary."""

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.core.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from parley.core.evaluation.agreement import agreement_share, bootstrap_kappa, cohen_kappa, confusion_matrix, kappa_of_pairs
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
    from parley.core.evaluation.calibration import measure_judge
    from parley.core.evaluation.calibration_marks import (
        CALIBRATION_DETAIL,
        CALIBRATION_NOTE,
        CalibrationPolicy,
        ItemMeasure,
        calibration_of,
        calibration_text,
        mark_checks,
        marked_name,
        policy_for,
        score_calibration,
    )
    from parley.core.evaluation.check_context import (
        CheckAnswer,
        CheckedConversation,
        Customer,
        FinalState,
        Message,
        RowChange,
        ToolUse,
        failed,
        not_applicable,
        passed,
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
    from parley.core.evaluation.judge import NEEDS_LLM_JUDGE, Judge, LLMJudge, OfflineJudge, judge_generation
    from parley.core.evaluation.judge_version import judge_prompt_version
    from parley.core.evaluation.jury import JURY_PREFIX, Jury, JuryCriteriaJudge, jurors_of, jury_name
    from parley.core.evaluation.labelled_items import LABELLED_CHECK_KINDS, LabelItem, judged_value, label_items, rubric_item
    from parley.core.evaluation.limits_as_checks import LIMIT_KIND, TIMING_DEPENDENT, limit_checks
    from parley.core.evaluation.offline_roles import offline_limits, offline_limits_by_file
    from parley.core.evaluation.pass_k import pass_hat_k
    from parley.core.evaluation.python_checks import (
        PYTHON_CHECK_KIND,
        check_target,
        load_python_checks,
        python_check_targets,
        run_python_checks,
    )
    from parley.core.evaluation.unobservable import (
        evaluate_observed,
        hide_unobservable,
        unseen_context_warnings,
        with_checks,
    )
    from parley.core.evaluation.verdicts import assemble_verdict, broken_verdict, evaluate

__all__ = [
    "CALIBRATION_DETAIL",
    "CALIBRATION_NOTE",
    "CalibrationPolicy",
    "ItemMeasure",
    "JURY_PREFIX",
    "Jury",
    "JuryCriteriaJudge",
    "LABELLED_CHECK_KINDS",
    "LabelItem",
    "agreement_share",
    "bootstrap_kappa",
    "calibration_of",
    "calibration_text",
    "cohen_kappa",
    "confusion_matrix",
    "judge_prompt_version",
    "judged_value",
    "jurors_of",
    "jury_name",
    "kappa_of_pairs",
    "label_items",
    "mark_checks",
    "marked_name",
    "score_calibration",
    "measure_judge",
    "policy_for",
    "rubric_item",
    "CheckAnswer",
    "CheckedConversation",
    "Customer",
    "FinalState",
    "Message",
    "RowChange",
    "ToolUse",
    "failed",
    "not_applicable",
    "passed",
    "LIMIT_KIND",
    "TIMING_DEPENDENT",
    "limit_checks",
    "PYTHON_CHECK_KIND",
    "check_target",
    "load_python_checks",
    "python_check_targets",
    "run_python_checks",
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
    "judge_generation",
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
