"""A batch's summary as a markdown report.

Sections, in this order: title (batch, sources, models per role), policy violations (first,
"None." when there are none), totals (each outcome, and what the ones counted apart mean), pass
rate with its 95% interval and denominator and pass^k with its bootstrap interval, flaky specs
(with 2+ trials), checks not applicable (only when some were: a bot without parley's World or
visible tool calls, a judge that failed; one row per kind and reason), criteria in words (only when the batch has some: how often each was met),
scores with a text histogram, per profile, tokens and cost, bot response time, stop reasons, the
pair and batch rules (only when the batch was run with `--rules` and has some), failures with
reasons.

The same summary always renders to the same text: the only times in it are the batch's own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from parley.core.evaluation import CALIBRATION_NOTE, BatchSummary, Interval
from parley.core.records import LimitCounts, RoleUsage
from parley.core.reports.attack_markdown import attack_lines
from parley.core.reports.markdown_cells import cell as _cell
from parley.core.reports.markdown_cells import money as _cost
from parley.core.reports.markdown_cells import percent as _pct
from parley.core.reports.markdown_cells import table_lines as _table
from parley.core.reports.stats import LEGACY_ERROR_NOTE, UNVERIFIED_HINT, BatchReport
from parley.core.rules import RuleResult, RuleSummary
from parley.core.users import only_stated_advice, only_stated_note

BAR = "█"
BAR_WIDTH = 30


def _interval(interval: Interval | None) -> str:
    return "n/a" if interval is None else f"{interval.low * 100:.1f}-{interval.high * 100:.1f}%"


def rate_detail(summary: BatchSummary) -> str:
    """ "(23 of 27, 95% interval 67.5-94.1%)": the pass rate's denominator and Wilson interval."""
    shown = f"({summary.passed} of {summary.pass_rate_denominator}"
    if summary.pass_rate_interval is not None:
        shown += f", 95% interval {_interval(summary.pass_rate_interval)}"
    return shown + ")"


def rates_line(summary: BatchSummary) -> str:
    """One line: the pass rate with its denominator and interval, pass^k at the batch's own k
    (its trials, when more than one) with its interval, and the flaky specs (for the app's batch
    view, beside the counts; the report lists every k)."""
    parts = [f"pass rate {_pct(summary.pass_rate)} {rate_detail(summary)}"]
    if len(summary.pass_k) > 1:
        p = summary.pass_k[-1]
        parts.append(f"pass^{p.k} {_pct(p.value)}" + (f" ({_interval(p.interval)})" if p.interval is not None else ""))
    if summary.flaky_specs:
        parts.append(f"{len(summary.flaky_specs)} flaky spec{'s' if len(summary.flaky_specs) != 1 else ''}")
    return " · ".join(parts)


def outcome_notes(summary: BatchSummary) -> list[str]:
    """What the counts mean, a line for each kind that is there (the report and the terminal)."""
    notes = [
        "Failed conversations and bot errors (the bot under test broke: an HTTP error, a timeout, a bad reply) "
        "are the bot's failures. Errors are runs that broke on the simulator's or parley's side "
        f"({summary.user_errors} simulator, {summary.infrastructure_errors} infrastructure, {summary.cancelled} cancelled"
        + (f", {summary.legacy_errors} legacy" if summary.legacy_errors else "")
        + "): counted apart, as are evaluation errors. Judge errors count runs whose judge failed: they get no "
        "score, never a score of 1."
    ]
    if summary.unverified:
        notes.append(
            f"{summary.unverified} unverified conversation(s): no check about the bot applied to them, so they neither "
            f"pass nor fail; {UNVERIFIED_HINT}."
        )
    if summary.user_faults:
        notes.append(
            f"{summary.user_faults} conversation(s) with simulator faults (the simulated user misbehaved: see Failures): "
            "not blamed on the bot; run them again."
        )
    if summary.legacy_errors:
        notes.append(f"{summary.legacy_errors} conversation(s) end with `error`: {LEGACY_ERROR_NOTE}.")
    return notes


def _num(value: float | None, digits: int = 2) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _when(value: object) -> str:
    return "-" if value is None else value.isoformat(timespec="seconds")  # type: ignore[attr-defined]


def histogram(distribution: dict[int, int], width: int = BAR_WIDTH, *, unscored: int | None = None) -> list[str]:
    """`3 | ████████ 12` lines, highest score first; bars scaled to the largest count. With
    `unscored`, a last `no score` bar on the same scale."""
    rows: list[tuple[str, int]] = [(str(score), distribution[score]) for score in sorted(distribution, reverse=True)]
    if unscored is not None:
        rows.append(("no score", unscored))
    top = max((n for _, n in rows), default=0)
    pad = max((len(label) for label, _ in rows), default=1)
    lines = []
    for label, n in rows:
        bar = BAR * (max(1, round(n / top * width)) if n and top else 0)
        label = label.rjust(pad) if unscored is not None else label
        lines.append(f"{label} | {bar} {n}" if bar else f"{label} | {n}")
    return lines


LIMITS_NOTE = (
    "The bot's latency, cost, tokens and turns, each limit a check with the measured figure as its evidence. "
    "A timing-dependent one depends on the machine and the moment it ran; none is decided for the offline bot."
)
"""What the Limits section of a batch's report says it holds (markdown and HTML)."""


def limit_figure(counts: LimitCounts) -> str:
    """A limit's worst measured figure in its unit ("-" when none was measured)."""
    worst = counts.worst
    if worst is None:
        return "-"
    if counts.limit.endswith("seconds"):
        return f"{worst:.2f} s"
    if counts.limit == "cost_usd":
        return f"${worst:.6f}".rstrip("0").rstrip(".") if worst else "$0"
    if counts.limit == "turns_to_pass":
        return f"turn {int(worst)}"
    return f"{int(worst):,} tokens"


def _usage_row(u: RoleUsage) -> list[object]:
    tokens_note = f" (+{u.unreported_calls} calls unreported)" if u.unreported_calls else ""
    return [
        u.role,
        ", ".join(u.models) or "-",
        u.calls,
        f"{u.input_tokens}{tokens_note}",
        u.output_tokens,
        _cost(u.cost_usd),
    ]


SCOPES = {2: "each ordered pair", "all": "the batch"}


def rule_outcome_counts(rule: RuleSummary) -> str:
    """`pass 3, fail 1, not applicable 8` (and `not run N` when any was not)."""
    text = f"pass {rule.count('pass')}, fail {rule.count('fail')}, not applicable {rule.count('not_applicable')}"
    return text + (f", not run {rule.count('not_run')}" if rule.count("not_run") else "")


def rule_result_line(result: RuleResult, labels: Mapping[str, str]) -> str:
    """What one failed decision was about and why: `A → B: yields (reason)`, each conversation
    by its label (`SPEC_ID trial N`) when `labels` has it, else by the start of its id."""
    names = [labels.get(cid, cid[:12]) for cid in result.conversations]
    about = " → ".join(names) if result.kind == "pair" else f"the batch of {len(names)}" if result.kind == "batch" else ", ".join(names)
    why = result.yields or result.reason or "oracle violated"
    if result.yields and result.reason and result.reason != "oracle violated":
        why = f"{result.yields} ({result.reason})"
    return f"{about}: {why}"


def rule_lines(rules: Sequence[RuleSummary], labels: Mapping[str, str]) -> list[str]:
    """The pair and batch rules in plain lines (a terminal, a test's failure): how many failed,
    then each rule that failed or was not run, its counts and its first failure (with `yields`,
    conversations named by `labels`) or why. None when there are no rules."""
    if not rules:
        return []
    n, failed = len(rules), sum(1 for rule in rules if rule.failed)
    lines = [f"Rules over pairs and the batch: {n} rule{'s' if n != 1 else ''}, {failed} failed"]
    for rule in rules:
        if not rule.failed and not rule.not_run_reasons:
            continue
        lines.append(f"  - {rule.rule_file} ({rule.name}), {SCOPES[rule.conversations]}: {rule_outcome_counts(rule)}")
        if rule.failures:
            lines.append(f"      {rule_result_line(rule.failures[0], labels)}")
        for reason in rule.not_run_reasons[:1]:
            lines.append(f"      not run: {reason}")
    return lines


def rules_section(summary: BatchReport) -> list[str]:
    """The pair and batch rules: a row each, then each failed decision listed (capped), and why
    any was not run. Nothing when the batch has none."""
    if not summary.rules:
        return []
    out = ["## Rules over pairs and the batch", ""]
    out += _table(
        ["Rule file", "Name", "Over", "Pass", "Fail", "Not applicable", "Not run"],
        [
            [r.rule_file, r.name, SCOPES[r.conversations], r.count("pass"), r.count("fail"), r.count("not_applicable"), r.count("not_run")]
            for r in summary.rules
        ],
    )
    out.append("")
    listed: list[str] = []
    for rule in summary.rules:
        for result in rule.failures:
            listed.append(
                f"- `{_cell(rule.rule_file)}` ({_cell(rule.name)}) failed: {_cell(rule_result_line(result, summary.rule_labels))}"
            )
        if rule.count("fail") > len(rule.failures):
            listed.append(f"- `{_cell(rule.rule_file)}`: ... and {rule.count('fail') - len(rule.failures)} more failures.")
        for reason in rule.not_run_reasons:
            listed.append(f"- `{_cell(rule.rule_file)}` ({_cell(rule.name)}) not run: {_cell(reason)}")
    return out + ([*listed, ""] if listed else [])


def render_markdown(summary: BatchReport, *, title: str | None = None) -> str:
    """The report of one batch as markdown text."""
    b = summary.batch
    o = b.options
    out: list[str] = [f"# {title or 'parley batch report'}: `{b.id}`", ""]
    out += [
        f"- Status: {b.status}" + (f" ({_cell(b.error)})" if b.error else ""),
        f"- Created {_when(b.created_at)}, started {_when(b.started_at)}, finished {_when(b.finished_at)}",
        f"- Sources: {', '.join(f'`{s}`' for s in b.sources) or '-'}",
        f"- Models: bot `{o.models.bot}`"
        + (f" with the system prompt `{o.models.bot_prompt}`" if o.models.bot_prompt else "")
        + f", user `{o.models.user}`, judge `{o.models.judge}`",
        f"- Trials {o.trials}, seed {o.seed}, concurrency {o.concurrency}, max turns {o.max_turns}, "
        f"timeout {o.timeout_s:g} s, cache {'on' if o.cache else 'off'}",
        *([f"- Rules: `{_cell(o.rules)}` (`rule:` checks of each conversation; pairs and the batch below)"] if o.rules else []),
        "",
    ]

    out += ["## Policy violations", ""]
    if not summary.policy_violations_total:
        out += ["None.", ""]
    else:
        out += [f"**{summary.policy_violations_total} policy violation(s)**: data the policy protects was changed.", ""]
        out += _table(
            ["Spec", "Trial", "Conversation", "Check", "Reason"],
            [[v.spec_id, v.trial, v.conversation_id[:12], v.check, v.reason] for v in summary.policy_violations],
        )
        if summary.policy_violations_total > len(summary.policy_violations):
            out += ["", f"... and {summary.policy_violations_total - len(summary.policy_violations)} more."]
        out.append("")

    out += attack_lines(summary.attacks)

    out += ["## Totals", ""]
    out += _table(
        [
            "Planned",
            "Done",
            "Passed",
            "Failed",
            "Bot errors",
            "Unverified",
            "Simulator faults",
            "Errors",
            "Evaluation errors",
            "Judge errors",
        ],
        [
            [
                summary.planned,
                summary.done,
                summary.passed,
                summary.failed,
                summary.bot_errors,
                summary.unverified,
                summary.user_faults,
                summary.errors,
                summary.evaluation_errors,
                summary.judge_errors,
            ]
        ],
    )
    out += ["", *outcome_notes(summary), ""]

    out += ["## Pass rate", ""]
    out += [f"**{_pct(summary.pass_rate)}** {rate_detail(summary)}; pass rate = {summary.pass_rate_basis}.", ""]
    if summary.not_read:
        out += [f"Not read: {summary.not_read.note}. A pass is decided on the checks that were.", ""]
    out += _table(
        ["k", "pass^k", "95% interval", "Specs"],
        [[p.k, _pct(p.value), _interval(p.interval), p.specs] for p in summary.pass_k],
    )
    out += [
        "",
        "pass^k: the chance that all k trials of a spec pass, averaged over specs (tau-bench); its interval is a "
        "percentile bootstrap over the specs, seeded by the batch, so the same batch always shows the same one.",
        "",
    ]
    if summary.leaderboard is not None:
        row = summary.leaderboard
        out += [f"## {row.benchmark} leaderboard row", ""]
        out += _table(["Domain", *(f"pass^{k}" for k in range(1, len(row.pass_k) + 1)), "User simulator"], [row.cells()])
        out += [
            "",
            f"pass^k over the {row.tasks} tasks, as {row.benchmark}'s leaderboard shows it (n/a: fewer trials than k; "
            "`--trials 4` gives every column). Scores compare only under the same user simulator.",
            "",
        ]
    if summary.batch.options.trials >= 2:
        out += ["## Flaky specs", ""]
        if not summary.flaky_specs:
            out += ["None: every spec's judged trials agree.", ""]
        else:
            out += ["Specs whose trials disagree, the most evenly split first: the noise a single run would hide.", ""]
            out += _table(
                ["Spec", "Judged trials", "Passed", "Failed", "Counted apart"],
                [[f.spec_id, f.trials, f.passed, f.failed, f.other] for f in summary.flaky_specs],
            )
            out.append("")
    if summary.passed_with_not_applicable:
        out += [
            f"{summary.passed_with_not_applicable} of the {summary.passed} passed conversations passed on the "
            "checks that applied to them; some of their checks could not be applied (below).",
            "",
        ]

    if summary.not_applicable_checks:
        out += ["## Checks not applicable", ""]
        out += ["These checks were neither passed nor failed: each row says why they could not be decided.", ""]
        out += _table(
            ["Kind", "Checks", "Conversations", "Which", "Why"],
            [
                [
                    c.kind,
                    c.checks,
                    c.conversations,
                    "; ".join(c.names) + (f"; ... and {c.more_names} more" if c.more_names else ""),
                    c.reason,
                ]
                for c in summary.not_applicable_checks
            ],
        )
        out.append("")

    if summary.criteria:
        out += ["## Criteria", ""]
        out += [
            "Checks written in words, each decided by the LLM judge with a quote from the transcript as evidence "
            "(a quote not found in the turn it names is a judge error). Not run: no LLM judge decided them "
            "(`--judge MODEL`), or the run ended early; never counted as met.",
            "",
        ]
        out += _table(
            ["Criterion", "Met", "Not met", "Not applicable", "Not run", "Judge errors", "Judge calibration"],
            [
                [
                    c.criterion + (" (built in)" if c.builtin else ""),
                    c.met,
                    c.not_met,
                    c.not_applicable,
                    c.not_run,
                    c.errors,
                    c.calibration or "-",
                ]
                for c in summary.criteria
            ],
        )
        out += ["", CALIBRATION_NOTE]
        out.append("")
    if summary.limits:
        out += ["## Limits", ""]
        out += [LIMITS_NOTE, ""]
        out += _table(
            ["Limit", "Held", "Over", "Not decided", "Worst measured"],
            [[c.name, c.held, c.over, c.not_decided, limit_figure(c)] for c in summary.limits],
        )
        out.append("")
    if summary.goals_only_stated:
        out += ["## Goals only stated", ""]
        out += [
            "The offline customer only stated these goals: it cannot act them out, so nothing it did tested "
            f"whether the bot can do them (information, not a fault; {only_stated_advice(2)}).",
            "",
        ]
        out += _table(
            ["Spec", "Conversations", "Goals"],
            [[g.spec_id, g.conversations, "; ".join(g.goals)] for g in summary.goals_only_stated],
        )
        out.append("")

    s = summary.score_statistics
    out += ["## Scores", ""]
    if not s.count:
        out += ["No conversation was scored: no LLM judge scored them, and the checks decide each outcome.", ""]
    else:
        out += _table(
            ["Scored", "Mean", "Median", "Std", "Min", "Max"],
            [[s.count, _num(s.mean), _num(s.median, 1), _num(s.std), s.min, s.max]],
        )
        dist = {int(k.removeprefix("score_")): n for k, n in summary.score_distribution.items()}
        out += ["", "```", *histogram(dist), "```", ""]
        if summary.rubric_calibration:
            out += [f"The judge's calibration on the rubric it scored: {summary.rubric_calibration}.", ""]

    out += ["## Per profile", ""]
    if summary.profiles:
        out += _table(
            [
                "Profile",
                "Runs",
                "Passed",
                "Failed",
                "Bot errors",
                "Apart",
                "Errors",
                "Pass rate",
                "95% interval",
                "Mean score",
                "Mean turns",
            ],
            [
                [
                    p.name,
                    p.runs,
                    p.passed,
                    p.failed,
                    p.bot_errors,
                    p.apart,
                    p.errors,
                    _pct(p.pass_rate) + f" of {p.pass_rate_denominator}",
                    _interval(p.pass_rate_interval),
                    _num(p.mean_score),
                    _num(p.mean_turns, 1),
                ]
                for p in summary.profiles
            ],
        )
    else:
        out.append("No conversations yet.")
    out.append("")

    out += ["## Tokens and cost", ""]
    out += _table(
        ["Role", "Model", "Calls", "Input tokens", "Output tokens", "Cost"],
        [_usage_row(u) for u in summary.usage] + [_usage_row(summary.total_usage)],
    )
    if summary.total_usage.cost_usd is None:
        out += ["", "Cost is unknown where a model's price is unknown (never counted as $0)."]
    out.append("")

    out += ["## Bot response time", ""]
    lat = summary.bot_latency
    if lat is None:
        out += ["No bot turns.", ""]
    else:
        out += _table(
            ["Turns", "Mean", "Min", "Max"],
            [[lat.turns, f"{lat.mean_s:.3f} s", f"{lat.min_s:.3f} s", f"{lat.max_s:.3f} s"]],
        )
        out += [
            "",
            "Per bot answer, measured by parley around the bot's call (for a deployed bot: the HTTP "
            "round trip). Turns that ended in an error are not timed.",
            "",
        ]

    out += ["## Stop reasons", ""]
    if summary.stop_reasons:
        out += _table(["Stop reason", "Count"], [[r, n] for r, n in summary.stop_reasons.items()])
    else:
        out.append("No conversations yet.")
    out.append("")

    out += rules_section(summary)

    out += ["## Failures", ""]
    if not summary.failures_total:
        out += ["None.", ""]
    else:
        if summary.failed_checks:
            out += _table(["Failed check", "Kind", "Conversations"], [[c.name, c.kind, c.count] for c in summary.failed_checks])
            out.append("")
        for f in summary.failures:
            out.append(f"- `{f.spec_id}` trial {f.trial} (`{f.conversation_id[:12]}`, {f.outcome}, {f.stop_reason})")
            for r in f.reasons:
                out.append(f"  - {_cell(r)}")
                if r in f.evidence:  # a failed criterion: the judge's quote under it
                    out.append(f"    > {_cell(f.evidence[r])}")
            if not f.reasons:
                out.append("  - (no reason recorded)")
            if f.goals_only_stated:
                out.append(f"  - note: {_cell(only_stated_note(f.goals_only_stated))}")
        if summary.failures_total > len(summary.failures):
            out.append(f"- ... and {summary.failures_total - len(summary.failures)} more.")
        out.append("")

    return "\n".join(out).rstrip("\n") + "\n"
