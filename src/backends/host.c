/* The host backend: OpenMP vector kernels of la/vec.h (one table per
 * instruction set, chosen at library start). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "la/backend.h"
#include "la/vec.h"

static hpmg_error h_alloc(size_t bytes, void **p) { return hpmg_calloc(bytes, p); }
static void h_free(void **p) { hpmg_free(p); }
static hpmg_error h_move(const void *src, void *dst, size_t bytes) {
  if (bytes && src != dst) memcpy(dst, src, bytes);
  return HPMG_SUCCESS;
}
static hpmg_error h_sync(void) { return HPMG_SUCCESS; }
static hpmg_error h_zero(hpmg_real r, int64_t n, void *x) { hpmg_vec_zero(r, n, x); return HPMG_SUCCESS; }
static hpmg_error h_copy(hpmg_real r, int64_t n, const void *x, void *y) { hpmg_vec_copy(r, n, x, y); return HPMG_SUCCESS; }
static hpmg_error h_axpy(hpmg_real r, int64_t n, double a, const void *x, void *y) {
  hpmg_vec_axpy(r, n, a, x, y);
  return HPMG_SUCCESS;
}
static hpmg_error h_xpby(hpmg_real r, int64_t n, const void *x, double b, void *y) {
  hpmg_vec_xpby(r, n, x, b, y);
  return HPMG_SUCCESS;
}
static hpmg_error h_scale(hpmg_real r, int64_t n, double a, void *x) { hpmg_vec_scale(r, n, a, x); return HPMG_SUCCESS; }
static hpmg_error h_dot(hpmg_real r, int64_t n, const void *x, const void *y, double *out) {
  *out = hpmg_vec_dot(r, n, x, y);
  return HPMG_SUCCESS;
}
static hpmg_error h_convert(int64_t n, hpmg_real rx, const void *x, hpmg_real ry, void *y) {
  hpmg_vec_convert(n, rx, x, ry, y);
  return HPMG_SUCCESS;
}
static hpmg_error h_norm_to_float(int64_t n, const double *x, float *y, double *nrm) {
  *nrm = hpmg_vec_norm_to_float(n, x, y);
  return HPMG_SUCCESS;
}
static hpmg_error h_add_from_float(int64_t n, const float *z, double *x) {
  hpmg_vec_add_from_float(n, z, x);
  return HPMG_SUCCESS;
}

static const hpmg_backend host = {
    .name = "host",
    .on_device = 0,
    .alloc = h_alloc,
    .free = h_free,
    .to_host = h_move,
    .to_device = h_move,
    .sync = h_sync,
    .zero = h_zero,
    .copy = h_copy,
    .axpy = h_axpy,
    .xpby = h_xpby,
    .scale = h_scale,
    .dot = h_dot,
    .convert = h_convert,
    .norm_to_float = h_norm_to_float,
    .add_from_float = h_add_from_float,
};

const hpmg_backend *hpmg_backend_host(void) { return &host; }

#ifndef HPMG_HAVE_CUDA
hpmg_error hpmg_backend_cuda(const hpmg_backend **be) {
  *be = NULL;
  return hpmg_error_set(HPMG_ERR_BACKEND,
                        "--device cuda: this build of hpmg has no CUDA backend (nvcc was not found at configure time)");
}
#endif

/* ------------------------------------------------ generic vector operations */

hpmg_error hpmg_vec_create(const hpmg_backend *be, hpmg_real real, int64_t n, hpmg_vec *v) {
  memset(v, 0, sizeof *v);
  const size_t bytes = (size_t)(n > 0 ? n : 1) * hpmg_real_size(real);
  void *p = NULL;
  HPMG_CALL(be->alloc(bytes, &p));
  v->be = be;
  v->real = real;
  v->n = n;
  v->data = p;
  v->owned = 1;
  return HPMG_SUCCESS;
}

void hpmg_vec_destroy(hpmg_vec *v) {
  if (v->owned && v->data) v->be->free(&v->data);
  memset(v, 0, sizeof *v);
}

hpmg_error hpmg_v_norm(const hpmg_vec *x, double *out) {
  HPMG_CALL(hpmg_v_dot(x, x, out));
  *out = sqrt(*out);
  return HPMG_SUCCESS;
}

hpmg_error hpmg_v_convert(const hpmg_vec *x, hpmg_vec *y) {
  if (x->real == y->real) return hpmg_v_copy(x, y);
  return x->be->convert(x->n, x->real, x->data, y->real, y->data);
}

hpmg_error hpmg_v_transfer(const hpmg_vec *x, hpmg_vec *y) {
  if (x->be == y->be) return hpmg_v_copy(x, y);
  if (x->be->on_device) return x->be->to_host(x->data, y->data, hpmg_vec_bytes(x));
  return y->be->to_device(x->data, y->data, hpmg_vec_bytes(x));
}

hpmg_error hpmg_v_cg_update(double a, const hpmg_vec *p, const hpmg_vec *q, hpmg_vec *x, hpmg_vec *r, double *rn) {
  if (p->be->cg_update && p->real == HPMG_REAL_DOUBLE) {
    double rr;
    HPMG_CALL(p->be->cg_update(p->n, a, p->data, q->data, x->data, r->data, &rr));
    *rn = sqrt(rr);
    return HPMG_SUCCESS;
  }
  HPMG_CALL(hpmg_v_axpy(a, p, x));
  HPMG_CALL(hpmg_v_axpy(-a, q, r));
  return hpmg_v_norm(r, rn);
}

hpmg_error hpmg_v_norm_convert(const hpmg_vec *x, hpmg_vec *y, double *nrm) {
  if (x->be->norm_to_float && x->real == HPMG_REAL_DOUBLE && y->real == HPMG_REAL_FLOAT)
    return x->be->norm_to_float(x->n, x->data, y->data, nrm);
  HPMG_CALL(hpmg_v_norm(x, nrm));
  return hpmg_v_convert(x, y);
}

hpmg_error hpmg_v_add_converted(const hpmg_vec *z, hpmg_vec *x, hpmg_vec *tmp) {
  if (z->real == x->real) return hpmg_v_axpy(1.0, z, x);
  if (x->be->add_from_float && z->real == HPMG_REAL_FLOAT && x->real == HPMG_REAL_DOUBLE)
    return x->be->add_from_float(x->n, z->data, x->data);
  HPMG_CALL(hpmg_v_convert(z, tmp));
  return hpmg_v_axpy(1.0, tmp, x);
}
