#!/usr/bin/env bash
# The exact commands that made the committed simulations and reports from the pools of make_pools.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
ALL=uab,uab-coverage,uab-exit-hard,uab-exit-easy-skip,majority,uniform,random,length,oracle
for pool in smollm2-math smollm2-mc; do
  signals=anll; [ "$pool" = smollm2-math ] && signals=anll,total-nll,max-nll,nll-var
  uab simulate results/$pool --budgets 2,4,8 --seeds 20 --allocators $ALL --signals $signals \
      -o results/$pool/simulate.jsonl -q
  uab simulate results/$pool --budgets 2,4,8 --seeds 20 --allocators uab,uab-coverage,majority,uniform,oracle \
      -T 0.1,0.5,1,2 -o results/$pool/simulate-T.jsonl -q
  # The cost at fixed accuracy over the paper's budgets (1 to the pool's 16), ANLL, both skip-mode exits.
  uab simulate results/$pool --budgets 1,2,4,6,8,12,16 --seeds 20 --allocators $ALL,uab-exit-hard-skip \
      -o results/$pool/simulate-cost.jsonl -q
  uab report results/$pool/simulate-cost.jsonl -o results/$pool/report --pool results/$pool
done
