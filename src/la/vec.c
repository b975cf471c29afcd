#include <math.h>
#include <string.h>
#include <omp.h>
#include "vec.h"

#define REAL double
#define SFX(name) name##_d
#include "vec_kernels.inc"
#undef REAL
#undef SFX
#define REAL float
#define SFX(name) name##_f
#include "vec_kernels.inc"
#undef REAL
#undef SFX

#define DISPATCH(r, call_d, call_f) ((r) == HPMG_REAL_DOUBLE ? (call_d) : (call_f))

double hpmg_vec_dot(hpmg_real r, int64_t n, const void *x, const void *y) {
  return DISPATCH(r, dot_d(n, x, y), dot_f(n, x, y));
}
double hpmg_vec_norm(hpmg_real r, int64_t n, const void *x) { return sqrt(hpmg_vec_dot(r, n, x, x)); }
void hpmg_vec_zero(hpmg_real r, int64_t n, void *x) {
  char *p = x;
  size_t total = (size_t)n * hpmg_real_size(r);
#pragma omp parallel
  { /* first touch in parallel, matching the kernels' static partition */
    int nt = omp_get_num_threads(), t = omp_get_thread_num();
    size_t a = total / nt * t, e = t == nt - 1 ? total : total / nt * (t + 1);
    memset(p + a, 0, e - a);
  }
}
void hpmg_vec_copy(hpmg_real r, int64_t n, const void *x, void *y) {
  if (x != y) memcpy(y, x, (size_t)n * hpmg_real_size(r));
}
void hpmg_vec_axpy(hpmg_real r, int64_t n, double a, const void *x, void *y) {
  if (r == HPMG_REAL_DOUBLE) axpy_d(n, a, x, y);
  else axpy_f(n, (float)a, x, y);
}
void hpmg_vec_xpby(hpmg_real r, int64_t n, const void *x, double b, void *y) {
  if (r == HPMG_REAL_DOUBLE) xpby_d(n, x, b, y);
  else xpby_f(n, x, (float)b, y);
}
void hpmg_vec_scale(hpmg_real r, int64_t n, double a, void *x) {
  if (r == HPMG_REAL_DOUBLE) scale_d(n, a, x);
  else scale_f(n, (float)a, x);
}
void hpmg_vec_convert(int64_t n, hpmg_real rx, const void *x, hpmg_real ry, void *y) {
  if (rx == ry) { hpmg_vec_copy(rx, n, x, y); return; }
  if (rx == HPMG_REAL_DOUBLE) {
    const double *a = x; float *b = y;
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < n; i++) b[i] = (float)a[i];
  } else {
    const float *a = x; double *b = y;
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < n; i++) b[i] = (double)a[i];
  }
}
double hpmg_vec_norm_to_float(int64_t n, const double *x, float *y) {
  double s = 0.0;
#pragma omp parallel for simd schedule(static) reduction(+ : s)
  for (int64_t i = 0; i < n; i++) {
    y[i] = (float)x[i];
    s += x[i] * x[i];
  }
  return sqrt(s);
}
void hpmg_vec_add_from_float(int64_t n, const float *z, double *x) {
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; i++) x[i] += (double)z[i];
}
int64_t hpmg_vec_count_nonfinite(hpmg_real r, int64_t n, const void *x) {
  return DISPATCH(r, nonfinite_d(n, x), nonfinite_f(n, x));
}
