#!/bin/bash
# CPU benchmark of the finite-difference solvers (issue 6, docs/fd.md):
#  - FMG to discretization error versus FFT: the default FMG (cubic FMG
#    interpolation, 2D V(1,1), 3D V(2,1) with SOR 1.3) and paper 002's (linear, 2D
#    FMG(1,2), 3D FMG(3,3)),
#    (ours: FFTW RODFT00 through hpmg; peer: /tmp/peers/fftw) on 2D
#    1024^2..8192^2 and 3D 64^3..512^3;
#  - V-cycle V(1,1) and V-cycle-preconditioned CG to relative residual 1e-9
#    versus hypre BoomerAMG-PCG (/tmp/peers/hypre) on the same grids.
# Peer binaries are run side by side when they exist; otherwise their rows are
# read from ../shared/peers/results_cpu.txt (same machine, recorded earlier),
# and the table says so.
# Usage: bench/fd_bench.sh [path/to/hpmg] [outdir]   (default build-fd/hpmg and
# bench/results/fd-cpu, with FMG_ONLY=1 bench/results/fd-cpu-fmg)
# FMG_ONLY=1 skips the V-cycle/CG runs and hypre (the FMG-vs-FFT half only).
set -u
HPMG=${1:-build-fd/hpmg}
OUTD=${2:-bench/results/fd-cpu${FMG_ONLY:+-fmg}}
REPEAT=${REPEAT:-3}
# Passive waiting: with 2 cores any other process on the machine turns spinning
# OpenMP barriers into scheduler time slices (measured 18x slower, docs/fd.md).
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
PEERS=${PEERS:-/tmp/peers}
PEERTXT=${PEERTXT:-$(dirname "$0")/../../shared/peers/results_cpu.txt}
mkdir -p "$OUTD"
J=$OUTD/fd_cpu.jsonl
: > "$J"
echo "# $(date -u +%FT%TZ) host=$(hostname) cores=$(nproc --all) OMP_WAIT_POLICY=$OMP_WAIT_POLICY load=$(cut -d' ' -f1-3 /proc/loadavg)" > "$OUTD/fd_cpu.log"
run() {
  echo "hpmg solve --disc fd $*" >> "$OUTD/fd_cpu.log"
  "$HPMG" solve --disc fd --json --repeat "$REPEAT" "$@" >> "$J" 2>> "$OUTD/fd_cpu.log" || echo "failed: $*" >> "$OUTD/fd_cpu.log"
}
for L in 10 11 12 13; do
  run --dim 2 --refine $L --solver fmg
  run --dim 2 --refine $L --solver fmg --fmg-interp linear --pre 1 --post 2
  run --dim 2 --refine $L --solver fft
done
for L in 6 7 8 9; do
  run --dim 3 --refine $L --solver fmg
  run --dim 3 --refine $L --solver fmg --fmg-interp linear --pre 3 --post 3
  run --dim 3 --refine $L --solver fft
done
[ -n "${FMG_ONLY:-}" ] || for L in 10 11; do
  run --dim 2 --refine $L --solver vcycle --tol 1e-9
  run --dim 2 --refine $L --solver cg --tol 1e-9
done
[ -n "${FMG_ONLY:-}" ] || for L in 6 7 8; do
  run --dim 3 --refine $L --solver vcycle --tol 1e-9
  run --dim 3 --refine $L --solver cg --tol 1e-9
done
# peers side by side when built
P=$OUTD/fd_cpu_peers.txt
: > "$P"
if [ -x "$PEERS/fftw/build/poisson_fftw" ]; then
  for n in 1024 2048 4096 8192; do OMP_NUM_THREADS=2 "$PEERS/fftw/build/poisson_fftw" 2 $n >> "$P" 2>&1; done
  for n in 64 128 256 512; do OMP_NUM_THREADS=2 "$PEERS/fftw/build/poisson_fftw" 3 $n >> "$P" 2>&1; done
fi
if [ -z "${FMG_ONLY:-}" ] && [ -x "$PEERS/hypre/build/poisson_hypre" ]; then
  for n in 1024 2048; do mpirun --allow-run-as-root --oversubscribe --bind-to core -np 2 "$PEERS/hypre/build/poisson_hypre" 2 $n >> "$P" 2>&1; done
  for n in 64 128 256; do mpirun --allow-run-as-root --oversubscribe --bind-to core -np 2 "$PEERS/hypre/build/poisson_hypre" 3 $n >> "$P" 2>&1; done
fi
echo "# end $(date -u +%FT%TZ) load=$(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUTD/fd_cpu.log"
python3 "$(dirname "$0")/fd_table.py" "$J" "$P" "$PEERTXT" "$OUTD/fd_cpu.log" > "$OUTD/fd_cpu.md"
cat "$OUTD/fd_cpu.md"
