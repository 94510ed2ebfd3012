"""A mutation run in words: one line per mutant, the conversations and checks that caught it, what
would kill a survivor, and the score with its interval."""

from __future__ import annotations

from parley.core.mutation.outcome import MutantResult, MutationReport

__all__ = ["STATUS_WORDS", "render_mutation_report", "result_lines"]

STATUS_WORDS = {
    "killed": "killed",
    "survived": "SURVIVED",
    "not_exercised": "not exercised",
    "not_exercisable": "not exercisable",
    "no_visible_effect": "no visible effect",
}
MAX_CATCHES = 3


def result_lines(result: MutantResult) -> list[str]:
    """One mutant: its status line, then what caught it or what would."""
    head = f"{result.mutant:<22} {STATUS_WORDS[result.status]:<17} batch {result.batch_id[:12]}"
    if result.status in ("killed", "survived"):
        head += f"  (acted in {result.exercised_in} of {result.conversations} conversations)"
    lines = [head]
    for catch in result.caught_by[:MAX_CATCHES]:
        checks = "; ".join(catch.checks) or "its outcome"
        lines.append(f"    caught by {catch.name} trial {catch.trial} ({catch.conversation_id[:12]}, {catch.outcome}): {checks}")
    if len(result.caught_by) > MAX_CATCHES:
        lines.append(f"    and {len(result.caught_by) - MAX_CATCHES} more conversations")
    if result.p_worse is not None and result.status in ("killed", "survived"):
        lines.append(f"    paired test: p = {result.p_worse:.3g} that this many regressions are chance")
    if result.status == "survived":
        lines += [f"    it did: {act}" for act in result.acts]
    if result.why:
        lines.append(f"    {result.why}")
    if result.would_kill:
        lines.append(f"    would kill it: {result.would_kill}")
    return lines


def render_mutation_report(report: MutationReport) -> str:
    """The whole run as text (see the module doc)."""
    lines = [f"base batch {report.base_batch_id}: {report.base_passed} of {report.base_conversations} conversations passed", ""]
    for result in report.results:
        lines += result_lines(result)
    lines.append("")
    if report.score is None:
        lines.append("mutation score: none (no mutant was exercised)")
    else:
        lines.append(
            f"mutation score: {report.killed} of {report.exercised} exercised mutants killed ({report.score * 100:.0f}%, 95% interval {report.interval})"
        )
    survivors = [r.mutant for r in report.results if r.status == "survived"]
    if survivors:
        lines.append(f"survivors: {', '.join(survivors)}")
    return "\n".join(lines) + "\n"
