/* Shared by the Q_k CUDA sources (qk_*.cu): C headers seen from C++, error
 * checks, device-side objects. */
#ifndef HPMG_QK_CUDA_H
#define HPMG_QK_CUDA_H

#include <cuda_runtime.h>
#include <stdint.h>
extern "C" {
#include "core/core.h"
#include "cuda/hpmg_cuda.h"
}

/* every CUDA call and kernel launch is checked */
#define QK_CU(call)                                                                          \
  do {                                                                                       \
    cudaError_t qk_cu_e_ = (call);                                                           \
    if (qk_cu_e_ != cudaSuccess)                                                             \
      return hpmg_error_set(HPMG_ERR_BACKEND, "CUDA error '%s' in %s (%s:%d)",               \
                            cudaGetErrorString(qk_cu_e_), #call, __FILE__, __LINE__);        \
  } while (0)
#define QK_LAUNCH() QK_CU(cudaGetLastError())

#define QK_MAX_K 10

/* 1D data of one precision: banded matrices in diagonal storage padded to
 * half-bandwidth kb[d] (= degree; 0 for z in 2D), dia[(o+kb)*n + i] = A[i][i+o],
 * and their diagonals. */
template <typename R> struct qk_op_data {
  const R *M[3], *K[3], *dM[3], *dK[3];
  const R *sK[3]; /* exact row sums of K (hpmg_laplace.sK / sKf): difference form */
  const R *W[3];  /* summation-by-parts weights of K for the z push (qk_ops.cu) */
};

struct hpmg_cuda_op_s {
  int dim, k;
  int kb[3];
  int64_t n[3], N;
  double lambda;
  qk_op_data<double> d;
  qk_op_data<float> f;
  void *mem_d, *mem_f;
  int nsm;
};

/* one CSR factor on the device, both precisions */
struct qk_csr {
  int nrows, ncols, nnz;
  int *rowptr, *col;
  double *val;
  float *valf;
};

struct hpmg_cuda_kron3_s {
  qk_csr A[3];
  int z_identity;
};

hpmg_error qk_sm_count(int *nsm);
/* fused CG update x += a p, r -= a q; *rr = r.r (device vectors, double) */
extern "C" hpmg_error qk_cg_update(int64_t n, double a, const double *p, const double *q, double *x, double *r,
                                   double *rr);

#endif
