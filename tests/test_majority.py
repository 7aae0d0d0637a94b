"""Majority-vote allocator: A(n) by hand and by enumeration, DP vs brute force, greedy vs DP."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest
from conftest import cli, sampled, write_jsonl
from hypothesis import given, settings
from hypothesis import strategies as st

from uab_cli import allocation as A
from uab_cli import majority as MJ
from uab_cli.errors import UabError

MODELS = st.sampled_from(MJ.MODELS)
probs = st.lists(st.sampled_from([0.0, 1.0, 0.5, 0.1, 0.9, 0.6]) | st.floats(0, 1), min_size=1, max_size=4)


def enumerate_accuracy(p: float, n: int, model: str) -> float:
    """A(n) from every outcome of n samples: votes counted, a k-way tie won with probability 1/k."""
    total = 0.0
    for right in itertools.product((True, False), repeat=n):
        prob = math.prod(p if r else 1 - p for r in right)
        wrong = "W" if model == "plurality-2" else None
        votes = Counter("C" if r else (wrong or f"W{k}") for k, r in enumerate(right))
        top = max(votes.values(), default=0)
        tied = [a for a, c in votes.items() if c == top]
        total += prob * (1 / len(tied) if "C" in tied else 0.0)
    return total


def objective(p, e, model):
    return MJ.expected_accuracy(p, e, model)


def brute_force(p, budget, model, cap=None):
    hi = budget if cap is None else min(cap, budget)
    return max(objective(p, e, model) for e in itertools.product(range(hi + 1), repeat=len(p)) if sum(e) == budget)


def test_hand_checked_values():
    a = MJ.majority_gain_table([0.6], 5, "plurality-2")[0]
    assert a[:4] == pytest.approx([0.0, 0.6, 0.6**2 + 2 * 0.6 * 0.4 * 0.5, 0.648])
    assert a[4] == pytest.approx(a[3]) and a[5] == pytest.approx(0.68256)
    s = MJ.majority_gain_table([0.6], 3, "scatter")[0]
    # n=2: both right, or one right and a 2-way tie; n=3: ≥2 right, or one right in a 3-way tie
    assert s == pytest.approx([0.0, 0.6, 0.36 + 0.48 / 2, 0.648 + 3 * 0.6 * 0.16 / 3])


@pytest.mark.parametrize("model", MJ.MODELS)
@pytest.mark.parametrize("p", [0.0, 0.05, 0.3, 0.5, 0.6, 0.97, 1.0])
def test_table_matches_enumeration(model, p):
    table = MJ.majority_gain_table([p], 8, model)[0]
    assert table == pytest.approx([enumerate_accuracy(p, n, model) for n in range(9)], abs=1e-12)


@pytest.mark.parametrize("model", MJ.MODELS)
def test_table_is_stable_and_vectorised(model):
    p = np.array([0.0, 1e-12, 0.2, 0.5, 0.7, 1 - 1e-12, 1.0])
    table = MJ.majority_gain_table(p, 64, model)
    assert table.shape == (7, 65) and np.isfinite(table).all()
    assert table.min() >= 0 and table.max() <= 1 + 1e-12
    assert (table[:, 0] == 0).all() and (table[0] == 0).all() and (table[-1, 1:] == 1).all()
    # closed forms with exact binomials at n = 64
    n, q = 64, 0.7
    pmf = [math.comb(n, c) * q**c * (1 - q) ** (n - c) for c in range(n + 1)]
    want = sum(pmf[33:]) + pmf[32] / 2 if model == "plurality-2" else 1 - pmf[0] - pmf[1] + pmf[1] / n
    assert table[4, n] == pytest.approx(want, rel=1e-12)
    # blocks: a long input gives the same rows
    big = MJ.majority_gain_table(np.tile(p, 1500), 16, model)
    assert np.array_equal(big[-7:], MJ.majority_gain_table(p, 16, model))


def test_the_table_refuses_an_unknown_vote_model():
    with pytest.raises(UabError, match="vote model"):
        MJ.expected_accuracy([0.5], [1], "borda")


def test_plurality2_even_sample_adds_nothing():
    table = MJ.majority_gain_table(np.linspace(0, 1, 11), 20, "plurality-2")
    assert np.allclose(table[:, 2::2], table[:, 1:-1:2], atol=1e-14)


@settings(max_examples=200, deadline=None)
@given(p=probs, budget=st.integers(0, 6), model=MODELS, cap=st.none() | st.integers(0, 6))
def test_dp_reaches_brute_force_optimum(p, budget, model, cap):
    if cap is not None and cap * len(p) < budget:
        with pytest.raises(UabError, match="max-per-question"):
            MJ.majority_allocate(p, budget, model, "dp", cap)
        return
    e = MJ.majority_allocate(p, budget, model, "dp", cap)
    assert e.sum() == budget and e.min() >= 0 and (cap is None or e.max() <= cap)
    assert objective(p, e, model) >= brute_force(p, budget, model, cap) - 1e-9


@settings(max_examples=200, deadline=None)
@given(p=st.lists(st.floats(0, 1), min_size=1, max_size=40), per=st.integers(0, 5), model=MODELS,
       cap=st.none() | st.integers(1, 8), method=st.sampled_from(MJ.METHODS))
def test_exact_budget_caps_and_determinism(p, per, model, cap, method):
    budget = per * len(p) if cap is None else min(per, cap) * len(p)
    e = MJ.majority_allocate(p, budget, model, method, cap)
    assert e.dtype == np.int64 and e.sum() == budget and e.min(initial=0) >= 0
    assert cap is None or e.max(initial=0) <= cap
    assert np.array_equal(e, MJ.majority_allocate(list(p), budget, model, method, cap))


@settings(max_examples=200, deadline=None)
@given(p=st.lists(st.sampled_from([0.0, 1.0, 0.05, 0.5, 0.6]) | st.floats(0, 1), min_size=1, max_size=12),
       budget=st.integers(0, 40), model=MODELS)
def test_greedy_never_beats_dp_and_stays_close(p, budget, model):
    dp = objective(p, MJ.majority_allocate(p, budget, model, "dp"), model)
    greedy = objective(p, MJ.majority_allocate(p, budget, model, "greedy"), model)
    assert greedy <= dp + 1e-9
    assert dp - greedy <= 0.1


def test_auto_picks_dp_when_cheap_and_greedy_when_not():
    p = np.random.default_rng(0).random(30)
    assert np.array_equal(MJ.majority_allocate(p, 60), MJ.majority_allocate(p, 60, method="dp"))
    big = np.random.default_rng(1).random(3000)
    assert np.array_equal(MJ.majority_allocate(big, 9000), MJ.majority_allocate(big, 9000, method="greedy"))


@pytest.mark.parametrize(("limit", "cells", "expected"), [
    (2 * 6 * 7, 7 * 7, [3, 3]),  # M * budget * (top + 1) and (top + 1) * (budget + 1) both at the limits: the DP
    (2 * 6 * 7 - 1, 7 * 7, [4, 2]),  # one past either: the greedy
    (2 * 6 * 7, 7 * 7 - 1, [4, 2]),
])
def test_auto_runs_the_dp_up_to_its_limits_inclusive(limit, cells, expected, monkeypatch):
    monkeypatch.setattr(MJ, "DP_LIMIT", limit)
    monkeypatch.setattr(MJ, "DP_CELLS", cells)
    # every count ties (p = 0.5 and p = 1 never change): the DP shares evenly, the greedy does not
    assert MJ.majority_allocate([0.5, 1.0], 6).tolist() == expected


@pytest.mark.parametrize("model", MJ.MODELS)
@pytest.mark.parametrize("value", [0.0, 1.0])
def test_flat_questions_are_water_filled(model, value):
    # p = 0 or 1: every allocation ties; the greedy uses uab's tie-break (fewest, then lowest index)
    e = MJ.majority_allocate([value] * 5, 12, model, "greedy")
    assert np.array_equal(e, A.uniform_allocate(5, 12))
    d = MJ.majority_allocate([value] * 5, 12, model, "dp")
    assert d.sum() == 12 and d.max() - d.min() <= 1


@pytest.mark.parametrize("method", ["dp", "greedy"])
def test_all_equal_ties_are_deterministic_and_optimal(method):
    p = [0.6] * 4
    e = MJ.majority_allocate(p, 6, "plurality-2", method)
    assert np.array_equal(e, MJ.majority_allocate(p, 6, "plurality-2", method))
    assert objective(p, e, "plurality-2") == pytest.approx(brute_force(p, 6, "plurality-2"))


@pytest.mark.parametrize(("m", "budget", "cap", "expected"), [
    (3, 5, 2, [2, 1, 2]), (5, 12, None, [3, 2, 3, 2, 2]), (4, 7, np.array([1, 3, 3, 3]), [1, 2, 2, 2])])
def test_the_dp_breaks_ties_to_an_even_share_of_what_is_left(m, budget, cap, expected):
    # p = 1: every allocation ties; read back from the last question, each takes the count nearest
    # b / (i + 1) of the b left for questions 0..i, then the fewer samples
    assert MJ.majority_allocate([1.0] * m, budget, method="dp", max_extra=cap).tolist() == expected


def test_ties_that_float_sums_split_are_still_ties_past_a_total_of_one():
    # 1000 equal rows: every even split ties, but sums near 150 differ in their last bits
    e = MJ.allocate_values(np.tile(np.arange(4) * 0.1, (1000, 1)), 1500)
    assert np.bincount(e, minlength=3).tolist() == [0, 500, 500]


@pytest.mark.parametrize("method", MJ.METHODS)
def test_edge_cases(method):
    assert MJ.majority_allocate([0.3], 7, method=method).tolist() == [7]
    assert MJ.majority_allocate([0.3, 0.8], 0, method=method).tolist() == [0, 0]
    assert MJ.majority_allocate([0.3, 0.8, 0.5], 6, method=method, max_extra=2).tolist() == [2, 2, 2]
    assert MJ.majority_allocate([0.3, 0.8], 3, method=method, max_extra=np.array([0, 5])).tolist() == [0, 3]
    with pytest.raises(UabError, match="vote model"):
        MJ.majority_allocate([0.5], 1, model="borda", method=method)
    with pytest.raises(UabError, match="method"):
        MJ.majority_allocate([0.5], 1, method="magic")
    with pytest.raises(UabError):
        MJ.majority_allocate([1.5], 1, method=method)
    for phase1 in (0, np.array([2, 0])):  # a question with no Phase-1 sample
        with pytest.raises(UabError, match="at least one Phase-1 sample, got 0"):
            MJ.majority_allocate([0.3, 0.8], 3, method=method, phase1=phase1)


def test_majority_skips_hopeless_questions_that_coverage_feeds():
    # The issue: coverage pours samples into p = 0.05, where votes cannot flip the majority.
    p = [0.05, 0.6]
    assert A.uab_allocate(p, 4, "coverage")[0] >= 2
    for method in ("dp", "greedy"):
        assert MJ.majority_allocate(p, 4, "plurality-2", method).tolist() == [0, 4]


@pytest.mark.parametrize("method", ["dp", "greedy"])
def test_phase1_shifts_the_sample_count(method):
    p = [0.55, 0.7, 0.2]
    e = MJ.majority_allocate(p, 5, "scatter", method, phase1=3)
    assert e.sum() == 5
    if method == "dp":
        best = max(MJ.expected_accuracy(p, x, "scatter", phase1=3)
                   for x in itertools.product(range(6), repeat=3) if sum(x) == 5)
        assert MJ.expected_accuracy(p, e, "scatter", phase1=3) == pytest.approx(best)


@settings(max_examples=150, deadline=None)
@given(p=st.lists(st.sampled_from([0.0, 1.0, 0.5, 0.25, 0.75]) | st.floats(0, 1), min_size=1, max_size=4),
       budget=st.integers(0, 6), phase1=st.integers(1, 2), data=st.data())
def test_dp_with_per_question_caps_matches_enumeration(p, budget, phase1, data):
    # The oracle's call: per-question caps (what each pool holds) and K1 Phase-1 samples.
    cap = np.array(data.draw(st.lists(st.integers(0, 5), min_size=len(p), max_size=len(p))))
    if cap.sum() < budget:
        return
    e = MJ.majority_allocate(p, budget, "plurality-2", "dp", cap, phase1)
    assert e.sum() == budget and (e <= cap).all()

    def value(alloc):
        return sum(enumerate_accuracy(pi, phase1 + x, "plurality-2") for pi, x in zip(p, alloc))

    best = max(value(a) for a in itertools.product(*(range(c + 1) for c in cap)) if sum(a) == budget)
    assert value(e) == pytest.approx(best, abs=1e-9)


@pytest.mark.parametrize("method", ["dp", "greedy"])
def test_each_question_counts_the_phase1_samples_it_holds(method):
    # Files of a -K 1 and a -K 2 Phase 1 joined: A_i(phase1_i + e_i), not A_i(fewest + e_i) for all
    # (which takes two even totals, where plurality-2's last sample adds nothing).
    p, phase1 = [0.6] * 4, np.array([1, 2, 2, 1])
    e = MJ.majority_allocate(p, 10, "plurality-2", method, phase1=phase1)
    best = max(MJ.expected_accuracy(p, x, "plurality-2", phase1)
               for x in itertools.product(range(11), repeat=4) if sum(x) == 10)
    assert e.sum() == 10 and MJ.expected_accuracy(p, e, "plurality-2", phase1) == pytest.approx(best)
    assert ((phase1 + e) % 2 == 1).all()
    p, phase1 = [0.3, 0.6, 0.8, 0.55], np.array([1, 3, 2, 1])  # unequal questions: equal ones hid a misread row
    e = MJ.majority_allocate(p, 6, "plurality-2", method, phase1=phase1)
    best = max(MJ.expected_accuracy(p, x, "plurality-2", phase1)
               for x in itertools.product(range(7), repeat=4) if sum(x) == 6)
    assert e.sum() == 6 and MJ.expected_accuracy(p, e, "plurality-2", phase1) == pytest.approx(best)


def test_allocate_reads_each_records_phase1_samples(tmp_path):
    from uab_cli import pipeline
    from uab_cli.settings import Allocation

    records = [{"id": f"q{i}", "question": f"What is {i} + 1?",
                "samples": [{"index": j, "phase": 1, "text": "Answer: 1", "answer": "1", "anll": 0.1}
                            for j in range(k)]} for i, k in enumerate([1, 2, 2, 1])]
    pipeline.allocate(records, Allocation(4, "majority", temperature=0.2))  # p = exp(-0.5) ≈ 0.61 each
    totals = [len(r["samples"]) + r["extra"] for r in records]
    assert sum(totals) == 16 and all(n % 2 for n in totals)  # no even total: its last sample adds nothing


def test_allocate_refuses_a_record_already_above_max_per_question(tmp_path):
    # A -K 1 and a -K 3 file joined: the cap was checked against the fewest (1) only, so the
    # question holding 3 stayed above a cap of 2 without a word.
    path = tmp_path / "p1.jsonl"
    write_jsonl(path, [sampled(i, k) for i, k in enumerate([1, 1, 3, 1])])
    res = cli(["allocate", str(path), "-N", "2", "--max-per-question", "2", "--allocator", "uniform", "-q"])
    assert res.exit_code == 2 and f"{path}:3:" in res.stderr and "holds 3 Phase-1 samples" in res.stderr


GRID_P = [0.637, 0.27, 0.041, 0.8133, 0.9128, 0.6066, 0.7295, 0.5436, 0.9351, 0.5]
GRID = {  # (model, budget, method): the allocation before the closed-form table (unchanged)
    ("plurality-2", 9, "greedy"): [2, 1, 0, 2, 2, 0, 2, 0, 0, 0],
    ("plurality-2", 9, "auto"): [2, 0, 0, 2, 2, 0, 2, 0, 0, 1],
    ("plurality-2", 150, "greedy"): [34, 0, 0, 10, 4, 42, 18, 38, 4, 0],
    ("plurality-2", 150, "auto"): [34, 0, 0, 10, 4, 42, 18, 38, 4, 0],
    ("scatter", 30, "greedy"): [4, 8, 0, 2, 0, 4, 3, 4, 0, 5],
    ("scatter", 150, "greedy"): [7, 19, 83, 4, 3, 7, 5, 9, 3, 10],
    ("scatter", 150, "auto"): [7, 19, 83, 4, 3, 7, 5, 9, 3, 10],
}


@pytest.mark.parametrize(("model", "budget", "method"), list(GRID))
def test_allocations_are_those_of_the_quadratic_table(model, budget, method):
    assert MJ.majority_allocate(GRID_P, budget, model, method).tolist() == GRID[model, budget, method]


@pytest.mark.parametrize("model", MJ.MODELS)
@pytest.mark.parametrize("n", [10**5, 10**9])
def test_huge_n_is_bounded_and_puts_every_question_at_its_best(model, n):
    # Before: an (n x n) win table and O(n^2) recursion: out of memory at N = 10^5, killed at 10^9.
    p = np.array(GRID_P)
    e = MJ.majority_allocate(p, (n - 1) * p.size, model)
    assert e.sum() == (n - 1) * p.size and e.min() >= 0
    settled = MJ.settled(p, model) - 1
    hopeless = (p < 0.5) if model == "plurality-2" else (p == 0)
    assert (e[~hopeless] >= np.minimum(settled[~hopeless], n)).all()
    assert (e[hopeless] == 0).all()
    table = MJ.majority_gain_table(p, int(settled.max()) + 3, model)
    assert (table[:, -1] == table[np.arange(p.size), settled + 1]).all()  # settled: the row is constant after


@pytest.mark.parametrize("method", ["greedy", "auto"])
@pytest.mark.parametrize(("p", "budget", "cap", "expected"), [
    ([0.3, 0.9], 10**6, np.array([10**6, 5]), [10**6 - 5, 5]),  # p = 0.9 settles at 81 samples, capped at 5
    ([0.3, 0.9], 10**5, 10**5, [0, 10**5]),  # p = 0.9 takes it all: exactly what is left past each best count
    ([0.3, 0.9, 0.8], 10**5, np.array([10**5, 100, 10**5]), [0, 100, 99900]),  # shared within the caps
    ([0.3, 0.4], 10**5, 10**5, [50000, 50000]),  # no question's best is where it settles: shared evenly
    ([0.3, 0.9], 2 * 8728, 10**4, [7456, 10**4]),  # exactly the look-ahead (p = 0.3's settled count) each: p = 0.9 fills its cap
])
def test_a_budget_past_the_settled_counts_goes_where_it_loses_least(method, p, budget, cap, expected):
    # p = 0.3 only loses by more samples (its best is 0): it takes what the others cannot
    assert MJ.majority_allocate(p, budget, method=method, max_extra=cap).tolist() == expected


@pytest.mark.parametrize(("budget", "cap", "expected"), [
    (800, [10**6, 328], [800, 0]),  # the look-ahead (472 + 328) is exactly the budget
    (800, [10**6, 400], [800, 0]),  # ... or more
    (801, [800, 400], [800, 1]),  # p = 1 takes all it can, p = 0.01 only what is left
])
def test_the_greedy_spends_little_on_a_hopeless_question_when_its_look_ahead_cuts_a_settled_one(budget, cap, expected):
    # p = 0.01 settles at 473 samples: the greedy looks 472 ahead, so p = 1 (settled at once) is cut short
    # of its cap; it still takes samples past its cut, not p = 0.01 (more samples lose it accuracy)
    p = [1.0, 0.01]
    e = MJ.majority_allocate(p, budget, method="greedy", max_extra=np.array(cap))
    assert e.tolist() == expected
    dp = MJ.majority_allocate(p, budget, method="dp", max_extra=np.array(cap))
    assert MJ.expected_accuracy(p, e) == MJ.expected_accuracy(p, dp) == 1.01


def test_the_greedy_spends_no_sample_on_a_hopeless_question_where_the_others_tie():
    # [1, 75, 74, 150] ties (a second sample adds nothing under plurality-2, p = 0.99 has settled): the
    # greedy takes whole envelope segments first, so p = 0.4 (its best count is 0) gets none
    e = MJ.majority_allocate([0.4, 0.9, 0.99, 0.8], 300, method="greedy")
    assert e.tolist() == [0, 75, 75, 150]


def test_the_greedy_gives_a_tied_last_sample_to_the_earlier_question_though_that_fills_its_cap():
    # scatter: a second sample adds nothing (A(2) = A(1)); p = 0.7 takes its 2, the last sample ties
    # between p = 0.6 (capped at 1) and p = 0.1: fewer samples, then the earlier question, cap included
    e = MJ.majority_allocate([0.6, 0.1, 0.7], 3, "scatter", method="greedy", max_extra=np.array([1, 2, 2]))
    assert e.tolist() == [1, 0, 2]


@pytest.mark.parametrize(("p", "budget", "model", "cap", "phase1", "expected"), [
    ([0.4, 0.45], 12, "plurality-2", [8, 9], 2, [4, 8]),  # the exchange: the best taker is the best giver too
    ([0.01, 0.01], 294, "scatter", [187, 195], 1, [147, 147]),  # ... of two questions: the runner-up moves
    ([0.032, 0.162, 0.514], 42, "scatter", [42] * 3, 2, [0, 33, 9]),  # the last units: by gain per sample
])
def test_the_greedy_reaches_the_dps_allocation(p, budget, model, cap, phase1, expected):
    kw = dict(model=model, max_extra=np.array(cap), phase1=phase1)
    assert MJ.majority_allocate(p, budget, method="greedy", **kw).tolist() == expected
    assert MJ.majority_allocate(p, budget, method="dp", **kw).tolist() == expected


def test_the_exchange_moves_between_two_equal_questions():
    # both at 2 samples (an even count adds nothing): one gives its second sample to the other, which
    # leads both ways (the most to gain, the least to lose), so the runner-up gives or takes
    f = MJ._values(np.array([0.6, 0.6]), np.full(2, 2), 2, "plurality-2", np.ones(2, np.int64))
    assert MJ._exchange(f, np.array([1, 1])).tolist() == [0, 2]


def test_the_greedy_looks_past_its_default_width_when_most_questions_are_capped():
    # 998 of 1000 questions may draw nothing: the look-ahead grows until the two others can take the budget
    p = np.random.default_rng(0).random(1000) * 0.5 + 0.5
    cap = np.zeros(p.size, np.int64)
    cap[:2] = 10**4
    assert MJ.majority_allocate(p, 10**4, method="greedy", max_extra=cap).tolist() == [5000, 5000] + [0] * 998


def _oracle_like_values(rng, m: int, top: int) -> np.ndarray:
    """Rows like the oracle's: in [0, 1], not concave (flat stretches, then jumps), -inf past a room."""
    f = np.cumsum(rng.choice([0.0, 0.0, 0.0, 1.0], size=(m, top + 1)) * rng.random((m, top + 1)), axis=1)
    f[:, 0] = 0.0
    f /= max(f.max(), 1.0)
    room = rng.integers(0, top + 1, m)
    f[np.arange(top + 1)[None, :] > room[:, None]] = -np.inf
    return f


def _values_and_budget(rng, questions: tuple[int, int], top: tuple[int, int]):
    """Oracle-like values for a number of questions and a top count drawn from the ranges, and a budget they can take."""
    f = _oracle_like_values(rng, int(rng.integers(*questions)), int(rng.integers(*top)))
    return f, int(rng.integers(0, (np.isfinite(f).sum(axis=1) - 1).sum() + 1))


@pytest.mark.parametrize("seed", range(40))
def test_the_dp_band_reaches_the_whole_tables_optimum(seed, monkeypatch):
    # Past DP_LIMIT the DP looks only at a band around the Lagrangian solution: still the optimum.
    rng = np.random.default_rng(seed)
    f, budget = _values_and_budget(rng, (60, 250), (1, 6))
    whole = MJ.allocate_values(f, budget)
    monkeypatch.setattr(MJ, "DP_LIMIT", 0)
    band = MJ.allocate_values(f, budget)
    rows = np.arange(len(f))
    assert band.sum() == budget and np.isfinite(f[rows, band]).all()
    assert f[rows, band].sum() == pytest.approx(f[rows, whole].sum(), abs=1e-9)
    assert np.array_equal(band, MJ.allocate_values(f, budget))  # deterministic


@pytest.mark.parametrize("seed", range(10))
def test_the_dps_blocks_of_columns_give_the_whole_tables_choice(seed, monkeypatch):
    rng = np.random.default_rng(seed)
    f, budget = _values_and_budget(rng, (1, 30), (1, 12))
    whole = MJ.allocate_values(f, budget)
    monkeypatch.setattr(MJ, "_DP_BLOCK", int(rng.integers(1, 8)))  # blocks of a few cells, narrower than a row
    assert np.array_equal(MJ.allocate_values(f, budget), whole)


def test_values_that_cannot_take_the_budget_are_refused():
    f = np.array([[0.1, 0.5, -np.inf], [0.2, 0.3, 0.9]])  # room for 1 + 2 extra samples
    assert MJ.allocate_values(f, 3).tolist() == [1, 2]
    with pytest.raises(UabError, match="cannot serve 4 more samples"):
        MJ.allocate_values(f, 4)


def test_a_spelling_without_a_grade_takes_its_class_grade():
    # (tie rank, samples) beside (tie rank, samples, right): 0.5 (right) and a 1/2 graded wrong, then 3 (wrong)
    short = MJ.empirical_values([2, 3], [True, False], None, 1, spellings=[[(0, 1), (2, 1, False)], [(1, 3)]])
    full = MJ.empirical_values([2, 3], [True, False], None, 1,
                               spellings=[[(0, 1, True), (2, 1, False)], [(1, 3, False)]])
    assert np.array_equal(short, full) and short[1] == pytest.approx(1 / 6)


def test_the_oracles_dp_grows_with_m_not_m_times_the_budget():
    # The DP's choice table was M x (budget + 1): 10^4 questions of 8 samples at N = 8 took 827 MB
    # and two minutes in `uab simulate`, 10^5 would have needed 70 GB.
    import tracemalloc

    f = _oracle_like_values(np.random.default_rng(0), 2000, 7)
    budget = int((np.isfinite(f).sum(axis=1) - 1).sum()) // 2
    tracemalloc.start()
    try:
        e = MJ.allocate_values(f, budget)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert e.sum() == budget and peak < 4 << 20


def _plain_multiplier(f: np.ndarray, budget: int):
    """The bisection as it was: every row counted at every step (the whole f - lam*j each time)."""
    j = np.arange(f.shape[1])
    lo, hi = -2.0, 2.0
    while lo < (mid := (lo + hi) / 2) < hi:
        if np.argmax(f - mid * j, axis=1).sum() <= budget:
            hi = mid
        else:
            lo = mid
    return hi, np.argmax(f - hi * j, axis=1), np.argmax(f - lo * j, axis=1)


def _tied_values(rng, m: int, top: int) -> np.ndarray:
    """Rows with exact ties within and between them (few distinct values, repeated rows), -inf past a room."""
    f = np.round(rng.random((m, top + 1)), int(rng.integers(1, 3)))
    f[m // 2:] = f[: m - m // 2]
    room = rng.integers(0, top + 1, m)
    f[np.arange(top + 1)[None, :] > room[:, None]] = -np.inf
    return f


@pytest.mark.parametrize("seed", range(30))
def test_the_bisection_counting_open_rows_only_finds_the_plain_ones_multiplier(seed):
    rng = np.random.default_rng(seed)
    m, top = int(rng.integers(1, 300)), int(rng.integers(0, 70))
    f = _tied_values(rng, m, top) if seed % 2 else _oracle_like_values(rng, m, top)
    room = int((np.isfinite(f).sum(axis=1) - 1).sum())
    for budget in {0, room, int(rng.integers(0, room + 1))}:
        hi, at_hi, at_lo = MJ._multiplier(f, budget)
        plain = _plain_multiplier(f, budget)
        assert hi == plain[0] and np.array_equal(at_hi, plain[1]) and np.array_equal(at_lo, plain[2])


@pytest.mark.parametrize("seed", range(30))
def test_the_exchanges_leaders_read_in_blocks_are_the_whole_tables(seed, monkeypatch):
    rng = np.random.default_rng(seed)
    m, top = int(rng.integers(1, 200)), int(rng.integers(1, 20))
    f = _tied_values(rng, m, top)
    e = np.minimum(rng.integers(0, top + 1, m), np.isfinite(f).sum(axis=1) - 1)
    monkeypatch.setattr(MJ, "_BLOCK", int(rng.integers(1, 40)))  # blocks of a few rows
    cols = np.arange(top)
    for step in (1, -1):
        to = e[:, None] + step * np.arange(1, top + 1)
        x = np.where((to >= 0) & (to <= top), f[np.arange(m)[:, None], np.clip(to, 0, top)], -np.inf)
        x -= f[np.arange(m), e][:, None]
        first = x.argmax(axis=0)
        one = x[first, cols]
        x[first, cols] = -np.inf
        second = x.argmax(axis=0)
        at, best = MJ._leaders(f, e, step)
        assert np.array_equal(at, [first, second]) and np.array_equal(best, [one, x[second, cols]])


@pytest.mark.parametrize("seed", range(4))
def test_the_greedy_read_in_blocks_of_rows_allocates_as_in_one(seed, monkeypatch):
    rng = np.random.default_rng(seed)
    p, model = rng.choice(rng.random(3), int(rng.integers(2, 60))), MJ.MODELS[seed % 2]  # repeats: tied segments
    budget, cap = int(rng.integers(1, 4 * p.size)), rng.integers(0, 12, p.size) + 1
    whole = MJ.majority_allocate(p, budget, model, "greedy", cap)
    monkeypatch.setattr(MJ, "_BLOCK", int(rng.integers(1, 40)))  # blocks of a few rows
    assert MJ.majority_allocate(p, budget, model, "greedy", cap).tolist() == whole.tolist()


@pytest.mark.parametrize("part", ["_multiplier", "_exchange"])
def test_the_greedy_holds_no_second_table(part):
    # The bisection held f - lam*j (a table the size of f) at each of its ~60 steps, the exchange
    # six more (the move gains and losses, their sample counts): 3.7 GB and ~50 s at M = 10^6, N = 16.
    import tracemalloc

    p = np.random.default_rng(0).random(20_000)
    f = MJ._values(p, np.full(p.size, 64), 64, "plurality-2", np.ones(p.size, np.int64))
    budget = 15 * p.size
    e = MJ._multiplier(f, budget)[1]
    tracemalloc.start()
    try:
        MJ._multiplier(f, budget) if part == "_multiplier" else MJ._exchange(f, e.copy())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < f.nbytes // 4
