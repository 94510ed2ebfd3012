"""The markdown report: sections in order, policy violations first, a histogram, unknown cost."""

from __future__ import annotations

import re

from parley.core.evaluation import PassAtK
from parley.core.reports.markdown import histogram, rates_line, render_markdown
from parley.core.reports.stats import summarize
from parley.core.store.store import Store
from tests.test_store_fixtures import batch, build_scored_batch, conversation, spec, store, verdict  # noqa: F401

SECTIONS = [
    "## Policy violations",
    "## Totals",
    "## Pass rate",
    "## Scores",
    "## Per profile",
    "## Tokens and cost",
    "## Stop reasons",
    "## Failures",
]


def _headings(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("## ")]


def test_sections_come_in_order_with_policy_violations_first(store):
    b = build_scored_batch(store)
    text = render_markdown(summarize(store, b.id))
    headings = _headings(text)
    assert headings[0] == "## Policy violations"
    positions = [headings.index(s) for s in SECTIONS]
    assert positions == sorted(positions)
    title = text.splitlines()[0]
    assert title.startswith("# ") and b.id in title
    head = text.split("## Policy violations")[0]
    assert "`profiles/track_order.yaml`" in head and "bot `offline`, user `offline`, judge `offline`" in head


def test_a_violation_is_listed_with_its_reason_before_anything_else(store):
    b = build_scored_batch(store)
    text = render_markdown(summarize(store, b.id))
    section = text.split("## Policy violations")[1].split("## Totals")[0]
    assert "**1 policy violation(s)**" in section
    assert "| cancel_recent#3 | 2 |" in section and "ORD-1004 was cancelled though placed 14 days ago" in section


def test_no_violation_says_none(store):
    b = store.create_batch(batch())
    conv = conversation()
    store.save_conversation(b.id, spec(), conv, verdict(conv))
    section = render_markdown(summarize(store, b.id)).split("## Policy violations")[1].split("##")[0]
    assert section.strip() == "None."


def test_totals_pass_rate_and_pass_k_table(store):
    text = render_markdown(summarize(store, build_scored_batch(store).id))
    # planned, done, passed, failed, bot errors, unverified, user faults, errors, evaluation errors, judge errors
    assert "| 12 | 12 | 6 | 3 | 0 | 0 | 0 | 1 | 1 | 1 |" in text
    assert "**66.7%** (6 of 9, 95% interval 35.4-87.9%)" in text
    # pass^k with its seeded bootstrap interval over the 4, 3 and 2 specs that have k judged trials
    assert "| 1 | 54.2% | 16.7-87.5% | 4 |" in text
    assert "| 2 | 44.4% | 0.0-100.0% | 3 |" in text and "| 3 | 50.0% | 0.0-100.0% | 2 |" in text


def test_flaky_specs_are_listed_most_evenly_split_first(store):
    text = render_markdown(summarize(store, build_scored_batch(store).id))
    flaky = text.split("## Flaky specs")[1].split("##")[0]
    assert flaky.index("| track_order#2 | 2 | 1 | 1 | 1 |") < flaky.index("| track_order#0 | 3 | 2 | 1 | 0 |")
    assert "cancel_recent" not in flaky  # its judged trials agree


def test_scores_have_statistics_and_a_text_histogram(store):
    text = render_markdown(summarize(store, build_scored_batch(store).id))
    scores = text.split("## Scores")[1].split("## Per profile")[0]
    assert "| 9 | 2.44 | 3.0 | 0.88 | 1 | 3 |" in scores
    bars = re.findall(r"^([123]) \| (█*) ?(\d+)$", scores, re.MULTILINE)
    assert [(s, int(n)) for s, _, n in bars] == [("3", 6), ("2", 1), ("1", 2)]
    widths = {s: len(bar) for s, bar, _ in bars}
    assert widths["3"] == 30 and widths["3"] > widths["1"] > widths["2"] > 0


def test_histogram_scales_and_shows_empty_scores():
    assert histogram({3: 12, 2: 0, 1: 3}, width=8) == ["3 | ████████ 12", "2 | 0", "1 | ██ 3"]


def test_profiles_cost_and_failures(store):
    text = render_markdown(summarize(store, build_scored_batch(store).id))
    # runs, passed, failed, bot errors, apart, errors (its one run that broke)
    assert "| track_order | 6 | 3 | 2 | 0 | 0 | 1 | 60.0% of 5 | 23.1-88.2% | 2.40 | " in text
    cost = text.split("## Tokens and cost")[1].split("##")[0]
    assert "| bot | offline | 24 | 1200 | 240 | unknown |" in cost
    assert "| user | scripted | 12 | 120 | 60 | $0.0060 |" in cost
    assert "| total | - |" in cost and cost.count("unknown") >= 2 and "$0.0000" not in cost
    assert "| user_stop | 10 |" in text and "| max_turns | 1 |" in text
    failures = text.split("## Failures")[1]
    assert "- `track_order#0` trial 3" in failures
    assert "  - bot tracks the order: track_order was never called" in failures
    assert "  - provider 503 after 3 retries" in failures


def test_the_same_batch_renders_to_the_same_text(tmp_path):
    path = tmp_path / "r.db"
    with Store.open(path) as s:
        b = build_scored_batch(s)
        first = render_markdown(summarize(s, b.id))
    with Store.open(path) as s:
        assert render_markdown(summarize(s, b.id)) == first
    assert "2026-11-21T09:00:00+00:00" in first  # the batch's own times, nothing else


def test_pipes_in_reasons_do_not_break_tables(store):
    b = store.create_batch(batch())
    conv = conversation()
    from tests.test_store_fixtures import check

    v = verdict(conv, "failed", 1, checks=[check("a|b", "fail", "x | y\nz", violation=True)])
    store.save_conversation(b.id, spec(), conv, v)
    section = render_markdown(summarize(store, b.id)).split("## Policy violations")[1].split("## Totals")[0]
    row = [line for line in section.splitlines() if "a\\|b" in line][0]
    assert row.count(" | ") == 4 and "x \\| y z" in row


def test_the_apps_rates_line_stays_one_line_with_many_trials(store):
    # The Batches pane shows this under the list: pass^k at the batch's own k, not a figure for
    # every k (a batch of --trials 100 filled the pane with 99 of them).
    b = build_scored_batch(store)
    summary = summarize(store, b.id)
    line = rates_line(summary)
    assert "pass rate" in line and "pass^3" in line and "pass^2" not in line  # the fixture ran 3 trials
    hundred = summary.model_copy(update={"pass_k": [PassAtK(k=k, value=1.0, specs=4) for k in range(1, 101)]})
    line = rates_line(hundred)
    assert "pass^100 100.0%" in line and "pass^2 " not in line and "pass^99" not in line
    assert len(line) < 160
