"""Does `uab simulate`'s recommendation hold on new questions? Split a pool's questions in
two halves, take the recommendation row that `simulate` writes on one half, replay exactly
that combination on the other half against Uniform + majority (20 seeds, paired), and the
other way round. Prints, per pool and N, the held-out gain ± standard error.

    python benchmarks/holdout_check.py results/smollm2-math/pool.jsonl [--budgets 2,3,4] [--splits 3]
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from uab_cli import evaluation
from uab_cli.jsonl import load_records
from uab_cli.settings import Vote


def replay(records, rec: dict, n: int, seeds: int) -> tuple[float, float]:
    """The recommended combination's accuracy minus Uniform + majority's on ``records``."""
    rule = rec["vote_rule"]
    names = ["uniform"] if rec["allocator"] == "uniform" else [rec["allocator"], "uniform"]
    signals = [rec["signal"]] if rec["signal"] else ["anll"]
    rows = list(evaluation.simulate(records, [n], names, signals, seeds, rec["T"] or 0.2,
                                    vote_rules=[rule], vote=Vote(signal="anll")))
    acc = {(r["allocator"], r["vote_rule"], r["seed"]): r["accuracy"] for r in rows if "skipped" not in r}
    d = np.array([acc[rec["allocator"], rule, s] - acc["uniform", "majority", s] for s in range(seeds)])
    return float(d.mean()), float(d.std(ddof=1) / math.sqrt(d.size))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("pools", nargs="+")
    ap.add_argument("--budgets", default="2,3,4")
    ap.add_argument("--splits", type=int, default=2)
    ap.add_argument("--allocators", default="uab,uniform,random,length,oracle")
    ap.add_argument("-T", default="0.2")
    args = ap.parse_args()
    budgets = [int(b) for b in args.budgets.split(",")]
    temps = [float(t) for t in args.T.split(",")]
    print("| pool | split | N | recommended on half A | held-out gain on half B (pp) |")
    print("|---|---|---|---|---|")
    for path in args.pools:
        records, _ = load_records(path, "sampled")
        for split in range(args.splits):
            order = np.random.default_rng(100 + split).permutation(len(records))
            a = [records[i] for i in sorted(order[: len(records) // 2])]
            b = [records[i] for i in sorted(order[len(records) // 2:])]
            rows = list(evaluation.simulate(a, budgets, args.allocators.split(","), ["anll"], 20,
                                            temps if len(temps) > 1 else temps[0],
                                            vote_rules=list(evaluation.voting.RULES), recommendations=True))
            for rec in evaluation.recommendations(rows):
                gain, se = replay(b, rec, rec["N"], 20)
                name = f"{rec['allocator']}" + (f" ({rec['signal']}, T={rec['T']:g})" if rec["signal"] else "")
                print(f"| {path} | {split} | {rec['N']} | {name} + {rec['vote_rule']} | "
                      f"{100 * gain:+.2f} ± {100 * se:.2f} |", flush=True)


if __name__ == "__main__":
    main()
