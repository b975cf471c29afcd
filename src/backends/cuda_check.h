/* The one error check of every CUDA source (C++ only, inside functions that
 * return hpmg_error): a failed runtime call or kernel launch returns
 * HPMG_ERR_BACKEND with the call, the file and the line. */
#ifndef HPMG_BACKENDS_CUDA_CHECK_H
#define HPMG_BACKENDS_CUDA_CHECK_H

#include <cuda_runtime.h>
extern "C" {
#include "core/core.h"
}

#define HPMG_CU(call)                                                                        \
  do {                                                                                       \
    cudaError_t hpmg_cu_e_ = (call);                                                         \
    if (hpmg_cu_e_ != cudaSuccess)                                                           \
      return hpmg_error_set(HPMG_ERR_BACKEND, "CUDA error '%s' in %s (%s:%d)",               \
                            cudaGetErrorString(hpmg_cu_e_), #call, __FILE__, __LINE__);      \
  } while (0)
/* after every kernel launch */
#define HPMG_CU_LAUNCH() HPMG_CU(cudaGetLastError())

#endif
