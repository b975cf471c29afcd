#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "krylov.h"

hpmg_error hpmg_check_residual(double v, int it) {
  if (!isfinite(v))
    return hpmg_error_set(HPMG_ERR_NUMERIC, "residual became %g at iteration %d (NaN/Inf in the iteration)", v, it);
  return HPMG_SUCCESS;
}

void hpmg_history_record(double *hist, int *n, int cap, int it, double rn, double r0, int verbose) {
  if (it < cap) {
    hist[it] = rn;
    *n = it + 1;
  }
  if (verbose) {
    if (it == 0) printf("  iter     residual    rel.resid   reduction\n");
    const double prev = it > 0 && it - 1 < cap ? hist[it - 1] : rn;
    printf("  %4d  %11.4e  %11.4e  %10.4f\n", it, rn, r0 > 0 ? rn / r0 : 0.0, prev > 0 ? rn / prev : 0.0);
    fflush(stdout);
  }
}

hpmg_error hpmg_cycle_check(hpmg_solver_kind solver, hpmg_cycle_kind cycle) {
  HPMG_CHECK_ARG(cycle == HPMG_CYCLE_STANDARD || cycle == HPMG_CYCLE_ADD_RESIDUAL,
                 "unknown --cycle %d (standard or add-residual)", (int)cycle);
  HPMG_CHECK_ARG(!(cycle == HPMG_CYCLE_ADD_RESIDUAL && solver == HPMG_SOLVER_CG),
                 "--cycle add-residual is not a symmetric positive definite preconditioner: use it with "
                 "--solver fmg, vcycle or gmres");
  return HPMG_SUCCESS;
}

hpmg_error hpmg_pcg(hpmg_real real, int64_t n, hpmg_linop A, hpmg_linop M, const void *b, void *x,
                    double rtol, int maxit, void *work[4], hpmg_monitor mon, void *mctx,
                    hpmg_krylov_info *info) {
  void *r = work[0], *z = work[1], *p = work[2], *q = work[3];
  HPMG_CALL(A.apply(A.ctx, x, q));
  hpmg_vec_copy(real, n, b, r);
  hpmg_vec_axpy(real, n, -1.0, q, r);
  double rn = hpmg_vec_norm(real, n, r);
  const double r0 = rn;
  info->r0 = r0;
  info->rnorm = rn;
  info->iterations = 0;
  info->converged = rn == 0.0;
  HPMG_CALL(hpmg_check_residual(rn, 0));
  if (mon) mon(mctx, 0, rn, r0);
  if (info->converged) return HPMG_SUCCESS;
  HPMG_CALL(M.apply(M.ctx, r, z));
  hpmg_vec_copy(real, n, z, p);
  double rz = hpmg_vec_dot(real, n, r, z);
  for (int it = 1; it <= maxit; it++) {
    HPMG_CALL(A.apply(A.ctx, p, q));
    const double pq = hpmg_vec_dot(real, n, p, q);
    if (!(pq > 0))
      return hpmg_error_set(HPMG_ERR_NUMERIC, "CG breakdown: p.Ap = %g at iteration %d (operator or preconditioner not SPD?)", pq, it);
    const double alpha = rz / pq;
    hpmg_vec_axpy(real, n, alpha, p, x);
    hpmg_vec_axpy(real, n, -alpha, q, r);
    rn = hpmg_vec_norm(real, n, r);
    info->iterations = it;
    info->rnorm = rn;
    HPMG_CALL(hpmg_check_residual(rn, it));
    if (mon) mon(mctx, it, rn, r0);
    if (rn <= rtol * r0) {
      info->converged = 1;
      return HPMG_SUCCESS;
    }
    HPMG_CALL(M.apply(M.ctx, r, z));
    const double rz_new = hpmg_vec_dot(real, n, r, z);
    hpmg_vec_xpby(real, n, z, rz_new / rz, p);
    rz = rz_new;
  }
  return HPMG_SUCCESS;
}

int hpmg_stagnation(double ring[HPMG_STAGNATION_WINDOW], int it, double rn) {
  const int w = HPMG_STAGNATION_WINDOW, stag = it >= w && rn > 0.5 * ring[it % w];
  ring[it % w] = rn;
  return stag;
}

hpmg_error hpmg_not_converged(const hpmg_krylov_info *info, double relres, double tol) {
  if (info->stagnated && relres > 1.0)
    return hpmg_error_set(HPMG_ERR_NOT_CONVERGED,
                          "not converged: the iteration diverges (relative residual %.3e after %d iterations, above "
                          "1): the V-cycle does not contract with these options (e.g. an additive patch smoother "
                          "damped too little: lower --patch-damping)",
                          relres, info->iterations);
  if (info->stagnated)
    return hpmg_error_set(HPMG_ERR_NOT_CONVERGED,
                          "not converged: the relative residual stagnated at %.3e after %d iterations (less than 2x "
                          "smaller over the last %d); tolerance %.1e is below the attainable accuracy (round-off "
                          "floor of b - Ax, about eps/h^2) or the cycle does not converge",
                          relres, info->iterations, HPMG_STAGNATION_WINDOW, tol);
  return hpmg_error_set(HPMG_ERR_NOT_CONVERGED, "not converged: relative residual %.3e after %d iterations (tolerance %.1e)",
                        relres, info->iterations, tol);
}

hpmg_error hpmg_richardson(hpmg_real real, int64_t n, hpmg_linop A, hpmg_linop M, const void *b, void *x,
                           double rtol, int maxit, void *work[2], hpmg_monitor mon, void *mctx,
                           hpmg_krylov_info *info) {
  void *r = work[0], *z = work[1];
  double r0 = 0.0, ring[HPMG_STAGNATION_WINDOW];
  info->iterations = 0;
  info->converged = 0;
  info->stagnated = 0;
  for (int it = 0;; it++) {
    HPMG_CALL(A.apply(A.ctx, x, z));
    hpmg_vec_copy(real, n, b, r);
    hpmg_vec_axpy(real, n, -1.0, z, r);
    const double rn = hpmg_vec_norm(real, n, r);
    HPMG_CALL(hpmg_check_residual(rn, it));
    if (it == 0) r0 = info->r0 = rn;
    info->rnorm = rn;
    info->iterations = it;
    if (mon) mon(mctx, it, rn, r0);
    if (rn <= rtol * r0) {
      info->converged = 1;
      return HPMG_SUCCESS;
    }
    if (it == maxit || (info->stagnated = hpmg_stagnation(ring, it, rn))) return HPMG_SUCCESS;
    HPMG_CALL(M.apply(M.ctx, r, z));
    hpmg_vec_axpy(real, n, 1.0, z, x);
  }
}

double hpmg_gmres_rotate(int m, double *H, double *cs, double *sn, double *g, int j, double *rho) {
  double *col = H + (size_t)j * (m + 1);
  for (int i = 0; i < j; i++) { /* previous rotations on the new column */
    const double a = col[i], c = col[i + 1];
    col[i] = cs[i] * a + sn[i] * c;
    col[i + 1] = -sn[i] * a + cs[i] * c;
  }
  const double a = col[j], c = col[j + 1], r = hypot(a, c);
  cs[j] = r > 0 ? a / r : 1.0;
  sn[j] = r > 0 ? c / r : 0.0;
  col[j] = r;
  col[j + 1] = 0.0;
  g[j + 1] = -sn[j] * g[j];
  g[j] = cs[j] * g[j];
  *rho = r;
  return fabs(g[j + 1]);
}

void hpmg_gmres_backsolve(int m, const double *H, const double *g, int j, double *y) {
  for (int i = j - 1; i >= 0; i--) {
    double t = g[i];
    for (int l = i + 1; l < j; l++) t -= H[(size_t)l * (m + 1) + i] * y[l];
    y[i] = t / H[(size_t)i * (m + 1) + i];
  }
}

hpmg_error hpmg_gmres_work_create(int restart, hpmg_gmres_work *w) {
  memset(w, 0, sizeof *w);
  HPMG_CHECK_ARG(restart >= 1 && restart <= 1000, "GMRES restart length must be in 1..1000 (got %d)", restart);
  w->restart = restart;
  const size_t m = (size_t)restart;
  w->v = calloc(m + 1, sizeof(void *));
  w->z = calloc(m, sizeof(void *));
  w->H = calloc((m + 1) * m, sizeof(double));
  w->cs = calloc(m, sizeof(double));
  w->sn = calloc(m, sizeof(double));
  w->g = calloc(m + 1, sizeof(double));
  w->y = calloc(m, sizeof(double));
  if (!w->v || !w->z || !w->H || !w->cs || !w->sn || !w->g || !w->y) {
    hpmg_gmres_work_destroy(w);
    return hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate GMRES(%d) workspace", restart);
  }
  return HPMG_SUCCESS;
}

void hpmg_gmres_work_destroy(hpmg_gmres_work *w) {
  if (w->v)
    for (int i = 0; i <= w->restart; i++) hpmg_free(&w->v[i]);
  if (w->z)
    for (int i = 0; i < w->restart; i++) hpmg_free(&w->z[i]);
  free(w->v); free(w->z); free(w->H); free(w->cs); free(w->sn); free(w->g); free(w->y);
  memset(w, 0, sizeof *w);
}

static hpmg_error gmres_vector(hpmg_gmres_work *w, void **slot) {
  if (!*slot) HPMG_CALL(hpmg_malloc(w->bytes, slot));
  return HPMG_SUCCESS;
}

hpmg_error hpmg_gmres(hpmg_real real, int64_t n, hpmg_linop A, hpmg_linop M, const void *b, void *x, double rtol,
                      int maxit, hpmg_gmres_work *w, hpmg_monitor mon, void *mctx, hpmg_krylov_info *info) {
  const int m = w->restart;
  const size_t bytes = (size_t)n * hpmg_real_size(real);
  if (w->bytes != bytes) { /* vectors of another size or precision: start over */
    for (int i = 0; i <= m; i++) hpmg_free(&w->v[i]);
    for (int i = 0; i < m; i++) hpmg_free(&w->z[i]);
    w->bytes = bytes;
  }
  double *H = w->H, *cs = w->cs, *sn = w->sn, *g = w->g, *y = w->y;
#define HH(i, j) H[(size_t)(j) * (m + 1) + (i)]
  info->iterations = 0;
  info->converged = 0;
  HPMG_CALL(gmres_vector(w, &w->v[0]));
  int it = 0;
  double r0 = 0.0;
  for (;;) { /* restart cycles */
    void *v0 = w->v[0];
    HPMG_CALL(A.apply(A.ctx, x, v0));
    hpmg_vec_xpby(real, n, b, -1.0, v0); /* v0 = b - A x */
    const double beta = hpmg_vec_norm(real, n, v0);
    HPMG_CALL(hpmg_check_residual(beta, it));
    if (it == 0) {
      r0 = info->r0 = beta;
      if (mon) mon(mctx, 0, beta, r0);
    }
    info->rnorm = beta;
    if (beta <= rtol * r0 || beta == 0.0) {
      info->converged = 1;
      return HPMG_SUCCESS;
    }
    if (it >= maxit) return HPMG_SUCCESS;
    hpmg_vec_scale(real, n, 1.0 / beta, v0);
    g[0] = beta;
    int j = 0, done = 0;
    while (!done) {
      HPMG_CALL(gmres_vector(w, &w->z[j]));
      HPMG_CALL(gmres_vector(w, &w->v[j + 1]));
      HPMG_CALL(M.apply(M.ctx, w->v[j], w->z[j]));
      HPMG_CALL(A.apply(A.ctx, w->z[j], w->v[j + 1]));
      void *u = w->v[j + 1];
      for (int i = 0; i <= j; i++) { /* modified Gram-Schmidt */
        HH(i, j) = hpmg_vec_dot(real, n, u, w->v[i]);
        hpmg_vec_axpy(real, n, -HH(i, j), w->v[i], u);
      }
      const double hn = hpmg_vec_norm(real, n, u);
      HH(j + 1, j) = hn;
      if (hn > 0) hpmg_vec_scale(real, n, 1.0 / hn, u);
      double rho;
      const double res = hpmg_gmres_rotate(m, H, cs, sn, g, j, &rho);
      it++;
      j++;
      HPMG_CALL(hpmg_check_residual(res, it));
      info->iterations = it;
      info->rnorm = res;
      if (mon) mon(mctx, it, res, r0);
      /* hn == 0: the Krylov space is invariant, the least-squares solution is exact */
      done = res <= rtol * r0 || it >= maxit || j == m || hn == 0.0;
      if (rho == 0.0)
        return hpmg_error_set(HPMG_ERR_NUMERIC, "GMRES breakdown at iteration %d (singular Hessenberg matrix)", it);
    }
    hpmg_gmres_backsolve(m, H, g, j, y); /* x += Z y */
    for (int i = 0; i < j; i++) hpmg_vec_axpy(real, n, y[i], w->z[i], x);
    if (info->rnorm <= rtol * r0) {
      info->converged = 1;
      return HPMG_SUCCESS;
    }
    if (it >= maxit) return HPMG_SUCCESS;
  }
#undef HH
}
