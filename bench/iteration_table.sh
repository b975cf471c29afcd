#!/bin/bash
# Multigrid-preconditioned CG iterations to a relative residual of 1e-9 as the
# mesh is refined (default Chebyshev(5)-Jacobi smoother, 1+1 sweeps), for every
# degree. Prints a markdown table (used in docs/method.md).
#   bench/iteration_table.sh [extra hpmg options...]
cd "$(dirname "$0")/.."
H=${BUILD:-build}/hpmg
it() { $H solve --json "$@" | python3 -c "import json,sys; d=json.load(sys.stdin); print(d['iterations'] if d['converged'] else 'x')"; }
echo "| dim | k | iterations for L = 1, 2, 3, ... (unknowns of the finest) |"
echo "|---|---|---|"
for k in 1 2 3 4 5 6 7 8 9 10; do
  row=""; last=""
  for L in 1 2 3 4 5 6 7 8 9; do
    n=$(( (k * (1 << L) - 1) ** 2 )); [ $n -gt 4200000 ] && break
    row="$row $(it --dim 2 --degree $k --refine $L "$@")"; last=$n
  done
  echo "| 2 | $k |$row ($last) |"
done
for k in 1 2 3 4 5 6 7 8 9 10; do
  row=""; last=""
  for L in 1 2 3 4 5 6; do
    n=$(( (k * (1 << L) - 1) ** 3 )); [ $n -gt 2200000 ] && break
    row="$row $(it --dim 3 --degree $k --refine $L "$@")"; last=$n
  done
  echo "| 3 | $k |$row ($last) |"
done
