#!/bin/sh
# The channel benchmark of docs/bc.md: -Laplace u = f, periodic in x and z,
# Neumann walls in y, tanh-stretched y (first-cell aspect ratio ~50 at the
# default size), lambda = 0, box 2pi x 2 x pi, manufactured solution; the
# multigrid (FMG, CG) and the transform + tridiagonal direct solver in one run.
# Usage: bench/fd_channel.sh path/to/hpmg [NX NY NZ [BETA [extra hpmg options]]]
# (e.g. --device cuda --repeat 3). Prints one line per solver: time to solution,
# iterations, DoF/s, errors. The rows fmg-Kcyc stop FMG after K V(2,2) cycles
# (fmg-v11-Kcyc: V(1,1)) following the FMG start, not converged by design: they
# compare the time to the direct solver's error (the discretization error).
HPMG=${1:?usage: fd_channel.sh path/to/hpmg [NX NY NZ [BETA [options]]]}
NX=${2:-256}; NY=${3:-192}; NZ=${4:-256}; BETA=${5:-2.9}
shift $(( $# < 5 ? $# : 5 ))
printf '%-14s %10s %6s %12s %14s %14s %12s\n' solver "time[s]" iters "DoF/s" "L2 error" "max error" "setup[s]"
for s in fmg cg fft fmg-1cyc fmg-v11-1cyc fmg-v11-2cyc; do
  case $s in
    fmg-v11-*) opt="--solver fmg --pre 1 --post 1 --tol 1e-14 --maxit ${s#fmg-v11-}" ;;
    fmg-*) opt="--solver fmg --tol 1e-14 --maxit ${s#fmg-}" ;;
    *) opt="--solver $s --tol 1e-9 --maxit 500" ;;
  esac
  opt=$(echo "$opt" | sed 's/cyc$//')
  # shellcheck disable=SC2086
  "$HPMG" solve --disc fd --dim 3 --cells "$NX,$NY,$NZ" --box 6.283185307179586,2,3.141592653589793 \
    --bc x=periodic,y=neumann,z=periodic --grid "y=tanh:$BETA" $opt --json "$@" 2>/dev/null |
    python3 -c '
import json, sys
r = json.loads(sys.stdin.read())
print("%-14s %10.4f %6d %12.4g %14.6e %14.6e %12.4f" % (sys.argv[1], r["solve_s"], r["iterations"],
      r["dofs_per_s"], r["l2_error"], r["max_error"], r["setup_s"]))' "$s"
done
