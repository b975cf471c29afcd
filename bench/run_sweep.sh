#!/bin/bash
# Standard CPU sweep, hpmg beside the deal.II peer on the same problems
# (unit box, u = prod sin(pi x_i), relative residual 1e-9; deal.II: CG + GMG
# V-cycle; hpmg: SOLVERS x SMOOTHERS, default "auto" x "auto" = hpmg's default
# configuration, i.e. what `hpmg solve` picks).
#   bench/run_sweep.sh [quick|full]       (default full)
# Writes OUTDIR (default bench/results/sweep-cpu)/sweep.raw (the runs' lines),
# sweep.jsonl (one object per run) and sweep.md (side-by-side table with time
# ratios); PREC=double|mixed|float (default double: hpmg solve's default);
# ISAS="native avx2" runs hpmg once per CPU kernel variant (default: auto,
# the best this processor runs; hpmg --version lists them).
# deal.II: ../shared/peers/dealii/build/poisson_dealii, or $DEALII_PEER; built by
# ../shared/peers/setup.sh. Without it, only hpmg runs are recorded.
# DEALII_RAW=file reuses the deal.II lines of an earlier raw file (same machine)
# instead of running deal.II again.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
MODE=${1:-full}   # quick, or full (case lists CASES3, CASES3B, CASES2, CASES2B: "k:L ...")
RES=${OUTDIR:-bench/results/sweep-cpu}
mkdir -p $RES
HP="$BUILD/solve_bench"
[ -x "$HP" ] || { echo "build first: make build" >&2; exit 1; }
DEALII=${DEALII_PEER:-}
for c in ../shared/peers/dealii/build/poisson_dealii /tmp/peers/dealii/build/poisson_dealii; do
  [ -z "$DEALII" ] && [ -x "$c" ] && DEALII=$c
done
# the peer instantiates k <= 8; bench/dealii_k10.sh builds a variant with 2D k = 9, 10
DEALII10=${DEALII10_PEER:-/tmp/peers/dealii10/b10/poisson_dealii}
MPI="mpirun --allow-run-as-root --oversubscribe --bind-to core -np 2"
PREC=${PREC:-double}      # deal.II runs its V-cycle in float; PREC=mixed is hpmg's counterpart
REPEAT=${REPEAT:-3}
RAW=$RES/sweep.raw
: > $RAW
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} OPENBLAS_NUM_THREADS=1

SMOOTHERS=${SMOOTHERS:-auto}
ISAS=${ISAS:-auto}
SOLVERS=${SOLVERS:-auto}
run_case() { # dim k L
  for isa in $ISAS; do
  for v in $SOLVERS; do
  for s in $SMOOTHERS; do
    [ "$s" = patch ] && [ "$2" -lt 2 ] && continue
    echo "+ HPMG_ISA=$isa hpmg $* --solver $v --smoother $s" >&2
    HPMG_ISA=$isa $HP "$@" --precision $PREC --repeat $REPEAT --solver $v --smoother $s | tee -a $RAW
  done; done; done
  if [ -n "${DEALII_RAW:-}" ]; then # reuse deal.II lines measured earlier on this machine
    grep "^peer=dealii dim=$1 k=$2 L=$3 " "$DEALII_RAW" | tee -a $RAW
  elif [ -n "$DEALII" ] && [ "$2" -le 8 ]; then
    echo "+ dealii $*" >&2
    OMP_NUM_THREADS=1 $MPI $DEALII "$@" 2>/dev/null | grep '^peer=' | tee -a $RAW
  elif [ -x "$DEALII10" ] && [ "$1" -eq 2 ]; then
    echo "+ dealii (k <= 10 build) $*" >&2
    OMP_NUM_THREADS=1 $MPI $DEALII10 "$@" 2>/dev/null | grep '^peer=' | tee -a $RAW
  fi
}

if [ "$MODE" = quick ]; then
  CASES3="1:5 2:4 4:3 8:2"; CASES3B=""; CASES2="2:6 4:5 8:4"
else
  # 3D ~1e7 DoFs (k=1 at 2.1M: deal.II's memory limit), 3D ~1e6, 2D ~1e7, 2D ~1e6
  CASES3=${CASES3-"1:7 2:7 3:6 4:6 5:5 6:5 7:5 8:5"}
  CASES3B=${CASES3B-"2:6 3:5 4:5 5:4 6:4 7:4 8:4"}
  CASES2=${CASES2-"1:11 2:11 3:10 4:10 5:9 6:9 7:9 8:9 9:8 10:8"}
  CASES2B=${CASES2B-"2:9 3:8 4:8 5:8 6:7 7:7 8:7 9:7 10:7"}
fi
for c in $CASES3 $CASES3B; do run_case 3 ${c%:*} ${c#*:}; done
for c in $CASES2 ${CASES2B:-}; do run_case 2 ${c%:*} ${c#*:}; done

python3 bench/sweep_table.py $RAW $RES/sweep.jsonl $RES/sweep.md \
  "$(date -u +%Y-%m-%dT%H:%MZ) $(lscpu | sed -n 's/^Model name: *//p'), $(nproc --all) cores; hpmg precision=$PREC threads=$OMP_NUM_THREADS; deal.II mpirun -np 2"
cat $RES/sweep.md
