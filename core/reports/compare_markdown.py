"""A comparison of two batches (parley.core.reports.compare) as markdown.

Sections, most important first: the two batches, the verdict (regressions, fixes, the paired
test, which specs regressed beyond noise), pass rate and pass^k with intervals, regressions,
fixes, new and missing specs, other outcome changes, score changes, check changes (and criteria in
words that started or stopped being met), then tokens, cost and latency side by side. Sections with nothing to say are left out, except regressions
and fixes ("None."). The same comparison always renders to the same text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from parley.core.evaluation import Interval
from parley.core.reports.compare import BatchComparison, ChangeKind, PairChange, Rate, SideSummary, SpecOnlyOnOneSide
from parley.core.reports.markdown_cells import money as _cost
from parley.core.reports.markdown_cells import percent as _pct
from parley.core.reports.markdown_cells import table_lines as _table

MAX_ROWS = 200


def _interval(interval: Interval | None) -> str:
    return "" if interval is None else f" [{interval.low * 100:.1f}%, {interval.high * 100:.1f}%]"


def _rate(rate: Rate) -> str:
    return f"{_pct(rate.value)} ({rate.successes} of {rate.n}){_interval(rate.interval)}"


def _points(base: float | None, new: float | None) -> str:
    if base is None or new is None:
        return "-"
    diff = (new - base) * 100
    return "no change" if abs(diff) < 0.05 else f"{diff:+.1f} points"


def _delta(base: float | None, new: float | None, unit: str = "", digits: int = 0) -> str:
    if base is None or new is None:
        return "-"
    diff = new - base
    if abs(diff) < 10**-digits / 2:
        return "no change"
    relative = f" ({diff / base * 100:+.0f}%)" if base else ""
    return f"{diff:+,.{digits}f}{unit}{relative}"


def _models(side: SideSummary) -> str:
    m = side.batch.options.models
    bot = f"`{m.bot}`" + (f" with the prompt `{m.bot_prompt}`" if m.bot_prompt else "")
    return f"{bot}; user `{m.user}`, judge `{m.judge}`"


def _lineage(side: SideSummary) -> str:
    b = side.batch
    if b.parent_id and b.options.rescore_of:
        return f"re-score of `{b.options.rescore_of[:12]}` (judge `{b.options.models.judge}`)"
    if b.parent_id and b.options.rerun:
        return f"re-run of `{b.parent_id[:12]}` ({', '.join(b.options.rerun)})"
    if b.options.replay_of:
        return f"replay of `{b.options.replay_of[:12]}`"
    if b.parent_id and b.options.mutant:
        return f"mutant `{b.options.mutant}` of `{b.parent_id[:12]}`"
    return "-"


def _short(conversation_id: str) -> str:
    return f"`{conversation_id[:12]}`"


def _capped(rows: Sequence[Sequence[object]], header: Sequence[str]) -> list[str]:
    lines = _table(header, rows[:MAX_ROWS])
    if len(rows) > MAX_ROWS:
        lines += ["", f"... and {len(rows) - MAX_ROWS} more (`--format json` lists every one)."]
    return lines


def verdict_head(c: BatchComparison) -> str:
    """The verdict in a few words, from the paired test (the markdown and the HTML comparison)."""
    t = c.paired_test
    if c.same_batch or c.no_change:
        return "No change"
    if t.discordant == 0:
        return "No change in passes and failures"
    if t.worse_beyond_noise:
        return "Worse, beyond noise"
    if t.beyond_noise and t.direction == "better":
        return "Better, beyond noise"
    return "Changed, within noise"


def _verdict(c: BatchComparison) -> list[str]:
    t = c.paired_test
    if c.same_batch:
        return ["**No change**: a batch compared with itself.", ""]
    if c.no_change:
        return [
            f"**No change**: the {c.matched_pairs} conversations both batches ran ended the same way, with the same scores and checks.",
            "",
        ]
    regressions, fixes = t.regressions, t.fixes
    head = f"**{verdict_head(c)}**"
    lines = [
        f"{head}: {regressions} regression{'s' if regressions != 1 else ''}, {fixes} fix{'es' if fixes != 1 else ''} "
        f"({t.discordant} discordant pair{'s' if t.discordant != 1 else ''}); {t.method}: p = {t.p_value:.4g} two-sided, "
        f"p = {t.p_worse:.4g} that the new batch is worse; alpha {t.alpha:g}.",
        "",
    ]
    lost = len(c.lost_to_simulator)
    if lost:
        lines += [
            f"{lost} conversation{'s' if lost != 1 else ''} that passed in the base ended as a simulator fault in the new batch: "
            "the simulated customer misbehaved first, so the bot was not judged there (see Other outcome changes).",
            "",
        ]
    beyond = c.regressed_beyond_noise
    if beyond:
        lines += [f"Regressed beyond noise (what `--fail-on-regression` fails on): {', '.join(f'`{s}`' for s in beyond)}.", ""]
    elif regressions:
        lines += ["No spec regressed beyond noise.", ""]
    if c.attacks is not None:
        lines += ["Attacks, per strategy (held -> breached is a regression):", ""]
        lines += _table(
            ["Strategy", "Pairs", "Regressions", "Fixes", "p worse (one-sided)", "Beyond noise"],
            [
                [s.strategy, s.pairs, s.regressions, s.fixes, f"{s.p_worse:.4g}", "yes" if s.beyond_noise else "no"]
                for s in c.attacks.strategies
            ],
        )
        lines.append("")
        if c.regressed_strategies:
            lines += [
                f"Attack strategies regressed beyond noise (`--fail-on-regression` fails on them): {', '.join(c.regressed_strategies)}.",
                "",
            ]
    return lines


def _only(title: str, specs: list[SpecOnlyOnOneSide]) -> list[str]:
    if not specs:
        return []
    rows = [[s.spec_id, s.conversations, ", ".join(f"{o} {n}" for o, n in s.outcomes.items())] for s in specs]
    return [f"## {title}", "", *_capped(rows, ["Spec", "Conversations", "Outcomes"]), ""]


def _changes(title: str, changes: list[PairChange], header: Sequence[str], cells: Callable[[PairChange], list[object]]) -> list[str]:
    rows = [cells(ch) for ch in changes]
    return [f"## {title}", "", *(_capped(rows, header) if rows else ["None."]), ""]


def _turned(c: BatchComparison, kind: ChangeKind, title: str, columns: list[str]) -> list[str]:
    """The regressions or the fixes: each pair's outcome on the side that failed, the checks that
    started or stopped failing, and both conversations."""
    return _changes(
        title,
        c.of_kind(kind),
        ["Spec", "Trial", *columns, "Base", "New"],
        lambda ch: [
            ch.spec_id,
            ch.trial,
            ch.failed_side.outcome,
            "; ".join(ch.checks_turned) or "-",
            _short(ch.base.conversation_id),
            _short(ch.new.conversation_id),
        ],
    )


def render_comparison(c: BatchComparison) -> str:
    """The comparison as markdown text."""
    base, new = c.base, c.new
    out = [f"# parley comparison: `{base.batch.id[:12]}` → `{new.batch.id[:12]}`", ""]
    out += _table(
        ["", "Base", "New"],
        [
            ["Batch", f"`{base.batch.id}`", f"`{new.batch.id}`"],
            ["Created (UTC)", base.batch.created_at.strftime("%Y-%m-%d %H:%M"), new.batch.created_at.strftime("%Y-%m-%d %H:%M")],
            ["Status", base.batch.status, new.batch.status],
            ["Sources", ", ".join(f"`{s}`" for s in base.batch.sources) or "-", ", ".join(f"`{s}`" for s in new.batch.sources) or "-"],
            ["Models", _models(base), _models(new)],
            [
                "Trials, seed",
                f"{base.batch.options.trials}, {base.batch.options.seed}",
                f"{new.batch.options.trials}, {new.batch.options.seed}",
            ],
            ["Made from", _lineage(base), _lineage(new)],
        ],
    )
    out += ["", f"Compared on the {c.matched_pairs} conversations ({c.common_specs} specs) both batches ran, matched by spec id and trial."]
    not_common = []
    if c.sources_only_in_base or c.sources_only_in_new:
        not_common.append(
            "the sources differ (only in the base: "
            + (", ".join(f"`{s}`" for s in c.sources_only_in_base) or "none")
            + "; only in the new batch: "
            + (", ".join(f"`{s}`" for s in c.sources_only_in_new) or "none")
            + ")"
        )
    if c.missing_specs:
        where = "the re-run did not include" if c.made_from_base == "rerun" else "only in the base"
        not_common.append(f"{len(c.missing_specs)} spec(s) {where} ({sum(s.conversations for s in c.missing_specs)} conversations)")
    if c.new_specs:
        not_common.append(f"{len(c.new_specs)} spec(s) only in the new batch ({sum(s.conversations for s in c.new_specs)} conversations)")
    if c.trials_only_in_base or c.trials_only_in_new:
        what = "trials the re-run did not include" if c.made_from_base == "rerun" else "trials run by one side only"
        not_common.append(f"{what}: {c.trials_only_in_base} in the base, {c.trials_only_in_new} in the new batch")
    if not_common:
        out += ["", "Not common, and left out of the numbers below: " + "; ".join(not_common) + "."]
    if c.calibration is not None:
        out += ["", c.calibration.sentence()]
    if c.replay is not None:
        r = c.replay
        out += [
            "",
            f"The new batch replays the base's customers word for word: in {r.diverged} of {r.conversations} conversations "
            f"the bot's answers diverged from the stored ones; {r.exhausted} ended with replay_exhausted (the stored customer "
            "had no words for what the new bot did).",
        ]
    out += ["", "## Verdict", "", *_verdict(c)]

    out += ["## Pass rate and pass^k", ""]
    rows: list[list[object]] = [
        ["Pass rate", _rate(base.pass_rate), _rate(new.pass_rate), _points(base.pass_rate.value, new.pass_rate.value)]
    ]
    for b, n in zip(base.pass_k, new.pass_k, strict=False):
        rows.append(
            [f"pass^{b.k}", f"{_pct(b.value)}{_interval(b.interval)}", f"{_pct(n.value)}{_interval(n.interval)}", _points(b.value, n.value)]
        )
    rows.append(
        [
            "Outcomes (all stored)",
            ", ".join(f"{o} {k}" for o, k in base.outcomes.items()) or "-",
            ", ".join(f"{o} {k}" for o, k in new.outcomes.items()) or "-",
            "",
        ]
    )
    out += _table(["", "Base", "New", "Change"], rows)
    out += [
        "",
        "Pass rate: passed / (passed + failures of the bot) over the matched conversations, with a 95% Wilson interval; "
        "pass^k: all k trials of a spec pass, averaged over specs, with a seeded 95% bootstrap interval over specs. "
        "Unverified conversations, simulator faults and runs that broke are counted apart.",
        "",
    ]

    out += _turned(
        c,
        "regression",
        "Regressions (passed → failed, bot_error, or user_fault with a failed check)",
        ["Now", "Checks that started failing"],
    )
    out += _turned(c, "fix", "Fixes (failed or bot_error → passed)", ["Was", "Checks that stopped failing"])
    out += _only("New specs (only in the new batch)", c.new_specs)
    if c.made_from_base != "rerun":  # a re-run leaves out what it did not re-run: not news
        out += _only("Missing specs (only in the base)", c.missing_news)
    others = c.of_kind("outcome_change")
    if others:
        out += _changes(
            "Other outcome changes",
            others,
            ["Spec", "Trial", "Base", "New", "Base stop", "New stop", "Base", "New"],
            lambda ch: [
                ch.spec_id,
                ch.trial,
                ch.base.outcome,
                ch.new.outcome,
                ch.base.stop_reason,
                ch.new.stop_reason,
                _short(ch.base.conversation_id),
                _short(ch.new.conversation_id),
            ],
        )
    scores = c.of_kind("score_change")
    if scores:
        out += _changes(
            "Score changes (same outcome)",
            scores,
            ["Spec", "Trial", "Outcome", "Base score", "New score"],
            lambda ch: [
                ch.spec_id,
                ch.trial,
                ch.new.outcome,
                ch.base.score if ch.base.score is not None else "-",
                ch.new.score if ch.new.score is not None else "-",
            ],
        )
    if c.check_changes or c.criterion_changes:
        out += ["## Check changes", ""]
        if c.check_changes:
            out += _capped(
                [[ch.check, ch.started_failing, ch.stopped_failing] for ch in c.check_changes],
                ["Check", "Started failing in", "Stopped failing in"],
            )
            out.append("")
        if c.criterion_changes:
            out += ["Criteria in words:", ""]
            out += _capped(
                [[ch.criterion, ch.started_being_met, ch.stopped_being_met] for ch in c.criterion_changes],
                ["Criterion", "Started being met in", "Stopped being met in"],
            )
            out.append("")
        same = c.of_kind("check_change")
        if same:
            met = any(ch.started_being_met or ch.stopped_being_met for ch in same)  # columns for criteria only when some changed
            out += ["Same outcome and score, other checks failing" + (" or other criteria met:" if met else ":"), ""]
            out += _capped(
                [
                    [ch.spec_id, ch.trial, ch.new.outcome, "; ".join(ch.started_failing) or "-", "; ".join(ch.stopped_failing) or "-"]
                    + (["; ".join(ch.started_being_met) or "-", "; ".join(ch.stopped_being_met) or "-"] if met else [])
                    for ch in same
                ],
                ["Spec", "Trial", "Outcome", "Started failing", "Stopped failing"]
                + (["Started being met", "Stopped being met"] if met else []),
            )
            out.append("")

    out += ["## Tokens, cost and latency", ""]
    seconds = " s"
    out += _table(
        ["", "Base", "New", "Change"],
        [
            ["Conversations", base.conversations, new.conversations, _delta(base.conversations, new.conversations)],
            ["Input tokens", f"{base.input_tokens:,}", f"{new.input_tokens:,}", _delta(base.input_tokens, new.input_tokens)],
            ["Output tokens", f"{base.output_tokens:,}", f"{new.output_tokens:,}", _delta(base.output_tokens, new.output_tokens)],
            ["Cost", _cost(base.cost_usd), _cost(new.cost_usd), _delta(base.cost_usd, new.cost_usd, digits=4)],
            [
                "Cost per conversation",
                _cost(base.mean_cost_usd),
                _cost(new.mean_cost_usd),
                _delta(base.mean_cost_usd, new.mean_cost_usd, digits=4),
            ],
            [
                "Mean duration",
                _seconds(base.mean_duration_s),
                _seconds(new.mean_duration_s),
                _delta(base.mean_duration_s, new.mean_duration_s, seconds, 2),
            ],
            ["Mean turns", _num(base.mean_turns), _num(new.mean_turns), _delta(base.mean_turns, new.mean_turns, digits=1)],
            [
                "Bot response time (mean)",
                _seconds(base.bot_latency_s, 3),
                _seconds(new.bot_latency_s, 3),
                _delta(base.bot_latency_s, new.bot_latency_s, seconds, 3),
            ],
        ],
    )
    out += ["", "Over every stored conversation of each batch. An unknown price makes a cost unknown, never $0."]
    return "\n".join(out).rstrip("\n") + "\n"


def _seconds(value: float | None, digits: int = 2) -> str:
    return "n/a" if value is None else f"{value:.{digits}f} s"


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}"
