/* Shared by the Q_k CUDA sources (qk_*.cu): C headers seen from C++, error
 * checks, device-side objects. */
#ifndef HPMG_QK_CUDA_H
#define HPMG_QK_CUDA_H

#include <cuda_runtime.h>
#include "backends/cuda_check.h"
#include <stdint.h>
#include <string.h>
extern "C" {
#include "core/core.h"
#include "disc/qk/cuda/hpmg_cuda.h"
}

#define QK_MAX_K 10

/* Arguments of one operator-kernel pass (hpmg_cuda_op_kernel): mode, x, y, b;
 * the smoother fields d, c1, c2 zero (set them after, for HPMG_KERNEL_SMOOTH). */
static inline hpmg_kernel_args qk_kargs(hpmg_kernel_mode mode, const void *x, void *y, const void *b) {
  hpmg_kernel_args a;
  memset(&a, 0, sizeof a);
  a.mode = mode;
  a.x = x;
  a.y = y;
  a.b = b;
  return a;
}

/* 1D data of one precision: banded matrices in diagonal storage padded to
 * half-bandwidth kb[d] (= degree; 0 for z in 2D), dia[(o+kb)*n + i] = A[i][i+o],
 * and their diagonals. */
template <typename R> struct qk_op_data {
  const R *M[3], *K[3], *dM[3], *dK[3];
  const R *sK[3]; /* exact row sums of K (hpmg_laplace.sK / sKf): difference form */
  const R *W[3];  /* summation-by-parts weights of K for the z push (qk_ops.cu) */
};

/* One term of the periodic wrap pass (laplace.h, hpmg_laplace_wrap_term):
 * the operator on its gathered layers, its size m[e] per direction, and on
 * the device per direction e the grid offsets of its indices and the grid's
 * 1D diagonals there (off/dm/dk + base[e]), the gathered x and the term. */
struct qk_wrap_term {
  struct hpmg_cuda_op_s *op;
  int64_t m[3], base[3], N;
  int64_t *off;
  double *dm, *dk;
  void *xs, *ys; /* N doubles each (float uses the first half) */
};

struct hpmg_cuda_op_s {
  int nwt;               /* periodic directions: the wrap terms, added after the kernel */
  qk_wrap_term *wt;
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
  int identity[3]; /* factor d is the identity: its pass is skipped */
};

hpmg_error qk_sm_count(int *nsm);

/* Median over reps timed calls of run(i) (CUDA events, after one untimed
 * warm-up run(0)); run returns hpmg_error, the first error stops the loop. */
template <typename Run> hpmg_error qk_time_median(int reps, Run run, double *seconds) {
  HPMG_CHECK_ARG(reps >= 1 && reps <= 1000, "reps must be in 1..1000");
  double *t = (double *)malloc(sizeof(double) * (size_t)reps);
  if (!t) return hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate timings");
  cudaEvent_t e0, e1;
  if (cudaEventCreate(&e0) != cudaSuccess || cudaEventCreate(&e1) != cudaSuccess) {
    free(t);
    return hpmg_error_set(HPMG_ERR_BACKEND, "CUDA error: cannot create timing events");
  }
  hpmg_error e = run(0); /* warm-up */
  int done = 0;
  for (; done < reps && !e; done++) {
    cudaEventRecord(e0);
    e = run(done);
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    t[done] = ms * 1e-3;
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  for (int i = 1; i < done; i++) /* insertion sort, then the median */
    for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
      const double s = t[j];
      t[j] = t[j - 1];
      t[j - 1] = s;
    }
  *seconds = done > 0 ? t[done / 2] : 0.0;
  free(t);
  if (!e && cudaGetLastError() != cudaSuccess) e = hpmg_error_set(HPMG_ERR_BACKEND, "CUDA error while timing");
  return e;
}
/* fused CG update x += a p, r -= a q; *rr = r.r (device vectors, double) */

#endif
