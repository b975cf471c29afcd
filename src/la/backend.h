/* A backend is where vectors live and the vector kernels for that memory: the
 * host (OpenMP, src/backends/host.c) or a CUDA GPU
 * (src/backends/cuda.cu). Krylov methods (la/krylov.h) and the multigrid
 * cycle (mg/mg.h) are written once over this table and hpmg_vec, and run
 * unchanged on either.
 *
 * Every slot takes the precision of its vectors; reductions accumulate in
 * double whatever the storage precision. The slots marked optional may be
 * NULL: the hpmg_v_* helpers below compose them from the plain ones. */
#ifndef HPMG_LA_BACKEND_H
#define HPMG_LA_BACKEND_H

#include <stddef.h>
#include <stdint.h>
#include "core/core.h"

typedef struct hpmg_backend {
  const char *name;
  int on_device; /* 1: pointers are device pointers, not readable on the host */
  hpmg_error (*alloc)(size_t bytes, void **p); /* zero-filled */
  void (*free)(void **p);                      /* sets *p = NULL */
  hpmg_error (*to_host)(const void *src, void *host_dst, size_t bytes);
  hpmg_error (*to_device)(const void *host_src, void *dst, size_t bytes);
  hpmg_error (*sync)(void); /* wait for the backend's queued work (timers) */
  hpmg_error (*zero)(hpmg_real r, int64_t n, void *x);
  hpmg_error (*copy)(hpmg_real r, int64_t n, const void *x, void *y);
  hpmg_error (*axpy)(hpmg_real r, int64_t n, double a, const void *x, void *y); /* y += a x */
  hpmg_error (*xpby)(hpmg_real r, int64_t n, const void *x, double b, void *y); /* y = x + b y */
  hpmg_error (*scale)(hpmg_real r, int64_t n, double a, void *x);
  hpmg_error (*dot)(hpmg_real r, int64_t n, const void *x, const void *y, double *out);
  hpmg_error (*convert)(int64_t n, hpmg_real rx, const void *x, hpmg_real ry, void *y);
  /* optional: x += a p, r -= a q and *rr = r.r in one pass (CG, double) */
  hpmg_error (*cg_update)(int64_t n, double a, const double *p, const double *q, double *x, double *r, double *rr);
  /* optional: y = (float)x and *nrm = ||x|| in one pass (mixed precision) */
  hpmg_error (*norm_to_float)(int64_t n, const double *x, float *y, double *nrm);
  /* optional: x += (double)z in one pass (mixed precision) */
  hpmg_error (*add_from_float)(int64_t n, const float *z, double *x);
} hpmg_backend;

const hpmg_backend *hpmg_backend_host(void);
/* The CUDA backend; HPMG_ERR_BACKEND with a message when this build has no
 * CUDA or no GPU is visible. */
hpmg_error hpmg_backend_cuda(const hpmg_backend **be);

/* A vector: its backend, precision and length. data is owned by whoever
 * created it (hpmg_vec_create: the vector; hpmg_vec_wrap: the caller). The
 * layout is the discretization's; n counts the entries the vector kernels
 * run over (for MPI: the locally owned ones, with ghosts after them). */
typedef struct {
  const hpmg_backend *be;
  hpmg_real real;
  int64_t n;
  void *data;
  int owned;
} hpmg_vec;

hpmg_error hpmg_vec_create(const hpmg_backend *be, hpmg_real real, int64_t n, hpmg_vec *v);
void hpmg_vec_destroy(hpmg_vec *v);
static inline hpmg_vec hpmg_vec_wrap(const hpmg_backend *be, hpmg_real real, int64_t n, void *data) {
  hpmg_vec v = {be, real, n, data, 0};
  return v;
}
static inline size_t hpmg_vec_bytes(const hpmg_vec *v) { return (size_t)v->n * hpmg_real_size(v->real); }

/* Vector operations on hpmg_vec (same backend and length; precisions must
 * match except where converted). */
static inline hpmg_error hpmg_v_zero(hpmg_vec *x) { return x->be->zero(x->real, x->n, x->data); }
static inline hpmg_error hpmg_v_copy(const hpmg_vec *x, hpmg_vec *y) {
  return x->data == y->data ? HPMG_SUCCESS : x->be->copy(x->real, x->n, x->data, y->data);
}
static inline hpmg_error hpmg_v_axpy(double a, const hpmg_vec *x, hpmg_vec *y) {
  return x->be->axpy(x->real, x->n, a, x->data, y->data);
}
static inline hpmg_error hpmg_v_xpby(const hpmg_vec *x, double b, hpmg_vec *y) {
  return x->be->xpby(x->real, x->n, x->data, b, y->data);
}
static inline hpmg_error hpmg_v_scale(double a, hpmg_vec *x) { return x->be->scale(x->real, x->n, a, x->data); }
static inline hpmg_error hpmg_v_dot(const hpmg_vec *x, const hpmg_vec *y, double *out) {
  return x->be->dot(x->real, x->n, x->data, y->data, out);
}
hpmg_error hpmg_v_norm(const hpmg_vec *x, double *out);
/* y = x in y's precision (a copy if they match) */
hpmg_error hpmg_v_convert(const hpmg_vec *x, hpmg_vec *y);
/* between backends of the same precision (host <-> device), or a copy */
hpmg_error hpmg_v_transfer(const hpmg_vec *x, hpmg_vec *y);
/* x += a p, r -= a q, *rn = ||r||: the backend's fused slot in double, else three passes */
hpmg_error hpmg_v_cg_update(double a, const hpmg_vec *p, const hpmg_vec *q, hpmg_vec *x, hpmg_vec *r, double *rn);
/* y (float) = x (double) and *nrm = ||x||: fused where the backend has it */
hpmg_error hpmg_v_norm_convert(const hpmg_vec *x, hpmg_vec *y, double *nrm);
/* x (double) += z (float): fused where the backend has it, else through tmp (a
 * double vector of x's length) */
hpmg_error hpmg_v_add_converted(const hpmg_vec *z, hpmg_vec *x, hpmg_vec *tmp);

#endif
