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


def test_random_is_seeded():
    assert np.array_equal(A.random_allocate(10, 30, 5), A.random_allocate(10, 30, 5))
    assert not np.array_equal(A.random_allocate(10, 30, 5), A.random_allocate(10, 30, 6))


def test_length_proportional():
    assert A.proportional_allocate([10, 30], 8).tolist() == [2, 6]


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
