"""A comparison of two batches (parley.core.reports.compare) as one self-contained HTML page to
share (`parley compare BASE NEW --format html`); what self-contained means is in
parley.core.reports.html_page.

Regressions first, each with both sides' outcome and failing checks; then the verdict (the exact
McNemar test over the discordant pairs, and the specs that regressed beyond noise), the pass rate
and pass^k of both with their intervals and deltas (a chart and a table), fixes, new and missing
specs, other outcome changes, score and check changes (and criteria in words that started or
stopped being met), and tokens, cost and time side by side.
Every number is the comparison's own, marked with its field in `parley compare --format json`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from parley.core.evaluation import Interval
from parley.core.reports.charts import rates_svg
from parley.core.reports.compare import (
    BatchComparison,
    ChangeKind,
    CheckChange,
    CriterionChange,
    PairChange,
    SideSummary,
    SpecOnlyOnOneSide,
)
from parley.core.reports.compare_markdown import MAX_ROWS, _delta, _lineage, _points, verdict_head
from parley.core.reports.html_page import badge, esc, interval, num, page_end, page_start, section, table


def render_comparison_html(c: BatchComparison) -> str:
    """The comparison as one HTML document."""
    base, new = c.base, c.new
    header = (
        f'<header class="top"><h1>parley comparison</h1><p>Base <code>{esc(base.batch.id)}</code> → new '
        f"<code>{esc(new.batch.id)}</code> · compared on {num('matched_pairs', c.matched_pairs)} conversations "
        f"({num('common_specs', c.common_specs)} specs) both batches ran, matched by spec and trial</p></header>"
        '<nav class="toc" aria-label="Sections"><a href="#regressions">Regressions</a><a href="#verdict">Verdict</a>'
        '<a href="#rates">Pass rate</a><a href="#fixes">Fixes</a><a href="#other">Other changes</a>'
        '<a href="#batches">The batches</a><a href="#usage">Tokens, cost, time</a></nav><main>'
    )
    parts = [
        page_start(f"parley comparison {base.batch.id[:12]} → {new.batch.id[:12]}", header),
        _verdict_cards(c),
        _turned(c, "regression", "regressions", "Regressions", "passed → failed or bot error", ["Checks failing now", "Started failing"]),
        _verdict(c),
        _rates(c),
        _turned(c, "fix", "fixes", "Fixes", "failed or bot error → passed", ["Checks failing before", "Stopped failing"]),
        _other(c),
        _batches(c),
        _usage(c),
        page_end(),
    ]
    return "".join(parts)


def _verdict_cards(c: BatchComparison) -> str:
    t = c.paired_test
    b, n = c.base.pass_rate, c.new.pass_rate
    cards = [
        ("Verdict", esc(verdict_head(c)), f"exact McNemar p = {num('paired_test.p_value', t.p_value, 'num')} two-sided"),
        (
            "Regressions / fixes",
            f"{num('paired_test.regressions', t.regressions)} / {num('paired_test.fixes', t.fixes)}",
            f"of {num('matched_pairs', c.matched_pairs)} matched conversations",
        ),
        (
            "Pass rate",
            f"{num('base.pass_rate.value', b.value, 'pct')} → {num('new.pass_rate.value', n.value, 'pct')}",
            esc(_points(b.value, n.value)),
        ),
    ]
    body = "".join(
        f'<div class="card"><div class="label">{esc(label)}</div><div class="big">{big}</div><div class="small">{small}</div></div>'
        for label, big, small in cards
    )
    return f'<section id="top"><div class="cards">{body}</div></section>'


def _side(i: int, which: str, ch: PairChange) -> str:
    side = ch.base if which == "base" else ch.new
    score = "-" if side.score is None else num(f"changes.{i}.{which}.score", side.score)
    return f'{badge(side.outcome)} <span class="dim">score {score} · <code>{esc(side.conversation_id[:12])}</code></span>'


def _checks(names: Sequence[str]) -> str:
    if not names:
        return '<span class="dim">-</span>'
    return "<br>".join(esc(name) for name in names)


def _changes(
    anchor: str, title: str, c: BatchComparison, kind: str, header: list[str], cells: Callable[[int, PairChange], list[str]]
) -> str:
    found = [(i, ch) for i, ch in enumerate(c.changes) if ch.kind == kind]
    if not found:
        return section(anchor, title, "<p>None.</p>")
    rows = [cells(i, ch) for i, ch in found[:MAX_ROWS]]
    more = (
        f'<p class="note">... and {len(found) - MAX_ROWS} more (<code>--format json</code> lists every one).</p>'
        if len(found) > MAX_ROWS
        else ""
    )
    return section(anchor, title, table(header, rows, cls="tall"), more)


def _turned(c: BatchComparison, kind: ChangeKind, anchor: str, name: str, meaning: str, columns: list[str]) -> str:
    """The regressions or the fixes: both sides of each pair, the checks failing on the side
    that failed, and those that started or stopped failing."""
    return _changes(
        anchor,
        f"{name}: {len(c.of_kind(kind))} ({meaning})",
        c,
        kind,
        ["Spec", "Trial", "Base", "New", *columns],
        lambda i, ch: [
            f"<code>{esc(ch.spec_id)}</code>",
            esc(ch.trial),
            _side(i, "base", ch),
            _side(i, "new", ch),
            _checks(ch.failed_side.failed_checks),
            _checks(ch.checks_turned),
        ],
    )


def _verdict(c: BatchComparison) -> str:
    t = c.paired_test
    if c.same_batch:
        return section("verdict", "Verdict", "<p><strong>No change</strong>: a batch compared with itself.</p>")
    text = (
        f"<p><strong>{esc(verdict_head(c))}</strong>: {num('paired_test.regressions', t.regressions)} regression(s), "
        f"{num('paired_test.fixes', t.fixes)} fix(es) over {t.discordant} discordant pair(s); {esc(t.method)}: "
        f"p = {num('paired_test.p_value', t.p_value, 'num')} two-sided, p = {num('paired_test.p_worse', t.p_worse, 'num')} "
        f"that the new batch is worse; alpha {num('paired_test.alpha', t.alpha, 'num')}.</p>"
    )
    beyond = c.regressed_beyond_noise
    if beyond:
        text += (
            "<p>Regressed beyond noise (what <code>--fail-on-regression</code> fails on): "
            + ", ".join(f"<code>{esc(s)}</code>" for s in beyond)
            + ".</p>"
        )
    elif t.regressions:
        text += "<p>No spec regressed beyond noise.</p>"
    if c.calibration is not None:
        text += f'<p class="refused">{esc(c.calibration.sentence())}</p>'
    if c.spec_regressions:
        rows = [
            [
                f"<code>{esc(s.spec_id)}</code>",
                num(f"spec_regressions.{i}.regressions", s.regressions),
                num(f"spec_regressions.{i}.fixes", s.fixes),
                num(f"spec_regressions.{i}.p_worse", s.p_worse, "num"),
                "yes" if s.beyond_noise else "no",
            ]
            for i, s in enumerate(c.spec_regressions)
        ]
        text += table(["Spec", "Trials lost", "Won back", "p (worse)", "Beyond noise"], rows, cls="tall")
    text += (
        '<p class="note">If the bot had not changed, each discordant pair (passed in one batch, failed in the other) '
        "would be a coin toss: the exact McNemar test says how likely so uneven a split is by chance.</p>"
    )
    return section("verdict", "Verdict", text)


def _rates(c: BatchComparison) -> str:
    base, new = c.base, c.new
    chart_rows: list[tuple[str, Interval | None, float | None, Interval | None, float | None]] = [
        ("pass rate", base.pass_rate.interval, base.pass_rate.value, new.pass_rate.interval, new.pass_rate.value)
    ]
    rows = [
        [
            "Pass rate",
            f"{num('base.pass_rate.value', base.pass_rate.value, 'pct')} ({num('base.pass_rate.successes', base.pass_rate.successes)} "
            f"of {num('base.pass_rate.n', base.pass_rate.n)}) {interval('base.pass_rate.interval', base.pass_rate.interval)}",
            f"{num('new.pass_rate.value', new.pass_rate.value, 'pct')} ({num('new.pass_rate.successes', new.pass_rate.successes)} "
            f"of {num('new.pass_rate.n', new.pass_rate.n)}) {interval('new.pass_rate.interval', new.pass_rate.interval)}",
            esc(_points(base.pass_rate.value, new.pass_rate.value)),
        ]
    ]
    for i, (b, n) in enumerate(zip(base.pass_k, new.pass_k, strict=False)):
        chart_rows.append((f"pass^{b.k}", b.interval, b.value, n.interval, n.value))
        rows.append(
            [
                f"pass^{b.k}",
                f"{num(f'base.pass_k.{i}.value', b.value, 'pct')} {interval(f'base.pass_k.{i}.interval', b.interval)}",
                f"{num(f'new.pass_k.{i}.value', n.value, 'pct')} {interval(f'new.pass_k.{i}.interval', n.interval)}",
                esc(_points(b.value, n.value)),
            ]
        )
    return section(
        "rates",
        "Pass rate and pass^k",
        '<div class="grid2">',
        f"<figure><figcaption>Base and new, with 95% intervals</figcaption>{rates_svg(chart_rows, 'Pass rate and pass^k, base and new')}</figure>",
        f"<div>{table(['', 'Base', 'New', 'Change'], rows)}"
        '<p class="note">Over the conversations both batches ran. Pass rate: passed / (passed + failures of the bot), with a '
        "95% Wilson interval; pass^k: all k trials of a spec pass, averaged over specs, with a seeded 95% bootstrap interval. "
        "Unverified conversations, simulator faults and runs that broke are counted apart.</p></div>",
        "</div>",
    )


def _only(title: str, field: str, specs: list[SpecOnlyOnOneSide]) -> str:
    if not specs:
        return ""
    rows = [
        [
            f"<code>{esc(s.spec_id)}</code>",
            num(f"{field}.{i}.conversations", s.conversations),
            ", ".join(f"{badge(o)} {num(f'{field}.{i}.outcomes.{o}', k)}" for o, k in s.outcomes.items()),
        ]
        for i, s in enumerate(specs[:MAX_ROWS])
    ]
    return f"<h3>{esc(title)}</h3>" + table(["Spec", "Conversations", "Outcomes"], rows, cls="tall")


def _counts_table(
    field: str, changes: Sequence[CheckChange] | Sequence[CriterionChange], name: str, counts: tuple[str, str], header: list[str]
) -> str:
    """A check's or a criterion's changes (BatchComparison.<field>), a row each: its `name`, then
    its two `counts`, each marked with where the JSON report holds it."""
    rows = [
        [esc(getattr(change, name)), *(num(f"{field}.{i}.{key}", getattr(change, key)) for key in counts)]
        for i, change in enumerate(changes[:MAX_ROWS])
    ]
    return table(header, rows, cls="tall")


def _other(c: BatchComparison) -> str:
    parts = [_only("New specs (only in the new batch)", "new_specs", c.new_specs)]
    if c.missing_news:  # a re-run leaves out what it did not re-run: not news
        parts.append(_only("Missing specs (only in the base)", "missing_specs", c.missing_news))
    others = [(i, ch) for i, ch in enumerate(c.changes) if ch.kind == "outcome_change"]
    if others:
        rows = [
            [
                f"<code>{esc(ch.spec_id)}</code>",
                esc(ch.trial),
                _side(i, "base", ch) + f" <code>{esc(ch.base.stop_reason)}</code>",
                _side(i, "new", ch) + f" <code>{esc(ch.new.stop_reason)}</code>",
            ]
            for i, ch in others[:MAX_ROWS]
        ]
        parts += ["<h3>Other outcome changes</h3>", table(["Spec", "Trial", "Base", "New"], rows, cls="tall")]
    scores = [(i, ch) for i, ch in enumerate(c.changes) if ch.kind == "score_change"]
    if scores:
        rows = [
            [f"<code>{esc(ch.spec_id)}</code>", esc(ch.trial), _side(i, "base", ch), _side(i, "new", ch)] for i, ch in scores[:MAX_ROWS]
        ]
        parts += ["<h3>Score changes (same outcome)</h3>", table(["Spec", "Trial", "Base", "New"], rows, cls="tall")]
    if c.check_changes:
        parts += [
            "<h3>Check changes</h3>",
            _counts_table(
                "check_changes",
                c.check_changes,
                "check",
                ("started_failing", "stopped_failing"),
                ["Check", "Started failing in", "Stopped failing in"],
            ),
        ]
    if c.criterion_changes:
        parts += [
            "<h3>Criteria in words</h3>",
            _counts_table(
                "criterion_changes",
                c.criterion_changes,
                "criterion",
                ("started_being_met", "stopped_being_met"),
                ["Criterion", "Started being met in", "Stopped being met in"],
            ),
        ]
    same = [(i, ch) for i, ch in enumerate(c.changes) if ch.kind == "check_change"]
    if same:
        met = any(ch.started_being_met or ch.stopped_being_met for _, ch in same)  # criteria's columns only when some changed
        rows = [
            [
                f"<code>{esc(ch.spec_id)}</code>",
                esc(ch.trial),
                _side(i, "new", ch),
                _checks(ch.started_failing),
                _checks(ch.stopped_failing),
            ]
            + ([_checks(ch.started_being_met), _checks(ch.stopped_being_met)] if met else [])
            for i, ch in same[:MAX_ROWS]
        ]
        parts += [
            "<h3>Same outcome and score, other checks failing" + (" or other criteria met" if met else "") + "</h3>",
            table(
                ["Spec", "Trial", "Now", "Started failing", "Stopped failing"]
                + (["Started being met", "Stopped being met"] if met else []),
                rows,
                cls="tall",
            ),
        ]
    body = "".join(parts) or "<p>None.</p>"
    return section("other", "Other changes", body)


def _models(side: SideSummary) -> str:
    m = side.batch.options.models
    bot = f"<code>{esc(m.bot)}</code>" + (f" with the prompt <code>{esc(m.bot_prompt)}</code>" if m.bot_prompt else "")
    return f"bot {bot}; user <code>{esc(m.user)}</code>, judge <code>{esc(m.judge)}</code>"


def _batches(c: BatchComparison) -> str:
    base, new = c.base, c.new
    rows = [
        ["Batch", f"<code>{esc(base.batch.id)}</code>", f"<code>{esc(new.batch.id)}</code>"],
        ["Created (UTC)", esc(base.batch.created_at.strftime("%Y-%m-%d %H:%M")), esc(new.batch.created_at.strftime("%Y-%m-%d %H:%M"))],
        ["Status", esc(base.batch.status), esc(new.batch.status)],
        [
            "Sources",
            ", ".join(f"<code>{esc(s)}</code>" for s in base.batch.sources) or "-",
            ", ".join(f"<code>{esc(s)}</code>" for s in new.batch.sources) or "-",
        ],
        ["Models", _models(base), _models(new)],
        [
            "Trials, seed",
            f"{esc(base.batch.options.trials)}, {esc(base.batch.options.seed)}",
            f"{esc(new.batch.options.trials)}, {esc(new.batch.options.seed)}",
        ],
        ["Made from", esc(_lineage(base).replace("`", "")), esc(_lineage(new).replace("`", ""))],
        [
            "Outcomes (all stored)",
            ", ".join(f"{badge(o)} {num(f'base.outcomes.{o}', k)}" for o, k in base.outcomes.items()) or "-",
            ", ".join(f"{badge(o)} {num(f'new.outcomes.{o}', k)}" for o, k in new.outcomes.items()) or "-",
        ],
    ]
    return section("batches", "The batches", table(["", "Base", "New"], rows))


def _usage(c: BatchComparison) -> str:
    base, new = c.base, c.new

    def row(label: str, field: str, fmt: str, digits: int = 0, unit: str = "") -> list[str]:
        b, n = getattr(base, field), getattr(new, field)
        return [label, num(f"base.{field}", b, fmt), num(f"new.{field}", n, fmt), esc(_delta(b, n, unit, digits))]  # type: ignore[arg-type]

    rows = [
        row("Conversations", "conversations", "int"),
        row("Input tokens", "input_tokens", "int"),
        row("Output tokens", "output_tokens", "int"),
        row("Cost", "cost_usd", "usd", 4),
        row("Cost per conversation", "mean_cost_usd", "usd", 4),
        row("Mean duration", "mean_duration_s", "seconds", 2, " s"),
        row("Mean turns", "mean_turns", "num1", 1),
        row("Bot response time (mean)", "bot_latency_s", "seconds", 3, " s"),
    ]
    return section(
        "usage",
        "Tokens, cost and time",
        table(["", "Base", "New", "Change"], rows),
        '<p class="note">Over every stored conversation of each batch. An unknown price makes a cost unknown, never $0.</p>',
    )
