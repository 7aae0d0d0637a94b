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
Usage: python benchmarks/bench_simulate.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from uab_cli import answers, evaluation, jsonl
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


def main(quick: bool = False) -> None:
    m, k = (100, 128) if quick else (300, 384)
    plain, scattered = seconds(pool(m, k, False)), seconds(pool(m, k, True))
    print(f"pool {m} × {k}: few classes {plain:.2f} s, one question of {k} classes {scattered:.2f} s, "
          f"ratio {scattered / plain:.2f}")
    preparation()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="the smaller sizes only")
    main(parser.parse_args().quick)
