"""Write a synthetic pool with known per-question success probabilities (for `uab simulate`).

Each question has a true p; each of its K samples is right with probability p. Wrong samples
either name one shared competitor (``--wrong one``), split over three competitors with
question-specific shares (``--wrong few``: a plurality can be won below 50 %), or scatter
over many values (``--wrong scatter``). A sample's ANLL is drawn around 0.05 when right and
0.3 when wrong (``--anll RIGHT,WRONG``; noise ``--noise``), so the signal ranks questions like a
real model's, imperfectly.
Mixes: easy (p ~ U[0.6, 1]), hopeless (p ~ U[0, 0.15]), moderate (p ~ U[0.2, 0.8]),
weak (p ~ Beta(1, 4)), mixed (a third each of easy, hopeless, moderate), small (a small
model on hard questions: 60 % p ~ U[0.05, 0.4], 40 % p ~ U[0.3, 0.9]) and strong (an 8B-class
model on GSM8K: 70 % p ~ U[0.85, 1], 20 % p ~ U[0.4, 0.85], 10 % p ~ U[0, 0.4]).
Usage: python scripts/make_synthetic_pool.py MIX -o results/synthetic/MIX/pool.jsonl [--m 300 --k 16 --seed 0]

The calibrated small model of README "Headroom and recommendation" (each sample's ANLL says a
little about whether it is right, as a well-calibrated small model's would):
python scripts/make_synthetic_pool.py small --k 8 --wrong few --anll 0.10,0.12 --noise 0.05 \
    -o results/synthetic/calibrated-small/pool.jsonl

The 8B-like GSM8K pool (1,319 questions × 5 samples, wrong answers scattered; calibrated to what
issue 19 measured on a real 8B model's pool: `most-confident` −6.6 points at N = 4, Uniform +
`confident-ties` +0.9 to +1.2):
python scripts/make_synthetic_pool.py strong --m 1319 --k 5 --wrong scatter --anll 0.03,0.04 --noise 0.03 \
    -o results/synthetic/8b-like/pool.jsonl
"""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np

from uab_cli.errors import UabError
from uab_cli.jsonl import write_records

MIXES = {
    "easy": lambda rng, m: rng.uniform(0.6, 1.0, m),
    "hopeless": lambda rng, m: rng.uniform(0.0, 0.15, m),
    "moderate": lambda rng, m: rng.uniform(0.2, 0.8, m),
    "weak": lambda rng, m: rng.beta(1, 4, m),
    "mixed": lambda rng, m: np.concatenate([rng.uniform(0.6, 1.0, m - 2 * (m // 3)), rng.uniform(0.0, 0.15, m // 3),
                                            rng.uniform(0.2, 0.8, m // 3)]),
    "small": lambda rng, m: np.where(rng.random(m) < 0.6, rng.uniform(0.05, 0.4, m), rng.uniform(0.3, 0.9, m)),
    "strong": lambda rng, m: np.select([(u := rng.random(m)) < 0.7, u < 0.9],
                                       [rng.uniform(0.85, 1.0, m), rng.uniform(0.4, 0.85, m)], rng.uniform(0.0, 0.4, m)),
}


def make(mix: str, m: int, k: int, seed: int, wrong: str, noise: float,
         anll_means: tuple[float, float] = (0.05, 0.3)) -> list[dict]:
    rng = np.random.default_rng(seed)
    p = MIXES[mix](rng, m)
    records = []
    for i, pi in enumerate(p):
        gold = 50_000_000 + 1000 * i
        # Every answer has 8 digits, so lexicographic order (majority's tie-break) is numeric
        # order, and each wrong answer sorts before or after the gold at random: vote ties
        # favour neither.
        competitor = str(gold + 1 if rng.random() < 0.5 else gold - 1)
        if wrong == "few":  # drawn only here: the other modes' pools stay as they were
            few = [str(gold + 1 + d if rng.random() < 0.5 else gold - 1 - d) for d in range(3)]
            shares = rng.dirichlet(np.full(3, 0.7))
        samples = []
        for j in range(k):
            right = rng.random() < pi
            if right:
                answer = str(gold)
            elif wrong == "one":
                answer = competitor
            elif wrong == "few":
                answer = few[rng.choice(3, p=shares)]
            else:  # scatter: below or above every question's gold at random
                x = int(rng.integers(0, 10**6))
                answer = str((10_000_000 if x % 2 else 90_000_000) + x)
            anll = max(0.001, rng.normal(anll_means[0] if right else anll_means[1], noise))
            samples.append({"index": j, "phase": 1, "seed": int(rng.integers(2**31)), "text": f"Answer: {answer}",
                            "answer": answer, "n_tokens": 10, "finish_reason": "stop", "anll": anll,
                            "total_nll": 10 * anll, "max_nll": 3 * anll, "nll_var": anll / 10, "confidence": None})
        records.append({"id": f"{mix}-{i:04d}", "question": f"synthetic question {i}", "answer": str(gold),
                        "true_p": round(float(pi), 4), "level": min(5, int((1 - pi) * 5) + 1), "samples": samples})
    return records


def number(kind, what: str, ok):
    """An argparse type: a ``kind`` value that passes ``ok``."""
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            value = None
        if value is None or not ok(value):
            raise argparse.ArgumentTypeError(f"{text!r}: {what} expected")
        return value
    return parse


def means(text: str) -> tuple[float, float]:
    """``--anll RIGHT,WRONG``: two mean ANLLs (finite, >= 0: an ANLL is a mean negative log-probability)."""
    try:
        right, wrong = (float(v) for v in text.split(","))
    except ValueError:
        right = wrong = math.nan
    if not (0 <= right < math.inf and 0 <= wrong < math.inf):
        raise argparse.ArgumentTypeError(f"{text!r}: RIGHT,WRONG (two finite numbers >= 0) expected")
    return right, wrong


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mix", choices=sorted(MIXES))
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--m", type=number(int, "a count >= 1", lambda v: v >= 1), default=300)
    ap.add_argument("--k", type=number(int, "a count >= 1", lambda v: v >= 1), default=16)
    ap.add_argument("--seed", type=number(int, "a seed >= 0", lambda v: v >= 0), default=0)
    ap.add_argument("--wrong", choices=("one", "few", "scatter"), default="one")
    ap.add_argument("--noise", type=number(float, "a finite number >= 0", lambda v: 0 <= v < math.inf), default=0.1)
    ap.add_argument("--anll", type=means, default="0.05,0.3", help="mean ANLL of a right and of a wrong sample")
    args = ap.parse_args()
    records = make(args.mix, args.m, args.k, args.seed, args.wrong, args.noise, args.anll)
    try:
        write_records(args.output, records)
    except UabError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
