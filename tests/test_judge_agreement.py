"""Agreement between a person and a judge: the confusion matrix, Cohen's kappa (weighted on a
rubric's 1-3) and its bootstrap interval, against values worked out by hand."""

from __future__ import annotations

import pytest

from parley.core.evaluation import agreement_share, bootstrap_kappa, cohen_kappa, confusion_matrix, kappa_of_pairs

CRITERIA = ("met", "not_met", "not_applicable")
RUBRIC = ("1", "2", "3")

# 10 labels (person first, judge second): 5 met/met, 1 met/not_met, 2 not_met/not_met, 1
# not_met/met, 1 n/a/n/a. Rows 6, 3, 1; columns 6, 3, 1.
# observed 8/10; expected (36 + 9 + 1) / 100 = 0.46; kappa (0.8 - 0.46) / 0.54 = 17/27.
CRITERION_PAIRS = (
    [("met", "met")] * 5
    + [("met", "not_met")]
    + [("not_met", "not_met")] * 2
    + [("not_met", "met")]
    + [("not_applicable", "not_applicable")]
)

# 9 scores: 2 each of 1/1, 2/2, 3/3, and 1/2, 2/3, 3/2 once. Rows 3, 3, 3; columns 2, 4, 3.
# Quadratic weights: 0.25 one apart, 1 two apart. Observed disagreement 0.75/9; expected
# (1/3 + 1 + 1/6 + 1/4 + 2/3 + 1/3) / 9 = 2.75/9; weighted kappa 1 - 0.75/2.75 = 8/11.
# Unweighted: observed 6/9, expected 27/81: kappa 1/2.
RUBRIC_PAIRS = [("1", "1")] * 2 + [("2", "2")] * 2 + [("3", "3")] * 2 + [("1", "2"), ("2", "3"), ("3", "2")]


def test_the_confusion_matrix_has_the_persons_labels_as_rows_and_the_judges_as_columns():
    assert confusion_matrix(CRITERION_PAIRS, CRITERIA) == [[5, 1, 0], [1, 2, 0], [0, 0, 1]]
    assert confusion_matrix(RUBRIC_PAIRS, RUBRIC) == [[2, 1, 0], [0, 2, 1], [0, 1, 2]]


def test_a_pair_outside_the_categories_is_refused():
    with pytest.raises(ValueError, match="'maybe'"):
        confusion_matrix([("met", "maybe")], CRITERIA)


def test_agreement_and_kappa_match_the_hand_computed_values():
    matrix = confusion_matrix(CRITERION_PAIRS, CRITERIA)
    assert agreement_share(matrix) == pytest.approx(0.8)
    assert cohen_kappa(matrix) == pytest.approx(17 / 27)


def test_the_rubric_takes_the_quadratic_weighted_kappa_where_a_near_miss_costs_less():
    assert kappa_of_pairs(RUBRIC_PAIRS, RUBRIC, weighted=True) == pytest.approx(8 / 11)
    assert kappa_of_pairs(RUBRIC_PAIRS, RUBRIC) == pytest.approx(1 / 2)


def test_kappa_is_undefined_when_the_person_used_one_label_only():
    assert kappa_of_pairs([("met", "met"), ("met", "not_met"), ("met", "met")], CRITERIA) is None
    assert kappa_of_pairs([], CRITERIA) is None
    assert agreement_share(confusion_matrix([], CRITERIA)) is None


def test_perfect_agreement_is_one_and_its_interval_cannot_spread():
    pairs = [("met", "met")] * 4 + [("not_met", "not_met")] * 3
    assert kappa_of_pairs(pairs, CRITERIA) == pytest.approx(1.0)
    assert bootstrap_kappa(pairs, CRITERIA, seed=3) == pytest.approx((1.0, 1.0))


def test_a_judge_that_always_says_the_opposite_is_below_chance():
    pairs = [("met", "not_met")] * 3 + [("not_met", "met")] * 3
    assert kappa_of_pairs(pairs, CRITERIA) == pytest.approx(-1.0)


def test_the_bootstrap_interval_holds_the_kappa_is_seeded_and_narrows_with_more_labels():
    kappa = kappa_of_pairs(CRITERION_PAIRS, CRITERIA)
    assert kappa is not None
    low, high = bootstrap_kappa(CRITERION_PAIRS, CRITERIA, seed=7) or (None, None)
    assert low is not None and high is not None
    assert -1.0 <= low < kappa < high <= 1.0
    assert bootstrap_kappa(CRITERION_PAIRS, CRITERIA, seed=7) == (low, high)  # the same pairs, the same interval
    wide = high - low
    low4, high4 = bootstrap_kappa(CRITERION_PAIRS * 4, CRITERIA, seed=7) or (0.0, 0.0)
    assert high4 - low4 < wide


def test_no_interval_when_the_person_used_one_label_only():
    assert bootstrap_kappa([("met", "met"), ("met", "not_met")] * 5, CRITERIA, seed=1, resamples=200) is None
