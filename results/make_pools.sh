#!/usr/bin/env bash
# The exact commands that made the committed pools (embedded SmolLM2-135M-Instruct, CPU).
set -euo pipefail
cd "$(dirname "$0")/.."
uab pool sample_data/math_graded.jsonl --samples 16 --max-tokens 48 --seed 0 --out results/smollm2-math -q
uab pool sample_data/mc_reasoning.jsonl --samples 16 --max-tokens 48 --seed 0 --out results/smollm2-mc -q
