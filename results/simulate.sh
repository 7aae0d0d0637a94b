#!/usr/bin/env bash
# The exact commands that made the committed simulations and reports from the pools of make_pools.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
ALL=uab,uab-coverage,uab-exit-hard,uab-exit-easy-skip,majority,uniform,random,length,adaptive,oracle
for pool in smollm2-math smollm2-mc smollm2-math-s1; do
  signals=anll; [ "$pool" != smollm2-mc ] && signals=anll,total-nll,max-nll,nll-var
  budgets=2,4,8; cost=1,2,4,6,8,12,16  # the paper's budgets, up to the pool's 16 samples per question
  [ "$pool" = smollm2-math-s1 ] && budgets=2,3,4,8 && cost=1,2,3,4,6,8
  uab simulate results/$pool --budgets $budgets --seeds 20 --allocators $ALL --signals $signals \
      -o results/$pool/simulate.jsonl -q
  uab simulate results/$pool --budgets $budgets --seeds 20 --allocators uab,uab-coverage,majority,uniform,oracle \
      -T 0.1,0.5,1,2 -o results/$pool/simulate-T.jsonl -q
  # The cost at fixed accuracy over the budgets, ANLL, both skip-mode exits.
  uab simulate results/$pool --budgets $cost --seeds 20 --allocators $ALL,uab-exit-hard-skip \
      -o results/$pool/simulate-cost.jsonl -q
  uab report results/$pool/simulate-cost.jsonl -o results/$pool/report --pool results/$pool
done
# Does a recommendation hold on new questions? Chosen on halves of each pool and replayed on the other half,
# and chosen on the whole smollm2-math pool and replayed on the new questions of smollm2-math-s1.
python benchmarks/holdout_check.py results/smollm2-math/pool.jsonl results/smollm2-math-s1/pool.jsonl --splits 6 \
    > results/holdout.md
python benchmarks/holdout_check.py results/smollm2-math/pool.jsonl --on results/smollm2-math-s1/pool.jsonl \
    >> results/holdout.md
# The same check on a synthetic pool of a well-calibrated small model (scripts/make_synthetic_pool.py, its docstring).
python benchmarks/holdout_check.py results/synthetic/calibrated-small/pool.jsonl --splits 12 \
    > results/synthetic/calibrated-small/holdout.md
# And on the synthetic 8B-like GSM8K pool (the generator's docstring), where most-confident rules lose.
python benchmarks/holdout_check.py results/synthetic/8b-like/pool.jsonl --splits 12 > results/synthetic/8b-like/holdout.md
# The synthetic pools with known p (results/synthetic/README.md): allocators under majority, T = 0.2 and T = 1.
for mix in easy hopeless moderate weak mixed; do
  uab simulate results/synthetic/$mix --budgets 2,4,8 --seeds 20 --vote-rules majority \
      --allocators uab,uab-coverage,uab-exit-hard,uab-exit-easy-skip,majority,uniform -o results/synthetic/$mix/simulate.jsonl -q
  uab simulate results/synthetic/$mix --budgets 2,4,8 --seeds 20 --vote-rules majority \
      --allocators majority,uab-coverage,uniform -T 1.0 -o results/synthetic/$mix/simulate-T1.jsonl -q
done
