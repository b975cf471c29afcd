#!/bin/sh
# hpmg's FMG + vertex-patch solve (paper 000, Tables 1-2 setting) against an
# independent implementation: scripts/table1-reference.py rebuilds the method
# from assembled SciPy matrices and shares no code with hpmg. With each color
# swept over the whole level (--patch-batch all, as the paper and the GPU) the
# relative residual after the FMG start and after every V-cycle must agree to
# the 5 digits the CLI prints, with the standard cycle and with --cycle
# add-residual (the authors' cycle, which reproduces the published 2D counts). Skipped (77) without /usr/bin/python3 and its
# numpy and scipy modules (Debian python3-numpy, python3-scipy).
# Usage: table1_reference.sh HPMG_BINARY REFERENCE_SCRIPT
set -u
hpmg=$1
ref=$2
py=/usr/bin/python3
if ! [ -x "$py" ] || ! "$py" -c 'import numpy, scipy' 2>/dev/null; then
  echo "SKIP: /usr/bin/python3 with numpy and scipy not found (install python3-numpy python3-scipy)"
  exit 77
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
checks=0
# dim degree level cycle: 2D Q1-Q3, 3D Q1-Q3 with the standard cycle; 2D Q1, Q2
# (where the two cycles' counts differ) and 3D Q1 with the authors' cycle
for c in "2 1 5 standard" "2 2 5 standard" "2 3 4 standard" "3 1 4 standard" "3 2 3 standard" "3 3 3 standard" \
         "2 1 5 add-residual" "2 2 5 add-residual" "3 1 4 add-residual"; do
  set -- $c
  "$hpmg" solve --dim "$1" --degree "$2" --refine "$3" --rhs vector-one --solver fmg --smoother patch \
    --patch-batch all --tol 1e-9 --cycle "$4" >"$tmp/hpmg.txt" 2>&1 ||
    { echo "FAIL: hpmg solve $c"; fail=$((fail + 1)); continue; }
  awk '/^ +iter +residual/ {on = 1; next} /^summary/ {on = 0} on && NF == 4 {print $1, $3}' "$tmp/hpmg.txt" >"$tmp/a.txt"
  "$py" "$ref" --dim "$1" --degrees "$2" --levels "$3..$3" --cycle "$4" --history >"$tmp/b.txt" 2>&1 ||
    { echo "FAIL: reference $c"; cat "$tmp/b.txt"; fail=$((fail + 1)); continue; }
  if ! awk -v case="dim $1 k $2 L $3 $4" '
      NR == FNR {a[$1] = $2; na = FNR; next}
      {b[$1] = $2; nb = FNR}
      END {
        bad = (na != nb) || na < 2
        if (na != nb) printf "FAIL: %s: hpmg %d cycles, reference %d\n", case, na - 1, nb - 1
        for (i = 0; i < na && i < nb; i++) {
          d = a[i] - b[i]; if (d < 0) d = -d
          if (d > 2e-4 * b[i]) { printf "FAIL: %s cycle %d: hpmg %s, reference %s\n", case, i, a[i], b[i]; bad = 1 }
        }
        if (!bad) printf "ok: %s: %d cycles, relative residuals agree (%s ... %s)\n", case, na - 1, a[0], a[na - 1]
        exit bad
      }' "$tmp/a.txt" "$tmp/b.txt"; then
    fail=$((fail + 1))
  fi
  checks=$((checks + 1))
done
echo "$checks cases, $fail failed"
[ "$fail" -eq 0 ]
