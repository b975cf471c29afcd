/* BLAS-1 kernels of host vectors (vec_kernels.inc) in double and float, and
 * the precision conversions, compiled once per instruction set (core/isa.h). */
#include <math.h>
#include "core/isa.h"
#include "la/vec.h"

#define REAL double
#define SFX(name) name##_d
#include "vec_kernels.inc"
#define REAL float
#define SFX(name) name##_f
#include "vec_kernels.inc"

static void to_float(int64_t n, const double *restrict a, float *restrict b) {
#pragma omp parallel for simd schedule(static) if (parallel : n >= HPMG_VEC_PAR_MIN)
  for (int64_t i = 0; i < n; i++) b[i] = (float)a[i];
}
static void to_double(int64_t n, const float *restrict a, double *restrict b) {
#pragma omp parallel for simd schedule(static) if (parallel : n >= HPMG_VEC_PAR_MIN)
  for (int64_t i = 0; i < n; i++) b[i] = (double)a[i];
}
static double norm_to_float(int64_t n, const double *restrict x, float *restrict y) {
  double s = 0.0;
#pragma omp parallel for simd schedule(static) reduction(+ : s) if (parallel : n >= HPMG_VEC_PAR_MIN)
  for (int64_t i = 0; i < n; i++) {
    y[i] = (float)x[i];
    s += x[i] * x[i];
  }
  return sqrt(s);
}
static void add_from_float(int64_t n, const float *restrict z, double *restrict x) {
#pragma omp parallel for simd schedule(static) if (parallel : n >= HPMG_VEC_PAR_MIN)
  for (int64_t i = 0; i < n; i++) x[i] += (double)z[i];
}

const hpmg_vec_kernels HPMG_ISA_DEFINE(hpmg_vec_kernels) = {
    .dot = {dot_d, dot_f},
    .axpy = {axpy_d, axpy_f},
    .xpby = {xpby_d, xpby_f},
    .scale = {scale_d, scale_f},
    .nonfinite = {nonfinite_d, nonfinite_f},
    .to_float = to_float,
    .to_double = to_double,
    .norm_to_float = norm_to_float,
    .add_from_float = add_from_float,
};
