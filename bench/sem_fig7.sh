#!/bin/sh
# Paper 001, Fig. 7 (docs/sem.md, "Fig. 7: h-scaling"): degree p (16) on the
# homogeneous mesh of k^3 elements of (0, 2 pi)^3, Dirichlet, the manufactured
# solution of eq. 27 (--rhs waves), or with RHS=random the paper's
# pseudo-random f at the GLL nodes (no error: L2 -1), a 1e-10 residual reduction, for the solvers dCG, MG, kMG, kvMG. For each k and
# solver: iterations (n10), the mean convergence rate rho = (r_n / r_0)^(1/n)
# from the solver's residual history, time to solution (solve_s: condensed
# load, iterations, recovery; setup and the error apart), time per GLL node
# and per GLL node and core, the L2 error and the library's memory estimate
# per GLL node.
# usage: sem_fig7.sh path/to/hpmg [p] [ks] [threads] [solvers]
hpmg=$1
p=${2:-16}
ks=${3:-"2 4 6 8 10 12"}
threads=${4:-2}
solvers=${5:-"dcg mg kmg kvmg"}
rhs=${RHS:-waves}
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY-passive}
printf '%-5s %3s %3s %3s %10s %9s %5s %9s %9s %9s %9s %10s %7s\n' solver p k thr nodes condensed its rho setup_s \
  solve_s us/nd/core L2 B/node
for k in $ks; do
  for s in $solvers; do
    "$hpmg" solve --disc sem --dim 3 --degree "$p" --cells "$k" --rhs "$rhs" --tol 1e-10 --maxit 2000 \
      --box 6.283185307179586,6.283185307179586,6.283185307179586 \
      --threads "$threads" --solver "$s" --json | K="$k" python3 -c '
import json, os, sys
d = json.load(sys.stdin)
h = d.get("history") or []
n = d["iterations"]
rho = (h[-1] / h[0]) ** (1.0 / n) if n > 0 and len(h) > 1 and h[0] > 0 else float("nan")
s = d["solve_s"]
print("%-5s %3d %3d %3d %10d %9d %5d %9.2e %9.3f %9.3f %9.4f %10.2e %7.1f" % (d["solver"], d["degree"],
      int(os.environ["K"]), d["threads"], d["dofs"], d["dofs_condensed"], n, rho, d["setup_s"], s,
      1e6 * s * d["threads"] / d["dofs"], d["l2_error"], d["bytes_host"] / d["dofs"]))'
  done
done
