/* BLAS-1 on host vectors of either precision (OpenMP). Reductions accumulate
 * in double whatever the storage precision. */
#ifndef HPMG_LA_VEC_H
#define HPMG_LA_VEC_H

#include "core/core.h"
#include "core/isa.h"

/* Entries below which a host BLAS-1 kernel (and hpmg_vec_zero) runs on the
 * calling thread (the OpenMP `if` clause): a parallel region's fork and
 * join cost more than the loop there (a few microseconds of work per
 * thread; with OMP_WAIT_POLICY=passive each region wakes the sleeping
 * threads by a system call). The result does not depend on it for the
 * elementwise kernels; a reduction below it is the one-thread sum. */
#define HPMG_VEC_PAR_MIN 32768

double hpmg_vec_dot(hpmg_real r, int64_t n, const void *x, const void *y);
double hpmg_vec_norm(hpmg_real r, int64_t n, const void *x);
void hpmg_vec_zero(hpmg_real r, int64_t n, void *x);
void hpmg_vec_copy(hpmg_real r, int64_t n, const void *x, void *y);
/* y = a*x + y */
void hpmg_vec_axpy(hpmg_real r, int64_t n, double a, const void *x, void *y);
/* y = x + b*y */
void hpmg_vec_xpby(hpmg_real r, int64_t n, const void *x, double b, void *y);
void hpmg_vec_scale(hpmg_real r, int64_t n, double a, void *x);
/* y (precision ry) = x (precision rx) */
void hpmg_vec_convert(int64_t n, hpmg_real rx, const void *x, hpmg_real ry, void *y);
/* Fused passes of the mixed-precision outer iteration: y = (float)x and the
 * return value ||x||_2 (accumulated in double) in one pass; x += (double)z. */
double hpmg_vec_norm_to_float(int64_t n, const double *x, float *y);
void hpmg_vec_add_from_float(int64_t n, const float *z, double *x);
/* Number of non-finite entries (NaN/Inf). */
int64_t hpmg_vec_count_nonfinite(hpmg_real r, int64_t n, const void *x);

/* The CPU kernels behind these, one table per instruction set
 * (vec_kernels.c); [2] entries are indexed by hpmg_real. */
typedef struct {
  double (*dot[2])(int64_t n, const void *x, const void *y);
  void (*axpy[2])(int64_t n, double a, const void *x, void *y);
  void (*xpby[2])(int64_t n, const void *x, double b, void *y);
  void (*scale[2])(int64_t n, double a, void *x);
  int64_t (*nonfinite[2])(int64_t n, const void *x);
  void (*to_float)(int64_t n, const double *x, float *y);
  void (*to_double)(int64_t n, const float *x, double *y);
  double (*norm_to_float)(int64_t n, const double *x, float *y);
  void (*add_from_float)(int64_t n, const float *z, double *x);
} hpmg_vec_kernels;
HPMG_ISA_TABLE(hpmg_vec_kernels, hpmg_vec_kernels)

#endif
