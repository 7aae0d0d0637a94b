"""The oracle's exact per-question values (`majority.empirical_values`): float64 sums vs the
exact-integer sums they replace up to a thousand samples per question.

Prints, measured side by side in one run, per pool size K: the seconds of each and the
speed-up, and the largest difference between the two (they must agree to ~1e-15).
Usage: python benchmarks/bench_oracle.py [--quick]
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np

from uab_cli import majority


def timed(fn) -> tuple[float, np.ndarray]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def main(quick: bool = False) -> None:
    rng = np.random.default_rng(0)
    print(f"machine: {platform.machine()}, numpy {np.__version__}")
    print(f"{'K':>6} {'classes':>8} {'exact s':>9} {'float s':>9} {'speed-up':>9} {'max diff':>9}")
    for k in (64, 256) if quick else (64, 256, 512, 1000):
        counts = list(rng.multinomial(k - 3, rng.dirichlet(np.ones(8))))
        args = (counts, [True] + [False] * 7, list(range(8)), 3)
        t_float, fast = timed(lambda args=args: majority.empirical_values(*args))
        saved, majority._FLOAT_POOL = majority._FLOAT_POOL, 0  # the exact-integer path
        try:
            t_exact, exact = timed(lambda args=args: majority.empirical_values(*args))
        finally:
            majority._FLOAT_POOL = saved
        print(f"{k:>6} {8:>8} {t_exact:>9.3f} {t_float:>9.4f} {t_exact / t_float:>8.0f}× "
              f"{np.abs(fast - exact).max():>9.1e}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="the smaller sizes only")
    main(parser.parse_args().quick)
