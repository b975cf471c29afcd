#!/bin/bash
# Same-run alternation hpmg vs deal.II, 3D k = 6..8 on 16^3 cells (~1e6 unknowns), twice:
# guards the issue-2 ratio against machine drift. KS="6 7 8" picks the degrees.
# Results: bench/results/sweep_cpu_highk_1e6.txt
cd "$(dirname "$0")/.."
DEALII=${DEALII_PEER:-/tmp/peers/dealii/build/poisson_dealii}
for rep in 1 2; do
for k in ${KS:-6 7 8}; do
  # solve_s = best of the 3 solves (first_solve_s is the first one)
  pick() { grep -oE ' (iters|solve_s|first_solve_s)=[0-9.]*' | tr -d '\n'; }
  h=$(build/solve_bench 3 $k 4 --precision mixed --smoother chebyshev --repeat 3 2>/dev/null | pick)
  d=$(mpirun --allow-run-as-root --oversubscribe --bind-to core -np 2 $DEALII 3 $k 4 --repeat 3 2>/dev/null | pick)
  echo "k=$k hpmg: $h | dealii: $d | load $(cut -d' ' -f1 /proc/loadavg)"
done; done
