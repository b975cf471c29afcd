/* The CUDA backend: device memory and the BLAS-1 kernels of qk_ops.cu
 * (deterministic reductions: the result depends only on n and the data). */
#include "qk_cuda.h" /* first: the C headers inside extern "C" */
extern "C" {
#include "la/backend.h"
}

static hpmg_error c_alloc(size_t bytes, void **p) {
  HPMG_CALL(hpmg_cuda_malloc(bytes, p));
  if (cudaMemset(*p, 0, bytes ? bytes : 8) != cudaSuccess) {
    hpmg_cuda_free(*p);
    *p = NULL;
    return hpmg_error_set(HPMG_ERR_BACKEND, "cudaMemset failed");
  }
  return HPMG_SUCCESS;
}
static void c_free(void **p) {
  hpmg_cuda_free(*p);
  *p = NULL;
}
static hpmg_error c_to_host(const void *src, void *dst, size_t bytes) { return hpmg_cuda_download(dst, src, bytes); }
static hpmg_error c_to_device(const void *src, void *dst, size_t bytes) { return hpmg_cuda_upload(dst, src, bytes); }
static hpmg_error c_sync(void) {
  QK_CU(cudaDeviceSynchronize());
  return HPMG_SUCCESS;
}
static hpmg_error c_zero(hpmg_real r, int64_t n, void *x) {
  if (n > 0) QK_CU(cudaMemsetAsync(x, 0, (size_t)n * hpmg_real_size(r)));
  return HPMG_SUCCESS;
}
static hpmg_error c_copy(hpmg_real r, int64_t n, const void *x, void *y) {
  if (n > 0 && x != y) QK_CU(cudaMemcpyAsync(y, x, (size_t)n * hpmg_real_size(r), cudaMemcpyDeviceToDevice));
  return HPMG_SUCCESS;
}

static const hpmg_backend cuda_backend = {
    /* name */ "cuda",
    /* on_device */ 1,
    c_alloc,
    c_free,
    c_to_host,
    c_to_device,
    c_sync,
    c_zero,
    c_copy,
    hpmg_cuda_axpy,
    hpmg_cuda_xpby,
    hpmg_cuda_scale,
    hpmg_cuda_dot,
    hpmg_cuda_convert,
    qk_cg_update,
    /* norm_to_float */ NULL,
    /* add_from_float */ NULL,
};

extern "C" hpmg_error hpmg_backend_cuda(const hpmg_backend **be) {
  *be = NULL;
  HPMG_CALL(hpmg_cuda_check());
  *be = &cuda_backend;
  return HPMG_SUCCESS;
}
