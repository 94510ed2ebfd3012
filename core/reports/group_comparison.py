"""A group of batches side by side (`parley run PATHS --bot A --bot B`: one batch per bot, the
same specs and seeds; later, a base and its mutants): each member's pass rate with its Wilson
interval, pass^k, cost and latency; each spec's outcomes in a row, one cell per member; and every
pair of members compared as `parley compare` compares two batches (parley.core.reports.compare:
matched by spec and trial, the exact McNemar test on the pairs both judged).

    comparison = compare_group(store, "latest")        # a group id, a member batch, or latest
    print(render_group_markdown(comparison))
"""

from __future__ import annotations

from itertools import combinations

from pydantic import BaseModel

from parley.core.evaluation import BatchSummary, Interval
from parley.core.records import BatchRecord, OutcomeRow
from parley.core.reports.compare import compare_batches
from parley.core.reports.html_page import esc, page_end, page_start, section, table
from parley.core.reports.markdown_cells import cell, percent, table_lines
from parley.core.reports.paired_test import DEFAULT_ALPHA, PairedTest
from parley.core.store import Store, outcome_rows

__all__ = [
    "GroupComparison",
    "GroupMember",
    "MemberPair",
    "SpecAcross",
    "compare_group",
    "group_lines",
    "render_group_html",
    "render_group_markdown",
]

OUTCOME_MARKS = {"passed": "✓", "failed": "✗", "bot_error": "✗", "unverified": "?", "user_fault": "~", "evaluation_error": "!"}
"""How a cell shows each trial's outcome (anything else: `·`, a run that broke on parley's side)."""
MARKS_LEGEND = "✓ passed, ✗ failed or the bot broke, ? unverified, ~ a simulator fault, ! undecided, · the run broke."


class GroupMember(BaseModel):
    """One batch of the group: its role (the bot's name), the bot, and its numbers."""

    role: str
    bot: str
    """What ran: the bot's name, and its prompt file when it has one."""
    batch: BatchRecord
    conversations: int
    passed: int
    pass_rate: float | None
    pass_rate_n: int
    interval: Interval | None
    pass_k: float | None
    """pass^k at the batch's trials (k = trials)."""
    cost_usd: float | None
    mean_latency_s: float | None


class SpecAcross(BaseModel):
    """One spec: its outcomes in each member, trial by trial (members in the group's order)."""

    spec_id: str
    name: str
    outcomes: list[list[str]]

    @property
    def differs(self) -> bool:
        return len({tuple(o) for o in self.outcomes}) > 1


class MemberPair(BaseModel):
    """Two members compared: how many pairs went passed -> a failure of the bot from the first
    to the second (worse), how many the other way, and the paired test on them."""

    first: str
    second: str
    matched: int
    test: PairedTest


class GroupComparison(BaseModel):
    """A group side by side (see the module doc)."""

    group_id: str
    members: list[GroupMember]
    specs: list[SpecAcross]
    pairs: list[MemberPair]


def _member(batch: BatchRecord, rows: list[OutcomeRow]) -> GroupMember:
    summary = BatchSummary.from_rows(rows, planned=batch.planned, trials=batch.options.trials, seed=batch.options.seed)
    top = summary.pass_k[-1] if summary.pass_k else None
    turns = sum(r.turns for r in rows)
    return GroupMember(
        role=batch.group_role or batch.options.models.bot,
        bot=batch.options.models.bot + (f" + {batch.options.models.bot_prompt}" if batch.options.models.bot_prompt else ""),
        batch=batch,
        conversations=summary.done,
        passed=summary.passed,
        pass_rate=summary.pass_rate,
        pass_rate_n=summary.pass_rate_denominator,
        interval=summary.pass_rate_interval,
        pass_k=top.value if top is not None else None,
        cost_usd=summary.cost_usd,
        mean_latency_s=sum(r.bot_latency_s for r in rows) / turns if turns else None,
    )


def compare_group(store: Store, ref: str, *, alpha: float = DEFAULT_ALPHA) -> GroupComparison:
    """The group `ref` names (its id or prefix, one of its batches, or `latest`), side by side."""
    group_id = store.resolve_group_ref(ref)
    batches = store.group_batches(group_id)
    rows = {b.id: list(outcome_rows(store, b.id)) for b in batches}
    members = [_member(b, rows[b.id]) for b in batches]
    by_spec: dict[str, tuple[int, str, list[list[str]]]] = {}
    for position, batch in enumerate(batches):
        for row in rows[batch.id]:
            index, name, cells = by_spec.setdefault(row.spec_id, (row.spec_index, row.name, [[] for _ in batches]))
            cells[position].append(row.outcome)
    specs = [
        SpecAcross(spec_id=spec_id, name=name, outcomes=cells)
        for spec_id, (_, name, cells) in sorted(by_spec.items(), key=lambda i: (i[1][0], i[0]))
    ]
    pairs = []
    for (a, first), (b, second) in combinations(list(zip(members, batches, strict=True)), 2):
        compared = compare_batches(store, first.id, second.id, alpha=alpha)
        pairs.append(MemberPair(first=a.role, second=b.role, matched=compared.matched_pairs, test=compared.paired_test))
    return GroupComparison(group_id=group_id, members=members, specs=specs, pairs=pairs)


# -- rendering ------------------------------------------------------------------------------------


def _rate(member: GroupMember) -> str:
    if member.pass_rate is None:
        return "-"
    shown = f"{percent(member.pass_rate)} ({member.passed} of {member.pass_rate_n})"
    if member.interval is not None:
        shown += f", 95% interval {percent(member.interval.low)}-{percent(member.interval.high)}"
    return shown


def _cost(value: float | None) -> str:
    return "unknown" if value is None else f"${value:.4f}"


def _cell(outcomes: list[str]) -> str:
    return "".join(OUTCOME_MARKS.get(o, "·") for o in outcomes) or "-"


def _difference(pair: MemberPair) -> str:
    t = pair.test
    if not t.discordant:
        return f"{pair.second} and {pair.first} agree on all {pair.matched} pairs"
    if t.direction == "same":
        lead = f"{pair.second} and {pair.first} split evenly"
    else:
        better, worse = (pair.first, pair.second) if t.direction == "worse" else (pair.second, pair.first)
        lead = f"{better} better than {worse}"
    noise = "beyond noise" if t.beyond_noise else "within noise"
    return f"{lead}: {t.regressions} passed only with {pair.first}, {t.fixes} only with {pair.second}; p = {t.p_value:.3g} ({noise})"


def group_lines(comparison: GroupComparison) -> list[str]:
    """The group for a terminal: each member's pass rate, and each pair's difference."""
    lines = [f"Side by side (group {comparison.group_id}):"]
    width = max(len(m.role) for m in comparison.members)
    for m in comparison.members:
        lines.append(f"  {m.role:<{width}}  pass rate {_rate(m)}; cost {_cost(m.cost_usd)}")
    lines += [f"  {_difference(p)}" for p in comparison.pairs]
    return lines


def render_group_markdown(comparison: GroupComparison) -> str:
    """The group as a markdown report: members, specs in rows, the pairwise differences."""
    roles = [m.role for m in comparison.members]
    out = [f"# Side by side: group `{comparison.group_id}`", ""]
    out += [
        "The same specs and seeds, run against each bot. Each pass rate is over the conversations that passed or "
        "failed because of the bot, with its 95% Wilson interval; pass^k is at the batches' trials.",
        "",
    ]
    out += table_lines(
        ["Bot", "Runs", "Batch", "Pass rate", "pass^k", "Cost", "Mean reply"],
        [
            [
                m.role,
                m.bot,
                f"`{m.batch.id[:12]}`",
                _rate(m),
                "-" if m.pass_k is None else percent(m.pass_k),
                _cost(m.cost_usd),
                "-" if m.mean_latency_s is None else f"{m.mean_latency_s:.3f} s",
            ]
            for m in comparison.members
        ],
    )
    out += ["", "## Differences", ""]
    out += [
        "Every two bots compared on the pairs both ran (same spec, same trial, same seed): the exact McNemar test "
        "on the pairs that passed with one and failed with the other.",
        "",
    ]
    out += table_lines(
        ["Bots", "Pairs", "Passed only with the first", "Passed only with the second", "p", "Verdict"],
        [
            [f"{p.first} / {p.second}", p.matched, p.test.regressions, p.test.fixes, f"{p.test.p_value:.3g}", _difference(p)]
            for p in comparison.pairs
        ],
    )
    out += ["", "## Specs", ""]
    out += [f"One mark per trial: {MARKS_LEGEND}", ""]
    out += table_lines(
        ["Spec", *roles, ""],
        [[cell(s.spec_id), *(_cell(o) for o in s.outcomes), "differs" if s.differs else ""] for s in comparison.specs],
    )
    return "\n".join(out) + "\n"


def render_group_html(comparison: GroupComparison) -> str:
    """The group as one self-contained HTML page (parley.core.reports.html_page): the markdown's tables."""
    members = table(
        ["Bot", "Batch", "Pass rate", "pass^k", "Cost"],
        [
            [
                esc(m.role),
                f"<code>{esc(m.batch.id[:12])}</code>",
                esc(_rate(m)),
                esc("-" if m.pass_k is None else percent(m.pass_k)),
                esc(_cost(m.cost_usd)),
            ]
            for m in comparison.members
        ],
    )
    pairs = table(
        ["Bots", "Pairs", "Passed only with the first", "Passed only with the second", "p", "Verdict"],
        [
            [
                esc(f"{p.first} / {p.second}"),
                str(p.matched),
                str(p.test.regressions),
                str(p.test.fixes),
                f"{p.test.p_value:.3g}",
                esc(_difference(p)),
            ]
            for p in comparison.pairs
        ],
    )
    specs = table(
        ["Spec", *(esc(m.role) for m in comparison.members)],
        [[esc(s.spec_id), *(esc(_cell(o)) for o in s.outcomes)] for s in comparison.specs],
    )
    header = f"<header><h1>Side by side: group <code>{esc(comparison.group_id)}</code></h1></header><main>"
    return "".join(
        [
            page_start(f"parley group {comparison.group_id[:12]}", header),
            section(
                "bots",
                "The bots",
                "<p>The same specs and seeds, run against each bot; pass rates with their 95% Wilson interval.</p>",
                members,
            ),
            section("differences", "Differences", "<p>Every two bots on the pairs both ran: the exact McNemar test.</p>", pairs),
            section("specs", "Specs", f"<p>{esc(MARKS_LEGEND)}</p>", specs),
            page_end(),
        ]
    )
