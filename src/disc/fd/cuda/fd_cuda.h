/* Shared by the FD CUDA sources: C headers seen from C++, error checks. */
#ifndef HPMG_FD_CUDA_H
#define HPMG_FD_CUDA_H

#include <cuda_runtime.h>
#include "backends/cuda_check.h"
extern "C" {
#include "disc/fd/fd_fft.h"
#include "disc/fd/fd_stencil.h"
}

/* grid over an (nx, ny, nz) box with 32x8x1 blocks */
static inline void fd_grid3(int64_t nx, int64_t ny, int64_t nz, dim3 *g, dim3 *b) {
  *b = dim3(32, 8, 1);
  *g = dim3((unsigned)((nx + 31) / 32), (unsigned)((ny + 7) / 8), (unsigned)(nz > 0 ? nz : 1));
}

extern "C" hpmg_error fd_cuda_check_device(void);

#endif
