/* The CUDA backend's C interface: device memory and BLAS-1 on device vectors
 * (src/backends/cuda.cu), which the backend table (hpmg_backend_cuda, la/backend.h)
 * and the discretizations' CUDA code use. Reductions accumulate in double in
 * a fixed order (the result depends only on n and the data, run after run).
 * Without CUDA in the build only hpmg_cuda_check exists: it says why. */
#ifndef HPMG_BACKENDS_CUDA_H
#define HPMG_BACKENDS_CUDA_H

#include <stddef.h>
#include <stdint.h>
#include "core/core.h"

#ifdef HPMG_HAVE_CUDA
/* HPMG_SUCCESS if a CUDA GPU can be used, else HPMG_ERR_BACKEND + message. */
hpmg_error hpmg_cuda_check(void);
hpmg_error hpmg_cuda_malloc(size_t bytes, void **p);
void hpmg_cuda_free(void *p);
hpmg_error hpmg_cuda_upload(void *dst_device, const void *src_host, size_t bytes);
hpmg_error hpmg_cuda_download(void *dst_host, const void *src_device, size_t bytes);
hpmg_error hpmg_cuda_dot(hpmg_real r, int64_t n, const void *x, const void *y, double *result);
hpmg_error hpmg_cuda_norm(hpmg_real r, int64_t n, const void *x, double *result);
hpmg_error hpmg_cuda_axpy(hpmg_real r, int64_t n, double a, const void *x, void *y); /* y += a x */
hpmg_error hpmg_cuda_xpby(hpmg_real r, int64_t n, const void *x, double b, void *y); /* y = x + b y */
hpmg_error hpmg_cuda_scale(hpmg_real r, int64_t n, double a, void *x);
hpmg_error hpmg_cuda_convert(int64_t n, hpmg_real rx, const void *x, hpmg_real ry, void *y);
/* x += a p, r -= a q; *rr = r.r (CG's update in one pass, double) */
hpmg_error hpmg_cuda_cg_update(int64_t n, double a, const double *p, const double *q, double *x, double *r, double *rr);
/* The pseudo-random vector of hpmg_estimate_lambda_max (same numbers). */
hpmg_error hpmg_cuda_fill_random(hpmg_real r, int64_t n, void *x);
#else
static inline hpmg_error hpmg_cuda_check(void) {
  return hpmg_error_set(HPMG_ERR_BACKEND,
                        "--device cuda: this build of hpmg has no CUDA backend (nvcc was not found at configure time)");
}
#endif

#endif
