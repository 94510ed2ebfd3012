"""Mutants of the bot under test at the boundary parley mediates (its tool calls, its replies), and `parley mutate`: which of them a suite catches."""

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.core.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from parley.core.mutation.catalogue import MUTANTS, Mutant, mutant, mutant_names
    from parley.core.mutation.mutated_bot import MutatedBot
    from parley.core.mutation.outcome import MutantResult, MutantStatus, MutationReport, decide_mutant
    from parley.core.mutation.report_text import STATUS_WORDS, render_mutation_report, result_lines
    from parley.core.mutation.run import mutate_batch, run_mutation

__all__ = [
    "MUTANTS",
    "STATUS_WORDS",
    "MutantResult",
    "MutantStatus",
    "MutatedBot",
    "Mutant",
    "MutationReport",
    "decide_mutant",
    "mutant",
    "mutant_names",
    "mutate_batch",
    "render_mutation_report",
    "result_lines",
    "run_mutation",
]

if not TYPE_CHECKING:  # type checkers see the imports above; at run time each name is imported on first use
    __getattr__, __dir__ = lazy_exports(__name__, __file__)
