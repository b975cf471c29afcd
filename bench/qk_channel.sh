#!/bin/sh
# The channel benchmark of docs/bc.md for Q_k (issue 32): -Laplace u = f,
# periodic in x and z, Neumann walls in y, tanh-stretched y, lambda = 0, box
# 2pi x 2 x pi, the manufactured solution; Q_k (default k = 3) beside the
# finite-difference transform + tridiagonal direct solver and FD FMG on the FD
# grid, all in one run.
# Usage: bench/qk_channel.sh path/to/hpmg [K CX CY CZ [NX NY NZ [BETA [extra hpmg options]]]]
# (e.g. --threads 2). Defaults: Q3 on 88 x 64 x 80 cells (264 x 193 x 240 =
# 12.2e6 unknowns: x and z have the small odd factors 11 and 5, so the box
# semi-coarsening goes down to a coarsest level the dense Cholesky solves;
# 85 x 64 x 85 would keep 85 x 85 cells on every level), FD on 256 x 192 x 256
# cells (12.6e6 unknowns), tanh 2.9 (first-cell aspect ratio h_x/h_y: FD 65, Q3
# 59; a Q3 cell of 64 in y spans FD's three of 192).
# Prints one line per solver: time to solution, iterations, DoF/s, errors
# against the exact solution, setup time, smoother. Rows:
#   qk-fmg-Kcyc  FMG, then K V-cycles (--maxit K, --tol 1e-14: stopped by the
#                count, not converged by design: how close FMG + K cycles come
#                to the discretization error, the L2 error of qk-fmg)
#   qk-fmg       FMG to a relative residual of 1e-9
#   qk-cg        CG + V-cycle to 1e-9
#   qk-v22-*     the same with V(2,2) cycles (--pre 2 --post 2; the default is V(1,1))
#   fd-fft       the FD direct solver (FFT in x and z, tridiagonal in y)
#   fd-fmg-1cyc  FD FMG + 1 V(2,2) cycle; fd-fmg: FD FMG to 1e-9
HPMG=${1:?usage: qk_channel.sh path/to/hpmg [K CX CY CZ [NX NY NZ [BETA [options]]]]}
K=${2:-3}; CX=${3:-88}; CY=${4:-64}; CZ=${5:-80}
NX=${6:-256}; NY=${7:-192}; NZ=${8:-256}; BETA=${9:-2.9}
shift $(( $# < 9 ? $# : 9 ))
BOX="--box 6.283185307179586,2,3.141592653589793 --bc x=periodic,y=neumann,z=periodic --grid y=tanh:$BETA"
printf '%-16s %10s %6s %12s %14s %14s %9s %s\n' solver "time[s]" iters "DoF/s" "L2 error" "max error" "setup[s]" smoother
for s in qk-fmg-1cyc qk-fmg-2cyc qk-fmg qk-cg qk-v22-fmg-1cyc qk-v22-fmg qk-v22-cg fd-fft fd-fmg-1cyc fd-fmg; do
  case $s in
    qk-*) disc="--disc fe --degree $K --cells $CX,$CY,$CZ" ;;
    fd-*) disc="--disc fd --cells $NX,$NY,$NZ" ;;
  esac
  r=${s#*-}; cyc=""
  case $r in v22-*) r=${r#v22-}; cyc="--pre 2 --post 2" ;; esac
  case $r in
    fmg-*cyc) c=${r#fmg-}; opt="--solver fmg --tol 1e-14 --maxit ${c%cyc}" ;;
    *) opt="--solver $r --tol 1e-9 --maxit 500" ;;
  esac
  opt="$opt $cyc"
  # shellcheck disable=SC2086
  "$HPMG" solve --dim 3 $disc $BOX $opt --json "$@" 2>/dev/null |
    python3 -c '
import json, sys
t = sys.stdin.read()
if not t.strip():
    print("%-16s failed" % sys.argv[1]); sys.exit()
r = json.loads(t)
print("%-16s %10.4f %6d %12.4g %14.6e %14.6e %9.3f %s" % (sys.argv[1], r["solve_s"], r["iterations"],
      r["dofs_per_s"], r["l2_error"], r["max_error"], r["setup_s"], r.get("smoother", "-")))' "$s"
done
