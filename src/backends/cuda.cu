/* The CUDA backend: device memory, copies, and the BLAS-1 kernels with
 * deterministic reductions (fixed-shape trees: the result depends only on n
 * and the data, run after run), behind hpmg_backend (la/backend.h). */
#include <cuda_runtime.h>
#include "backends/cuda_check.h"
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
extern "C" {
#include "backends/cuda.h"
#include "la/backend.h"
}


/* ------------------------------------------------------- device memory */

extern "C" hpmg_error hpmg_cuda_check(void) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    cudaGetLastError(); /* clear the sticky-free error */
    return hpmg_error_set(HPMG_ERR_BACKEND, "--device cuda: no CUDA GPU is visible (%s)",
                          e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
  }
  return HPMG_SUCCESS;
}

extern "C" hpmg_error hpmg_cuda_malloc(size_t bytes, void **p) {
  *p = NULL;
  if (bytes == 0) bytes = 8;
  cudaError_t e = cudaMalloc(p, bytes);
  if (e != cudaSuccess) {
    *p = NULL;
    char b[32];
    return hpmg_error_set(e == cudaErrorMemoryAllocation ? HPMG_ERR_MEMORY : HPMG_ERR_BACKEND,
                          "cudaMalloc of %s failed: %s", hpmg_format_bytes((double)bytes, b, sizeof b),
                          cudaGetErrorString(e));
  }
  return HPMG_SUCCESS;
}
extern "C" void hpmg_cuda_free(void *p) {
  if (p) cudaFree(p);
}
extern "C" hpmg_error hpmg_cuda_upload(void *dst, const void *src, size_t bytes) {
  if (bytes) HPMG_CU(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
  return HPMG_SUCCESS;
}
extern "C" hpmg_error hpmg_cuda_download(void *dst, const void *src, size_t bytes) {
  if (bytes) HPMG_CU(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
  return HPMG_SUCCESS;
}

/* ----------------------------------------------------------------- BLAS-1 */

#define RED_THREADS 256
#define RED_BLOCKS 1024

/* fixed-shape tree reduction of per-thread double values in one block */
__device__ static double block_sum(double v) {
  __shared__ double sh[RED_THREADS];
  sh[threadIdx.x] = v;
  __syncthreads();
  for (int s = RED_THREADS / 2; s > 0; s >>= 1) {
    if ((int)threadIdx.x < s) sh[threadIdx.x] += sh[threadIdx.x + s];
    __syncthreads();
  }
  return sh[0];
}

/* part[block] = sum over the block's grid-stride share of f(i) (f may also
 * update vectors: fused Krylov updates) */
template <typename F> __global__ void reduce_kernel(int64_t n, F f, double *part) {
  double s = 0;
  for (int64_t i = (int64_t)blockIdx.x * RED_THREADS + threadIdx.x; i < n; i += (int64_t)gridDim.x * RED_THREADS)
    s += f(i);
  s = block_sum(s);
  if (threadIdx.x == 0) part[blockIdx.x] = s;
}

__global__ void reduce_final(int nb, const double *part, double *out) {
  __shared__ double sh[RED_BLOCKS];
  for (int i = threadIdx.x; i < RED_BLOCKS; i += blockDim.x) sh[i] = i < nb ? part[i] : 0.0;
  __syncthreads();
  for (int s = RED_BLOCKS / 2; s > 0; s >>= 1) {
    for (int i = threadIdx.x; i < s; i += blockDim.x) sh[i] += sh[i + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[0] = sh[0];
}

static double *red_buffer(void) { /* partials + result, allocated once */
  static double *buf = NULL;
  if (!buf && cudaMalloc((void **)&buf, sizeof(double) * (RED_BLOCKS + 8)) != cudaSuccess) buf = NULL;
  return buf;
}

template <typename F> static hpmg_error reduce(int64_t n, F f, double *result) {
  double *buf = red_buffer();
  if (!buf) return hpmg_error_set(HPMG_ERR_BACKEND, "cannot allocate the reduction buffer on the GPU");
  int64_t nb = (n + RED_THREADS - 1) / RED_THREADS;
  if (nb > RED_BLOCKS) nb = RED_BLOCKS;
  if (nb < 1) nb = 1;
  reduce_kernel<F><<<(unsigned)nb, RED_THREADS>>>(n, f, buf);
  HPMG_CU_LAUNCH();
  reduce_final<<<1, 1024>>>((int)nb, buf, buf + RED_BLOCKS);
  HPMG_CU_LAUNCH();
  HPMG_CU(cudaMemcpy(result, buf + RED_BLOCKS, sizeof(double), cudaMemcpyDeviceToHost));
  return HPMG_SUCCESS;
}

template <typename R> struct f_dot {
  const R *x, *y;
  __device__ double operator()(int64_t i) const { return (double)x[i] * (double)y[i]; }
};

extern "C" hpmg_error hpmg_cuda_dot(hpmg_real r, int64_t n, const void *x, const void *y, double *res) {
  if (r == HPMG_REAL_DOUBLE) return reduce(n, f_dot<double>{(const double *)x, (const double *)y}, res);
  return reduce(n, f_dot<float>{(const float *)x, (const float *)y}, res);
}

extern "C" hpmg_error hpmg_cuda_norm(hpmg_real r, int64_t n, const void *x, double *res) {
  HPMG_CALL(hpmg_cuda_dot(r, n, x, x, res));
  *res = sqrt(*res);
  return HPMG_SUCCESS;
}

template <typename F> __global__ void map_kernel(int64_t n, F f) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) f(i);
}

template <typename F> static hpmg_error map(int64_t n, F f) {
  if (n <= 0) return HPMG_SUCCESS;
  int64_t nb = (n + 255) / 256;
  if (nb > 65536) nb = 65536;
  map_kernel<F><<<(unsigned)nb, 256>>>(n, f);
  HPMG_CU_LAUNCH();
  return HPMG_SUCCESS;
}

template <typename R> struct f_axpy {
  R a; const R *x; R *y;
  __device__ void operator()(int64_t i) const { y[i] += a * x[i]; }
};
template <typename R> struct f_xpby {
  const R *x; R b; R *y;
  __device__ void operator()(int64_t i) const { y[i] = x[i] + b * y[i]; }
};
template <typename R> struct f_scale {
  R a; R *x;
  __device__ void operator()(int64_t i) const { x[i] *= a; }
};
template <typename A, typename B> struct f_convert {
  const A *x; B *y;
  __device__ void operator()(int64_t i) const { y[i] = (B)x[i]; }
};

extern "C" hpmg_error hpmg_cuda_axpy(hpmg_real r, int64_t n, double a, const void *x, void *y) {
  if (r == HPMG_REAL_DOUBLE) return map(n, f_axpy<double>{a, (const double *)x, (double *)y});
  return map(n, f_axpy<float>{(float)a, (const float *)x, (float *)y});
}
extern "C" hpmg_error hpmg_cuda_xpby(hpmg_real r, int64_t n, const void *x, double b, void *y) {
  if (r == HPMG_REAL_DOUBLE) return map(n, f_xpby<double>{(const double *)x, b, (double *)y});
  return map(n, f_xpby<float>{(const float *)x, (float)b, (float *)y});
}
extern "C" hpmg_error hpmg_cuda_scale(hpmg_real r, int64_t n, double a, void *x) {
  if (r == HPMG_REAL_DOUBLE) return map(n, f_scale<double>{a, (double *)x});
  return map(n, f_scale<float>{(float)a, (float *)x});
}
extern "C" hpmg_error hpmg_cuda_convert(int64_t n, hpmg_real rx, const void *x, hpmg_real ry, void *y) {
  const size_t rs = rx == HPMG_REAL_DOUBLE ? 8 : 4;
  if (rx == ry) {
    if (n > 0 && x != y) HPMG_CU(cudaMemcpyAsync(y, x, (size_t)n * rs, cudaMemcpyDeviceToDevice));
    return HPMG_SUCCESS;
  }
  if (rx == HPMG_REAL_DOUBLE) return map(n, f_convert<double, float>{(const double *)x, (float *)y});
  return map(n, f_convert<float, double>{(const float *)x, (double *)y});
}

/* x[i] = 0.5 + u_{i+1}, u_m the m-th output of the LCG of smoother.c: the
 * state after m steps by jump-ahead (affine map composed by squaring) */
template <typename R> struct f_random {
  R *x;
  __device__ void operator()(int64_t i) const {
    const uint64_t a = 6364136223846793005ull, c = 1442695040888963407ull;
    uint64_t m = (uint64_t)i + 1, A = 1, C = 0, pa = a, pc = c; /* state_m = A s0 + C */
    while (m) {
      if (m & 1) { A = A * pa; C = C * pa + pc; }
      pc = pc * pa + pc;
      pa = pa * pa;
      m >>= 1;
    }
    const uint64_t st = A * 0x9E3779B97F4A7C15ull + C;
    x[i] = (R)(0.5 + (double)(st >> 11) / 9007199254740992.0);
  }
};

extern "C" hpmg_error hpmg_cuda_fill_random(hpmg_real r, int64_t n, void *x) {
  if (r == HPMG_REAL_DOUBLE) return map(n, f_random<double>{(double *)x});
  return map(n, f_random<float>{(float *)x});
}

/* fused CG update: x += a p, r -= a q; returns r.r */
struct f_cg_update {
  double a; const double *p, *q; double *x, *r;
  __device__ double operator()(int64_t i) const {
    x[i] += a * p[i];
    const double v = r[i] - a * q[i];
    r[i] = v;
    return v * v;
  }
};
extern "C" hpmg_error hpmg_cuda_cg_update(int64_t n, double a, const double *p, const double *q, double *x, double *r,
                                   double *rr) {
  return reduce(n, f_cg_update{a, p, q, x, r}, rr);
}

/* ------------------------------------------------------------- the table */

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
  HPMG_CU(cudaDeviceSynchronize());
  return HPMG_SUCCESS;
}
static hpmg_error c_zero(hpmg_real r, int64_t n, void *x) {
  if (n > 0) HPMG_CU(cudaMemsetAsync(x, 0, (size_t)n * hpmg_real_size(r)));
  return HPMG_SUCCESS;
}
static hpmg_error c_copy(hpmg_real r, int64_t n, const void *x, void *y) {
  if (n > 0 && x != y) HPMG_CU(cudaMemcpyAsync(y, x, (size_t)n * hpmg_real_size(r), cudaMemcpyDeviceToDevice));
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
    hpmg_cuda_cg_update,
    /* norm_to_float */ NULL,
    /* add_from_float */ NULL,
};

extern "C" hpmg_error hpmg_backend_cuda(const hpmg_backend **be) {
  *be = NULL;
  HPMG_CALL(hpmg_cuda_check());
  *be = &cuda_backend;
  return HPMG_SUCCESS;
}
