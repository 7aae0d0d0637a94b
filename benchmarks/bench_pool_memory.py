"""Peak memory of `simulate` and `report --pool` on a large pool: the records held vs streamed.

Before, both commands read the pool whole (`jsonl.load_records`: a dict per record and per sample,
its text and every field) and held it through the replay; now `runs.read_pool` streams it into
`pools.Pooled`, what the replay and the report read (answer classes, grades, statistics, token
counts, ids), and drops each record once read. Prints, measured side by side in one run, each
fresh process's peak RSS and wall time for both ways, their ratios, and whether the outputs (the
results rows; the report's files) are byte-identical, on synthetic pools
(`scripts/make_synthetic_pool.py moderate --k 8 --wrong few`) of 5,000 and 50,000 questions; the
replay is `simulate`'s defaults with 2 seeds.
Usage: python benchmarks/bench_pool_memory.py [--quick]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scripts"))


def child(way: str, stage: str, pool: str, results: str, out: str) -> None:
    """One measurement, in a fresh process: prints peak RSS (MiB), seconds and the output's digest."""
    import resource
    import time

    from uab_cli import allocators, evaluation, jsonl, report, runs, voting
    from uab_cli.settings import Vote

    start = time.perf_counter()
    if way == "held":  # as the commands read a pool before: every record whole, then checked
        records, lines = jsonl.load_records(pool, "sampled")
        runs.check_pool(records, pool, lines)
    else:
        records = runs.read_pool(pool)
    if stage == "simulate":
        vote = Vote()
        rows = list(evaluation.simulate(records, None, allocators.SIMULATED, [], 2, vote_rules=list(voting.RULES),
                                        vote=vote, vote_temperatures=voting.SIMULATED_TEMPERATURES,
                                        recommendations=True, analyses=True, pool_name=pool))
        rows.insert(0, evaluation.produced_by(records, pool, 2, vote, "algorithm1", vote_rules=list(voting.RULES),
                                              vote_temperatures=voting.SIMULATED_TEMPERATURES))
        evaluation.anll_correlation(records)
        jsonl.write_records(results, rows)
        with open(results, "rb") as fh:
            digest = hashlib.sha256(fh.read()).hexdigest()
    else:
        rows = [row for _, row in jsonl.read_jsonl(results)]
        written = report.report(rows, records, out)
        h = hashlib.sha256()
        for path in sorted(written):
            with open(path, "rb") as fh:
                h.update(os.path.basename(path).encode() + fh.read())
        digest = h.hexdigest()
    seconds = time.perf_counter() - start
    print(json.dumps({"rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "s": seconds,
                      "digest": digest}))


def measure(way: str, stage: str, pool: str, work: str) -> dict:
    results = os.path.join(work, f"results-{way}.jsonl" if stage == "simulate" else "results-held.jsonl")
    done = subprocess.run([sys.executable, __file__, "--child", way, stage, pool, results,
                           os.path.join(work, f"report-{way}")], capture_output=True, text=True, check=True,
                          env={**os.environ, "MPLBACKEND": "Agg"})
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="5,000 questions only")
    ap.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(*args.child)
    from make_synthetic_pool import make

    from uab_cli.jsonl import write_records

    print("| questions × samples | stage | held: peak RSS | time | streamed: peak RSS | time | RSS ratio | "
          "time ratio | outputs |")
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as work:
        for m in (5_000,) if args.quick else (5_000, 50_000):
            pool = os.path.join(work, f"pool-{m}.jsonl")
            write_records(pool, make("moderate", m, 8, 0, "few", 0.1))
            for stage in ("simulate", "report"):
                held, streamed = (measure(way, stage, pool, work) for way in ("held", "streamed"))
                same = "identical" if held["digest"] == streamed["digest"] else "DIFFER"
                print(f"| {m:,} × 8 | {stage} | {held['rss']:.0f} MiB | {held['s']:.1f} s | {streamed['rss']:.0f} MiB "
                      f"| {streamed['s']:.1f} s | {held['rss'] / streamed['rss']:.2f} | "
                      f"{held['s'] / streamed['s']:.2f} | {same} |", flush=True)


if __name__ == "__main__":
    main()
