#!/bin/sh
# Spectral elements, dCG on the condensed system (docs/sem.md): time to a
# 1e-10 residual reduction per GLL node and per condensed unknown, iterations,
# error and memory per GLL node, on the homogeneous mesh of N^3 elements
# (Dirichlet box, the manufactured sine solution), for each degree and thread
# count. usage: sem_solve_bench.sh path/to/hpmg [N] [degrees] [threads]
hpmg=$1
n=${2:-4}
degrees=${3:-"4 6 8 12 16"}
threads=${4:-"1 2"}
export OMP_WAIT_POLICY=passive
# B/node: the library's estimate (bytes_host) per GLL node; RSS/node: the
# process's peak resident set (GNU time) per GLL node, libraries included.
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
printf '%3s %3s %9s %9s %5s %9s %9s %12s %10s %7s %8s\n' p thr nodes condensed its solve_s us/node us/condensed L2 B/node RSS/node
for p in $degrees; do
  for t in $threads; do
    /usr/bin/time -f %M -o "$tmp" "$hpmg" solve --disc sem --dim 3 --degree "$p" --cells "$n" --tol 1e-10 --threads "$t" --json |
      RSS_KB=$(cat "$tmp" 2>/dev/null || echo 0) python3 -c '
import json, os, sys
d = json.load(sys.stdin)
s = d["solve_s"]
rss = 1024.0 * float(open(sys.argv[1]).read().strip() or 0)
print("%3d %3d %9d %9d %5d %9.4f %9.4f %12.4f %10.2e %7.1f %8.1f" % (d["degree"], d["threads"], d["dofs"],
      d["dofs_condensed"], d["iterations"], s, 1e6 * s / d["dofs"], 1e6 * s / d["dofs_condensed"], d["l2_error"],
      d["bytes_host"] / d["dofs"], rss / d["dofs"]))' "$tmp"
  done
done
