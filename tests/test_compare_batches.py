"""`parley compare BASE NEW` on batches made to order: every kind of change in its place, the
paired test's numbers, specs and trials not in common, the gate's exit codes, and a batch
compared with itself."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from parley.core.reports.compare import compare_batches
from parley.core.reports.paired_test import mcnemar_exact, one_sided_p
from parley.core.store.store import Store
from parley.tui.cli.main import cli
from tests.comparison_fixtures import FAIL, PASS, Result, make_batch

CANCELLED = Result(outcome="error", score=None, stop_reason="cancelled", cost_usd=None)


def parley(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def db(tmp_path):
    return tmp_path / "parley.db"


def test_the_exact_mcnemar_test_counts_discordant_pairs_only():
    assert mcnemar_exact(0, 0).p_value == 1.0 and not mcnemar_exact(0, 0).beyond_noise
    one = mcnemar_exact(1, 0)
    assert (one.p_value, one.p_worse, one.worse_beyond_noise) == (1.0, 0.5, False)
    six = mcnemar_exact(6, 0)  # 2 / 2**6
    assert six.p_value == pytest.approx(0.03125) and six.beyond_noise and six.direction == "worse"
    split = mcnemar_exact(10, 2)  # 2 * (1 + 12 + 66) / 4096
    assert split.p_value == pytest.approx(2 * 79 / 4096) and split.worse_beyond_noise
    assert mcnemar_exact(2, 10).direction == "better" and not mcnemar_exact(2, 10).worse_beyond_noise
    assert one_sided_p(3, 0) == pytest.approx(1 / 8)


def test_every_kind_of_change_is_found_and_listed_most_important_first(db):
    base = {
        ("broke#0", 1): PASS,
        ("mended#0", 1): FAIL,
        ("aborted#0", 1): PASS,
        ("rescored#0", 1): Result(score=2),
        ("rechecked#0", 1): FAIL,
        ("same#0", 1): PASS,
        ("dropped#0", 1): PASS,
    }
    new = {
        ("broke#0", 1): Result(outcome="failed", score=1, failed=("bot says cancelled",)),
        ("mended#0", 1): PASS,
        ("aborted#0", 1): CANCELLED,
        ("rescored#0", 1): Result(score=3),
        ("rechecked#0", 1): Result(outcome="failed", score=1, failed=("ORD-1002 stays shipped",)),
        ("same#0", 1): PASS,
        ("added#0", 1): PASS,
    }
    with Store.open(db) as store:
        b = make_batch(store, base, minutes=1)
        n = make_batch(store, new, minutes=2)
        c = compare_batches(store, b.id[:8], "latest")

    assert [(ch.kind, ch.spec_id) for ch in c.changes] == [
        ("regression", "broke#0"),
        ("fix", "mended#0"),
        ("outcome_change", "aborted#0"),
        ("score_change", "rescored#0"),
        ("check_change", "rechecked#0"),
    ]
    broke = c.changes[0]
    assert broke.started_failing == ["bot says cancelled"] and broke.base.outcome == "passed" and broke.new.outcome == "failed"
    assert c.changes[1].stopped_failing == ["ORD-1001 ends cancelled"]
    assert c.changes[2].new.stop_reason == "cancelled"
    assert (c.changes[3].base.score, c.changes[3].new.score) == (2, 3)
    assert c.changes[4].started_failing == ["ORD-1002 stays shipped"] and c.changes[4].stopped_failing == ["ORD-1001 ends cancelled"]
    assert [s.spec_id for s in c.new_specs] == ["added#0"] and [s.spec_id for s in c.missing_specs] == ["dropped#0"]
    assert (c.common_specs, c.matched_pairs) == (6, 6)
    assert (c.paired_test.regressions, c.paired_test.fixes) == (1, 1)
    assert c.regressed_beyond_noise == []  # one regression against one fix: noise
    # pass rates over the 6 matched conversations: judged ones only (the cancelled run is left out)
    assert (c.base.pass_rate.successes, c.base.pass_rate.n) == (4, 6)
    assert (c.new.pass_rate.successes, c.new.pass_rate.n) == (3, 5)
    assert c.base.pass_rate.interval.method == "wilson" and c.base.pass_rate.interval.low < 4 / 6 < c.base.pass_rate.interval.high
    assert c.new.cost_usd is None and c.base.cost_usd == pytest.approx(0.007)  # one unknown price: unknown, not 0
    checks = {ch.check: (ch.started_failing, ch.stopped_failing) for ch in c.check_changes}
    assert checks == {"bot says cancelled": (1, 0), "ORD-1002 stays shipped": (1, 0), "ORD-1001 ends cancelled": (0, 2)}
    assert n.id == c.new.batch.id


def test_many_regressions_are_beyond_noise_and_a_spec_that_loses_every_trial_too(db):
    specs = [f"s{i}#0" for i in range(8)]
    with Store.open(db) as store:
        make_batch(store, {(s, 1): PASS for s in specs}, minutes=1)
        make_batch(store, {(s, 1): (FAIL if i < 6 else PASS) for i, s in enumerate(specs)}, minutes=2)
        many = compare_batches(store, "latest~1", "latest")
        # one spec, five trials: passed five times, then failed five times
        make_batch(store, {("flaky#0", t): PASS for t in range(1, 6)}, minutes=3, trials=5)
        make_batch(store, {("flaky#0", t): FAIL for t in range(1, 6)}, minutes=4, trials=5)
        own = compare_batches(store, "latest~1", "latest")
    assert many.paired_test.worse_beyond_noise and many.paired_test.p_worse == pytest.approx(1 / 64)
    assert many.regressed_beyond_noise == specs[:6]
    assert own.spec_regressions[0].regressions == 5 and own.spec_regressions[0].p_worse == pytest.approx(1 / 32)
    assert own.regressed_beyond_noise == ["flaky#0"]
    assert [p.k for p in own.base.pass_k] == [1, 2, 3, 4, 5] and own.base.pass_k[4].value == 1.0 and own.new.pass_k[0].value == 0.0


def test_different_sources_compare_on_common_specs_and_say_what_is_not_common(db):
    with Store.open(db) as store:
        make_batch(
            store,
            {("a#0", 1): PASS, ("b#0", 1): PASS, ("b#0", 2): PASS},
            minutes=1,
            sources=("profiles/a.yaml", "profiles/b.yaml"),
            trials=2,
        )
        make_batch(store, {("b#0", 1): PASS, ("c#0", 1): FAIL}, minutes=2, sources=("profiles/b.yaml", "profiles/c.yaml"))
    result = parley("compare", "latest~1", "latest", "--db", db)
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "Compared on the 1 conversations (1 specs) both batches ran" in out
    assert "the sources differ (only in the base: `profiles/a.yaml`; only in the new batch: `profiles/c.yaml`)" in out
    assert "1 spec(s) only in the base (1 conversations)" in out and "1 spec(s) only in the new batch (1 conversations)" in out
    assert "trials run by one side only: 1 in the base, 0 in the new batch" in out
    assert "## New specs (only in the new batch)" in out and "| c#0 | 1 | failed 1 |" in out
    assert "## Missing specs (only in the base)" in out and "| a#0 | 1 | passed 1 |" in out


def test_a_batch_compared_with_itself_shows_no_change_and_exits_0(db):
    with Store.open(db) as store:
        make_batch(store, {("a#0", 1): PASS, ("b#0", 1): FAIL})
    result = parley("compare", "latest", "latest", "--fail-on-regression", "--db", db)
    assert result.exit_code == 0, result.output
    assert "**No change**: a batch compared with itself." in result.stdout
    assert "## Regressions (passed → failed, bot_error, or user_fault with a failed check)\n\nNone." in result.stdout
    assert result.stderr.strip() == "no change"


def test_the_gate_fails_on_a_regression_beyond_noise_only(db):
    specs = [f"s{i}#0" for i in range(8)]
    with Store.open(db) as store:
        base = make_batch(store, {(s, 1): PASS for s in specs}, minutes=1)
        one = make_batch(store, {(s, 1): (FAIL if i == 0 else PASS) for i, s in enumerate(specs)}, minutes=2)
        six = make_batch(store, {(s, 1): (FAIL if i < 6 else PASS) for i, s in enumerate(specs)}, minutes=3)

    within = parley("compare", base.id, one.id, "--fail-on-regression", "--db", db)
    assert within.exit_code == 0, within.output
    assert "**Changed, within noise**: 1 regression, 0 fixes" in within.stdout and "No spec regressed beyond noise." in within.stdout
    assert "no regression beyond noise" in within.stderr

    strict = parley("compare", base.id, one.id, "--fail-on-regression", "--alpha", "1", "--db", db)
    assert strict.exit_code == 1 and "regressed beyond noise: s0#0" in strict.stderr

    beyond = parley("compare", base.id, six.id, "--fail-on-regression", "--db", db)
    assert beyond.exit_code == 1, beyond.output
    assert "**Worse, beyond noise**: 6 regressions, 0 fixes" in beyond.stdout
    assert "| s0#0 | 1 | failed | ORD-1001 ends cancelled |" in beyond.stdout

    informative = parley("compare", base.id, six.id, "--db", db)  # without the flag: a report, exit 0
    assert informative.exit_code == 0


def test_json_output_to_a_file_holds_every_change(db, tmp_path):
    with Store.open(db) as store:
        make_batch(store, {("a#0", 1): PASS, ("b#0", 1): PASS}, minutes=1)
        make_batch(store, {("a#0", 1): FAIL, ("b#0", 1): PASS}, minutes=2)
    target = tmp_path / "out" / "cmp.json"
    result = parley("compare", "latest~1", "latest", "--output", target, "--db", db)
    assert result.exit_code == 0 and result.stdout == ""
    assert f"wrote {target} (json)" in result.stderr
    data = json.loads(target.read_text())
    assert [c["kind"] for c in data["changes"]] == ["regression"]
    assert data["paired_test"]["method"].startswith("exact McNemar") and data["paired_test"]["regressions"] == 1
    assert data["base"]["pass_rate"]["value"] == 1.0 and data["new"]["pass_rate"]["value"] == 0.5


def test_an_unknown_batch_is_one_line_and_exit_1(db):
    with Store.open(db) as store:
        make_batch(store, {("a#0", 1): PASS})
    result = parley("compare", "latest", "feedfacecafe", "--db", db)
    assert result.exit_code == 1
    assert result.stderr.strip().startswith("error: no batch 'feedfacecafe'") and len(result.stderr.strip().splitlines()) == 1
    usage = parley("compare", "latest", "--db", db)
    assert usage.exit_code == 2
