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
# valid boxes
# --vtu: read back (tests/check_box_vtu.py) against the manufactured solution: the lattice's
# coordinates (stretched), the Dirichlet faces' values, a periodic direction's repeated plane
vtu() { # vtu DIM K CELLS BOX BC ARGS...
  d=$1 k=$2 c=$3 b=$4 bc=$5
  shift 5
  me=$("$HPMG" solve --json --dim "$d" --degree "$k" --cells "$c" --box "$b" --vtu "$T/u.vtu" "$@" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["max_error"])') &&
    python3 "$(dirname "$0")/check_box_vtu.py" "$T/u.vtu" "$d" "$k" "$c" "$b" "$bc" "$me" || fail=1
}
vtu 2 3 3,4 1,1 PPDN --bc x=periodic,ymax=neumann --grid y=tanh:1.5
vtu 3 2 4,3,4 1,2,1.5 NDDDPP --bc z=periodic,xmin=neumann --grid y=geometric:2
# f = 1 with face data: the Dirichlet face's points carry its value (the faces' data, not a manufactured one)
"$HPMG" solve --quiet --dim 2 --degree 2 --cells 3,4 --rhs one --bc xmin=dirichlet:1.5,xmax=neumann:0 --vtu "$T/u.vtu" >/dev/null &&
  python3 - "$T/u.vtu" <<'PY' || { echo "FAIL: --rhs one --vtu: the xmin face does not carry 1.5"; fail=1; }
import re, struct, sys
data = open(sys.argv[1], "rb").read()
head = data[: data.index(b"<AppendedData")].decode()
offs = [int(o) for o in re.findall(r'offset="(\d+)"', head)]
base = data.index(b"_", data.index(b"<AppendedData")) + 1
def block(i):
    o = base + offs[i]
    n = struct.unpack("<Q", data[o : o + 8])[0]
    return struct.unpack(f"<{n // 8}d", data[o + 8 : o + 8 + n])
u, pts = block(0), block(1)
face = [u[i] for i in range(len(u)) if pts[3 * i] == 0.0]
sys.exit(0 if len(face) == 4 * 2 + 1 and all(v == 1.5 for v in face) and any(v != 1.5 for v in u) else 1)
PY
expect 0 --dim 2 --degree 3 --cells 6,5 --bc x=periodic,ymin=neumann --grid y=tanh:1.5 --solver cg
grep -q "error               L2" "$T/out" || { echo "FAIL: no error line"; fail=1; }
expect 0 --dim 3 --degree 2 --cells 4 --bc x=periodic,y=neumann,z=periodic --solver fmg
grep -q "compatibility" "$T/out" || { echo "FAIL: no compatibility line for a singular problem"; fail=1; }
expect 0 --dim 2 --degree 2 --grid-file "$T/good" --bc xmax=neumann --smoother sgs --solver cg
expect 0 --dim 2 --degree 2 --cells 4 --bc x=neumann,y=neumann --rhs one
grep -q "compatibility       defect 1.000e+00" "$T/out" || { echo "FAIL: f = 1 on a Neumann box: defect 1 expected"; cat "$T/out"; fail=1; }
# paper 001's waves: on (0, 2 pi)^2 by default, Dirichlet data from the solution (not from --bc)
expect 0 --dim 2 --degree 3 --cells 8 --rhs waves --solver fmg
grep -q "error               L2" "$T/out" || { echo "FAIL: --rhs waves: no error line"; fail=1; }
expect 2 --dim 2 --degree 3 --cells 8 --rhs waves --bc xmin=dirichlet:1
expect 2 --disc fd --dim 2 --cells 8 --rhs waves
rm -rf "$T"
[ $fail = 0 ] && echo "all Q_k box CLI checks passed"
exit $fail
