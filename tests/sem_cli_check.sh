#!/bin/sh
# hpmg solve --disc sem: small solves exit 0 and report the error; bad input
# (degree out of range, a periodic direction with fewer than 3 elements, a
# vanishing element width, incompatible Neumann data without projection,
# an unknown solver, options of other discretizations, a --repeat out of range) exits 2 with a message
# naming what was wrong; --repeat gives every solve the first one's result;
# --rhs random solves paper 001's Fig. 6 case in 2-3 kvMG iterations, the same with 1 and 2 threads.
# usage: sem_cli_check.sh path/to/hpmg
hpmg=$1
fail=0
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
expect() { # expect RC MESSAGE-SUBSTRING args...
  rc=$1 msg=$2
  shift 2
  out=$("$hpmg" solve --disc sem --quiet "$@" 2>&1)
  got=$?
  if [ "$got" != "$rc" ]; then
    echo "FAIL: exit $got (expected $rc): hpmg solve --disc sem $*"
    echo "$out" | tail -3
    fail=1
  elif [ -n "$msg" ] && ! echo "$out" | grep -q -- "$msg"; then
    echo "FAIL: no '$msg' in the output of: hpmg solve --disc sem $*"
    echo "$out" | tail -3
    fail=1
  fi
}
expect 0 "L2" --dim 2 --degree 6 --cells 3,4
expect 0 "L2" --dim 3 --degree 3 --cells 3 --bc x=periodic,ymin=neumann --grid z=geometric:1.5 --lambda 2
expect 0 "projected out" --dim 2 --degree 4 --cells 3 --bc x=neumann,y=neumann --rhs one
expect 0 "converged" --dim 2 --degree 4 --cells 3 --bc xmin=dirichlet:1,xmax=neumann:2 --rhs one
expect 0 "L2" --dim 2 --degree 5 --cells 4 --rhs waves
expect 2 "2..32" --degree 1
expect 2 "2..32" --degree 33
expect 2 "at least 3 elements" --dim 2 --cells 2,4 --bc x=periodic
printf 'x: 0 0.5 0.5 1\n' > "$dir/zero.grid"
expect 2 "increase" --dim 2 --grid-file "$dir/zero.grid"
expect 2 "compatibility" --dim 2 --cells 3 --bc x=neumann,y=neumann --rhs one --no-project
expect 0 "mg: V-cycle iteration" --dim 2 --degree 6 --cells 3,4 --solver mg
expect 0 "kmg: flexible CG" --dim 3 --degree 4 --cells 3 --bc x=periodic,ymin=neumann --grid z=geometric:1.5 --solver kmg
expect 0 "kvmg: flexible CG" --dim 3 --degree 5 --cells 3 --solver kvmg --rhs waves
expect 0 "projected out" --dim 2 --degree 8 --cells 3 --bc x=neumann,y=neumann --rhs one --solver kvmg
expect 2 "allowed: dcg, mg, kmg, kvmg" --solver gmres
expect 2 "needs --rhs one" --dim 2 --bc xmin=dirichlet:1
expect 2 "unknown option" --smoother patch
expect 2 "--rhs" --rhs vector-one
# --vtu: read back (tests/check_box_vtu.py) against the manufactured solution
vtu() { # vtu DIM P CELLS BOX BC ARGS...
  d=$1 p=$2 c=$3 b=$4 bc=$5
  shift 5
  me=$("$hpmg" solve --disc sem --json --dim "$d" --degree "$p" --cells "$c" --box "$b" --vtu "$dir/u.vtu" "$@" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["max_error"])') &&
    python3 "$(dirname "$0")/check_box_vtu.py" "$dir/u.vtu" "$d" "$p" "$c" "$b" "$bc" "$me" || fail=1
}
vtu 2 3 3,4 1,1 PPDN --bc x=periodic,ymax=neumann
vtu 3 4 3,2,3 1,2,1.5 NDDDPP --bc z=periodic,xmin=neumann --grid y=geometric:2
expect 2 "not writable" --vtu /nonexistent-dir/u.vtu
expect 2 "1..100000" --repeat 0
expect 2 "not an integer" --repeat 2x
# --repeat N: N solves into the same vectors give the first solve's iterations and
# error (the vectors the solver keeps between solves start from the same state)
rep=$("$hpmg" solve --disc sem --json --dim 3 --degree 4 --cells 3 --solver kmg --repeat 3 |
  python3 -c 'import json, sys; d = json.load(sys.stdin); print(d["repeat"], d["iterations"], d["l2_error"], d["solve_mean_s"] >= d["solve_s"])')
one=$("$hpmg" solve --disc sem --json --dim 3 --degree 4 --cells 3 --solver kmg |
  python3 -c 'import json, sys; d = json.load(sys.stdin); print(3, d["iterations"], d["l2_error"], True)')
if [ "$rep" != "$one" ]; then
  echo "FAIL: --repeat 3 reports '$rep' (repeat, iterations, L2, mean >= fastest), one solve '$one'"
  fail=1
fi
# --rhs random (paper 001, Fig. 6: 8^3 elements on (0, 2 pi)^3, Dirichlet, p = 8): kvMG
# within the paper's 2-3 iterations, no error reported (-1), the same residual history
# with 1 and 2 threads (f a function of the node, not of the threads' order)
for t in 1 2; do
  "$hpmg" solve --disc sem --json --dim 3 --degree 8 --cells 8 --box 6.283185307179586,6.283185307179586,6.283185307179586 \
    --rhs random --threads $t > "$dir/r$t.json" || fail=1
done
python3 - "$dir/r1.json" "$dir/r2.json" <<'PY' || fail=1
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
ok = a["rhs"] == "random" and 2 <= a["iterations"] <= 3 and a["l2_error"] == -1 and a["converged"]
ok = ok and [round(h / a["history"][0], 6) for h in a["history"]] == [round(h / b["history"][0], 6) for h in b["history"]]
print("%s --rhs random: kvMG %d iterations, history %s (1 thread) / %s (2)" % ("ok  " if ok else "FAIL:", a["iterations"], a["history"], b["history"]))
sys.exit(0 if ok else 1)
PY
exit $fail
