#!/bin/bash
# The cost of one smoothing step on one level, in units of one application of
# the operator kernel (docs/performance.md, "The patch smoother's cost per
# step"): the multiplicative vertex-patch step (double and float) and the
# Chebyshev(5)-Jacobi step (double), 3D k = 2..8 and 2D k = 2..10 (no float
# patch step in 2D) at 0.5e6-4e6 unknowns.
#   bench/smooth_step.sh [BUILD]     (default build; OMP_NUM_THREADS as set, else all cores)
# Writes bench/results/smooth-step/smooth_step.txt (smooth_bench's lines, a
# header naming the processor and the commit) and prints a table.
set -u
cd "$(dirname "$0")/.."
B=${1:-build}/smooth_bench
[ -x "$B" ] || { echo "build first: cmake --build ${1:-build} --target smooth_bench" >&2; exit 1; }
OUT=bench/results/smooth-step
mkdir -p $OUT
F=$OUT/smooth_step.txt
{
  echo "# bench/smooth_step.sh: $B DIM K REFINE 5 SMOOTHER zorder auto PREC (one level, best of 5 steps;"
  echo "# step_in_applies = step time / one operator application); $(date -u +%Y-%m-%d) commit $(git rev-parse --short HEAD)"
  echo "# $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, OMP_NUM_THREADS=${OMP_NUM_THREADS:-all}, CPU kernels $("${B%/*}/hpmg" --version 2>/dev/null | sed -n 's/^CPU kernels: *//p')"
} > $F
for c in 2:6 3:5 4:5 5:4 6:4 7:4 8:4; do
  k=${c%:*} L=${c#*:}
  for p in "patch double" "patch float" "chebyshev double"; do
    set -- $p
    $B 3 $k $L 5 $1 zorder auto $2 | tail -1 >> $F
  done
done
for c in 2:10 4:9 6:8 8:8 10:7; do
  for s in patch chebyshev; do
    $B 2 ${c%:*} ${c#*:} 5 $s zorder auto double | tail -1 >> $F
  done
done
python3 - "$F" <<'EOF'
import sys
rows = {}
for line in open(sys.argv[1]):
    if not line.startswith("smooth_bench"):
        continue
    d = dict(kv.split("=", 1) for kv in line.split()[1:])
    rows.setdefault((int(d["dim"]), int(d["k"]), d["unknowns"]), {})[(d["smoother"], d["precision"])] = d
print("| dim | k | unknowns | patch double [ms] | in applies | patch float [ms] | in applies | Chebyshev(5) double [ms] | in applies |")
print("|---|---|---|---|---|---|---|---|---|")
for (dim, k, n), r in sorted(rows.items(), key=lambda t: (-t[0][0], t[0][1])):
    cells = []
    for key in (("patch", "double"), ("patch", "float"), ("chebyshev", "double")):
        d = r.get(key)
        cells += ["%.1f" % (float(d["step_s"]) * 1e3), "%.1f" % float(d["step_in_applies"])] if d else ["-", "-"]
    print("| %d | %d | %.2e | %s |" % (dim, k, float(n), " | ".join(cells)))
EOF
