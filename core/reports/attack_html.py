"""The "Attacks" section of a batch's HTML report (parley.core.reports.attack_stats), each number
marked with where the JSON report holds it (`summary.attacks...`): the success rate in all, per
strategy and per objective with Wilson intervals, what a world makes impossible by construction,
every breach with its evidence, and an LLM judge's disagreements with the world."""

from __future__ import annotations

from parley.core.reports.attack_stats import AttackRate, AttackReport
from parley.core.reports.html_page import esc, interval, num, section, table

__all__ = ["ANCHOR", "attacks_html"]

ANCHOR = "attacks"
EVIDENCE_CHARS = 300


def _rows(rates: list[AttackRate], field: str) -> list[list[str]]:
    return [
        [
            esc(r.name),
            num(f"{field}.{i}.decided", r.decided),
            num(f"{field}.{i}.breached", r.breached),
            num(f"{field}.{i}.rate", r.rate, "pct"),
            interval(f"{field}.{i}.interval", r.interval),
            num(f"{field}.{i}.not_pressed", r.not_pressed),
            num(f"{field}.{i}.broken", r.broken),
        ]
        for i, r in enumerate(rates)
    ]


def attacks_html(report: AttackReport | None) -> str:
    """The section (empty when the batch has no attacks)."""
    if report is None:
        return ""
    a = "summary.attacks"
    head = ["{}", "Decided", "Breached", "Success rate", "95% interval", "Not pressed", "Broke"]
    parts = [
        f"<p>{num(a + '.attacks', report.attacks)} attack conversation(s), {num(a + '.ordinary', report.ordinary)} ordinary. "
        f"Decided by the world: <strong>{num(a + '.breached', report.breached)} breached</strong>, {num(a + '.held', report.held)} held; "
        f"{num(a + '.not_pressed', report.not_pressed)} never pressed (simulator faults), {num(a + '.broken', report.broken)} broke. "
        f"Attack success rate <strong>{num(a + '.rate', report.rate, 'pct')}</strong> {interval(a + '.interval', report.interval)}.</p>",
        table([head[0].format("Strategy"), *head[1:]], _rows(report.by_strategy, a + ".by_strategy")),
        table([head[0].format("Objective"), *head[1:]], _rows(report.by_objective, a + ".by_objective")),
    ]
    impossible = [
        f"<li>Impossible by construction on <code>{esc(world)}</code>: {esc(objective)} ({esc(why)}); a zero there is no defence.</li>"
        for world, reasons in report.impossible.items()
        for objective, why in reasons.items()
    ]
    if impossible:
        parts.append(f"<ul>{''.join(impossible)}</ul>")
    if report.breaches:
        rows = [
            [
                f"<code>{esc(b.label)}</code>",
                esc(f"{b.strategy} / {b.objective}"),
                esc(s.kind),
                esc(s.way),
                esc("-" if s.turn is None else s.turn),
                esc(s.evidence[:EVIDENCE_CHARS]),
            ]
            for b in report.breaches
            for s in b.successes
        ]
        parts.append("<h3>Breaches</h3>" + table(["Attack", "Strategy / objective", "Kind", "How", "Turn", "Evidence"], rows, cls="tall"))
    if report.judged:
        parts.append(
            f"<p>An LLM judge gave its opinion on {num(a + '.judged', report.judged)} attack(s); "
            f"it disagreed with the world on {esc(len(report.disagreements))}.</p>"
        )
        if report.disagreements:
            rows = [
                [f"<code>{esc(d.label)}</code>", esc(f"{d.strategy} / {d.objective}"), esc(d.world_says), esc(d.judge_says)]
                for d in report.disagreements
            ]
            parts.append(table(["Attack", "Strategy / objective", "World", "Judge"], rows))
    return section(ANCHOR, "Attacks", *parts)
