"""Allocators: exact budgets, optimality against brute force, equality with the naive greedy."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uab_cli import allocation as A
from uab_cli.errors import UabError

probs = st.lists(st.sampled_from([0.0, 1.0, 0.5, 0.1, 0.9, 1e-17]) | st.floats(0, 1), min_size=1, max_size=8)


def objective(p, e, offset):
    """Σ[1 − (1 − p)^(e + offset)]: coverage of Phase-2 samples (Algorithm 1) or of all samples."""
    return float(np.sum(1 - np.power(1 - np.asarray(p), np.asarray(e) + offset)))


def brute_force(p, budget, offset):
    best = -1.0
    for e in itertools.product(range(budget + 1), repeat=len(p)):
        if sum(e) == budget:
            best = max(best, objective(p, e, offset))
    return best


@settings(max_examples=300, deadline=None)
@given(p=probs, budget=st.integers(0, 30), gain=st.sampled_from(["algorithm1", "coverage"]))
def test_uab_matches_naive_greedy_and_spends_exactly(p, budget, gain):
    fast = A.uab_allocate(p, budget, gain)
    assert fast.sum() == budget and fast.min() >= 0
    assert np.array_equal(fast, A.greedy_allocate(p, budget, gain))


@settings(max_examples=150, deadline=None)
@given(p=st.lists(st.floats(0, 1), min_size=1, max_size=4), budget=st.integers(0, 7),
       gain=st.sampled_from(["algorithm1", "coverage"]))
def test_uab_reaches_brute_force_optimum(p, budget, gain):
    offset = A.GAINS[gain]
    e = A.uab_allocate(p, budget, gain)
    assert objective(p, e, offset) >= brute_force(p, budget, offset) - 1e-12


tiny = st.sampled_from([5e-324, 1e-310, 1e-300, 3e-300, 1e-200, 1e-100, 1e-17, 1.0 - 1e-16, 0.0, 1.0, 0.5])


@settings(max_examples=150, deadline=None)
@given(p=st.lists(tiny | st.floats(0, 1), min_size=1, max_size=4), budget=st.integers(0, 7),
       gain=st.sampled_from(["algorithm1", "coverage"]))
def test_uab_at_extreme_p_is_the_greedy_and_the_optimum(p, budget, gain):
    e = A.uab_allocate(p, budget, gain)
    assert np.array_equal(e, A.greedy_allocate(p, budget, gain))
    assert objective(p, e, A.GAINS[gain]) >= brute_force(p, budget, A.GAINS[gain]) - 1e-12


@pytest.mark.parametrize("p", [[1e-300, 1e-300], [1e-100, 1e-100, 0.5], [1e-200, 3e-200, 1e-300, 0.2, 1.0, 0.0]])
def test_uab_with_p_below_float_resolution_takes_a_large_budget_at_once(p):
    """Below p ≈ 1e-16, 1 - p rounds to 1 and the gain p(1-p)^e is constant: the count guess from
    logarithms said 0 units where the answer was the whole budget, and the correction stepped
    one unit per round (16 s at 10^5 units, a hang at 10^7)."""
    e = A.uab_allocate(p, 200_000)
    assert np.array_equal(e, A.greedy_allocate(p, 200_000))
    e = A.uab_allocate(p, 10**12)
    assert e.sum() == 10**12 and e.min() >= 0


def test_gains_below_float_resolution_that_differ_in_the_twelfth_digit_are_not_ties():
    """p below ~1e-16 has a constant gain: 10^5 units or more fall in one narrow window of gains,
    which is bisected down to one gain before the ties are shared. Here the middle question's gain
    is larger by 1e-12 (relative): it takes units up to its cap, and only the rest is shared."""
    p = [1e-20, 1e-20 * (1 + 1e-12), 1e-20]
    assert A.uab_allocate(p, 300_000, max_extra=200_000).tolist() == [50_000, 200_000, 50_000]


@pytest.mark.parametrize("p,expected", [([0.5, 2.0**-65], [65, 149_935]), ([2.0**-65, 0.5], [149_935, 65])])
def test_a_gain_that_ties_a_constant_tiny_gain_exactly_is_counted_by_the_float_gains(p, expected):
    """p = 0.5's 65th unit has the gain 2^-65, which p = 2^-65's every unit has: the window is
    bisected to that one gain, and just below it the count from logarithms says 64 units where the
    float gains have 65 (only the check against them sees it). By the greedy's tie-break p = 0.5
    takes 65 units."""
    assert A.uab_allocate(p, 150_000).tolist() == expected


def test_a_count_guessed_at_exactly_two_to_the_63_is_the_whole_budget():
    """At this p the closed-form count of units with a gain above 0 is the float 2^63, which is
    the cap 2^63 - 1 as a float but no int64: it must stay the cap, not be cast (a warning and a
    bisection over a wrapped range)."""
    assert A.uab_allocate([7.668923021919598e-17], 2**63 - 1).tolist() == [2**63 - 1]


@pytest.mark.parametrize("allocate", [lambda b: A.uab_allocate([], b), lambda b: A.uniform_allocate(0, b),
                                      lambda b: A.judge_allocate([], b), lambda b: A.proportional_allocate([], b)])
def test_zero_questions_take_no_budget(allocate):
    """The budget contract at M = 0: no budget is an empty allocation, a budget an error."""
    assert allocate(0).tolist() == []
    with pytest.raises(UabError, match="cannot spend a budget on zero questions"):
        allocate(1)


@pytest.mark.parametrize("allocate", [lambda p, b: A.uab_allocate(p, b), lambda p, b: A.uniform_allocate(len(p), b)])
def test_a_budget_whose_counts_overflow_64_bits_is_an_error(allocate):
    """M questions can each take the whole Phase-2 budget: M times it must fit in 64 bits (at
    2^62 over two questions each question got 2^63 - 1078, summing to twice the budget)."""
    with pytest.raises(UabError, match="too large"):
        allocate([0.5, 0.5], 2**62)
    assert allocate([0.5, 0.5], 2**61).tolist() == [2**60, 2**60]
    assert allocate([0.5], 2**63 - 1).tolist() == allocate([1e-300], 2**63 - 1).tolist() == [2**63 - 1]


@settings(max_examples=150, deadline=None)
@given(p=probs, budget=st.integers(0, 25), cap=st.integers(0, 6))
def test_caps_are_respected_and_budget_exact(p, budget, cap):
    if cap * len(p) < budget:
        with pytest.raises(UabError, match="max-per-question"):
            A.uab_allocate(p, budget, max_extra=cap)
        return
    for e in (A.uab_allocate(p, budget, max_extra=cap), A.uniform_allocate(len(p), budget, cap),
              A.random_allocate(len(p), budget, 3, cap), A.proportional_allocate(range(len(p)), budget, cap),
              A.judge_allocate([i % 2 == 0 for i in range(len(p))], budget, cap)):
        assert e.sum() == budget and e.max(initial=0) <= cap
    assert np.array_equal(A.uab_allocate(p, budget, max_extra=cap), A.greedy_allocate(p, budget, max_extra=cap))


@settings(max_examples=100, deadline=None)
@given(p=probs, budget=st.integers(0, 30), theta=st.floats(0, 1), kind=st.sampled_from(["hard", "easy"]))
def test_threshold_exits(p, budget, theta, kind):
    p = np.asarray(p)
    e, saved = A.threshold_exit(p, budget, kind, theta, "redistribute")
    assert e.sum() == budget and saved == 0
    exited = p < theta if kind == "hard" else p > theta
    if (~exited).any():
        assert e[exited].sum() == 0
    e, saved = A.threshold_exit(p, budget, kind, theta, "skip")
    assert e.sum() + saved == budget and e[exited].sum() == 0
    assert np.array_equal(e[~exited], A.uab_allocate(p, budget)[~exited])


@settings(max_examples=100, deadline=None)
@given(p=probs, budget=st.integers(0, 25), cap=st.integers(0, 6), theta=st.floats(0, 1),
       kind=st.sampled_from(["hard", "easy"]))
def test_exits_and_judge_give_way_only_as_far_as_caps_force(p, budget, cap, theta, kind):
    # When the staying (hard) questions' caps cannot hold the budget they are filled to their
    # caps first; only the rest goes to the exited (easy) ones, never the whole exit dropped.
    if cap * len(p) < budget:
        return
    p = np.asarray(p)
    exited = p < theta if kind == "hard" else p > theta
    e, _ = A.threshold_exit(p, budget, kind, theta, "redistribute", max_extra=cap)
    j = A.judge_allocate(~exited, budget, cap)  # the exited as the judge's "easy" ones
    for alloc in (e, j):
        assert alloc.sum() == budget and alloc.max(initial=0) <= cap
        if alloc[exited].sum():
            assert (alloc[~exited] == cap).all()


def test_exit_short_of_room_fills_the_stayers_first():
    p, cap = np.array([0.9, 0.9, 0.1]), np.array([5, 5, 3])  # easy exit: questions 0 and 1 exit
    assert A.threshold_exit(p, 4, "easy", 0.7, max_extra=cap)[0].tolist() == [1, 0, 3]
    assert A.judge_allocate([False, False, True, True], 6, np.array([5, 5, 2, 2])).tolist() == [1, 1, 2, 2]


def test_hard_questions_get_more():
    e = A.uab_allocate([0.95, 0.5, 0.1], 9)
    assert e[2] > e[1] > e[0]


def test_algorithm1_and_coverage_gains_differ():
    # Algorithm 1 values the first Phase-2 sample of an easy question at p; the variant,
    # counting the Phase-1 sample, at p(1-p), so it moves budget to the harder question.
    assert A.uab_allocate([0.9, 0.5], 1, "algorithm1").tolist() == [1, 0]
    assert A.uab_allocate([0.9, 0.5], 1, "coverage").tolist() == [0, 1]


@pytest.mark.parametrize("p,budget,expected", [
    ([0.0, 0.0, 0.0], 7, [3, 2, 2]),         # all zero gain: round-robin by index
    ([1.0, 1.0], 5, [3, 2]),                 # one useful unit each, then ties
    ([1.0, 1.0, 0.0], 4, [2, 1, 1]),         # zero-gain ties from two levels: the lower level first
    ([0.3] * 4, 6, [2, 2, 1, 1]),            # all equal: level by level, lower index first
    ([0.4], 9, [9]),                         # M = 1
    ([0.2, 0.7], 0, [0, 0]),                 # N = 1: no Phase-2 budget
    ([1.0, 0.0, 0.5], 1, [1, 0, 0]),
])
def test_edge_cases(p, budget, expected):
    assert A.uab_allocate(p, budget).tolist() == expected
    assert A.greedy_allocate(p, budget).tolist() == expected


def test_large_allocation_equals_greedy():
    rng = np.random.default_rng(1)
    p = rng.random(2000)
    assert np.array_equal(A.uab_allocate(p, 6000), A.greedy_allocate(p, 6000))


def test_judge_easy_gets_nothing_remainder_round_robin():
    e = A.judge_allocate([False, True, True, False, True], 8)
    assert e.tolist() == [0, 3, 3, 0, 2]
    assert A.judge_allocate([False, False], 4).tolist() == [2, 2]  # nobody hard: uniform


def test_random_spends_a_huge_budget_without_an_array_of_units():
    """Beyond 2^24 units left, one multinomial draw (the same law): an array of 2^62 draws was a
    numpy traceback ("array is too big"); below, the seeds' streams are unchanged."""
    for m, budget in ((1, 2**63 - 1), (2, 2**62 - 1), (3, 2**40)):
        e = A.random_allocate(m, budget, 0)
        assert e.sum() == budget and e.min() >= 0
    assert A.random_allocate(3, 2**40, 0).min() > 2**38  # spread, not piled on one question
    assert A.random_allocate(4, 12, 5).tolist() == [2, 4, 3, 3]  # as before the multinomial


def test_random_draws_each_unit_up_to_the_limit_and_one_multinomial_past_it(monkeypatch):
    monkeypatch.setattr(A, "_UNIT_DRAWS", 12)
    per_unit = np.bincount(np.random.default_rng(5).choice(4, size=12), minlength=4)
    assert A.random_allocate(4, 12, 5).tolist() == per_unit.tolist() == [2, 4, 3, 3]
    assert A.random_allocate(4, 13, 5).tolist() == np.random.default_rng(5).multinomial(13, [0.25] * 4).tolist()


def test_random_is_seeded():
    assert np.array_equal(A.random_allocate(10, 30, 5), A.random_allocate(10, 30, 5))
    assert not np.array_equal(A.random_allocate(10, 30, 5), A.random_allocate(10, 30, 6))
    # units drawn for a full question are drawn again among the open ones only (the seeds' streams)
    assert A.random_allocate(6, 20, 1, np.array([0, 1, 2, 3, 9, 9])).tolist() == [0, 1, 2, 3, 5, 9]


def test_length_proportional():
    assert A.proportional_allocate([10, 30], 8).tolist() == [2, 6]
    # shares 2.4, 0.8, 0.8: the two units rounding down leaves go to the largest remainders (README),
    # not to the first questions in the file, as the official code gave them ([3, 1, 0])
    assert A.proportional_allocate([3, 1, 1], 4).tolist() == [2, 1, 1]
    # weights summing to at most 1 are still proportions; only all-zero weights share evenly
    assert A.proportional_allocate([0.25, 0.75], 8).tolist() == [2, 6]
    assert A.proportional_allocate([1, 0], 4).tolist() == [4, 0]
    assert A.proportional_allocate([0, 0], 4).tolist() == [2, 2]


@pytest.mark.parametrize("p", [[-0.1], [1.5], [float("nan")]])
def test_bad_probabilities(p):
    with pytest.raises(UabError):
        A.uab_allocate(p, 3)


def test_a_forfeit_exit_saves_each_exited_questions_even_share():
    """The official code's rule behind the paper's "% Saved": an exited question's N − 1 share is
    not drawn, the staying questions spend theirs by UAB; skip instead saves what UAB gave it."""
    p = np.array([0.9, 0.8, 0.3, 0.1, 0.5])
    budget = 3 * p.size  # N = 4
    e, saved = A.threshold_exit(p, budget, "easy", 0.7, "forfeit")
    assert saved == 6 and e[:2].sum() == 0 and np.array_equal(e[2:], A.uab_allocate(p[2:], 9))
    skipped, skip_saved = A.threshold_exit(p, budget, "easy", 0.7, "skip")
    assert skip_saved == A.uab_allocate(p, budget)[:2].sum() != saved
    for theta, kept in ((0.9, 3), (0.1, 0)):  # one question: it stays and keeps, or exits and forfeits, the budget
        e, saved = A.threshold_exit(np.array([0.5]), 3, "easy", theta, "forfeit")
        assert e.tolist() == [kept] and saved == 3 - kept


def test_the_official_hard_exit_test_exits_fewer_questions():
    """The official code's hard exit tests 1 − (1 − p)^N_max < θ (the chance of a right sample
    among N_max), not p < θ; its easy exit tests p > θ like the paper's."""
    p = np.array([0.1, 0.2, 0.3, 0.45, 0.6, 0.9])
    assert A.exiting(p, "hard", 0.5).tolist() == [True, True, True, True, False, False]
    assert A.exiting(p, "hard", 0.5, nmax=4).tolist() == [True, False, False, False, False, False]  # 1 − 0.9⁴ = 0.34
    assert A.exiting(p, "hard", 0.5, nmax=8).tolist() == [False] * 6  # 1 − 0.9⁸ = 0.57
    assert A.exiting(p, "easy", 0.7, nmax=4).tolist() == A.exiting(p, "easy", 0.7).tolist()
    for nmax, kept in ((None, [4, 5]), (4, [1, 2, 3, 4, 5])):
        for mode in A.EXIT_MODES:
            e, saved = A.threshold_exit(p, 12, "hard", 0.5, mode, nmax=nmax)
            assert e.sum() + saved == 12 and set(np.flatnonzero(e).tolist()) <= set(kept)
