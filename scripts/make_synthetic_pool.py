"""Write a synthetic pool with known per-question success probabilities (for `uab simulate`).

Each question has a true p; each of its K samples is right with probability p. Wrong samples
either name one shared competitor (``--wrong one``) or scatter over many values
(``--wrong scatter``). A sample's ANLL is drawn around 0.05 when right and 0.3 when wrong
(noise ``--noise``), so the signal ranks questions like a real model's, imperfectly.
Mixes: easy (p ~ U[0.6, 1]), hopeless (p ~ U[0, 0.15]), moderate (p ~ U[0.2, 0.8]),
weak (p ~ Beta(1, 4)), and mixed (a third each of easy, hopeless, moderate).
Usage: python scripts/make_synthetic_pool.py MIX -o results/synthetic-MIX/pool.jsonl [--m 300 --k 16 --seed 0]
"""

from __future__ import annotations

import argparse
import os

import numpy as np
import orjson

MIXES = {
    "easy": lambda rng, m: rng.uniform(0.6, 1.0, m),
    "hopeless": lambda rng, m: rng.uniform(0.0, 0.15, m),
    "moderate": lambda rng, m: rng.uniform(0.2, 0.8, m),
    "weak": lambda rng, m: rng.beta(1, 4, m),
    "mixed": lambda rng, m: np.concatenate([rng.uniform(0.6, 1.0, m - 2 * (m // 3)), rng.uniform(0.0, 0.15, m // 3),
                                            rng.uniform(0.2, 0.8, m // 3)]),
}


def make(mix: str, m: int, k: int, seed: int, wrong: str, noise: float) -> list[dict]:
    rng = np.random.default_rng(seed)
    p = MIXES[mix](rng, m)
    records = []
    for i, pi in enumerate(p):
        gold = str(100 + i)
        # The competitor sorts before or after the gold at random, so lexicographic vote
        # ties favour neither.
        competitor = str(200 + i) if rng.random() < 0.5 else str(10 + i)
        samples = []
        for j in range(k):
            right = rng.random() < pi
            if right:
                answer = gold
            elif wrong == "one":
                answer = competitor
            else:
                answer = str(1000 + int(rng.integers(0, 10**6)))
            anll = max(0.001, rng.normal(0.05 if right else 0.3, noise))
            samples.append({"index": j, "phase": 1, "seed": int(rng.integers(2**31)), "text": f"Answer: {answer}",
                            "answer": answer, "n_tokens": 10, "finish_reason": "stop", "anll": anll,
                            "total_nll": 10 * anll, "max_nll": 3 * anll, "nll_var": anll / 10, "confidence": None})
        records.append({"id": f"{mix}-{i:04d}", "question": f"synthetic question {i}", "answer": gold,
                        "true_p": round(float(pi), 4), "level": min(5, int((1 - pi) * 5) + 1), "samples": samples})
    return records


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mix", choices=sorted(MIXES))
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--m", type=int, default=300)
    ap.add_argument("--k", type=int, default=16)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--wrong", choices=("one", "scatter"), default="one")
    ap.add_argument("--noise", type=float, default=0.1)
    args = ap.parse_args()
    records = make(args.mix, args.m, args.k, args.seed, args.wrong, args.noise)
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    with open(args.output, "wb") as fh:
        fh.writelines(orjson.dumps(r) + b"\n" for r in records)


if __name__ == "__main__":
    main()
