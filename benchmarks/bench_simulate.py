"""`uab simulate` on a pool where one question's answers all differ.

`voting.elect` works on questions × samples × answer classes; the replay groups questions by
their class count, so one scattered question costs its own votes only. Prints, measured side
by side in one run, the replay time of a pool of M questions × K samples with few answer
classes each, and of the same pool with one question whose K answers all differ, and their
ratio (near 1 with the grouping; about 10 at 300 × 384 before it).
Usage: python benchmarks/bench_simulate.py [--quick]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from uab_cli import evaluation


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


def main(quick: bool = False) -> None:
    m, k = (100, 128) if quick else (300, 384)
    plain, scattered = seconds(pool(m, k, False)), seconds(pool(m, k, True))
    print(f"pool {m} × {k}: few classes {plain:.2f} s, one question of {k} classes {scattered:.2f} s, "
          f"ratio {scattered / plain:.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="the smaller sizes only")
    main(parser.parse_args().quick)
