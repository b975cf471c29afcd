#include <lapacke.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include "la/vec.h"
#include "mg.h"

#define HPMG_DENSE_COARSE_MAX 3000 /* coarse unknowns factorized densely (72 MB) */

static int first_level(int dim, int k, int coarse) {
  /* k = 1 on one coarse cell has no interior node: start one level finer */
  return (int64_t)k * coarse - 1 > 0 ? 0 : 1;
}

static int smoother_work_vectors(hpmg_smoother_kind s) {
  return s == HPMG_SMOOTHER_CHEBYSHEV ? 2 : s == HPMG_SMOOTHER_JACOBI ? 1 : 0;
}

double hpmg_mg_memory(int dim, int k, int coarse, int refine, const hpmg_mg_options *opt, int fine_aliases) {
  const double rs = (double)hpmg_real_size(opt->real);
  double bytes = 0.0, n0 = 0.0;
  for (int l = first_level(dim, k, coarse); l <= refine; l++) {
    double n = 1.0, cells = (double)coarse * ldexp(1.0, l);
    for (int d = 0; d < dim; d++) n *= k * cells - 1;
    int vecs = 1 + smoother_work_vectors(opt->smoother) + (l == refine && fine_aliases ? 0 : 2);
    bytes += vecs * n * rs;
    if (opt->smoother == HPMG_SMOOTHER_PATCH && l > first_level(dim, k, coarse)) /* coarsest: no smoother */
      bytes += hpmg_patch_memory(dim, k, opt->real, &opt->patch, n, omp_get_max_threads());
    if ((opt->smoother == HPMG_SMOOTHER_GS || opt->smoother == HPMG_SMOOTHER_SGS) &&
        opt->gs_order == HPMG_GS_ORDER_CELLWISE && l > first_level(dim, k, coarse))
      bytes += 9.0 * n; /* the order, and its setup's seen-flags */
    if (n0 == 0.0) n0 = n;
  }
  bytes += n0 <= HPMG_DENSE_COARSE_MAX ? n0 * n0 * 8.0 : 5 * n0 * 8.0;
  return bytes;
}

static hpmg_error coarse_setup(hpmg_mg *mg) {
  const hpmg_laplace *op = &mg->lv[0].op;
  const int64_t n = op->g.N;
  for (int i = 0; i < 5; i++) HPMG_CALL(hpmg_malloc(sizeof(double) * (size_t)n, &mg->cwork[i]));
  if (n > HPMG_DENSE_COARSE_MAX) return HPMG_SUCCESS;
  HPMG_CALL(hpmg_malloc(sizeof(double) * (size_t)(n * n), &mg->chol));
  HPMG_CALL(hpmg_laplace_dense(op, mg->chol));
  int info = LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', (lapack_int)n, mg->chol, (lapack_int)n);
  if (info != 0)
    return hpmg_error_set(HPMG_ERR_NUMERIC, "coarse Cholesky factorization failed (info %d)", info);
  return HPMG_SUCCESS;
}

/* Coarse solve in double whatever the cycle precision. */
static hpmg_error coarse_solve(hpmg_mg *mg, const void *b, void *x) {
  const hpmg_laplace *op = &mg->lv[0].op;
  const int64_t n = op->g.N;
  double *cb = mg->cwork[0], *cx = mg->cwork[1];
  hpmg_vec_convert(n, mg->opt.real, b, HPMG_REAL_DOUBLE, cb);
  if (mg->chol) {
    memcpy(cx, cb, sizeof(double) * (size_t)n);
    LAPACKE_dpotrs(LAPACK_ROW_MAJOR, 'L', (lapack_int)n, 1, mg->chol, (lapack_int)n, cx, 1);
  } else { /* Jacobi-preconditioned CG to 1e-14 */
    double *r = mg->cwork[2], *z = mg->cwork[3], *p = mg->cwork[4], *q = cb;
    memset(cx, 0, sizeof(double) * (size_t)n);
    memcpy(r, cb, sizeof(double) * (size_t)n);
    const double r0 = hpmg_vec_norm(HPMG_REAL_DOUBLE, n, r);
    hpmg_laplace_inverse_diagonal(op, HPMG_REAL_DOUBLE, 1.0, r, z, p);
    double rz = hpmg_vec_dot(HPMG_REAL_DOUBLE, n, r, z);
    for (int64_t it = 0; it < 10 * n + 100 && r0 > 0; it++) {
      hpmg_laplace_apply(op, HPMG_REAL_DOUBLE, p, q);
      const double alpha = rz / hpmg_vec_dot(HPMG_REAL_DOUBLE, n, p, q);
      hpmg_vec_axpy(HPMG_REAL_DOUBLE, n, alpha, p, cx);
      hpmg_vec_axpy(HPMG_REAL_DOUBLE, n, -alpha, q, r);
      if (hpmg_vec_norm(HPMG_REAL_DOUBLE, n, r) <= 1e-14 * r0) break;
      hpmg_laplace_inverse_diagonal(op, HPMG_REAL_DOUBLE, 1.0, r, z, NULL);
      const double rz_new = hpmg_vec_dot(HPMG_REAL_DOUBLE, n, r, z);
      hpmg_vec_xpby(HPMG_REAL_DOUBLE, n, z, rz_new / rz, p);
      rz = rz_new;
    }
  }
  hpmg_vec_convert(n, HPMG_REAL_DOUBLE, cx, mg->opt.real, x);
  return HPMG_SUCCESS;
}

hpmg_error hpmg_mg_create(int dim, int k, int coarse, int refine, const double box[3], double lambda,
                          const hpmg_mg_options *opt, int fine_aliases, hpmg_mg *mg) {
  memset(mg, 0, sizeof *mg);
  mg->opt = *opt;
  const int l0 = first_level(dim, k, coarse);
  HPMG_CHECK_ARG(refine >= l0, "degree 1 on a single coarse cell needs at least one refinement");
  mg->nlevels = refine - l0 + 1;
  mg->lv = calloc((size_t)mg->nlevels, sizeof *mg->lv);
  if (!mg->lv) return hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate levels");
  const hpmg_real real = opt->real;
  for (int i = 0; i < mg->nlevels; i++) {
    hpmg_mg_level *L = &mg->lv[i];
    int64_t c = (int64_t)coarse << (l0 + i), cells[3] = {c, c, c};
    HPMG_CALL(hpmg_grid_init(dim, k, cells, box, &L->g));
    HPMG_CALL(hpmg_laplace_create(&L->g, lambda, &L->op));
    const size_t bytes = (size_t)L->g.N * hpmg_real_size(real);
    HPMG_CALL(hpmg_malloc(bytes, &L->r));
    if (!(fine_aliases && i == mg->nlevels - 1)) {
      HPMG_CALL(hpmg_calloc(bytes, &L->own_b));
      HPMG_CALL(hpmg_calloc(bytes, &L->own_x));
      L->b = L->own_b;
      L->x = L->own_x;
    }
    if (i > 0) HPMG_CALL(hpmg_transfer_create(&mg->lv[i - 1].g, &L->P, &L->R));
    if (i == 0) continue; /* the coarsest level is solved exactly */
    switch (opt->smoother) {
    case HPMG_SMOOTHER_CHEBYSHEV:
      HPMG_CALL(hpmg_smoother_chebyshev(&L->op, real, opt->cheby_degree, opt->cheby_range,
                                        opt->cheby_eig_iters, &L->smoother));
      break;
    case HPMG_SMOOTHER_JACOBI:
      HPMG_CALL(hpmg_smoother_jacobi(&L->op, real, opt->jacobi_omega, &L->smoother));
      break;
    case HPMG_SMOOTHER_GS:
    case HPMG_SMOOTHER_SGS:
      HPMG_CALL(hpmg_smoother_gauss_seidel(&L->op, real, opt->smoother == HPMG_SMOOTHER_SGS, opt->gs_order, coarse,
                                           &L->smoother));
      break;
    case HPMG_SMOOTHER_PATCH:
      HPMG_CALL(hpmg_smoother_patch(&L->op, real, &opt->patch, &L->smoother));
      break;
    default:
      return hpmg_error_set(HPMG_ERR_ARG, "unknown smoother %d", (int)opt->smoother);
    }
  }
  return coarse_setup(mg);
}

void hpmg_mg_destroy(hpmg_mg *mg) {
  for (int i = 0; i < mg->nlevels; i++) {
    hpmg_mg_level *L = &mg->lv[i];
    hpmg_smoother_destroy(&L->smoother);
    hpmg_laplace_destroy(&L->op);
    hpmg_kron3_destroy(&L->P);
    hpmg_kron3_destroy(&L->R);
    hpmg_free(&L->r);
    hpmg_free(&L->own_b);
    hpmg_free(&L->own_x);
  }
  free(mg->lv);
  hpmg_free(&mg->chol);
  for (int i = 0; i < 5; i++) hpmg_free(&mg->cwork[i]);
  memset(mg, 0, sizeof *mg);
}

static hpmg_error smooth(hpmg_mg *mg, hpmg_mg_level *L, int x_is_zero, int post, int sweeps) {
  if (sweeps == 0) {
    if (x_is_zero) hpmg_vec_zero(mg->opt.real, L->g.N, L->x);
    return HPMG_SUCCESS;
  }
  double t0 = hpmg_wtime();
  hpmg_error e = L->smoother->apply(L->smoother, L->b, L->x, x_is_zero, post, sweeps);
  const double dt = hpmg_wtime() - t0;
  mg->t.smooth += dt;
  L->t_smooth += dt;
  return e;
}

/* V-cycle on level l for A x = b with the level's b and x. */
static hpmg_error vcycle(hpmg_mg *mg, int l, int x_is_zero) {
  hpmg_mg_level *L = &mg->lv[l];
  const hpmg_real real = mg->opt.real;
  if (l == 0) {
    double t0 = hpmg_wtime();
    hpmg_error e = coarse_solve(mg, L->b, L->x);
    mg->t.coarse += hpmg_wtime() - t0;
    return e;
  }
  HPMG_CALL(smooth(mg, L, x_is_zero, 0, mg->opt.pre));
  double t0 = hpmg_wtime();
  if (x_is_zero && mg->opt.pre == 0) hpmg_vec_copy(real, L->g.N, L->b, L->r);
  else {
    hpmg_laplace_residual(&L->op, real, L->b, L->x, L->r);
    mg->t.matvecs++;
  }
  double t1 = hpmg_wtime();
  hpmg_kron3_apply(&L->R, real, L->r, mg->lv[l - 1].b, 0);
  double t2 = hpmg_wtime();
  mg->t.op += t1 - t0;
  mg->t.transfer += t2 - t1;
  L->t_op += t1 - t0;
  L->t_transfer += t2 - t1;
  HPMG_CALL(vcycle(mg, l - 1, 1));
  t0 = hpmg_wtime();
  hpmg_kron3_apply(&L->P, real, mg->lv[l - 1].x, L->x, 1);
  if (mg->opt.add_residual) hpmg_vec_axpy(real, L->g.N, 1.0, L->r, L->x); /* L->r: still the residual */
  t1 = hpmg_wtime() - t0;
  mg->t.transfer += t1;
  L->t_transfer += t1;
  return smooth(mg, L, 0, mg->opt.symmetric, mg->opt.post);
}

hpmg_error hpmg_mg_vcycle(hpmg_mg *mg, const void *b, void *x) {
  hpmg_mg_level *F = &mg->lv[mg->nlevels - 1];
  if (b) F->b = (void *)b;
  if (x) F->x = x;
  return vcycle(mg, mg->nlevels - 1, 1);
}

hpmg_error hpmg_mg_fmg(hpmg_mg *mg, const void *b, void *x, int finest_cycle) {
  const hpmg_real real = mg->opt.real;
  hpmg_mg_level *F = &mg->lv[mg->nlevels - 1];
  if (b) F->b = (void *)b;
  if (x) F->x = x;
  double t0 = hpmg_wtime();
  for (int l = mg->nlevels - 1; l > 0; l--) /* consistent coarse load vectors b_c = P^T b_f */
    hpmg_kron3_apply(&mg->lv[l].R, real, mg->lv[l].b, mg->lv[l - 1].b, 0);
  mg->t.transfer += hpmg_wtime() - t0;
  HPMG_CALL(vcycle(mg, 0, 1));
  for (int l = 1; l < mg->nlevels; l++) {
    t0 = hpmg_wtime();
    hpmg_kron3_apply(&mg->lv[l].P, real, mg->lv[l - 1].x, mg->lv[l].x, 0);
    mg->t.transfer += hpmg_wtime() - t0;
    if (l < mg->nlevels - 1 || finest_cycle) HPMG_CALL(vcycle(mg, l, 0));
  }
  return HPMG_SUCCESS;
}
