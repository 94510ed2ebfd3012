"""Running conversations: the one conversation harness, batch plan and runner, the adaptive limit."""

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.core.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from parley.core.engine.batch_conversation import ConversationControl, run_planned
    from parley.core.engine.batch_lineage import NothingToRerun, prepare_mutant, prepare_replay, prepare_rerun
    from parley.core.engine.batch_models import BatchModels
    from parley.core.engine.batch_plan import InvalidInputs, PlannedRun, PreparedBatch, SelectionError, trial_spec
    from parley.core.engine.batch_rules import load_batch_rules
    from parley.core.engine.batch_runner import (
        BatchResult,
        BatchRunner,
        NotRun,
        TooManyConversations,
        prepare_batch,
        prepare_resume,
        prepare_specs,
    )
    from parley.core.engine.calibration_run import JudgedProgress, calibrate_judges
    from parley.core.engine.dry_run import DryRun, estimate_batch
    from parley.core.engine.harness import Limits
    from parley.core.engine.reachability import (
        CredentialsRefused,
        EndpointCheckFailed,
        EndpointFacts,
        PreflightReport,
        UnreachableEndpoint,
    )
    from parley.core.engine.rescore import prepare_rescore
    from parley.core.engine.spec_worlds import WorldTemplates

__all__ = [
    "BatchModels",
    "BatchResult",
    "BatchRunner",
    "ConversationControl",
    "CredentialsRefused",
    "DryRun",
    "EndpointCheckFailed",
    "EndpointFacts",
    "InvalidInputs",
    "JudgedProgress",
    "Limits",
    "NotRun",
    "NothingToRerun",
    "PlannedRun",
    "PreflightReport",
    "PreparedBatch",
    "SelectionError",
    "TooManyConversations",
    "UnreachableEndpoint",
    "WorldTemplates",
    "calibrate_judges",
    "estimate_batch",
    "load_batch_rules",
    "prepare_batch",
    "prepare_mutant",
    "prepare_replay",
    "prepare_rerun",
    "prepare_rescore",
    "prepare_resume",
    "prepare_specs",
    "run_planned",
    "trial_spec",
]

if not TYPE_CHECKING:  # type checkers see the imports above; at run time each name is imported on first use
    __getattr__, __dir__ = lazy_exports(__name__, __file__)
