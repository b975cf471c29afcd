#!/bin/bash
# Final GPU run of the gpu-solvers helper (one call): build the worktree and
# main's old operator side by side, gpu tests + CLI + sanitizers, operator
# timing old vs new in the same run, then scripts/gpu-check's Table-7
# benchmark section (GMRES, then CG) with what is left of the budget.
set -u
OUT=$1; BUDGET=${2:-232}
T0=$(date +%s); left() { echo $(( BUDGET - ($(date +%s) - T0) )); }; el() { echo $(( $(date +%s) - T0 )); }
NP=$(nproc)
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nvcc --version | tail -1; } > $OUT/device.txt 2>&1
cat $OUT/device.txt
DEPS=$PWD/build-gpudeps
CMAKE_DEPS=(); LINK_DEPS="-llapacke -lopenblas"
if [ -d "$DEPS/lib" ] && ! ldconfig -p | grep -q liblapacke; then
  export LD_LIBRARY_PATH=$DEPS/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  CMAKE_DEPS=(-DLAPACKE_LIB=$DEPS/lib/liblapacke.so -DLAPACKE_INC=$DEPS/include
              -DBLAS_LIB=$DEPS/lib/libopenblas.so.0 -DFFTW_LIB=$DEPS/lib/libfftw3.so
              -DFFTW_OMP_LIB=$DEPS/lib/libfftw3_omp.so -DFFTW_INC=$DEPS/include
              "-DCMAKE_EXE_LINKER_FLAGS=-Wl,-rpath-link,$DEPS/lib -Wl,-rpath,$DEPS/lib")
  LINK_DEPS="$DEPS/lib/liblapacke.so $DEPS/lib/libopenblas.so.0 $DEPS/lib/libfftw3_omp.so $DEPS/lib/libfftw3.so -Wl,-rpath,$DEPS/lib -Wl,-rpath-link,$DEPS/lib"
fi
CUDA_HOME=${CUDA_HOME:-$(dirname "$(dirname "$(command -v nvcc)")")}
B=build-gpu-qk
( cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 "${CMAKE_DEPS[@]}" &&
  cmake --build $B -j"$NP" --target hpmg hpmg_cli test_cuda_ops test_cuda_solver test_fd_gpu &&
  gcc -std=gnu11 -O2 -fopenmp -DHPMG_HAVE_CUDA=1 -Iinclude -Isrc bench/gpu_solve.c $B/libhpmg.a \
      -L"$CUDA_HOME/lib64" -lcudart -lcufft $LINK_DEPS -lstdc++ -lm -o $B/gpu_solve && echo BUILD-OK ) > $OUT/build_new.log 2>&1 &
( cd old && cmake -S . -B build-gpu-old -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 "${CMAKE_DEPS[@]}" &&
  cmake --build build-gpu-old -j"$NP" --target hpmg &&
  gcc -std=gnu11 -O2 -fopenmp -DHPMG_HAVE_CUDA=1 -Iinclude -Isrc bench/gpu_solve.c build-gpu-old/libhpmg.a \
      -L"$CUDA_HOME/lib64" -lcudart -lcufft $LINK_DEPS -lstdc++ -lm -o build-gpu-old/gpu_solve && echo BUILD-OK ) > $OUT/build_old.log 2>&1 &
wait
echo "build new: $(tail -1 $OUT/build_new.log) old: $(tail -1 $OUT/build_old.log) ($(el) s)"
grep -q BUILD-OK $OUT/build_new.log || { grep -iE "error" -A3 $OUT/build_new.log | head -40; exit 1; }
grep -iE "warning" $OUT/build_new.log | head -5
# tests: kernels then sanitizers | whole solves | CLI, side by side
( OMP_NUM_THREADS=5 timeout 70 $B/tests/test_cuda_ops > $OUT/ops.log 2>&1; echo "rc=$?" >> $OUT/ops.log
  timeout 25 compute-sanitizer --tool racecheck --error-exitcode 9 $B/tests/test_cuda_ops 1 2 > $OUT/racecheck.log 2>&1; echo "rc=$?" >> $OUT/racecheck.log
  timeout 25 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/test_cuda_ops 2 3 > $OUT/memcheck.log 2>&1; echo "rc=$?" >> $OUT/memcheck.log ) &
( OMP_NUM_THREADS=9 timeout 115 $B/tests/test_cuda_solver > $OUT/solver.log 2>&1; echo "rc=$?" >> $OUT/solver.log ) &
( OMP_NUM_THREADS=2 timeout 100 sh tests/test_cli.sh $B/hpmg > $OUT/cli.log 2>&1; echo "rc=$?" >> $OUT/cli.log ) &
wait
echo "tests done ($(el) s)"
grep -E "^FAIL|checks|rc=" $OUT/ops.log | head -20
grep -E "constant field" $OUT/ops.log | head -4
grep -E "^(FAIL|ok  )|failures|rc=" $OUT/solver.log | sed -E 's/lambda_max cpu [0-9.e+-]+ gpu [0-9.e+-]+, //'
echo "cli: $(grep -E 'FAIL|cuda' $OUT/cli.log | head -8 | tr '\n' ';') $(tail -2 $OUT/cli.log | tr '\n' ' ')"
echo "racecheck: $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY|rc=' $OUT/racecheck.log | tr '\n' ' ')"
echo "memcheck: $(grep -E 'ERROR SUMMARY|rc=' $OUT/memcheck.log | tr '\n' ' ')"
# operator before/after in the same run: old = main's kernel (row-sum correction form)
if [ -x old/build-gpu-old/gpu_solve ]; then
  for a in "3 7" "7 6" "2 8"; do
    [ "$(left)" -lt 90 ] && break
    echo "old $a: $(timeout 25 old/build-gpu-old/gpu_solve 3 $a double 1 2>&1)" >> $OUT/optime.log
    echo "new $a: $(timeout 25 $B/gpu_solve 3 $a double 1 cg 1 2>&1)" >> $OUT/optime.log
  done
  python3 - $OUT/optime.log <<'PY'
import json, sys
for l in open(sys.argv[1]):
    tag, js = l.split(': ', 1)
    try: r = json.loads(js)
    except Exception: print(tag, js[:300]); continue
    f = lambda m, p: r.get(f"op_{m}_{p}", {}).get("s", float('nan'))*1e3
    print(f"{tag:8s} k={r['k']} N={r['dofs']:.3g} its={r['iterations']} L2={r['l2_error']:.4e} solve={r['t_solve']:.4f}s  apply f64 {f('apply','double'):.3f} ms, smooth f64 {f('smooth','double'):.3f} ms, apply f32 {f('apply','float'):.3f} ms, smooth f32 {f('smooth','float'):.3f} ms")
PY
fi
echo "timings done ($(el) s)"
# Table 7 (scripts/gpu-check's benchmark section; build is a no-op now)
L=$(( $(left) - 3 ))
[ $L -gt 30 ] && scripts/gpu-check $OUT/gc $L bench 2>&1 | grep -vE "^(NVIDIA|Cuda|lib)" 
echo "end ($(el) s)"
