#!/bin/sh
# Spectral elements on the condensed system (docs/sem.md): dCG and the
# p-multigrid solvers MG, kMG, kvMG (paper 001). For each solver, degree and
# thread count: iterations to a 1e-10 residual reduction, time to solution
# (solve_s: condensed load, iterations, recovery; setup, the evaluation of
# the built-in f at the GLL nodes and the error apart), of it the iterations (iter_s), time
# per GLL node and per GLL node and core, the L2 error, and the memory per
# GLL node (the
# library's estimate and the process's peak RSS), on the homogeneous mesh of
# N^3 elements (Dirichlet box, the manufactured sine solution; --rhs waves on
# (0, 2 pi)^3 with RHS=waves).
# usage: sem_solve_bench.sh path/to/hpmg [N] [degrees] [threads] [solvers]
hpmg=$1
n=${2:-4}
degrees=${3:-"8 12 16 24 32"}
threads=${4:-"1 2"}
solvers=${5:-"dcg"}
rhs=${RHS:-sine}
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive} # passive unless set: spinning threads stall a shared machine
# B/node: the library's estimate (bytes_host) per GLL node; RSS/node: the
# process's peak resident set (GNU time) per GLL node, libraries included.
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
printf '%-5s %3s %3s %3s %9s %9s %5s %9s %9s %9s %9s %9s %10s %7s %8s\n' solver p thr lev nodes condensed its setup_s \
  solve_s iter_s us/node us/nd/core L2 B/node RSS/node
for s in $solvers; do
  for p in $degrees; do
    for t in $threads; do
      /usr/bin/time -f %M -o "$tmp" "$hpmg" solve --disc sem --dim 3 --degree "$p" --cells "$n" --tol 1e-10 \
        --threads "$t" --solver "$s" --rhs "$rhs" --repeat "${REPEAT:-1}" --json |
        RSS_KB=$(cat "$tmp" 2>/dev/null || echo 0) python3 -c '
import json, sys
d = json.load(sys.stdin)
s = d["solve_s"]
rss = 1024.0 * float(open(sys.argv[1]).read().strip() or 0)
print("%-5s %3d %3d %3d %9d %9d %5d %9.4f %9.4f %9.4f %9.4f %9.4f %10.2e %7.1f %8.1f" % (d["solver"], d["degree"],
      d["threads"], d["levels"], d["dofs"], d["dofs_condensed"], d["iterations"], d["setup_s"], s, d["krylov_s"],
      1e6 * s / d["dofs"],
      1e6 * s * d["threads"] / d["dofs"], d["l2_error"], d["bytes_host"] / d["dofs"], rss / d["dofs"]))' "$tmp"
    done
  done
done
