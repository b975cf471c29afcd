/* Shared by the GPU kernel tests (test_cuda_ops, test_cuda_patch, test_cuda_box). */
#ifndef HPMG_TESTS_CUDA_CHECK_H
#define HPMG_TESTS_CUDA_CHECK_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "disc/qk/cuda/hpmg_cuda.h"

/* random values in [-1, 1) (a fixed sequence per test program) */
static uint64_t cuda_check_seed = 0x9e3779b97f4a7c15ull;
static inline double urand(void) {
  cuda_check_seed = cuda_check_seed * 6364136223846793005ull + 1442695040888963407ull;
  return 2.0 * ((double)(cuda_check_seed >> 11) / 9007199254740992.0) - 1.0;
}
static inline double get(hpmg_real r, const void *x, int64_t i) {
  return r == HPMG_REAL_DOUBLE ? ((const double *)x)[i] : (double)((const float *)x)[i];
}
static inline void set(hpmg_real r, void *x, int64_t i, double v) {
  if (r == HPMG_REAL_DOUBLE) ((double *)x)[i] = v;
  else ((float *)x)[i] = (float)v;
}
static inline void fill(hpmg_real r, int64_t n, void *x) {
  for (int64_t i = 0; i < n; i++) set(r, x, i, urand());
}
/* relative 2-norm error of a against ref (absolute where ref = 0; infinite on a non-finite a) */
static inline double relerr(hpmg_real r, int64_t n, const void *a, const void *ref) {
  double num = 0, den = 0;
  for (int64_t i = 0; i < n; i++) {
    const double va = get(r, a, i), vr = get(r, ref, i);
    if (!isfinite(va)) return INFINITY;
    num += (va - vr) * (va - vr);
    den += vr * vr;
  }
  return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* a failing library call ends the test with its message */
#define CK(call)                                                                    \
  do {                                                                              \
    hpmg_error e_ = (call);                                                         \
    if (e_) {                                                                       \
      printf("FAIL %s: %s (%s:%d)\n", #call, hpmg_last_error(), __FILE__, __LINE__); \
      exit(1);                                                                      \
    }                                                                               \
  } while (0)

#ifdef HPMG_HAVE_CUDA /* the kernel entry points exist only in a CUDA build */
/* device buffer poisoned with NaN */
static inline void poison(void *dev, size_t bytes) {
  void *h = malloc(bytes);
  memset(h, 0xff, bytes); /* all-ones: NaN in both precisions */
  CK(hpmg_cuda_upload(dev, h, bytes));
  free(h);
}

/* The host and device vectors of one operator check in precision r: x, b
 * and d random, x and b uploaded. */
typedef struct {
  size_t bytes;
  void *hx, *hb, *hd, *hy, *hd2, *gy, *gd; /* host */
  void *dx, *db, *dd, *dy, *dy2;           /* device */
} cuda_op_bufs;
static inline void cuda_op_bufs_create(hpmg_real r, int64_t n, cuda_op_bufs *B) {
  const size_t bytes = (size_t)n * hpmg_real_size(r);
  B->bytes = bytes;
  void **h[7] = {&B->hx, &B->hb, &B->hd, &B->hy, &B->hd2, &B->gy, &B->gd}, **d[5] = {&B->dx, &B->db, &B->dd, &B->dy, &B->dy2};
  for (int i = 0; i < 7; i++) *h[i] = malloc(bytes > 0 ? bytes : 1);
  for (int i = 0; i < 5; i++) CK(hpmg_cuda_malloc(bytes, d[i]));
  fill(r, n, B->hx);
  fill(r, n, B->hb);
  fill(r, n, B->hd);
  CK(hpmg_cuda_upload(B->dx, B->hx, bytes));
  CK(hpmg_cuda_upload(B->db, B->hb, bytes));
}
static inline void cuda_op_bufs_destroy(cuda_op_bufs *B) {
  free(B->hx), free(B->hb), free(B->hd), free(B->hy), free(B->hd2), free(B->gy), free(B->gd);
  hpmg_cuda_free(B->dx), hpmg_cuda_free(B->db), hpmg_cuda_free(B->dd), hpmg_cuda_free(B->dy), hpmg_cuda_free(B->dy2);
}

/* The GPU operator dop against the CPU's op on B's vectors: every fused mode
 * (apply, residual, the Chebyshev smoothing step with its d update, the
 * Jacobi step) and the inverse diagonal with its copy; outputs poisoned with
 * NaN first. report(what, r, relative error, ctx) takes every output. */
static inline void cuda_check_operator(const hpmg_laplace *op, hpmg_cuda_op dop, hpmg_real r, int64_t n,
                                       cuda_op_bufs *B, void (*report)(const char *, hpmg_real, double, void *),
                                       void *ctx) {
  const size_t bytes = B->bytes;
  const double c1 = 0.3 + 0.5 * fabs(urand()), c2 = 0.2 + fabs(urand());
  const char *names[4] = {"apply", "residual", "smooth (chebyshev)", "smooth (jacobi)"};
  for (int m = 0; m < 4; m++) {
    hpmg_kernel_args a = {.mode = m == 0 ? HPMG_KERNEL_APPLY : m == 1 ? HPMG_KERNEL_RESIDUAL : HPMG_KERNEL_SMOOTH,
                          .x = B->hx, .y = B->hy, .b = B->hb, .d = m == 2 ? B->hd2 : NULL, .c1 = c1, .c2 = c2};
    memcpy(B->hd2, B->hd, bytes);
    hpmg_laplace_kernel(op, r, &a);
    CK(hpmg_cuda_upload(B->dd, B->hd, bytes));
    poison(B->dy, bytes);
    hpmg_kernel_args ga = a;
    ga.x = B->dx, ga.y = B->dy, ga.b = B->db, ga.d = m == 2 ? B->dd : NULL;
    CK(hpmg_cuda_op_kernel(dop, r, &ga));
    CK(hpmg_cuda_download(B->gy, B->dy, bytes));
    report(names[m], r, relerr(r, n, B->gy, B->hy), ctx);
    if (m == 2) {
      CK(hpmg_cuda_download(B->gd, B->dd, bytes));
      report("smooth (d update)", r, relerr(r, n, B->gd, B->hd2), ctx);
    }
  }
  hpmg_laplace_inverse_diagonal(op, r, 0.7, B->hx, B->hy, NULL);
  poison(B->dy, bytes);
  poison(B->dy2, bytes);
  CK(hpmg_cuda_op_inverse_diagonal(dop, r, 0.7, B->dx, B->dy, B->dy2));
  CK(hpmg_cuda_download(B->gy, B->dy, bytes));
  report("inverse diagonal", r, relerr(r, n, B->gy, B->hy), ctx);
  CK(hpmg_cuda_download(B->gy, B->dy2, bytes));
  report("inverse diagonal copy", r, relerr(r, n, B->gy, B->hy), ctx);
}
#endif

#endif
