"""Over-long questions against the embedded default (SmolLM2, context 8,192): `uab run` on a
5 MB question and on a ~12,000-token question, each beside a short one, in its own process.

Prints each run's exit code, wall time and peak resident memory, and the ratios to the targets
(exit 2 within 30 s, under 3 GB), plus a plain run of the short question alone for scale.

Usage: python benchmarks/bench_context.py
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SHORT = {"id": "short", "question": "What is 2 + 3?", "answer": "5"}


def words(n: int) -> str:
    return " ".join(("small", "block", "red", "jar", "range", "three")[i % 6] for i in range(n))


def five_mb() -> str:
    """A question of exactly 5,000,000 characters (5 MB of ASCII): words cut to that length."""
    return words(1_000_000)[:5_000_000]


def measure(rows: list[dict], tmp: str, name: str) -> None:
    path = os.path.join(tmp, f"{name}.jsonl")
    with open(path, "w") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in rows)
    probe = ("import resource, subprocess, sys, time; t = time.monotonic(); "
             "p = subprocess.run([sys.executable, '-m', 'uab_cli.cli', *sys.argv[1:]], capture_output=True, text=True); "
             "print(p.returncode, time.monotonic() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); "
             "sys.stderr.write(p.stderr[-300:])")
    args = ["run", path, "-N", "2", "--max-tokens", "48", "-o", os.path.join(tmp, f"run-{name}")]
    proc = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, cwd=ROOT)
    code, seconds, peak = proc.stdout.split()
    gib = int(peak) / 2**20
    print(f"{name:10s} exit {code}  {float(seconds):5.1f} s (ratio to 30 s: {float(seconds) / 30:.2f})  "
          f"peak {gib:.2f} GiB (ratio to 3 GB: {gib * 2**30 / 3e9:.2f})")
    print("           " + proc.stderr.strip().splitlines()[-1][:160] if proc.stderr.strip() else "")


def main() -> None:
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        measure([SHORT], tmp, "short")
        measure([SHORT, {"id": "five-mb", "question": five_mb(), "answer": "3"}], tmp, "five-mb")
        measure([SHORT, {"id": "twelve-k", "question": words(12_000), "answer": "3"}], tmp, "twelve-k")
    print(f"load average {os.getloadavg()[0]:.1f}; {time.monotonic() - start:.0f} s in all; "
          f"this process peaked at {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10:.0f} MiB")


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
