#!/bin/bash
# Memory traffic of one smoothing step, simulated by valgrind's cachegrind
# (this VM exposes no hardware counters to perf). Build without -march=native
# (valgrind does not decode AVX-512):
#   cmake -S . -B build-cg -DCMAKE_BUILD_TYPE=Release -DHPMG_NATIVE=OFF -DHPMG_CUDA=OFF
#   make -C build-cg smooth_bench
# Each configuration runs smooth_bench with 1 and with 3 steps (single thread);
# the difference of the last-level data misses / 2 is one step. Traffic per DoF
# = (read + write misses) x 64 B / 8 B per double / unknowns: lines brought in
# from memory, write-backs not counted (cachegrind does not model them; the
# patch scatter adds about one written double per unknown).
# usage: bench/patch_traffic.sh [LL bytes, default 2097152 = this VM's per-core L2]
#        CONFIGS="dim:k:refine:smoother:order:batch ..." to choose the cases
set -eu
LL=${1:-2097152}
B=${B:-build-cg}/smooth_bench
CONFIGS=${CONFIGS:-"3:2:5:patch:zorder:auto 3:2:5:patch:lexicographic:auto 3:2:5:patch:zorder:all 3:4:4:patch:zorder:auto 3:4:4:patch:lexicographic:auto 3:4:4:patch:zorder:all 3:4:4:chebyshev:-:-"}
misses() { # prints DLmr+DLmw of one run
  local f; f=$(mktemp)
  OMP_NUM_THREADS=1 valgrind --tool=cachegrind --cache-sim=yes --D1=49152,12,64 --LL=$LL,16,64 \
    --cachegrind-out-file=/dev/null "$@" > /dev/null 2> "$f"
  # summary lines: "D1  misses: ... (rd + wr)" and "LLd misses: N (R rd + W wr)"
  grep -E '^==[0-9]+== LLd misses:' "$f" | sed -E 's/.*LLd misses: *([0-9,]+).*/\1/' | tr -d ,
  rm -f "$f"
}
printf "| dim | k | unknowns | smoother | order | batch | LL | doubles/DoF per step |\n|---|---|---|---|---|---|---|---|\n"
for c in $CONFIGS; do
  IFS=: read -r dim k ref sm ord bat <<< "$c"
  [ "$ord" = - ] && ord=zorder; [ "$bat" = - ] && bat=auto
  m1=$(misses "$B" "$dim" "$k" "$ref" 1 "$sm" "$ord" "$bat")
  m3=$(misses "$B" "$dim" "$k" "$ref" 3 "$sm" "$ord" "$bat")
  n=$(( (k * (1 << ref) - 1) ** dim ))
  python3 -c "print('| $dim | $k | $n | $sm | $ord | $bat | $LL | %.2f |' % (($m3 - $m1) / 2 * 64 / 8 / $n))"
done
