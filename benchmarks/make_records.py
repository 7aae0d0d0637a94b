"""Write N synthetic Phase-1 records (one sample each) for the IO benchmarks."""

from __future__ import annotations

import argparse

import numpy as np
import orjson


def main(path: str, m: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    anll = rng.gamma(2.0, 0.1, m)
    answers = rng.integers(0, 100, m)
    prov = {"phase1": {"backend": "scripted", "model": "scripted", "seed": 0, "temperature": 0.9,
                       "max_tokens": 64, "top_p": 1.0, "prompt": "fewshot", "vcs": False, "k": 1}}
    with open(path, "wb") as fh:
        buf = []
        for i in range(m):
            rec = {"id": f"q{i}", "question": f"What is {i} + 1?", "answer": str(i + 1),
                   "samples": [{"index": 0, "phase": 1, "seed": i, "text": f"Answer: {answers[i]}",
                                "answer": str(answers[i]), "n_tokens": 8, "finish_reason": "stop",
                                "anll": float(anll[i]), "total_nll": float(anll[i] * 8),
                                "max_nll": float(anll[i] * 3), "nll_var": 0.01, "confidence": None}],
                   "uab": prov}
            buf.append(orjson.dumps(rec))
            if len(buf) == 10000:
                fh.write(b"\n".join(buf) + b"\n")
                buf.clear()
        if buf:
            fh.write(b"\n".join(buf) + b"\n")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("path", help="the JSONL file to write")
    parser.add_argument("m", type=int, help="how many records")
    args = parser.parse_args()
    main(args.path, args.m)
