"""Allocator speed: the vectorised exact `uab` allocation vs the naive heap greedy.

Prints, measured side by side in one run: the speed-up at M = 1e3..1e5 (and that both
allocations are identical), then the time for M = 1e6 questions at N = 16 (target <= 1 s),
then the `majority` allocator's time at N = 16 and its ratio to `uab`'s on the same p, then its
exact DP (what `simulate` runs at a committed pool's size: 295 questions, 15 extra samples at
most) against its greedy on the same p.
Usage: python benchmarks/bench_allocator.py [--quick]
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np

from uab_cli.allocation import greedy_allocate, uab_allocate
from uab_cli.majority import majority_allocate


def best_of(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main(quick: bool = False) -> None:
    n = 16
    rng = np.random.default_rng(0)
    print(f"machine: {platform.machine()}, {platform.processor() or '?'}, numpy {np.__version__}")
    print(f"{'M':>9} {'naive s':>9} {'uab s':>9} {'speed-up':>9} identical")
    sizes = (1_000, 10_000) if quick else (1_000, 10_000, 100_000)
    for m in sizes:
        p = rng.random(m)
        budget = (n - 1) * m
        fast = uab_allocate(p, budget)
        naive = greedy_allocate(p, budget)
        t_fast = best_of(lambda p=p, budget=budget: uab_allocate(p, budget), 3)
        t_naive = best_of(lambda p=p, budget=budget: greedy_allocate(p, budget), 1)
        print(f"{m:>9} {t_naive:>9.3f} {t_fast:>9.4f} {t_naive / t_fast:>8.0f}x {np.array_equal(fast, naive)}")
    m = 1_000_000
    p = rng.random(m)
    t = best_of(lambda: uab_allocate(p, (n - 1) * m), 3)
    print(f"M = 1e6, N = {n}: {t:.3f} s (target <= 1 s; ratio to target {t / 1.0:.2f})")
    print(f"{'M':>9} {'majority s':>11} {'uab s':>9} {'ratio':>7}")
    for m in (10_000, 100_000) if quick else (10_000, 100_000, 1_000_000):
        p = rng.random(m)
        t_major = best_of(lambda p=p, m=m: majority_allocate(p, (n - 1) * m), 1)
        t_uab = best_of(lambda p=p, m=m: uab_allocate(p, (n - 1) * m), 3)
        print(f"{m:>9} {t_major:>11.3f} {t_uab:>9.4f} {t_major / t_uab:>6.0f}x")
    m, cap = 295, 15
    p = rng.random(m)
    print(f"{'N':>9} {'dp s':>11} {'greedy s':>9} {'ratio':>7}  (M = {m}, at most {cap} extra)")
    for n in (2, 4, 8):
        t_dp = best_of(lambda p=p, n=n: majority_allocate(p, (n - 1) * m, max_extra=cap, method="dp"), 3)
        t_greedy = best_of(lambda p=p, n=n: majority_allocate(p, (n - 1) * m, max_extra=cap, method="greedy"), 3)
        print(f"{n:>9} {t_dp:>11.4f} {t_greedy:>9.4f} {t_dp / t_greedy:>6.1f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="the smaller sizes only")
    main(parser.parse_args().quick)
