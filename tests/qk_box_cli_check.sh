#!/bin/sh
# hpmg solve (Q_k, the default --disc fe) on general boxes (docs/bc.md):
# bad box input exits 2 with a message before any work; valid boxes solve
# and print the error and, when singular, the compatibility defect.
# Usage: qk_box_cli_check.sh path/to/hpmg
HPMG=${1:?usage: qk_box_cli_check.sh path/to/hpmg}
fail=0
T=${TMPDIR:-/tmp}/qk_box_cli.$$
mkdir -p "$T"
expect() { # expect CODE ARGS...
  code=$1; shift
  "$HPMG" solve "$@" >"$T/out" 2>"$T/err"
  rc=$?
  if [ "$rc" != "$code" ]; then
    echo "FAIL: hpmg solve $* exited $rc, expected $code"; cat "$T/err"; fail=1
  elif [ "$code" = 2 ] && ! [ -s "$T/err" ]; then
    echo "FAIL: hpmg solve $* gave no message on stderr"; fail=1
  else
    echo "ok ($rc): $* :: $(head -c 200 "$T/err" | tr '\n' ' ')"
  fi
}
printf 'x: 0 0.1 0.25 0.5\n   0.75 1.0\ny: 0 0.5 1 1.5 2\n' >"$T/good"
printf 'x: 0 0.2 0.1 1\n' >"$T/decreasing"
# bad boundary conditions, grids and combinations
expect 2 --dim 2 --degree 2 --cells 4 --bc xmin=periodic
expect 2 --dim 2 --degree 2 --cells 4 --bc x=periodic:1
expect 2 --dim 2 --degree 2 --cells 4 --bc x=robin
expect 2 --dim 2 --degree 2 --cells 4 --bc ymin=dirichlet:nan
expect 2 --dim 2 --degree 2 --cells 1,4 --bc x=periodic
expect 2 --dim 2 --degree 2 --cells 4 --bc xmin=dirichlet:1     # data with the built-in manufactured problem
expect 2 --dim 2 --degree 2 --grid y=tanh:-1
expect 2 --dim 2 --degree 2 --grid-file "$T/decreasing"
expect 2 --dim 2 --degree 2 --cells 4 --fd-layout cell
expect 2 --dim 2 --degree 2 --cells 4 --bc x=periodic --device cuda --smoother patch --local-solver dense   # GPU patch: fdm only
expect 2 --dim 2 --degree 2 --cells 4 --bc x=neumann,y=neumann --rhs one --no-project
expect 2 --dim 2 --degree 2 --cells 4 --vtu "$T/u.vtu"
# valid boxes
expect 0 --dim 2 --degree 3 --cells 6,5 --bc x=periodic,ymin=neumann --grid y=tanh:1.5 --solver cg
grep -q "error               L2" "$T/out" || { echo "FAIL: no error line"; fail=1; }
expect 0 --dim 3 --degree 2 --cells 4 --bc x=periodic,y=neumann,z=periodic --solver fmg
grep -q "compatibility" "$T/out" || { echo "FAIL: no compatibility line for a singular problem"; fail=1; }
expect 0 --dim 2 --degree 2 --grid-file "$T/good" --bc xmax=neumann --smoother sgs --solver cg
expect 0 --dim 2 --degree 2 --cells 4 --bc x=neumann,y=neumann --rhs one
grep -q "compatibility       defect 1.000e+00" "$T/out" || { echo "FAIL: f = 1 on a Neumann box: defect 1 expected"; cat "$T/out"; fail=1; }
rm -rf "$T"
[ $fail = 0 ] && echo "all Q_k box CLI checks passed"
exit $fail
