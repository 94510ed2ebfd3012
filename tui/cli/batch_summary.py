"""A stored batch's scored summary as terminal lines: policy violations, outcome counts, pass rate
and pass^k, scores, the first failures (parley.core.reports.BatchReport), and the line on
how the run went. `parley run` prints them when a batch ends, `parley batches show` for any
stored batch."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from parley.core.engine import BatchResult
    from parley.core.evaluation import BatchSummary, Interval, NumberStatistics
    from parley.core.reports import BatchReport


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.1f}%"


def _interval(interval: Interval | None) -> str:
    return "" if interval is None else f"{interval.low * 100:.1f}-{interval.high * 100:.1f}%"


def counts_lines(summary: BatchSummary, *, beside_the_rate: str = "") -> list[str]:
    """The outcomes, the pass rate with its interval and denominator (and `beside_the_rate`: what
    no role read), pass^k and the flaky specs, as terminal lines."""
    from parley.core.reports import LEGACY_ERROR_NOTE, UNVERIFIED_HINT, counts_line

    def n(count: int, one: str, many: str | None = None) -> str:
        return f"{count} {one if count == 1 else (many or one + 's')}"

    lines = [f"Conversations: {counts_line(summary)}"]
    if summary.unverified:
        lines.append(f"Unverified: {n(summary.unverified, 'conversation')} had no check about the bot: {UNVERIFIED_HINT}")
    if summary.legacy_errors:
        lines.append(f"Legacy errors: {LEGACY_ERROR_NOTE}")
    shown_k = summary.pass_k if len(summary.pass_k) <= 4 else [*summary.pass_k[:2], summary.pass_k[-1]]
    pass_k = "  ".join(f"pass^{p.k} {_pct(p.value)}" + (f" ({_interval(p.interval)})" if p.interval is not None else "") for p in shown_k)
    rate = f"Pass rate: {_pct(summary.pass_rate)} ({summary.passed} of {summary.pass_rate_denominator}"
    if summary.pass_rate_interval is not None:
        rate += f", 95% interval {_interval(summary.pass_rate_interval)}"
    lines.append(f"{rate})   {pass_k}" + (f"; {beside_the_rate}" if beside_the_rate else ""))
    if summary.flaky_specs:
        shown = ", ".join(f"{f.spec_id} ({f.passed} of {f.trials} passed)" for f in summary.flaky_specs[:5])
        more = f", ... and {len(summary.flaky_specs) - 5} more" if len(summary.flaky_specs) > 5 else ""
        lines.append(f"Flaky specs ({len(summary.flaky_specs)}): {shown}{more}")
    elif len(summary.pass_k) >= 2:  # pass^1 .. pass^trials: the batch ran 2 or more trials
        lines.append("Flaky specs: none (every spec's trials agree)")
    return lines


def scores_line(summary: BatchSummary) -> str:
    s = summary.score_statistics
    if s.count:
        return (
            f"Scores: mean {s.mean:.2f}, median {s.median:.1f}, std {s.std:.2f}, min {s.min}, max {s.max} "
            f"({s.count} scored" + (f"; {summary.judge_errors} judge errors, unscored" if summary.judge_errors else "") + ")"
        )
    if summary.judge_errors:
        return f"Scores: none ({summary.judge_errors} judge errors)"
    return "Scores: none (no LLM judge scored; the checks decide)"


def _spread(s: NumberStatistics, unit: str = "", digits: int = 1) -> str:
    if not s.count or s.mean is None:
        return "none"

    def n(value: float | None) -> str:
        return "n/a" if value is None else (f"{value:.0f}" if float(value).is_integer() else f"{value:.{digits}f}") + unit

    return f"mean {n(s.mean)}, median {n(s.median)}, std {n(s.std)}, min {n(s.min)}, max {n(s.max)}"


def figures_lines(summary: BatchSummary) -> list[str]:
    """The summary's numbers beyond the counts: scores with their distribution as a text histogram
    (1, 2, 3 and no score), turns, duration and cost (`parley summarise`)."""
    from parley.core.reports import text_histogram

    distribution = {int(k.removeprefix("score_")): n for k, n in summary.score_distribution.items()}
    lines = [scores_line(summary), *(f"  {line}" for line in text_histogram(distribution, unscored=summary.unscored))]
    lines.append(f"Turns: {_spread(summary.turn_statistics)}")
    total = f"; {summary.total_duration_s:.1f} s in all" if summary.duration_statistics.count else ""
    lines.append(f"Duration: {_spread(summary.duration_statistics, ' s', 2)}{total}")
    if summary.cost_usd is not None:
        mean = f" (${summary.mean_cost_usd:.4f} a conversation)" if summary.mean_cost_usd is not None else ""
        lines.append(f"Cost: ${summary.cost_usd:.4f}{mean}")
    else:
        lines.append(f"Cost: unknown ({summary.cost_unknown} of {summary.done} conversations without a known cost; never counted as $0)")
    return lines


def summary_lines(summary: BatchReport) -> list[str]:
    """A batch's scored summary for a terminal (parley.core.reports.BatchReport): policy
    violations, counts, pass rate and pass^k, scores, the first failures. `parley run` prints it
    when a batch ends, `parley batches show` for any stored batch."""
    from parley.core.reports import rule_lines

    lines: list[str] = []
    if summary.policy_violations_total:
        lines.append(f"POLICY VIOLATIONS: {summary.policy_violations_total} (data the policy protects was changed)")
        for v in summary.policy_violations[:10]:
            lines.append(f"  - {v.spec_id} trial {v.trial} ({v.conversation_id[:12]}): {v.check}: {v.reason}")
    else:
        lines.append("Policy violations: none")
    if summary.not_applicable_checks:
        total = sum(c.checks for c in summary.not_applicable_checks)
        kinds = ", ".join(dict.fromkeys(c.kind for c in summary.not_applicable_checks))
        lines.append(
            f"Not applicable: {total} check{'s' if total != 1 else ''} ({kinds}) could not be decided; "
            f"{summary.passed_with_not_applicable} passed conversation(s) passed on the checks that applied (see the report)"
        )
    lines += counts_lines(summary, beside_the_rate=summary.not_read.note)
    if summary.leaderboard is not None:
        lines.append(f"Leaderboard row: {summary.leaderboard.line()}")
    lines += attack_lines(summary)
    lines.append(scores_line(summary))
    calibrated = calibration_line(summary)
    if calibrated is not None:
        lines.append(calibrated)
    if summary.judge_prompts:
        lines.append(judge_context_line(summary))
    if summary.failures_total:
        lines.append(f"Not passed (failed, broke or faulty): {summary.failures_total}")
        for f in summary.failures[:10]:
            reason = f.reasons[0] if f.reasons else "(no reason recorded)"
            lines.append(f"  - {f.spec_id} trial {f.trial} ({f.outcome}, {f.stop_reason}): {reason}")
        if summary.failures_total > 10:
            lines.append(f"  ... and {summary.failures_total - 10} more (see the report)")
    lines += rule_lines(summary.rules, summary.rule_labels)  # the pair and batch rules (`--rules`)
    return lines


def calibration_line(summary: BatchReport, *, clip: int = 48) -> str | None:
    """`Judge calibration: score κw 0.55; The bot apologises κ 0.72; ...`: how the batch's
    judge was measured on each item it decided (None: no judge decided one), and what
    `--require-calibrated` did with it."""
    items = [("score", summary.rubric_calibration)] if summary.rubric_calibration else []
    for c in summary.criteria:
        if c.calibration:
            text = c.criterion if len(c.criterion) <= clip else c.criterion[: clip - 1] + "…"
            items.append((text, c.calibration))
    if not items:
        return None
    options = summary.batch.options
    line = "Judge calibration: " + "; ".join(f"{name}: {mark}" for name, mark in items)
    if options.require_calibrated:
        line += f" (--require-calibrated: only verdicts of a judge calibrated at κ {options.min_kappa:g} or more count towards a pass)"
    return line


def attack_lines(summary: BatchReport) -> list[str]:
    """The batch's attacks (parley.core.reports.attack_stats): the success rate per strategy, what
    a world makes impossible by construction, and an LLM judge's disagreements with the world."""
    report = summary.attacks
    if report is None:
        return []

    def rate(breached: int, decided: int, interval: object) -> str:
        return f"{breached} of {decided}" + (f" ({interval})" if interval is not None else "")

    lines = [
        f"Attacks: {report.attacks} attack conversations (and {report.ordinary} ordinary): {report.breached} breached, "
        f"{report.held} held, {report.not_pressed} not pressed (simulator faults), {report.broken} broke; "
        f"success rate {rate(report.breached, report.breached + report.held, report.interval)}"
    ]
    for r in report.by_strategy:
        lines.append(
            f"  - {r.name}: {rate(r.breached, r.decided, r.interval)}" + (f", {r.not_pressed} not pressed" if r.not_pressed else "")
        )
    for world, reasons in report.impossible.items():
        for objective, why in reasons.items():
            lines.append(f"  impossible by construction on {world}: {objective} ({why}); a zero there is no defence")
    if report.judged:
        lines.append(f"  the LLM judge disagreed with the world on {len(report.disagreements)} of {report.judged} attacks")
        for d in report.disagreements[:10]:
            lines.append(f"    - {d.label} ({d.strategy} / {d.objective}): world says {d.world_says}, judge says {d.judge_says}")
    return lines


def judge_context_line(summary: BatchReport) -> str:
    """How the LLM judge's prompts met its context: how many were condensed to fit, how many
    could not fit even condensed (judge errors)."""
    from parley.core.prompts import context_tokens

    models = summary.batch.options.models
    size = context_tokens(models.judge_context, models.endpoint_context.get("judge"))
    n = summary.judge_prompts
    line = (
        f"Judge context ({size} tokens): {n} judge prompt{'s' if n != 1 else ''}, {summary.judge_prompts_condensed} condensed to fit, "
        f"{summary.judge_prompts_too_long} could not fit even condensed"
    )
    if summary.judge_prompts_too_long:
        line += " (judge errors: no score; a larger --judge-context, if the model has one, lets them be judged)"
    return line


def run_lines(result: BatchResult, report_line: str) -> list[str]:
    lines: list[str] = []
    rate = result.ran / result.elapsed_s if result.elapsed_s > 0 else 0.0
    extras = []
    if result.rate_limited:
        extras.append(f"{result.rate_limited} rate limits (429) absorbed, concurrency went down to {result.lowest_limit}")
    if result.cache_hits or result.cache_misses:
        extras.append(f"cache: {result.cache_hits} replies replayed, {result.cache_misses} new")
    lines.append(
        f"Ran {result.ran} conversation{'s' if result.ran != 1 else ''} in {result.elapsed_s:.1f} s ({rate:.1f}/s); "
        f"batch {result.status}" + (f": {result.error}" if result.error else "") + ("; " + "; ".join(extras) if extras else "")
    )
    lines.append(report_line)
    return lines
