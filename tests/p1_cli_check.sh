#!/bin/sh
# hpmg solve --disc p1: solves on the built-in meshes exit 0; bad input
# (options, mesh specs, missing files, mixed cell orientations, unknown groups,
# non-SPD sigma) exits 2
# with a message naming what was wrong.
# With gmsh: the same on tests/meshes/box.geo, and test_p1's identities on it.
# usage: p1_cli_check.sh path/to/hpmg path/to/test_p1
hpmg=$1 testp1=$2
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
# a file mixing orientations (one clockwise and one counter-clockwise triangle) holds an
# inverted cell: refused naming the line of the clockwise one
otmp=$(mktemp -d)
printf '$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 4 1 4\n2 1 0 4\n1\n2\n3\n4\n0 0 0\n1 0 0\n1 1 0\n0 1 0\n$EndNodes\n$Elements\n1 2 1 2\n2 1 2 2\n1 1 3 2\n2 1 3 4\n$EndElements\n' > "$otmp/mixed.msh"
expect 2 "mixed.msh', line 19: cell 0 is inverted" --mesh "$otmp/mixed.msh"
rm -rf "$otmp"
# a Gmsh file (tests/meshes/box.geo, [0,1]x[0,2]x[0,3]; groups bottom, walls), skipped without gmsh
geo=$(dirname "$0")/meshes/box.geo
if command -v gmsh > /dev/null 2>&1; then
  tmp=$(mktemp -d)
  if gmsh -3 "$geo" -format msh41 -o "$tmp/box.msh" > "$tmp/gmsh.log" 2>&1; then
    expect 0 "L2" --mesh "$tmp/box.msh" --lambda 1
    "$testp1" file "$tmp/box.msh" 6 | tail -3 | grep -q "0 failed" || { echo "FAIL: test_p1 file box.msh"; "$testp1" file "$tmp/box.msh" 6; fail=1; }
    expect 0 "converged" --mesh "$tmp/box.msh" --bc-group bottom=dirichlet,walls=robin:1
    expect 0 "converged" --mesh "$tmp/box.msh" --rhs one --bc-group bottom=dirichlet:0 --sigma domain=2 --vtu "$tmp/u.vtu"
    [ -s "$tmp/u.vtu" ] || { echo "FAIL: --vtu wrote nothing"; fail=1; }
    expect 2 "xmin" --mesh "$tmp/box.msh" --bc-group xmin=dirichlet
    printf '$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 2 1 2\n' > "$tmp/trunc.msh"
    expect 2 "trunc.msh" --mesh "$tmp/trunc.msh"
  else
    echo "gmsh failed (skipping the file cases):"; tail -3 "$tmp/gmsh.log"
  fi
  rm -rf "$tmp"
else
  echo "no gmsh: file cases skipped"
fi
"$hpmg" solve --disc p1 --help | grep -q -- "--bc-group" || { echo "FAIL: --help lacks --bc-group"; fail=1; }
"$hpmg" solve --help | grep -q -- "--disc fe|fd|p1" || { echo "FAIL: hpmg solve --help lacks p1"; fail=1; }
[ $fail = 0 ] && echo "p1 command line: all cases pass"
exit $fail
