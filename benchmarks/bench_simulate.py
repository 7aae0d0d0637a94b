"""`uab simulate` on a pool where one question's answers all differ.

`voting.elect` works on questions × samples × answer classes; the replay groups questions by
their class count, so one scattered question costs its own votes only. Prints, measured side
by side in one run, the replay time of a pool of M questions × K samples with few answer
classes each, and of the same pool with one question whose K answers all differ, and their
ratio (near 1 with the grouping; about 10 at 300 × 384 before it).

Then the preparation of the committed math pools (`Pool`: each question's answers grouped into
classes and graded against its gold), best of 3 with cold grading caches, with every pair of
answer readings compared by math-verify (before) and with the pairs `answers._apart` proves
unequal skipped (now), and their ratio; the classes and verdicts of the two must be identical.
Then the vote replay's growth in samples per question K (`Pool.votes`: every prefix of each seed's
draws voted by simulate's default rules, weighted at its three vote temperatures): M questions ×
K = 8, 32, 64, 128 samples, one seed, with every prefix elected on its own (before: `voting.tally`
and `voting.elect` once per prefix, quadratic in K) and all at once (now:
`voting.elect_prefixes`), their ratio, and whether the tables are identical.
Usage: python benchmarks/bench_simulate.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from uab_cli import answers, evaluation, jsonl, voting
from uab_cli.pools import Pool

MATH_POOLS = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "results", name, "pool.jsonl")
              for name in ("smollm2-math", "smollm2-math-s1")]


def pool(m: int, k: int, scattered: bool) -> list[dict]:
    rng = np.random.default_rng(0)
    records = []
    for i in range(m):
        right = rng.uniform(0.1, 0.9)
        answers = [("7" if rng.random() < right else str(rng.integers(10, 14))) for _ in range(k)]
        if scattered and i == 0:
            answers = [str(1000 + j) for j in range(k)]
        records.append({"id": f"q{i}", "question": "q", "answer": "7", "samples": [
            {"index": j, "phase": 1, "text": a, "answer": a, "anll": float(rng.uniform(0.05, 1))}
            for j, a in enumerate(answers)]})
    return records


def seconds(records: list[dict]) -> float:
    start = time.perf_counter()
    list(evaluation.simulate(records, [2, 4], ["uniform", "uab"], ["anll"], 2, vote_rules=["majority", "weighted"]))
    return time.perf_counter() - start


def prepared(pools: list[list[dict]]) -> tuple[float, list]:
    """Seconds to prepare every pool with cold grading caches (math-verify's and sympy's), and the
    tables that hold its classes and verdicts."""
    from sympy.core.cache import clear_cache

    answers.math_equal.cache_clear()
    answers._parsed.cache_clear()
    clear_cache()
    start = time.perf_counter()
    made = [Pool(records) for records in pools]
    return time.perf_counter() - start, [(p.cls.tolist(), p.rank.tolist(), p.correct.tolist()) for p in made]


def preparation(repeat: int = 3) -> None:
    pools = [[rec for _, rec in jsonl.read_records(path)] for path in MATH_POOLS]
    prepared(pools)  # the extraction's own caches warm for both
    before, now, tables = [], [], []
    for _ in range(repeat):  # interleaved, so that a burst of load lands on both
        saved, answers._apart = answers._apart, lambda a, b: False
        try:
            seconds, old = prepared(pools)
        finally:
            answers._apart = saved
        before.append(seconds)
        seconds, new = prepared(pools)
        now.append(seconds)
        tables += [old == new]
    print(f"preparing {sum(map(len, pools))} math questions: every pair through math-verify {min(before):.2f} s, "
          f"monomials told apart {min(now):.2f} s, ratio {min(before) / min(now):.2f}, "
          f"classes and verdicts {'identical' if all(tables) else 'DIFFERENT'}")


def per_prefix(pool: Pool, perm: np.ndarray, ballots: dict, keep: float) -> dict:
    """``Pool.votes``' tables as it made them before: ``elect`` on each prefix of each class-count group."""
    cp, rp, right = (np.take_along_axis(a, perm, 1) for a in (pool.cls, pool.rank, pool.correct))
    wp = {key: np.take_along_axis(log_w, perm, 1) for key, (_, log_w) in ballots.items()}
    m, kmax = cp.shape
    out = {key: (np.zeros((m, kmax + 1), dtype=bool), np.zeros((m, kmax + 1), dtype=bool)) for key in ballots}
    group = np.ceil(np.log2(np.maximum(pool.cls.max(axis=1, initial=-1) + 1, 1))).astype(np.int64)
    for g in np.unique(group):
        rows = np.flatnonzero(group == g)
        c, r, ok = cp[rows], rp[rows], right[rows]
        w = {key: v[rows] for key, v in wp.items()}
        for t in range(1, kmax + 1):
            counted = voting.tally(c[:, :t], r[:, :t])
            for key, (rule, _) in ballots.items():
                win, fell = voting.elect(c[:, :t], w[key][:, :t], r[:, :t], rule, voting.DEFAULT_KEEP, counted)
                mine = c[:, :t] == win[:, None]
                first = np.where(mine, r[:, :t], 1 << 30).min(axis=1, keepdims=True)
                out[key][0][rows, t] = (mine & (r[:, :t] == first) & ok[:, :t]).any(axis=1)
                out[key][1][rows, t] = fell
    return out


def growth(m: int, ks: tuple[int, ...]) -> None:
    for k in ks:
        prepared = Pool(pool(m, k, False))
        perm = prepared.permutations(0)
        ballots = {(rule, t): (rule, prepared.log_w("anll", t)) for rule in voting.RULES
                   for t in (voting.SIMULATED_TEMPERATURES if rule == "weighted" else [0.2])}
        start = time.perf_counter()
        old = per_prefix(prepared, perm, ballots, voting.DEFAULT_KEEP)
        before = time.perf_counter() - start
        start = time.perf_counter()
        new, _ = prepared.votes(perm, ballots, voting.DEFAULT_KEEP)
        now = time.perf_counter() - start
        same = all((old[key][0] == new[key][0]).all() and (old[key][1] == new[key][1]).all() for key in ballots)
        print(f"vote replay, {m} × {k}, {len(ballots)} ballots, one seed: every prefix alone {before:.3f} s, "
              f"all at once {now:.3f} s, ratio {before / now:.1f}, tables {'identical' if same else 'DIFFERENT'}")


def main(quick: bool = False) -> None:
    m, k = (100, 128) if quick else (300, 384)
    plain, scattered = seconds(pool(m, k, False)), seconds(pool(m, k, True))
    print(f"pool {m} × {k}: few classes {plain:.2f} s, one question of {k} classes {scattered:.2f} s, "
          f"ratio {scattered / plain:.2f}")
    preparation()
    growth(200, (8, 32, 64) if quick else (8, 32, 64, 128))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="the smaller sizes only")
    main(parser.parse_args().quick)
