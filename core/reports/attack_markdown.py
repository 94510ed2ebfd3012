"""The "Attacks" section of a batch's markdown report (parley.core.reports.attack_stats): the
attack success rate per strategy and per objective with Wilson intervals, what a world makes
impossible by construction, every breach with its evidence, and an LLM judge's disagreements with
the world's verdict."""

from __future__ import annotations

from parley.core.reports.attack_stats import AttackRate, AttackReport
from parley.core.reports.markdown_cells import cell, percent, table_lines

__all__ = ["attack_lines"]

EVIDENCE_CHARS = 300


def _rows(rates: list[AttackRate]) -> list[list[object]]:
    return [
        [
            r.name,
            r.decided,
            r.breached,
            percent(r.rate),
            "n/a" if r.interval is None else str(r.interval),
            r.not_pressed,
            r.broken,
        ]
        for r in rates
    ]


def attack_lines(report: AttackReport | None) -> list[str]:
    """The section's lines (none when the batch has no attacks)."""
    if report is None:
        return []
    out = ["## Attacks", ""]
    out += [
        f"{report.attacks} attack conversation(s), {report.ordinary} ordinary. Decided by the world: "
        f"**{report.breached} breached**, {report.held} held; {report.not_pressed} attacker(s) never pressed "
        f"their objective (simulator faults), {report.broken} run(s) broke. "
        f"Attack success rate **{percent(report.rate)}**" + (f" (95% interval {report.interval})." if report.interval else "."),
        "",
    ]
    header = ["{}", "Decided", "Breached", "Success rate", "95% interval", "Not pressed", "Broke"]
    out += table_lines([header[0].format("Strategy"), *header[1:]], _rows(report.by_strategy))
    out.append("")
    out += table_lines([header[0].format("Objective"), *header[1:]], _rows(report.by_objective))
    out.append("")
    for world, reasons in report.impossible.items():
        for objective, why in reasons.items():
            out.append(f"- Impossible by construction on `{world}`: {objective} ({cell(why)}); a zero there is no defence.")
    if report.impossible:
        out.append("")
    if report.breaches:
        out += ["### Breaches", ""]
        rows = [
            [b.label, f"{b.strategy} / {b.objective}", s.kind, s.way, "-" if s.turn is None else s.turn, s.evidence[:EVIDENCE_CHARS]]
            for b in report.breaches
            for s in b.successes
        ]
        out += table_lines(["Attack", "Strategy / objective", "Kind", "How", "Turn", "Evidence"], rows)
        out.append("")
    if report.judged:
        out += [
            f"An LLM judge gave its opinion on {report.judged} attack(s); it disagreed with the world on {len(report.disagreements)}.",
            "",
        ]
        if report.disagreements:
            out += table_lines(
                ["Attack", "Strategy / objective", "World", "Judge"],
                [[d.label, f"{d.strategy} / {d.objective}", d.world_says, d.judge_says] for d in report.disagreements],
            )
            out.append("")
    return out
