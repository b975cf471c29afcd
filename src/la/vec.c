#include <math.h>
#include <string.h>
#include <omp.h>
#include "vec.h"

#define VK() hpmg_vec_kernels_select()

double hpmg_vec_dot(hpmg_real r, int64_t n, const void *x, const void *y) {
  return VK()->dot[r](n, x, y);
}
double hpmg_vec_norm(hpmg_real r, int64_t n, const void *x) { return sqrt(hpmg_vec_dot(r, n, x, x)); }
void hpmg_vec_zero(hpmg_real r, int64_t n, void *x) {
  char *p = x;
  size_t total = (size_t)n * hpmg_real_size(r);
  if (n < HPMG_VEC_PAR_MIN) { /* the coarse levels of a cycle: on the calling thread */
    memset(p, 0, total);
    return;
  }
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
  VK()->axpy[r](n, a, x, y);
}
void hpmg_vec_xpby(hpmg_real r, int64_t n, const void *x, double b, void *y) {
  VK()->xpby[r](n, x, b, y);
}
void hpmg_vec_scale(hpmg_real r, int64_t n, double a, void *x) {
  VK()->scale[r](n, a, x);
}
void hpmg_vec_convert(int64_t n, hpmg_real rx, const void *x, hpmg_real ry, void *y) {
  if (rx == ry) { hpmg_vec_copy(rx, n, x, y); return; }
  if (rx == HPMG_REAL_DOUBLE) VK()->to_float(n, x, y);
  else VK()->to_double(n, x, y);
}
double hpmg_vec_norm_to_float(int64_t n, const double *x, float *y) { return VK()->norm_to_float(n, x, y); }
void hpmg_vec_add_from_float(int64_t n, const float *z, double *x) { VK()->add_from_float(n, z, x); }
int64_t hpmg_vec_count_nonfinite(hpmg_real r, int64_t n, const void *x) {
  return VK()->nonfinite[r](n, x);
}
