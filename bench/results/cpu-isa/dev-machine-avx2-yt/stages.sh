#!/bin/bash
# The AVX2 operator's cost per stage, by cutting one stage out at a time
# (docs/performance.md, "What bounds it"): the kernel object of the avx2
# variant is recompiled with one CUT_* switch of cut.py, op_bench relinked,
# and every build timed in interleaved rounds (AVX2 forced, one thread).
#   stages.sh BUILD_DIR [ROUNDS]     (BUILD_DIR: a configured Release build of this tree)
# Run from the repository root; the source is patched in a copy.
set -eu
B=$1; R=${2:-5}
D=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d)
cp -r src "$T/src"
python3 "$D/cut.py" "$T/src/disc/qk/laplace_kernels.inc"
O=$B/CMakeFiles/hpmg_kernels_avx2.dir/src/disc/qk/laplace_kernels.c.o
for v in NONE CUT_Z CUT_Y CUT_TOROWS CUT_X CUT_FROMROWS; do
  gcc -DHPMG_ISA=avx2 -Iinclude -I"$B/generated" -I"$T/src" -O3 -DNDEBUG -ffp-contract=fast -march=x86-64-v3 \
    -fopenmp -std=gnu11 -D$v -c "$T/src/disc/qk/laplace_kernels.c" -o "$O"
  cmake --build "$B" --target op_bench > /dev/null
  cp "$B/op_bench" "$T/op_$v"
done
touch src/disc/qk/laplace_kernels.c # the next build restores the object
for r in $(seq "$R"); do
  for c in "3 3 4" "3 4 4" "3 5 3"; do
    for v in NONE CUT_Z CUT_Y CUT_TOROWS CUT_X CUT_FROMROWS; do
      echo "$r $v $c $(OMP_NUM_THREADS=1 HPMG_ISA=avx2 "$T/op_$v" $c 40 | grep 'double apply' | awk '{print $3}')"
    done
  done
done
rm -rf "$T"
