"""One batch as an HTML page to share (`parley report BATCH --format html`): one self-contained
file for people who do not open a terminal (parley.core.reports.html_page says what that means).

What it shows, in this order: the batch's summary (outcomes and their chart, pass rate and pass^k
with intervals, cost, models, options, when); pass^k for every k; the pass rate per spec with its
interval, worst first; the score histogram, and how turns and the bot's response time spread;
flaky specs; policy violations; the checks that failed and those that could not apply; the
criteria in words (met, not met...); the limits (each limit check's counts and worst measured figure); the goals the offline customer only stated; tokens and cost per role; stop reasons; then every
conversation, grouped by outcome (the bot's failures first) and filterable by outcome with plain
links, each a `<details>` with its transcript, tool calls, checks and their reasons (a
criterion's with the judge's evidence; and the note of the goals its customer only stated), the
failing check marked and linked to the turn it is about (for a criterion, the turn it quotes).

Every number is the batch's report (parley.core.reports.stats.BatchReport: its summary, computed
once, and its lists) or a stored conversation's: nothing is counted here. Each is marked with
the field of the JSON report that holds it. The conversations are read a page at a time and
written grouped, so only their HTML is held, never the records.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import TextIO

from parley.core.evaluation import CALIBRATION_NOTE, CRITERION_KIND, criterion_state, marked_name, score_calibration
from parley.core.records import (
    JUDGED,
    BatchRecord,
    CheckResult,
    RoleUsage,
    StoredConversation,
    ToolCallRecord,
    effective_outcome,
    outcome_kind,
)
from parley.core.reports.attack_html import ANCHOR as ATTACKS
from parley.core.reports.attack_html import attacks_html
from parley.core.reports.charts import histogram_svg, outcomes_svg, score_histogram_svg
from parley.core.reports.check_turns import check_target
from parley.core.reports.distributions import Histogram
from parley.core.reports.html_page import badge, esc, interval, num, page_end, page_start, section, shown, stats_line, table
from parley.core.reports.markdown import LIMITS_NOTE, SCOPES, limit_figure, outcome_notes, rule_result_line
from parley.core.reports.stats import BatchReport, SpecStats, summarize
from parley.core.rules import OUTCOMES
from parley.core.store import Store
from parley.core.users import only_stated_advice, only_stated_note_of

OUTCOME_ORDER = (
    "failed",
    "bot_error",
    "evaluation_error",
    "user_fault",
    "unverified",
    "user_error",
    "infrastructure_error",
    "cancelled",
    "error",
    "unevaluated",
    "passed",
)
"""The conversations' groups: the bot's failures first, passed last."""
FILTER_STYLE = "".join(
    f"#only-{o}:target~.groups .group{{display:none}}#only-{o}:target~.groups .g-{o}{{display:block}}"
    f'#only-{o}:target~nav.filter a[href="#only-{o}"]{{border-color:var(--ink);font-weight:600}}'
    for o in OUTCOME_ORDER
)
"""Showing one outcome without a script: its link targets an empty element before the groups."""
CHECK_MARKS = {"pass": "✓ pass", "fail": "✗ fail", "not_applicable": "– n/a", "not_run": "· not run", "error": "! error"}
ROLE_WORDS = {"user": "Customer", "assistant": "Bot", "tool": "Tool result", "system": "System"}


def write_html(store: Store, batch_id: str, out: TextIO) -> int:
    """Write batch `batch_id`'s HTML report to `out`; returns the conversations in it."""
    report = summarize(store, batch_id, per_spec=True)
    groups: dict[str, list[str]] = {}
    prompts: dict[str, int] = {}  # each system prompt once: most batches give every conversation the same one
    for index, stored in enumerate(store.iter_conversations(report.batch.id)):
        outcome = effective_outcome(stored.verdict.outcome if stored.verdict else None, stored.conversation.stop_reason)
        groups.setdefault(outcome, []).append(conversation_html(index, stored, outcome, prompts))
    b = report.batch
    out.write(page_start(f"parley report {b.id[:12]}", _header(b, attacks=report.attacks is not None), extra_style=FILTER_STYLE))
    out.write(_summary(report))
    out.write(_pass_k(report))
    out.write(_specs(report))
    out.write(_distributions(report))
    out.write(_flaky(report))
    out.write(_violations(report))
    out.write(attacks_html(report.attacks))
    out.write(_checks(report))
    out.write(_criteria(report))
    out.write(_limits(report))
    out.write(_rules(report))
    out.write(_stated(report))
    out.write(_usage(report))
    out.write(_conversations(report, groups))
    out.write(_prompts(prompts))
    out.write(page_end())
    return report.done


# ---- the batch ------------------------------------------------------------------------------------

TOC = (
    ("summary", "Summary"),
    ("pass-k", "pass^k"),
    ("specs", "Per spec"),
    ("distributions", "Scores, turns, time"),
    ("flaky", "Flaky specs"),
    ("violations", "Policy violations"),
    (ATTACKS, "Attacks"),
    ("checks", "Checks"),
    ("criteria", "Criteria"),
    ("limits", "Limits"),
    ("rules", "Rules"),
    ("stated", "Goals only stated"),
    ("usage", "Tokens and cost"),
    ("conversations", "Conversations"),
)


def _header(b: BatchRecord, *, attacks: bool = False) -> str:
    when = b.created_at.strftime("%Y-%m-%d %H:%M UTC")
    sources = ", ".join(f"<code>{esc(s)}</code>" for s in b.sources) or "-"
    toc = "".join(f'<a href="#{anchor}">{title}</a>' for anchor, title in TOC if anchor != ATTACKS or attacks)
    return (
        f'<header class="top"><h1>parley batch report</h1><p>Batch <code>{esc(b.id)}</code> · {esc(b.status)} · '
        f"created {when} · {sources}</p></header>"
        f'<nav class="toc" aria-label="Sections">{toc}</nav><main>'
    )


def _when(value: object) -> str:
    return "-" if value is None else esc(value.isoformat(timespec="seconds"))  # type: ignore[attr-defined]


def _code_spans(text: str) -> str:
    """Escaped text whose `backticked` words are code, as the markdown report writes them."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", esc(text))


def _summary(r: BatchReport) -> str:
    b, o = r.batch, r.batch.options
    last_k = r.pass_k[-1] if r.pass_k else None
    cards = [
        _card(
            "Pass rate",
            num("summary.pass_rate", r.pass_rate, "pct"),
            f"{num('summary.passed', r.passed)} of {num('summary.pass_rate_denominator', r.pass_rate_denominator)} judged"
            + (f"; 95% interval {interval('summary.pass_rate_interval', r.pass_rate_interval)}" if r.pass_rate_interval else ""),
        ),
        _card(
            "Conversations",
            num("summary.done", r.done),
            f"of {num('summary.planned', r.planned)} planned: {num('summary.passed', r.passed)} passed, "
            f"{num('summary.failed', r.failed)} failed, {num('summary.bot_errors', r.bot_errors)} bot errors; "
            f"{num('summary.errors', r.errors)} broke on the simulator's or parley's side",
        ),
        _card(
            "Cost",
            num("summary.cost_usd", r.cost_usd, "usd"),
            f"{num('summary.mean_cost_usd', r.mean_cost_usd, 'usd')} per conversation"
            + (f"; {num('summary.cost_unknown', r.cost_unknown)} without a known price" if r.cost_unknown else ""),
        ),
    ]
    if last_k is not None and len(r.pass_k) > 1:
        k = len(r.pass_k) - 1
        cards.insert(
            1,
            _card(
                f"pass^{last_k.k}",
                num(f"summary.pass_k.{k}.value", last_k.value, "pct"),
                f"over {num(f'summary.pass_k.{k}.specs', last_k.specs)} specs"
                + (f"; 95% interval {interval(f'summary.pass_k.{k}.interval', last_k.interval)}" if last_k.interval else ""),
            ),
        )
    shown_outcomes = [(name, n) for name, n in _ordered(r.outcomes) if n]
    rows = [
        [badge(name), f'<span class="r">{num(f"summary.outcomes.{name}", n)}</span>', esc(outcome_kind(name).counted_as)]
        for name, n in _ordered(r.outcomes)
        if n or name in JUDGED
    ]
    chart = outcomes_svg(shown_outcomes or [("passed", 0)], "Conversations by outcome")
    notes = "".join(f'<p class="note">{_code_spans(n)}</p>' for n in outcome_notes(r))
    meta = [
        ("Status", esc(b.status) + (f": {esc(b.error)}" if b.error else "")),
        ("Sources", ", ".join(f"<code>{esc(s)}</code>" for s in b.sources) or "-"),
        (
            "Models",
            f"bot <code>{esc(o.models.bot)}</code>"
            + (f" with the system prompt <code>{esc(o.models.bot_prompt)}</code>" if o.models.bot_prompt else "")
            + f", user <code>{esc(o.models.user)}</code>, judge <code>{esc(o.models.judge)}</code>",
        ),
        (
            "Options",
            f"trials {num('options.trials', o.trials)}, seed {esc(o.seed)}, concurrency {esc(o.concurrency)}, "
            f"max turns {esc(o.max_turns)}, timeout {esc(f'{o.timeout_s:g}')} s, cache {'on' if o.cache else 'off'}",
        ),
        ("When", f"created {_when(b.created_at)}, started {_when(b.started_at)}, finished {_when(b.finished_at)}"),
        ("Judge errors", f"{num('summary.judge_errors', r.judge_errors)} (runs whose judge failed: no score, never a score of 1)"),
        ("Pass rate", esc(r.pass_rate_basis)),
        *([("Not read", esc(r.not_read.note))] if r.not_read else []),
    ]
    return section(
        "summary",
        "Summary",
        f'<div class="cards">{"".join(cards)}</div>',
        '<div class="grid2">',
        f"<figure><figcaption>Outcomes</figcaption>{chart}</figure>",
        f"<div>{table(['Outcome', 'Conversations', 'Counted as'], rows)}{notes}</div>",
        "</div>",
        '<dl class="meta">' + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in meta) + "</dl>",
    )


def _card(label: str, big: str, small: str) -> str:
    return f'<div class="card"><div class="label">{esc(label)}</div><div class="big">{big}</div><div class="small">{small}</div></div>'


def _ordered(outcomes: dict[str, int]) -> list[tuple[str, int]]:
    """Passed, the bot's failures, then what is counted apart (the summary's order)."""
    return [(o, n) for o, n in outcomes.items() if o in JUDGED] + [(o, n) for o, n in outcomes.items() if o not in JUDGED]


def _words(outcome: str) -> str:
    """Several conversations of `outcome`, in the words every surface uses (OUTCOME_KINDS)."""
    return outcome_kind(outcome).many or outcome


def _pass_k(r: BatchReport) -> str:
    rows = [
        [
            num(f"summary.pass_k.{i}.k", p.k),
            num(f"summary.pass_k.{i}.value", p.value, "pct"),
            interval(f"summary.pass_k.{i}.interval", p.interval) or "n/a",
            num(f"summary.pass_k.{i}.specs", p.specs),
        ]
        for i, p in enumerate(r.pass_k)
    ]
    return section(
        "pass-k",
        "pass^k",
        table(["k", "pass^k", "95% interval", "Specs"], rows),
        '<p class="note">pass^k: the chance that all k trials of a spec pass, averaged over the specs with k judged '
        "trials (tau-bench); its interval is a percentile bootstrap over the specs, seeded by the batch, so the same "
        "batch always shows the same one.</p>",
    )


def _worst_first(specs: Iterable[SpecStats]) -> list[SpecStats]:
    """Lowest pass rate first (then the most failures); specs with nothing judged last."""
    return sorted(specs, key=lambda s: (s.pass_rate is None, s.pass_rate if s.pass_rate is not None else 0.0, -s.bot_failures))


def _specs(r: BatchReport) -> str:
    rows = []
    for s in _worst_first(r.specs):
        judged = s.pass_rate_denominator
        bar = ""
        if s.pass_rate is not None:
            bar = f'<span class="rate" aria-hidden="true"><i style="width:{s.pass_rate * 100:.1f}%"></i>'
            if s.pass_rate_interval is not None:
                low, high = s.pass_rate_interval.low * 100, s.pass_rate_interval.high * 100
                bar += f'<b style="left:{low:.1f}%;width:{high - low:.1f}%"></b>'
            bar += "</span>"
        rate = f"{bar}{_stat('pass_rate', s.pass_rate, 'pct')} of {judged}"
        if s.pass_rate_interval is not None:
            rate += f' <span class="dim">({_stat("pass_rate_interval.low", s.pass_rate_interval.low, "pct")}–'
            rate += f"{_stat('pass_rate_interval.high', s.pass_rate_interval.high, 'pct')})</span>"
        rows.append(
            (
                s.spec_id,
                [
                    f"<code>{esc(s.spec_id)}</code>",
                    rate,
                    _stat("runs", s.runs),
                    _stat("passed", s.passed),
                    _stat("failed", s.failed),
                    _stat("bot_errors", s.bot_errors),
                    _stat("apart", s.apart),
                    _stat("errors", s.errors),
                ],
            )
        )
    head = "".join(
        f"<th>{h}</th>" for h in ("Spec", "Pass rate (95% interval)", "Runs", "Passed", "Failed", "Bot errors", "Apart", "Errors")
    )
    body = "".join(f'<tr data-spec="{esc(spec_id)}">' + "".join(f"<td>{c}</td>" for c in cells) + "</tr>" for spec_id, cells in rows)
    return section(
        "specs",
        f"Pass rate per spec ({len(r.specs)})",
        f'<div class="scroll tall"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>',
        '<p class="note">Worst first. Pass rate: passed / (passed + failed + bot errors) over the spec\'s trials, with a '
        "95% Wilson interval (the bar's bracket); Apart: neither passed nor failed (unverified, simulator faults, evaluation "
        "errors, unevaluated); Errors: runs that broke on the simulator's or parley's side.</p>",
    )


def _stat(name: str, value: float | int | None, fmt: str = "int") -> str:
    """A per-spec number (the JSON report lists conversations, not specs: marked by name only)."""
    return f'<span class="n" data-stat="{name}" data-value="{esc(json.dumps(value))}">{shown(value, fmt)}</span>'  # type: ignore[arg-type]


def _distributions(r: BatchReport) -> str:
    s, t, d, lat = r.score_statistics, r.turn_statistics, r.duration_statistics, r.bot_latency
    scores = stats_line(
        [(f"score {k}", num(f"summary.score_distribution.score_{k}", r.score_distribution.get(f"score_{k}", 0))) for k in (1, 2, 3)]
        + [
            ("no score", num("summary.unscored", r.unscored)),
            ("scored", num("summary.score_statistics.count", s.count)),
            ("mean", num("summary.score_statistics.mean", s.mean, "num")),
            ("median", num("summary.score_statistics.median", s.median, "num1")),
            ("std", num("summary.score_statistics.std", s.std, "num")),
            ("min", num("summary.score_statistics.min", s.min)),
            ("max", num("summary.score_statistics.max", s.max)),
        ]
    )
    turns = stats_line(
        [
            ("mean", num("summary.turn_statistics.mean", t.mean, "num1")),
            ("median", num("summary.turn_statistics.median", t.median, "num1")),
            ("std", num("summary.turn_statistics.std", t.std, "num")),
            ("min", num("summary.turn_statistics.min", t.min)),
            ("max", num("summary.turn_statistics.max", t.max)),
        ]
    )
    timing = []
    if lat is not None:
        timing = [
            ("answers", num("summary.bot_latency.turns", lat.turns)),
            ("mean", num("summary.bot_latency.mean_s", lat.mean_s, "seconds")),
            ("fastest", num("summary.bot_latency.min_s", lat.min_s, "seconds")),
            ("slowest", num("summary.bot_latency.max_s", lat.max_s, "seconds")),
        ]
    durations = stats_line(
        [
            ("conversation mean", num("summary.duration_statistics.mean", d.mean, "seconds")),
            ("median", num("summary.duration_statistics.median", d.median, "seconds")),
            ("longest", num("summary.duration_statistics.max", d.max, "seconds")),
            ("all", num("summary.total_duration_s", r.total_duration_s, "seconds")),
        ]
    )
    judged = (
        f"{score_histogram_svg(r, 'Conversations by judge score')}{scores}"
        if s.count
        else '<p class="dim">No score: no LLM judge scored these conversations, and the checks decide each outcome '
        "(a score is only ever a judge's).</p>"
    )
    return section(
        "distributions",
        "Scores, turns and time",
        '<div class="grid3">',
        f"<figure><figcaption>Judge's scores{_rubric_calibration(r)}</figcaption>{judged}</figure>",
        "<figure><figcaption>Turns per conversation</figcaption>"
        f"{histogram_svg(r.turn_histogram, 'Bot turns', 'Conversations by number of turns', whole=True)}{turns}</figure>",
        "<figure><figcaption>The bot's response time</figcaption>"
        f"{histogram_svg(*_latency_axis(r.latency_histogram), 'Conversations by the bot response time')}"
        f"{stats_line(timing) if timing else '<p class=dim>No bot answers were timed.</p>'}{durations}</figure>",
        "</div>",
        '<p class="note">Response time: measured by parley around each bot call (for a deployed bot, the HTTP round trip); '
        "each conversation counts once, at its mean per answer. Turns that ended in an error are not timed.</p>",
    )


def _latency_axis(histogram: Histogram) -> tuple[Histogram, str]:
    """The response-time bins in the unit the figures beside them use: milliseconds below a
    second (an axis of 0.000 to 0.012 beside "mean 2.3 ms" reads wrong), else seconds."""
    if histogram.edges and histogram.edges[-1] < 1:
        return Histogram(edges=[e * 1000 for e in histogram.edges], counts=histogram.counts), "Mean milliseconds per answer"
    return histogram, "Mean seconds per answer"


def _flaky(r: BatchReport) -> str:
    if r.batch.options.trials < 2:
        return section(
            "flaky", "Flaky specs", '<p class="dim">One trial per spec: run with <code>--trials K</code> to see which specs are flaky.</p>'
        )
    if not r.flaky_specs:
        return section("flaky", "Flaky specs", "<p>None: every spec's judged trials agree.</p>")
    rows = [
        [
            f"<code>{esc(f.spec_id)}</code>",
            num(f"summary.flaky_specs.{i}.trials", f.trials),
            num(f"summary.flaky_specs.{i}.passed", f.passed),
            num(f"summary.flaky_specs.{i}.failed", f.failed),
            num(f"summary.flaky_specs.{i}.other", f.other),
        ]
        for i, f in enumerate(r.flaky_specs)
    ]
    return section(
        "flaky",
        f"Flaky specs ({len(r.flaky_specs)})",
        '<p class="note">Specs whose trials disagree, the most evenly split first: the noise a single run would hide.</p>',
        table(["Spec", "Judged trials", "Passed", "Failed", "Counted apart"], rows, cls="tall"),
    )


def _violations(r: BatchReport) -> str:
    if not r.policy_violations_total:
        return section("violations", "Policy violations", "<p>None.</p>")
    rows = [
        [f"<code>{esc(v.spec_id)}</code>", esc(v.trial), f"<code>{esc(v.conversation_id[:12])}</code>", esc(v.check), esc(v.reason)]
        for v in r.policy_violations
    ]
    more = r.policy_violations_total - len(r.policy_violations)
    return section(
        "violations",
        "Policy violations",
        f"<p><strong>{num('summary.policy_violations_total', r.policy_violations_total)} policy violation(s)</strong>: "
        "data the policy protects was changed.</p>",
        table(["Spec", "Trial", "Conversation", "Check", "Reason"], rows, cls="tall"),
        f'<p class="note">... and {more} more: every one is marked in its conversation below.</p>' if more > 0 else "",
    )


def _checks(r: BatchReport) -> str:
    parts = []
    if r.failed_checks:
        rows = [[esc(c.name), esc(c.kind), num(f"summary.failed_checks.{i}.count", c.count)] for i, c in enumerate(r.failed_checks)]
        parts += ["<h3>Checks that failed</h3>", table(["Check", "Kind", "Conversations"], rows, cls="tall")]
    else:
        parts.append("<p>No check failed.</p>")
    if r.not_applicable_checks:
        rows = [
            [
                esc(c.kind),
                num(f"summary.not_applicable_checks.{i}.checks", c.checks),
                num(f"summary.not_applicable_checks.{i}.conversations", c.conversations),
                esc("; ".join(c.names) + (f"; ... and {c.more_names} more" if c.more_names else "")),
                esc(c.reason),
            ]
            for i, c in enumerate(r.not_applicable_checks)
        ]
        parts += [
            "<h3>Checks not applicable</h3>",
            '<p class="note">Neither passed nor failed: the bot under test does not use parley\'s order database, or does '
            "not show its tool calls. A conversation passes or fails on the checks that applied.</p>",
            table(["Kind", "Checks", "Conversations", "Which", "Why"], rows),
        ]
    if r.passed_with_not_applicable:
        parts.append(
            f"<p>{num('summary.passed_with_not_applicable', r.passed_with_not_applicable)} of the "
            f"{num('summary.passed', r.passed)} passed conversations passed on the checks that applied to them; some of "
            "their checks could not be applied (above).</p>"
        )
    if r.stop_reasons:
        rows = [[esc(reason), num(f"summary.stop_reasons.{reason}", n)] for reason, n in r.stop_reasons.items()]
        parts += ["<h3>Stop reasons</h3>", table(["Stop reason", "Conversations"], rows)]
    return section("checks", "Checks", *parts)


def _rubric_calibration(r: BatchReport) -> str:
    """` [κw 0.55]`: the scoring judge's calibration on its rubric, when one was marked."""
    return f" [{esc(r.rubric_calibration)}]" if r.rubric_calibration else ""


def _criteria(r: BatchReport) -> str:
    if not r.criteria:
        return section("criteria", "Criteria", "<p>None: no check in words was asked for.</p>")
    fields = ("met", "not_met", "not_applicable", "not_run", "errors")
    rows = [
        [esc(c.criterion) + (' <span class="dim">(built in)</span>' if c.builtin else "")]
        + [num(f"summary.criteria.{i}.{f}", getattr(c, f)) for f in fields]
        + [esc(c.calibration or "-")]
        for i, c in enumerate(r.criteria)
    ]
    return section(
        "criteria",
        f"Criteria ({len(r.criteria)})",
        '<p class="note">Checks written in words, each decided by the LLM judge with a quote from the transcript as evidence '
        "(a quote not found in the turn it names is a judge error); each conversation below shows the judge's evidence "
        "and links a criterion not met to the turn it quotes. Not run: no LLM judge decided them (<code>--judge MODEL</code>), "
        "or the run ended early; never counted as met.</p>",
        table(["Criterion", "Met", "Not met", "Not applicable", "Not run", "Judge errors", "Judge calibration"], rows, cls="tall"),
        f'<p class="note">{esc(CALIBRATION_NOTE)}</p>',
    )


def _limits(r: BatchReport) -> str:
    if not r.limits:
        return section("limits", "Limits", "<p>None: no limit was asked for (<code>expect.limits</code>, <code>--limit</code>).</p>")
    fields = ("held", "over", "not_decided")
    rows = [
        [esc(c.name)] + [num(f"summary.limits.{i}.{f}", getattr(c, f)) for f in fields] + [esc(limit_figure(c))]
        for i, c in enumerate(r.limits)
    ]
    return section(
        "limits",
        f"Limits ({len(r.limits)})",
        f'<p class="note">{esc(LIMITS_NOTE)}</p>',
        table(["Limit", "Held", "Over", "Not decided", "Worst measured"], rows),
    )


def _rules(r: BatchReport) -> str:
    """The pair and batch rules, as the markdown report lists them (the JSON report holds each
    decision under `rules`, in sensei-check's shape: these counts are the lengths of its lists)."""
    if not r.rules:
        return section("rules", "Rules", "<p>None: the batch ran no pair or batch rule (<code>--rules DIR</code>).</p>")
    rows = [
        [f"<code>{esc(rule.rule_file)}</code>", esc(rule.name), esc(SCOPES[rule.conversations])]
        + [shown(rule.count(outcome), "int") for outcome in OUTCOMES]
        for rule in r.rules
    ]
    listed = [
        f"<li><code>{esc(rule.rule_file)}</code> ({esc(rule.name)}) failed: {esc(rule_result_line(result, r.rule_labels))}</li>"
        for rule in r.rules
        for result in rule.failures
    ] + [
        f"<li><code>{esc(rule.rule_file)}</code> ({esc(rule.name)}) not run: {esc(reason)}</li>"
        for rule in r.rules
        for reason in rule.not_run_reasons
    ]
    return section(
        "rules",
        f"Rules over pairs and the batch ({len(r.rules)})",
        table(["Rule file", "Name", "Over", "Pass", "Fail", "Not applicable", "Not run"], rows, cls="tall"),
        f"<ul>{''.join(listed)}</ul>" if listed else "",
    )


def _stated(r: BatchReport) -> str:
    if not r.goals_only_stated:
        return section("stated", "Goals only stated", "<p>None.</p>")
    rows = [
        [
            f"<code>{esc(g.spec_id)}</code>",
            num(f"summary.goals_only_stated.{i}.conversations", g.conversations),
            esc("; ".join(g.goals)),
        ]
        for i, g in enumerate(r.goals_only_stated)
    ]
    return section(
        "stated",
        "Goals only stated",
        '<p class="note">The offline customer only stated these goals: it cannot act them out, so nothing it did tested '
        f"whether the bot can do them (information, not a fault; {_code_spans(only_stated_advice(2))}).</p>",
        table(["Spec", "Conversations", "Goals"], rows, cls="tall"),
    )


def _usage(r: BatchReport) -> str:
    def row(path: str, u: RoleUsage) -> list[str]:
        unreported = f" (+{u.unreported_calls} calls unreported)" if u.unreported_calls else ""
        return [
            esc(u.role),
            esc(", ".join(u.models) or "-"),
            num(f"{path}.calls", u.calls),
            num(f"{path}.input_tokens", u.input_tokens) + unreported,
            num(f"{path}.output_tokens", u.output_tokens),
            num(f"{path}.cost_usd", u.cost_usd, "usd"),
        ]

    rows = [row(f"summary.usage.{i}", u) for i, u in enumerate(r.usage)] + [row("summary.total_usage", r.total_usage)]
    return section(
        "usage",
        "Tokens and cost",
        table(["Role", "Model", "Calls", "Input tokens", "Output tokens", "Cost"], rows),
        '<p class="note">A cost is unknown where a model\'s price is unknown: never counted as $0.</p>'
        if r.total_usage.cost_usd is None
        else "",
    )


# ---- the conversations ----------------------------------------------------------------------------


def _conversations(r: BatchReport, groups: dict[str, list[str]]) -> str:
    present = [o for o in OUTCOME_ORDER if groups.get(o)] + sorted(o for o in groups if o not in OUTCOME_ORDER and groups[o])
    links = [f'<a href="#conversations">all <span class="dim">{num("summary.done", r.done)}</span></a>']
    links += [f'<a href="#only-{o}">{badge(o)}{num(f"summary.outcomes.{o}", r.outcomes.get(o, len(groups[o])))}</a>' for o in present]
    targets = "".join(f'<div class="only" id="only-{o}"></div>' for o in present)
    body = "".join(
        f'<section class="group g-{o}" id="g-{o}" aria-label="{esc(_words(o))}">'
        f"<h3>{badge(o)} {len(groups[o])} {esc(_words(o))}</h3>{''.join(groups[o])}</section>"
        for o in present
    )
    return section(
        "conversations",
        "Conversations",
        targets,
        f'<nav class="filter" aria-label="Show conversations by outcome">{"".join(links)}</nav>',
        '<p class="note">Grouped by outcome, the bot\'s failures first; a link above shows one outcome only. Open a '
        "conversation for its transcript, tool calls and checks; a failing check links to the turn it is about. "
        "Checks marked parley's own (the conversation completed, claims match actions, no other order changed) may "
        "fail a conversation but never make it pass.</p>",
        f'<div class="groups">{body or "<p>No conversations were stored.</p>"}</div>',
    )


def conversation_html(index: int, stored: StoredConversation, outcome: str, prompts: dict[str, int]) -> str:
    """One conversation as a `<details>`: a line to open it by, then what it was, its checks and
    its transcript (`index`: its place in the JSON report's `results`). Its system prompt is
    numbered in `prompts` and shown once, after the conversations."""
    conv, verdict, spec = stored.conversation, stored.verdict, stored.spec
    key = f"c{index}"
    checks = verdict.checks if verdict else []
    blamed: dict[str, str] = {}  # turn anchor -> the first check that blames it
    for check in checks:
        if check.outcome in ("fail", "error"):
            target = check_target(check, conv.messages, conv.tool_calls)
            anchor = _anchor(key, target, conv.tool_calls)
            if anchor is not None:
                blamed.setdefault(anchor, check.name)
    failing = next((c for c in checks if c.outcome == "fail"), None) or next((c for c in checks if c.outcome == "error"), None)
    why = f"{failing.name}: {failing.reason}" if failing is not None else (conv.error or (verdict.error if verdict else None))
    score = verdict.score if verdict else None
    line = (
        f'{badge(outcome)}<span class="spec">{esc(spec.name)}</span>'
        f'<span class="dim">trial {stored.trial} · score {num(f"results.{index}.score", score) if score is not None else "-"} · '
        f"{num(f'results.{index}.total_turns', conv.bot_turns)} turns · {num(f'results.{index}.duration_seconds', conv.duration_s, 'seconds')}</span>"
    )
    if why:
        line += f'<span class="why">{esc(why)}</span>'
    return (
        f'<details class="conv o-{esc(outcome)}" id="{key}" data-conversation="{esc(conv.id)}" data-outcome="{esc(outcome)}">'
        f"<summary>{line}</summary><div>{_about(stored, outcome, prompts)}{_checks_of(key, checks, stored)}"
        f"{_judge(stored)}{_transcript(key, stored, blamed)}</div></details>"
    )


def _anchor(key: str, target: object, calls: list[ToolCallRecord]) -> str | None:
    if not isinstance(target, tuple):
        return None
    if target[0] == "bot":
        return f"{key}-b{target[1]}"
    if target[0] == "user":
        return f"{key}-u{target[1]}"
    index = next((i for i, c in enumerate(calls) if c.call_id == target[1]), None)
    return f"{key}-t{index}" if index is not None else None


def _about(stored: StoredConversation, outcome: str, prompts: dict[str, int]) -> str:
    conv, spec, verdict = stored.conversation, stored.spec, stored.verdict
    variables = ", ".join(f"{esc(k)}={esc(v)}" for k, v in spec.variables.items()) or "-"
    rows = [
        ("Conversation", f"<code>{esc(conv.id)}</code>"),
        ("Spec", f"<code>{esc(spec.spec_id)}</code> from <code>{esc(spec.source)}</code>, trial {stored.trial}, seed {esc(spec.seed)}"),
        ("Outcome", f"{badge(outcome)} stop reason <code>{esc(conv.stop_reason)}</code>"),
        ("Customer", esc(conv.customer_id)),
        ("Models", f"bot <code>{esc(conv.bot_model)}</code>, user <code>{esc(conv.user_simulator)}</code>"),
        ("Variables", variables),
    ]
    if conv.system_prompt:
        number = prompts.setdefault(conv.system_prompt, len(prompts) + 1)
        rows.append(("System prompt", f'<a href="#prompt-{number}">prompt {number}</a> (after the conversations)'))
    if conv.error:
        rows.append(("Error", f'<span class="refused">{esc(conv.error)}</span>'))
    stated = only_stated_note_of(conv.metadata)
    if stated is not None:
        rows.append(("Note", _code_spans(stated)))
    if verdict is not None and verdict.error and verdict.error != conv.error:
        rows.append(("Verdict", esc(verdict.error)))
    if verdict is not None:
        for fault in verdict.user_faults:
            rows.append(
                (fault.label.capitalize(), esc(f"{fault.kind}" + (f" (turn {fault.turn})" if fault.turn else "") + f": {fault.text}"))
            )
        for output in verdict.outputs:
            rows.append((f"Output {esc(output.name)}", esc(output.value if output.found else "not found")))
    return '<dl class="meta">' + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows) + "</dl>"


def _checks_of(key: str, checks: list[CheckResult], stored: StoredConversation) -> str:
    calls, messages = stored.conversation.tool_calls, stored.conversation.messages
    if not checks:
        return '<p class="dim">No checks (the run broke before it was evaluated, or it was not evaluated).</p>'
    items = []
    for check in checks:
        flags = " (policy violation)" if check.policy_violation and check.outcome == "fail" else ""
        flags += " (parley's own check)" if check.by_default else ""
        link = ""
        if check.outcome in ("fail", "error"):
            anchor = _anchor(key, check_target(check, messages, calls), calls)
            if anchor is not None:
                link = f' <a href="#{anchor}">the turn</a>'
        mark = CHECK_MARKS.get(check.outcome, check.outcome)
        if check.kind == CRITERION_KIND:  # a criterion in words reads met / not met, its evidence in its reason
            mark = f"{CHECK_MARKS.get(check.outcome, '')[:1]} {criterion_state(check.outcome, check.details)}"
        items.append(
            f'<li class="{esc(check.outcome)}"><span class="mark">{esc(mark)}</span>'
            f'{esc(marked_name(check))}{esc(flags)}{link}<span class="reason">{esc(check.reason)}</span></li>'
        )
    return f'<h3>Checks</h3><ul class="checks">{"".join(items)}</ul>'


def _judge(stored: StoredConversation) -> str:
    verdict = stored.verdict
    if verdict is None or verdict.judge is None:
        return ""
    j = verdict.judge
    text = f"<code>{esc(j.judge)}</code>: score {esc(j.score) if j.score is not None else 'none'}"
    if (calibrated := score_calibration(verdict.checks)) is not None:
        text += f" [{esc(calibrated)}]"
    if j.comment:
        text += f" · {esc(j.comment)}"
    if j.error:
        text += f' · <span class="refused">judge error: {esc(j.error)}</span>'
    return f"<p><strong>Judge</strong> {text}</p>"


def _transcript(key: str, stored: StoredConversation, blamed: dict[str, str]) -> str:
    conv = stored.conversation
    calls = {c.call_id: (i, c) for i, c in enumerate(conv.tool_calls)}
    items = []
    bot = user = 0
    for message in conv.messages:
        anchor, cls = "", f"m-{message.role}"
        if message.role == "assistant" and message.content:
            bot += 1
            anchor = f"{key}-b{bot}"
        elif message.role == "user" and message.content:  # what a criterion's judge may quote of the customer
            user += 1
            anchor = f"{key}-u{user}"
        parts = [f'<span class="who">{ROLE_WORDS.get(message.role, esc(message.role))}</span>']
        if message.content:
            parts.append(f'<div class="text">{esc(message.content)}</div>')
        for call in message.tool_calls:
            found = calls.get(call.id)
            call_anchor = f"{key}-t{found[0]}" if found else ""
            mark = ' class="blamed"' if call_anchor in blamed else ""
            outcome = _call_outcome(found[1]) if found else ""
            parts.append(f'<div class="call" id="{call_anchor}"{mark}>→ {esc(call.name)}({esc(call.arguments)}){outcome}</div>')
        if message.role == "tool":
            parts = [f'<span class="who">Tool result{": " + esc(message.name) if message.name else ""}</span>']
            parts.append(f'<div class="call">{esc(message.content or "")}</div>')
        if anchor in blamed:
            cls += " blamed"
            parts.append(f'<span class="refused">✗ {esc(blamed[anchor])}</span>')
        items.append(f'<li class="{cls}"' + (f' id="{anchor}"' if anchor else "") + f">{''.join(parts)}</li>")
    if not conv.messages:
        items.append('<li class="dim">No messages.</li>')
    return f'<h3>Transcript</h3><ol class="transcript">{"".join(items)}</ol>'


def _prompts(prompts: dict[str, int]) -> str:
    if not prompts:
        return ""
    items = "".join(
        f'<details class="conv" id="prompt-{n}"><summary>System prompt {n}</summary><div><div class="text">{esc(text)}</div></div></details>'
        for text, n in prompts.items()
    )
    return section("prompts", "System prompts", '<p class="note">The bot\'s system prompts, each once.</p>', items)


def _call_outcome(record: ToolCallRecord) -> str:
    if record.ok:
        return ' <span class="dim">ok</span>'
    status = f" {record.http_status}" if record.http_status else ""
    what = "refused" if record.refused else "failed"
    return f' <span class="refused">{what}{status}{": " + esc(record.error) if record.error else ""}</span>'
