"""The 95% intervals: Wilson's for a pass rate, a seeded bootstrap over specs for pass^k."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from property_settings import examples

from parley.core.evaluation import pass_hat_k_from_counts
from parley.core.evaluation.intervals import bootstrap_pass_hat_k, stats_seed, wilson_interval


@pytest.mark.parametrize(
    ("successes", "n", "low", "high"),
    [
        (8, 10, 0.4902, 0.9433),  # the textbook example
        (6, 9, 0.3542, 0.8794),
        (0, 3, 0.0, 0.5615),
        (4, 4, 0.5101, 1.0),
        (22, 22, 0.8513, 1.0),
    ],
)
def test_wilson_matches_worked_values(successes, n, low, high):
    interval = wilson_interval(successes, n)
    assert (round(interval.low, 4), round(interval.high, 4)) == (low, high)
    assert interval.method == "wilson" and interval.confidence == 0.95


def test_no_conversation_has_no_interval_and_nonsense_is_refused():
    assert wilson_interval(0, 0) is None
    with pytest.raises(ValueError):
        wilson_interval(5, 3)
    with pytest.raises(ValueError):
        wilson_interval(1, 2, confidence=1.5)


def test_a_wider_confidence_is_a_wider_interval():
    narrow, wide = wilson_interval(7, 10, confidence=0.8), wilson_interval(7, 10, confidence=0.99)
    assert wide.low < narrow.low < 0.7 < narrow.high < wide.high


@given(st.integers(0, 200).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))).filter(lambda t: t[1] > 0))
@settings(max_examples=examples(200))
def test_wilson_always_holds_the_observed_rate_inside_zero_and_one(pair):
    successes, n = pair
    interval = wilson_interval(successes, n)
    assert 0.0 <= interval.low <= successes / n <= interval.high <= 1.0


MIXED = {"a": (3, 3), "b": (2, 3), "c": (0, 3), "d": (1, 3), "e": (3, 3), "f": (1, 2)}


def test_the_bootstrap_is_seeded_the_same_batch_gives_the_same_interval():
    many = {f"s{i}": ((i * 7) % 4, 3) for i in range(40)}  # enough specs that resamples differ
    seed = stats_seed(7, "pass^2")
    first = bootstrap_pass_hat_k(many, 2, seed=seed)
    assert first == bootstrap_pass_hat_k(many, 2, seed=seed)
    others = {(i.low, i.high) for i in (bootstrap_pass_hat_k(many, 2, seed=stats_seed(s, "pass^2")) for s in range(6))}
    assert len(others) > 1  # the seed is what makes it repeatable: another batch's seed resamples otherwise
    assert first.method == "bootstrap"


@pytest.mark.parametrize("k", [1, 2, 3])
def test_the_bootstrap_holds_pass_hat_k(k):
    interval = bootstrap_pass_hat_k(MIXED, k, seed=1)
    value = pass_hat_k_from_counts(MIXED, k)
    assert 0.0 <= interval.low <= value <= interval.high <= 1.0
    assert interval.high - interval.low > 0.1  # six specs that disagree: far from certain


def test_specs_without_k_trials_are_left_out_and_none_means_no_interval():
    assert bootstrap_pass_hat_k({"a": (1, 1)}, 2, seed=1) is None
    only = bootstrap_pass_hat_k({"a": (1, 1), "b": (2, 2), "c": (0, 2)}, 2, seed=1)
    assert (only.low, only.high) == (0.0, 1.0)  # two specs, one all-pass, one all-fail


def test_all_specs_agreeing_gives_wilsons_interval_on_the_spec_count():
    interval = bootstrap_pass_hat_k({s: (3, 3) for s in "abcdefgh"}, 3, seed=1)
    assert interval.method == "wilson" and interval == wilson_interval(8, 8)


def test_many_specs_get_an_interval_around_their_rate():
    # how long it takes is bench/bench_summary.py's to measure (under 5 s for 10,000 specs)
    counts = {f"s{i}": (i % 4, 3) for i in range(10_000)}
    interval = bootstrap_pass_hat_k(counts, 1, seed=3)
    assert interval.low < 0.5 < interval.high
