#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "la/krylov.h"
#include "la/vec.h"
#include "smoother.h"

void hpmg_smoother_destroy(hpmg_smoother **s) {
  if (!*s) return;
  if ((*s)->destroy) (*s)->destroy(*s);
  hpmg_free(&(*s)->work[0]);
  hpmg_free(&(*s)->work[1]);
  free(*s);
  *s = NULL;
}

/* Deterministic pseudo-random vector in [0.5,1.5): excites every mode. */
static void fill_random(hpmg_real r, int64_t n, void *x) {
  uint64_t state = 0x9E3779B97F4A7C15ull;
  for (int64_t i = 0; i < n; i++) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    double v = 0.5 + (double)(state >> 11) / 9007199254740992.0;
    if (r == HPMG_REAL_DOUBLE) ((double *)x)[i] = v;
    else ((float *)x)[i] = (float)v;
  }
}

static hpmg_error op_apply(void *ctx, const hpmg_vec *x, hpmg_vec *y) {
  hpmg_laplace_apply(ctx, x->real, x->data, y->data);
  return HPMG_SUCCESS;
}
static hpmg_error op_jacobi(void *ctx, const hpmg_vec *r, hpmg_vec *z) {
  hpmg_laplace_inverse_diagonal(ctx, r->real, 1.0, r->data, z->data, NULL);
  return HPMG_SUCCESS;
}

hpmg_error hpmg_estimate_lambda_max(const hpmg_laplace *op, hpmg_real r, int iters, double *lmax) {
  const int64_t n = op->g.N;
  *lmax = 1.0;
  if (n == 0) return HPMG_SUCCESS;
  const hpmg_backend *H = hpmg_backend_host();
  hpmg_vec b, w[5];
  memset(w, 0, sizeof w);
  hpmg_error e = hpmg_vec_create(H, r, n, &b);
  for (int i = 0; i < 5 && !e; i++) e = hpmg_vec_create(H, r, n, &w[i]);
  if (!e) {
    fill_random(r, n, b.data); /* CG on A x = b from x = 0 */
    hpmg_linop A = {(void *)op, op_apply, NULL, NULL}, M = {(void *)op, op_jacobi, NULL, NULL};
    e = hpmg_lambda_max_cg(&A, &M, &b, w, iters, lmax);
  }
  hpmg_vec_destroy(&b);
  for (int i = 0; i < 5; i++) hpmg_vec_destroy(&w[i]);
  return e;
}
