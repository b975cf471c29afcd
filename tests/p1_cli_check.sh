#!/bin/sh
# hpmg solve --disc p1: solves on the built-in meshes exit 0; bad input
# (options, mesh specs, missing files, unknown groups, non-SPD sigma) exits 2
# with a message naming what was wrong.
# usage: p1_cli_check.sh path/to/hpmg
hpmg=$1
fail=0
expect() { # expect RC MESSAGE-SUBSTRING args...
  rc=$1 msg=$2
  shift 2
  out=$("$hpmg" solve --disc p1 --quiet "$@" 2>&1)
  got=$?
  if [ "$got" != "$rc" ]; then
    echo "FAIL: exit $got (expected $rc): hpmg solve --disc p1 $*"
    echo "$out" | tail -3
    fail=1
  elif [ -n "$msg" ] && ! echo "$out" | grep -q -- "$msg"; then
    echo "FAIL: no '$msg' in the output of: hpmg solve --disc p1 $*"
    echo "$out" | tail -3
    fail=1
  fi
}
expect 0 "converged" --mesh regular:1 --lambda 1 --rhs vector-one
expect 0 "L2" --mesh irregular:1 --bc-group xmin=dirichlet,xmax=robin:2
expect 0 "defect" --mesh regular:0 --rhs vector-one
expect 0 "converged" --mesh regular:2 --dim 2 --rhs one --bc-group xmin=dirichlet:1,ymax=neumann:0.5
expect 0 "converged" --mesh regular:1 --rhs one --sigma domain=2:1:1:0.1:0:0 --bc-group zmin=dirichlet:0
expect 0 "converged" --mesh regular:1 --rhs one --sigma 1=3 --bc-group 5=dirichlet:0
expect 2 "foo" --mesh regular:1 --bc-group foo=dirichlet
expect 2 "nosuch" --mesh regular:1 --sigma nosuch=2
expect 2 "positive definite" --mesh regular:1 --sigma domain=1:1:1:2:0:0
expect 2 "components" --mesh regular:1 --sigma domain=1:1:1
expect 2 "lambda" --mesh regular:1 --lambda -1
expect 2 "cube:2" --mesh cube:2
expect 2 "no-such-file.msh" --mesh /nonexistent/no-such-file.msh
expect 2 "needs --mesh" --rhs one
expect 2 "CG" --mesh regular:0 --solver fmg
expect 2 "exact solution" --mesh regular:0 --bc-group xmin=dirichlet:1
expect 2 "robin" --mesh regular:0 --bc-group xmin=robin
expect 2 "unknown option" --mesh regular:0 --degree 3
"$hpmg" solve --disc p1 --help | grep -q -- "--bc-group" || { echo "FAIL: --help lacks --bc-group"; fail=1; }
"$hpmg" solve --help | grep -q -- "--disc fe|fd|p1" || { echo "FAIL: hpmg solve --help lacks p1"; fail=1; }
[ $fail = 0 ] && echo "p1 command line: all cases pass"
exit $fail
