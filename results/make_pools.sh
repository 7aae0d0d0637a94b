#!/usr/bin/env bash
# The exact commands that made the committed pools (embedded SmolLM2-135M-Instruct, CPU).
set -euo pipefail
cd "$(dirname "$0")/.."
uab pool sample_data/math_graded.jsonl --samples 16 --max-tokens 48 --seed 0 -o results/smollm2-math -q
uab pool sample_data/mc_reasoning.jsonl --samples 16 --max-tokens 48 --seed 0 -o results/smollm2-mc -q
# New questions of the same levels, 8 samples each: where a recommendation chosen on smollm2-math is checked.
uab pool sample_data/math_graded_s1.jsonl --samples 8 --max-tokens 48 --seed 1 -o results/smollm2-math-s1 -q
