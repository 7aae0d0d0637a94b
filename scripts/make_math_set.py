#!/usr/bin/env python3
"""Generate the graded-difficulty arithmetic set ``sample_data/math_graded.jsonl``.

Deterministic: ``python scripts/make_math_set.py --seed 0 -o sample_data/math_graded.jsonl``
reproduces the committed file byte-for-byte (written as uab writes its outputs: whole or not at all).

Levels are tuned for small models (e.g. SmolLM2-135M-Instruct), whose per-sample accuracy
drops from ~94% on one-digit sums to ~0% on two-digit-by-two-digit products, so most
questions sit in the middle levels (2-5), where adaptive sampling can make a difference:

  1  one-digit a + b                                   (add_1x1)
  2  two-digit + one-digit                             (add_2x1)
  3  two-digit + two-digit; one-digit x one-digit      (add_2x2, mul_1x1)
  4  a + b - c (one-digit); two-digit - one-digit;
     one-digit x one-digit + one-digit                 (add_sub_3, sub_2x1, mul_add_1)
  5  two-digit x one-digit; sum of three numbers       (mul_2x1, sum_3)
  6  two-digit x one-digit + two-digit; solve ax+b=c   (mul_add_2, linear)

The output is shuffled (with the same seed) so any prefix of the file mixes all levels.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from uab_cli.errors import UabError  # noqa: E402
from uab_cli.jsonl import atomic_output  # noqa: E402

# (level, kind, how many questions)
PLAN = [
    (1, "add_1x1", 30),
    (2, "add_2x1", 60),
    (3, "add_2x2", 35),
    (3, "mul_1x1", 25),
    (4, "add_sub_3", 20),
    (4, "sub_2x1", 20),
    (4, "mul_add_1", 20),
    (5, "mul_2x1", 30),
    (5, "sum_3", 25),
    (6, "mul_add_2", 15),
    (6, "linear", 15),
]


def make_question(kind: str, rng: random.Random) -> tuple[str, int]:
    """Draw one question of ``kind``; return (question text, integer answer)."""

    def d1() -> int:  # one-digit operand (0 and 1 are too trivial)
        return rng.randint(2, 9)

    def d2() -> int:  # two-digit operand
        return rng.randint(10, 99)

    if kind == "add_1x1":
        a, b = rng.randint(1, 9), rng.randint(1, 9)
        return f"What is {a} + {b}?", a + b
    if kind == "add_2x1":
        a, b = d2(), d1()
        if rng.random() < 0.5:
            return f"What is {a} + {b}?", a + b
        return f"What is {b} + {a}?", a + b
    if kind == "add_2x2":
        a, b = d2(), d2()
        return f"What is {a} + {b}?", a + b
    if kind == "mul_1x1":
        a, b = d1(), d1()
        return f"What is {a} × {b}?", a * b
    if kind == "add_sub_3":
        a, b = rng.randint(1, 9), rng.randint(1, 9)
        c = rng.randint(1, min(9, a + b))
        return f"What is {a} + {b} - {c}?", a + b - c
    if kind == "sub_2x1":
        a, b = d2(), d1()
        return f"What is {a} - {b}?", a - b
    if kind == "mul_add_1":
        a, b, c = d1(), d1(), d1()
        return f"What is {a} × {b} + {c}?", a * b + c
    if kind == "mul_2x1":
        a, b = rng.randint(11, 99), d1()
        return f"What is {a} × {b}?", a * b
    if kind == "sum_3":
        a, b, c = d2(), d2(), d1()
        order = [a, b, c]
        rng.shuffle(order)
        return f"What is {order[0]} + {order[1]} + {order[2]}?", a + b + c
    if kind == "mul_add_2":
        a, b, c = rng.randint(11, 49), d1(), d2()
        return f"What is {a} × {b} + {c}?", a * b + c
    if kind == "linear":
        a, x, b = d1(), rng.randint(1, 12), rng.randint(1, 20)
        return f"Solve for x: {a}x + {b} = {a * x + b}. What is x?", x
    raise ValueError(f"unknown kind {kind!r}")


def generate(seed: int) -> list[dict]:
    """Build the full shuffled record list for ``seed``."""
    rng = random.Random(seed)
    records: list[dict] = []
    seen: set[str] = set()
    for level, kind, count in PLAN:
        made = 0
        while made < count:
            question, answer = make_question(kind, rng)
            if question in seen:
                continue
            seen.add(question)
            records.append({"question": question, "answer": str(answer), "type": "math", "level": level, "kind": kind})
            made += 1
    rng.shuffle(records)
    return [{"id": f"math-{i:04d}", **rec} for i, rec in enumerate(records, start=1)]


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0, the committed file)")
    parser.add_argument("-o", "--output", default="-", help="output JSONL path, '-' for stdout")
    args = parser.parse_args(argv)
    text = "".join(json.dumps(rec, ensure_ascii=False) + "\n" for rec in generate(args.seed))
    try:
        with atomic_output(args.output) as fh:
            fh.write(text.encode("utf-8"))
    except UabError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
