#include <math.h>
#include <string.h>
#include <omp.h>
#include "vec.h"

#define VK() hpmg_vec_kernels_select()

double hpmg_vec_dot(hpmg_real r, int64_t n, const void *x, const void *y) {
  return VK()->dot[r](n, x, y);
}
double hpmg_vec_norm(hpmg_real r, int64_t n, const void *x) { return sqrt(hpmg_vec_dot(r, n, x, x)); }
/* [a, e): thread t's part of `total` bytes split in nt */
static void part(size_t total, size_t *a, size_t *e) {
  const int nt = omp_get_num_threads(), t = omp_get_thread_num();
  *a = total / nt * t;
  *e = t == nt - 1 ? total : total / nt * (t + 1);
}

void hpmg_vec_zero(hpmg_real r, int64_t n, void *x) {
  char *p = x;
  size_t total = (size_t)n * hpmg_real_size(r);
  if (n < HPMG_VEC_PAR_MIN) { /* the coarse levels of a cycle: on the calling thread */
    memset(p, 0, total);
    return;
  }
#pragma omp parallel
  { /* first touch in parallel, matching the kernels' static partition */
    size_t a, e;
    part(total, &a, &e);
    memset(p + a, 0, e - a);
  }
}
void hpmg_vec_copy(hpmg_real r, int64_t n, const void *x, void *y) {
  if (x == y) return;
  const size_t total = (size_t)n * hpmg_real_size(r);
  if (n < HPMG_VEC_PAR_MIN) {
    memcpy(y, x, total);
    return;
  }
#pragma omp parallel
  { /* one core's copy does not fill the memory bandwidth (flexible CG copies every iteration) */
    size_t a, e;
    part(total, &a, &e);
    memcpy((char *)y + a, (const char *)x + a, e - a);
  }
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
