"""summarize(): the numbers a report shows, checked against values worked out by hand."""

from __future__ import annotations

import math

import pytest

from parley.core.errors import ParleyError
from parley.core.evaluation import pass_hat_k_from_counts
from parley.core.evaluation.pass_k import pass_hat_k
from parley.core.reports.stats import summarize
from tests.test_store_fixtures import batch, build_scored_batch, conversation, spec, store, verdict  # noqa: F401


def test_pass_hat_k_from_counts_leaves_out_specs_with_too_few_trials():
    counts = {"a": (2, 3), "b": (3, 3), "c": (1, 2), "d": (0, 1)}
    assert pass_hat_k_from_counts(counts, 1) == pytest.approx((2 / 3 + 1 + 1 / 2 + 0) / 4)
    assert pass_hat_k_from_counts(counts, 2) == pytest.approx((1 / 3 + 1 + 0) / 3)  # d has one trial
    assert pass_hat_k_from_counts(counts, 3) == pytest.approx((0 + 1) / 2)
    assert pass_hat_k_from_counts(counts, 4) is None
    assert pass_hat_k_from_counts({"x": (4, 5)}, 2) == pytest.approx(math.comb(4, 2) / math.comb(5, 2))
    with pytest.raises(ValueError):
        pass_hat_k_from_counts(counts, 0)


def test_the_summary_uses_the_shared_pass_k_helper(store):
    s = summarize(store, build_scored_batch(store).id)
    judged = {"track_order#0": [True, True, False], "cancel_recent#1": [True, True, True], "track_order#2": [False, True]}
    assert s.pass_k[1].value == pytest.approx(pass_hat_k(judged, 2))


def test_totals_separate_infrastructure_and_judge_errors_from_failures(store):
    b = build_scored_batch(store)
    s = summarize(store, b.id)
    assert (s.planned, s.done) == (12, 12)
    assert (s.passed, s.failed, s.errors, s.evaluation_errors, s.unevaluated) == (6, 3, 1, 1, 1)
    assert (s.infrastructure_errors, s.bot_errors, s.unverified, s.user_faults) == (1, 0, 0, 0)
    assert s.judge_errors == 1
    assert s.pass_rate == pytest.approx(6 / 9) and s.pass_rate_denominator == 9
    assert "infrastructure errors, cancelled runs, evaluation errors and unevaluated" in s.pass_rate_basis
    # the pass rate's 95% Wilson interval, worked out by hand for 6 of 9
    assert (round(s.pass_rate_interval.low, 4), round(s.pass_rate_interval.high, 4)) == (0.3542, 0.8794)
    assert s.pass_rate_interval.method == "wilson"


def test_a_failed_judge_is_a_judge_error_not_a_score(store):
    b = store.create_batch(batch())
    conv = conversation()
    v = verdict(conv, "passed", None)
    v.judge.error = "judge timed out"
    store.save_conversation(b.id, spec(), conv, v)
    s = summarize(store, b.id)
    assert (s.passed, s.judge_errors, s.evaluation_errors) == (1, 1, 0)
    assert s.score_statistics.count == 0 and s.score_distribution == {"score_1": 0, "score_2": 0, "score_3": 0}


def test_pass_k_per_trial_count(store):
    s = summarize(store, build_scored_batch(store).id)
    # judged (passed, trials) per spec: (2,3) (3,3) (1,2) (0,1)
    assert [p.k for p in s.pass_k] == [1, 2, 3]
    assert s.pass_k[0].value == pytest.approx((2 / 3 + 1 + 1 / 2 + 0) / 4) and s.pass_k[0].specs == 4
    assert s.pass_k[1].value == pytest.approx((1 / 3 + 1 + 0) / 3) and s.pass_k[1].specs == 3
    assert s.pass_k[2].value == pytest.approx(0.5) and s.pass_k[2].specs == 2


def test_score_statistics_and_distribution(store):
    s = summarize(store, build_scored_batch(store).id)
    scores = [3] * 6 + [2] + [1] * 2
    st = s.score_statistics
    assert st.count == 9 and (st.min, st.max) == (1, 3)
    assert st.mean == pytest.approx(22 / 9) and st.median == 3.0
    mean = 22 / 9
    assert st.std == pytest.approx(math.sqrt(sum((x - mean) ** 2 for x in scores) / 8))  # sample std
    assert s.score_distribution == {"score_1": 2, "score_2": 1, "score_3": 6}


def test_per_profile_rows(store):
    s = summarize(store, build_scored_batch(store).id)
    by_name = {p.name: p for p in s.profiles}
    assert [p.name for p in s.profiles] == ["cancel_recent", "track_order"]
    t = by_name["track_order"]
    assert (t.runs, t.passed, t.failed, t.apart, t.errors) == (6, 3, 2, 0, 1)
    assert t.pass_rate == pytest.approx(3 / 5) and t.mean_score == pytest.approx(12 / 5)
    c = by_name["cancel_recent"]
    assert (c.runs, c.passed, c.failed, c.apart, c.errors) == (6, 3, 1, 2, 0)  # apart: a judge error and an unevaluated run
    assert c.pass_rate == pytest.approx(3 / 4) and c.mean_score == pytest.approx(10 / 4)
    assert t.mean_turns > 0


def test_an_unknown_price_makes_the_role_and_the_total_unknown_never_zero(store):
    s = summarize(store, build_scored_batch(store).id)
    usage = {u.role: u for u in s.usage}
    assert list(usage) == ["bot", "user", "judge"]
    assert (usage["bot"].input_tokens, usage["bot"].output_tokens, usage["bot"].calls) == (1200, 240, 24)
    assert usage["bot"].cost_usd is None
    assert usage["user"].cost_usd == pytest.approx(0.006)
    assert usage["judge"].cost_usd == pytest.approx(0.02) and usage["judge"].input_tokens == 3000
    assert s.total_usage.cost_usd is None
    assert s.total_usage.input_tokens == 1200 + 120 + 3000


def test_known_prices_add_up(store):
    s = summarize(store, build_scored_batch(store, unknown_bot_cost=False).id)
    assert {u.role: round(u.cost_usd, 6) for u in s.usage} == {"bot": 0.024, "user": 0.006, "judge": 0.02}
    assert s.total_usage.cost_usd == pytest.approx(0.05)


def test_stop_reasons_failures_and_policy_violations(store):
    s = summarize(store, build_scored_batch(store).id)
    assert s.stop_reasons == {"user_stop": 10, "max_turns": 1, "infrastructure_error": 1}
    assert s.policy_violations_total == 1
    (v,) = s.policy_violations
    assert (v.spec_id, v.trial, v.check) == ("cancel_recent#3", 2, "ORD-1004 unchanged")
    assert "14 days ago" in v.reason
    assert s.failures_total == 6  # 3 failed + 1 infrastructure error + 1 judge error + 1 not evaluated
    reasons = {(f.spec_id, f.trial): f for f in s.failures}
    assert reasons[("track_order#0", 3)].reasons == ["bot tracks the order: track_order was never called"]
    assert reasons[("track_order#2", 2)].outcome == "infrastructure_error"
    assert reasons[("track_order#2", 2)].reasons == ["provider 503 after 3 retries"]
    assert "judge_error" in reasons[("cancel_recent#3", 1)].reasons[0]
    assert {(c.name, c.count) for c in s.failed_checks} == {("bot tracks the order", 2), ("ORD-1004 unchanged", 1)}


def test_listed_failures_are_capped_but_counted(store):
    s = summarize(store, build_scored_batch(store).id, max_listed=2)
    assert len(s.failures) == 2 and s.failures_total == 6


def test_bot_latency_per_turn(store):
    s = summarize(store, build_scored_batch(store).id)
    lat = s.bot_latency
    assert lat is not None and lat.turns > 12
    assert 0 <= lat.min_s <= lat.mean_s <= lat.max_s


def test_an_empty_batch_summarizes_without_numbers_made_up(store):
    b = store.create_batch(batch(planned=3))
    s = summarize(store, b.id)
    assert (s.done, s.pass_rate, s.score_statistics.mean, s.bot_latency) == (0, None, None, None)
    assert s.pass_k[0].value is None and s.usage == [] and s.total_usage.cost_usd == 0.0
    with pytest.raises(ParleyError, match="no batch"):
        summarize(store, "missing-batch")


def test_batches_do_not_leak_into_each_other(store):
    build_scored_batch(store)
    other = store.create_batch(batch())
    conv = conversation()
    store.save_conversation(other.id, spec(), conv, verdict(conv, "failed", 1))
    s = summarize(store, other.id)
    assert (s.done, s.passed, s.failed) == (1, 0, 1) and s.score_distribution["score_1"] == 1
