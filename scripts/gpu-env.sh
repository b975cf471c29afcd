# Sourced by scripts/gpu-check*: the libraries of the GPU machine and the
# build of the CUDA backend with the GPU benchmark drivers.
#   . scripts/gpu-env.sh; gpu_build BUILDDIR LOG cmake-targets...
# LAPACKE/OpenBLAS/FFTW come from the system or, where it lacks them, from a
# carried build-gpudeps/ (made by `scripts/gpu-check-fd --collect-deps`).
# gpu_build configures for sm_90, builds the targets, then links
# bench/gpu_solve.c and bench/gpu_patch.c against the library and compiles
# bench/gpu_peak.cu; the last line of LOG is BUILD-OK on success.
DEPS=$PWD/build-gpudeps
CMAKE_DEPS=()
LINK_DEPS="-llapacke -lopenblas"
if [ -d "$DEPS/lib" ] && ! ldconfig -p | grep -q liblapacke; then
  export LD_LIBRARY_PATH=$DEPS/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  CMAKE_DEPS=(-DLAPACKE_LIB=$DEPS/lib/liblapacke.so -DLAPACKE_INC=$DEPS/include
              -DBLAS_LIB=$DEPS/lib/libopenblas.so.0 -DFFTW_LIB=$DEPS/lib/libfftw3.so
              -DFFTW_OMP_LIB=$DEPS/lib/libfftw3_omp.so -DFFTW_INC=$DEPS/include
              "-DCMAKE_EXE_LINKER_FLAGS=-Wl,-rpath-link,$DEPS/lib -Wl,-rpath,$DEPS/lib")
  LINK_DEPS="$DEPS/lib/liblapacke.so $DEPS/lib/libopenblas.so.0 $DEPS/lib/libfftw3_omp.so $DEPS/lib/libfftw3.so -Wl,-rpath,$DEPS/lib -Wl,-rpath-link,$DEPS/lib"
fi
CUDA_HOME=${CUDA_HOME:-$(dirname "$(dirname "$(command -v nvcc)")")}

gpu_device_info() { # FILE
  {
    nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv,noheader
    nvcc --version | tail -1
    for l in liblapacke libopenblas libfftw3; do
      ldconfig -p | grep -q "$l" && echo "$l: installed" || echo "$l: missing (carried build-gpudeps used)"
    done
  } > "$1" 2>&1
  cat "$1"
}

gpu_build() { # BUILDDIR LOG targets...
  local b=$1 log=$2
  shift 2
  {
    cmake -S . -B "$b" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 "${CMAKE_DEPS[@]}" &&
    cmake --build "$b" -j"$(nproc)" --target "$@" &&
    # FFTW as CMake found it (the library's FD solvers need it once linked in)
    local fftw cache="$b/CMakeCache.txt" &&
    fftw="$(sed -n 's/^FFTW_OMP_LIB:FILEPATH=//p' "$cache" | grep -v NOTFOUND) $(sed -n 's/^FFTW_LIB:FILEPATH=//p' "$cache" | grep -v NOTFOUND)" &&
    for d in gpu_solve gpu_patch; do
      gcc -std=gnu11 -O2 -fopenmp -DHPMG_HAVE_CUDA=1 -Iinclude -Isrc -I"$b/generated" bench/$d.c "$b/libhpmg.a" \
          -L"$CUDA_HOME/lib64" -lcudart -lcufft -lcusparse $fftw $LINK_DEPS -lstdc++ -lm -o "$b/$d" || return 1
    done &&
    nvcc -O3 -arch=sm_90 -std=c++17 bench/gpu_peak.cu -o "$b/gpu_peak" &&
    echo BUILD-OK
  } > "$log" 2>&1
}
