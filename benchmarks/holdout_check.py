"""Does `uab simulate`'s recommendation hold on new questions? Split a pool's questions in
two halves, take the recommendation row that `simulate` writes on one half (A), replay exactly
that combination on the other half (B) against Uniform + majority (20 seeds, paired). Prints,
per pool, split and N, the gain on B ± its standard error over seeds, then per pool and N how
often the gain reached +2 points and how often it was worse by more than 2 standard errors,
and per pool how many halvings held at every N (worse by more than 2 standard errors at none)
and of those how many also gained +2 at the smallest N.

With `--on OTHER`, the recommendation is chosen on the whole of each POOL and replayed on
OTHER instead: a pool drawn on other questions (the calibrate-then-run use).

    python benchmarks/holdout_check.py results/smollm2-math/pool.jsonl [--budgets 2,3,4] [--splits 3]
    python benchmarks/holdout_check.py results/smollm2-math/pool.jsonl --on results/smollm2-math-s1/pool.jsonl
"""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np

from uab_cli import evaluation, recommend
from uab_cli.allocators import ALLOCATORS, SIMULATED
from uab_cli.errors import UabError
from uab_cli.jsonl import load_records
from uab_cli.pools import Pool


def recommend_on(records, budgets, allocators, temps) -> list[dict]:
    rows = evaluation.simulate(records, budgets, allocators, None, 20, temps if len(temps) > 1 else temps[0],
                               vote_rules=list(evaluation.voting.RULES), recommendations=True,
                               vote_temperatures=evaluation.voting.SIMULATED_TEMPERATURES)
    return evaluation.recommendations(list(rows))


def halves(path: str, records: list[dict], other: list[dict] | None,
           splits: int) -> list[tuple[list[dict], list[dict]]]:
    """``(A, B)`` per split: the recommendation is chosen on A and replayed on B (seeded random
    halves of ``records``, read from ``path``; with ``other``, the whole pool and ``other``, once)."""
    if other is not None:
        return [(records, other)]
    if len(records) < 2:
        raise UabError(f"a pool of {len(records)} question cannot be halved: 2 or more needed (or --on OTHER)", path)
    out = []
    for split in range(splits):
        order = np.random.default_rng(100 + split).permutation(len(records))
        out.append(([records[i] for i in sorted(order[: len(records) // 2])],
                    [records[i] for i in sorted(order[len(records) // 2:])]))
    return out


def listed(kind, what: str, ok=lambda v: v > 0):
    """An argparse type: a comma-separated list of ``kind`` values that pass ``ok``."""
    def parse(text: str) -> list:
        try:
            values = [kind(v) for v in text.split(",")]
        except ValueError:
            values = []
        if not values or not all(map(ok, values)):
            raise argparse.ArgumentTypeError(f"{text!r}: {what} expected")
        return values
    return parse


def count(text: str) -> int:
    """An argparse type: a count >= 1."""
    if not (text.isdigit() and int(text) >= 1):
        raise argparse.ArgumentTypeError(f"{text!r}: a count >= 1 expected")
    return int(text)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("pools", nargs="+")
    ap.add_argument("--budgets", type=listed(int, "budgets >= 1, comma-separated"), default="2,3,4")
    ap.add_argument("--splits", type=count, default=2)
    ap.add_argument("--allocators", type=listed(str, f"allocators among {', '.join(ALLOCATORS)}", ALLOCATORS.__contains__),
                    default=",".join(SIMULATED))
    ap.add_argument("-T", type=listed(float, "finite temperatures > 0, comma-separated", lambda v: 0 < v < math.inf),
                    default="0.2")
    ap.add_argument("--on", metavar="OTHER", help="replay on this pool, chosen on the whole of each POOL")
    try:  # a pool that does not read, or a budget it cannot fill: one line, exit 2
        run(ap.parse_args())
    except UabError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)


def run(args: argparse.Namespace) -> None:
    budgets, temps, allocators, splits = args.budgets, args.T, args.allocators, args.splits
    # every input read, and each budget checked against every half, before the first line is
    # printed: no half table for a bad one
    other = load_records(args.on, "sampled")[0] if args.on else None
    replays = [(path, split, a, b) for path in args.pools
               for split, (a, b) in enumerate(halves(path, load_records(path, "sampled")[0], other, splits))]
    for path, _, a, b in replays:
        for records, name in ((a, path), (b, args.on or path)):
            evaluation.fits(Pool(records), budgets, name)
    print(f"| pool | split | N | recommended on {'the pool' if other else 'half A'} | "
          f"gain on {args.on or 'half B'} (pp) |")
    print("|---|---|---|---|---|")
    tally: dict[tuple[str, int], list[tuple[float, float]]] = {}
    for path, split, a, b in replays:
        for rec in (row["check"] for row in evaluation.check(b, recommend_on(a, budgets, allocators, temps), 20)
                    if "check" in row):
            gain, se = rec["gain"], rec["se"]
            tally.setdefault((path, rec["N"]), []).append((gain, se))
            name = f"{rec['allocator']}" + (f" ({rec['signal']}, T={rec['T']:g})" if rec["signal"] else "")
            print(f"| {path} | {'—' if other else split} | {rec['N']} | {name} + {recommend.vote_label(rec)} | "
                  f"{100 * gain:+.2f} ± {100 * se:.2f} |", flush=True)
    print("\n| pool | N | mean gain (pp) | least | ≥ +2 | worse by > 2 SE |\n|---|---|---|---|---|---|")
    for (path, n), got in tally.items():
        gains = np.array([g for g, _ in got])
        worse = sum(g < -2 * se for g, se in got)
        print(f"| {path} | {n} | {100 * gains.mean():+.2f} | {100 * gains.min():+.2f} | "
              f"{int((gains >= 0.02 - 1e-12).sum())}/{len(got)} | {worse}/{len(got)} |")
    print(f"\n| pool | replays | worse by > 2 SE at no N | and +2 at N = {budgets[0]} |\n|---|---|---|---|")
    for path in args.pools:
        per_n = [tally[path, n] for n in budgets if (path, n) in tally]
        held = np.all([[g >= -2 * se for g, se in got] for got in per_n], axis=0)
        first = np.array([g >= 0.02 - 1e-12 for g, _ in per_n[0]])
        print(f"| {path} | {held.size} | {int(held.sum())}/{held.size} | {int((held & first).sum())}/{held.size} |")


if __name__ == "__main__":
    main()
