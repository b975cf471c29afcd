#!/bin/bash
# Same-run alternation hpmg (default configuration: --solver auto --smoother
# auto, PREC=double by default, the library's default precision; PREC=mixed as
# the peer's float levels) vs deal.II, 3D at ~1e7 unknowns (k = 6, 7, 8 on 32^3
# cells), twice:
# guards the issue-5 ratio against machine drift (this VM's timings vary by
# 10-20% between runs). KS="6 7 8" picks the degrees.
# Results: bench/results/sweep_cpu_highk_1e7.txt (mixed), sweep_cpu_highk_1e7_double.txt
cd "$(dirname "$0")/.."
DEALII=${DEALII_PEER:-/tmp/peers/dealii/build/poisson_dealii}
for rep in 1 2; do
for k in ${KS:-6 7 8}; do
  pick() { grep -oE ' (precision|solver|iters|solve_s|first_solve_s|l2err)=[0-9a-z.e+-]*' | tr -d '\n'; }
  h=$(build/solve_bench 3 $k 5 --precision ${PREC:-double} --solver auto --smoother auto --repeat 3 2>/dev/null | pick)
  d=$(OMP_NUM_THREADS=1 mpirun --allow-run-as-root --oversubscribe --bind-to core -np 2 $DEALII 3 $k 5 --repeat 3 2>/dev/null | pick)
  echo "k=$k hpmg: $h | dealii: $d | load $(cut -d' ' -f1 /proc/loadavg)"
done; done
