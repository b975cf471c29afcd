#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
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

hpmg_error hpmg_estimate_lambda_max(const hpmg_laplace *op, hpmg_real r, int iters, double *lmax) {
  const int64_t n = op->g.N;
  *lmax = 1.0;
  if (n == 0) return HPMG_SUCCESS;
  if (iters > n) iters = (int)n;
  if (iters < 1) iters = 1;
  const size_t bytes = (size_t)n * hpmg_real_size(r);
  void *res, *z, *p, *q;
  HPMG_CALL(hpmg_malloc(bytes, &res));
  HPMG_CALL(hpmg_malloc(bytes, &z));
  HPMG_CALL(hpmg_malloc(bytes, &p));
  HPMG_CALL(hpmg_malloc(bytes, &q));
  double *alpha = calloc((size_t)iters + 1, sizeof(double)), *beta = calloc((size_t)iters + 1, sizeof(double));
  fill_random(r, n, res); /* CG on A x = res from x = 0: the residual is res itself */
  hpmg_laplace_inverse_diagonal(op, r, 1.0, res, z, p);
  double rz = hpmg_vec_dot(r, n, res, z);
  int m = 0;
  for (int it = 0; it < iters && rz > 0; it++) {
    hpmg_laplace_apply(op, r, p, q);
    double pq = hpmg_vec_dot(r, n, p, q);
    if (!(pq > 0)) break;
    alpha[it] = rz / pq;
    hpmg_vec_axpy(r, n, -alpha[it], q, res);
    hpmg_laplace_inverse_diagonal(op, r, 1.0, res, z, NULL);
    double rz_new = hpmg_vec_dot(r, n, res, z);
    beta[it] = rz_new / rz;
    rz = rz_new;
    hpmg_vec_xpby(r, n, z, beta[it], p);
    m = it + 1;
  }
  /* Lanczos tridiagonal from the CG coefficients */
  double *dg = calloc((size_t)m + 1, sizeof(double)), *off = calloc((size_t)m + 1, sizeof(double));
  for (int j = 0; j < m; j++) {
    dg[j] = 1.0 / alpha[j] + (j > 0 ? beta[j - 1] / alpha[j - 1] : 0.0);
    if (j + 1 < m) off[j] = sqrt(beta[j]) / alpha[j];
  }
  hpmg_error err = HPMG_SUCCESS;
  if (m > 0) {
    if (LAPACKE_dstev(LAPACK_COL_MAJOR, 'N', m, dg, off, NULL, 1) != 0)
      err = hpmg_error_set(HPMG_ERR_NUMERIC, "eigenvalue estimate: dstev failed");
    else *lmax = dg[m - 1]; /* ascending */
  }
  free(dg); free(off); free(alpha); free(beta);
  hpmg_free(&res); hpmg_free(&z); hpmg_free(&p); hpmg_free(&q);
  return err;
}
