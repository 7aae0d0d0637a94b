"""End-to-end IO: `uab allocate` and `uab vote` against a bare orjson read+write of the same file.

Every measurement is its own process (interpreter start included): wall clock, CPU time
(user + system of the process and its workers, steadier than wall on a shared machine) and
peak RSS. ``allocate`` and ``vote`` run as a user gets them (one worker process per usable
CPU, see ``uab_cli.blocks``) and again with ``UAB_WORKERS=1`` (one process). The floor reads each line of a stage's input with ``orjson.loads`` and writes
``orjson.dumps`` of it back: no validation, no work. ``allocate`` is compared with the floor
on its input (Phase-1 records), ``vote`` with the floor on its input (allocated records).
Each measurement runs ``--repeat`` times, interleaved, and the best of each is kept, so a
burst of load on a shared machine does not land on one side only.

Usage: python benchmarks/bench_io.py [M] [--repeat R]   (defaults: M = 1e6, R = 1)
Targets (issue 12): allocate <= 3x, vote <= 2x the floor.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TARGETS = {"allocate": 3.0, "vote": 2.0}


def timed(cmd: list[str], env: dict | None = None) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + system, its worker processes included) and peak RSS
    (MiB, the largest process) of one child process."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    if status:
        raise SystemExit(f"failed: {' '.join(cmd)}")
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def floor(src: str, dst: str) -> None:
    """The bare orjson read+write: parse every line and write it back, nothing else."""
    import orjson

    with open(src, "rb") as fh, open(dst, "wb", buffering=1 << 20) as out:
        out.writelines(orjson.dumps(orjson.loads(line), option=orjson.OPT_APPEND_NEWLINE) for line in fh)


def main(m: int, repeat: int) -> None:
    from uab_cli.blocks import workers  # not in the floor's process

    uab = [sys.executable, "-m", "uab_cli.cli"]
    bare = [sys.executable, os.path.abspath(__file__), "--floor"]
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        src, alloc, votes, copy = (os.path.join(tmp, f) for f in ("p1.jsonl", "alloc.jsonl", "votes.jsonl", "copy"))
        subprocess.run([sys.executable, os.path.join(HERE, "make_records.py"), src, str(m)], check=True)
        print(f"M = {m} records, {os.path.getsize(src) / 2**20:.0f} MiB of Phase-1 JSONL, "
              f"{os.cpu_count()} cores ({workers()} workers), best of {repeat}")
        runs = {
            "allocate": (uab + ["allocate", src, "--budget", "16", "-o", alloc, "-q"], bare + [src, copy]),
            "vote": (uab + ["vote", alloc, "-o", votes, "-q"], bare + [alloc, copy]),
        }
        one = {**os.environ, "UAB_WORKERS": "1"}
        best: dict[str, list[tuple[float, float, float]]] = {}
        for _ in range(repeat):
            for stage, (cmd, floor_cmd) in runs.items():  # vote reads what allocate wrote
                for key, c, env in ((stage, cmd, None), (f"{stage} floor", floor_cmd, None),
                                    (f"{stage} 1 worker", cmd, one)):
                    best.setdefault(key, []).append(timed(c, env))
    load_after = os.getloadavg()
    print(f"{'':20s} {'wall':>8s} {'CPU':>8s} {'peak RSS':>10s}")
    for key, results in best.items():
        wall, cpu = min(r[0] for r in results), min(r[1] for r in results)
        print(f"{key:20s} {wall:7.2f}s {cpu:7.2f}s {max(r[2] for r in results):6.0f} MiB")
    for stage, target in TARGETS.items():
        wall, cpu = ([min(r[i] for r in best[k]) for k in (stage, f"{stage} floor", f"{stage} 1 worker")]
                     for i in (0, 1))
        print(f"{stage} / floor: {wall[0] / wall[1]:.2f} wall, {cpu[0] / cpu[1]:.2f} CPU "
              f"(target <= {target:g}: {'met' if wall[0] / wall[1] <= target else 'NOT met'}); "
              f"1 worker / floor: {wall[2] / wall[1]:.2f} wall, {cpu[2] / cpu[1]:.2f} CPU")
    print("load average (1, 5, 15 min) before: {:.2f} {:.2f} {:.2f}".format(*load_before)
          + ", after: {:.2f} {:.2f} {:.2f}".format(*load_after))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--floor"]:
        floor(sys.argv[2], sys.argv[3])
    else:
        parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
        parser.add_argument("m", nargs="?", type=int, default=1_000_000)
        parser.add_argument("--repeat", type=int, default=1)
        args = parser.parse_args()
        main(args.m, args.repeat)
