#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/par.h"
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

hpmg_error hpmg_linop_residual(const hpmg_linop *A, const hpmg_vec *b, const hpmg_vec *x, hpmg_vec *r) {
  if (A->residual) return A->residual(A->ctx, b, x, r);
  HPMG_CALL(A->apply(A->ctx, x, r));
  return hpmg_v_xpby(b, -1.0, r); /* r = b - A x */
}

static void monitor(const hpmg_krylov_params *prm, int it, double rn, double r0) {
  if (prm->mon) prm->mon(prm->mctx, it, rn, r0);
}

hpmg_error hpmg_pcg(const hpmg_linop *A, const hpmg_linop *M, const hpmg_vec *b, hpmg_vec *x, hpmg_vec work[4],
                    int flexible, const hpmg_krylov_params *prm, hpmg_krylov_info *info) {
  hpmg_vec *r = &work[0], *z = &work[1], *p = &work[2], *q = &work[3];
  if (prm->x0_zero) {
    HPMG_CALL(hpmg_v_zero(x));
    HPMG_CALL(hpmg_v_copy(b, r));
  } else HPMG_CALL(hpmg_linop_residual(A, b, x, r));
  if (prm->project) HPMG_CALL(prm->project(prm->pctx, r));
  double rn;
  HPMG_CALL(hpmg_v_norm(r, &rn));
  const double r0 = rn;
  info->r0 = r0;
  info->rnorm = rn;
  info->iterations = 0;
  info->converged = rn == 0.0;
  HPMG_CALL(hpmg_check_residual(rn, 0));
  monitor(prm, 0, rn, r0);
  if (info->converged) return HPMG_SUCCESS;
  HPMG_CALL(M->apply(M->ctx, r, z));
  if (prm->project) HPMG_CALL(prm->project(prm->pctx, z));
  HPMG_CALL(hpmg_v_copy(z, p));
  double rz;
  HPMG_CALL(hpmg_v_dot(r, z, &rz));
  for (int it = 1; it <= prm->maxit; it++) {
    HPMG_CALL(A->apply(A->ctx, p, q));
    double pq;
    HPMG_CALL(hpmg_v_dot(p, q, &pq));
    if (!(pq > 0))
      return hpmg_error_set(HPMG_ERR_NUMERIC, "CG breakdown: p.Ap = %g at iteration %d (operator or preconditioner not SPD?)", pq, it);
    const double alpha = rz / pq;
    HPMG_CALL(hpmg_v_cg_update(alpha, p, q, x, r, &rn));
    info->iterations = it;
    info->rnorm = rn;
    HPMG_CALL(hpmg_check_residual(rn, it));
    monitor(prm, it, rn, r0);
    if (rn <= prm->rtol * r0) {
      if (prm->cg_coeffs) prm->cg_coeffs(prm->cctx, it - 1, alpha, 0.0);
      info->converged = 1;
      return HPMG_SUCCESS;
    }
    HPMG_CALL(M->apply(M->ctx, r, z));
    if (prm->project) HPMG_CALL(prm->project(prm->pctx, z));
    double rz_new, beta;
    HPMG_CALL(hpmg_v_dot(r, z, &rz_new));
    if (flexible) { /* beta = z_new . (r_new - r_old) / rz with r_new - r_old = -alpha q */
      double zq;
      HPMG_CALL(hpmg_v_dot(z, q, &zq));
      beta = -alpha * zq / rz;
    } else beta = rz_new / rz;
    if (prm->cg_coeffs) prm->cg_coeffs(prm->cctx, it - 1, alpha, beta);
    HPMG_CALL(hpmg_v_xpby(z, beta, p));
    rz = rz_new;
  }
  return HPMG_SUCCESS;
}

typedef struct {
  double *alpha, *beta;
  int m;
} lanczos;
static void lanczos_record(void *ctx, int it, double alpha, double beta) {
  lanczos *l = ctx;
  l->alpha[it] = alpha;
  l->beta[it] = beta;
  l->m = it + 1;
}

hpmg_error hpmg_lambda_max_cg(const hpmg_linop *A, const hpmg_linop *M, const hpmg_vec *b, hpmg_vec work[5], int iters,
                              double *lmax) {
  *lmax = 1.0;
  if (b->n == 0) return HPMG_SUCCESS;
  if (iters > b->n) iters = (int)b->n;
  if (iters < 1) iters = 1;
  lanczos l = {calloc((size_t)iters + 1, sizeof(double)), calloc((size_t)iters + 1, sizeof(double)), 0};
  double *dg = calloc((size_t)iters + 1, sizeof(double)), *off = calloc((size_t)iters + 1, sizeof(double));
  hpmg_error e = HPMG_SUCCESS;
  if (!l.alpha || !l.beta || !dg || !off) e = hpmg_error_set(HPMG_ERR_MEMORY, "lambda_max: cannot allocate");
  if (!e) {
    hpmg_krylov_params prm = {.rtol = 0.0, .maxit = iters, .x0_zero = 1, .cg_coeffs = lanczos_record, .cctx = &l};
    hpmg_krylov_info info;
    e = hpmg_pcg(A, M, b, &work[0], work + 1, 0, &prm, &info);
    if (e == HPMG_ERR_NUMERIC && l.m > 0) e = HPMG_SUCCESS; /* a breakdown ends the sequence: use what came before */
  }
  const int m = l.m;
  if (!e && m > 0) {
    for (int j = 0; j < m; j++) {
      dg[j] = 1.0 / l.alpha[j] + (j > 0 ? l.beta[j - 1] / l.alpha[j - 1] : 0.0);
      if (j + 1 < m) off[j] = sqrt(l.beta[j]) / l.alpha[j];
    }
    const int bt = hpmg_blas_serial_begin();
    const lapack_int info = LAPACKE_dstev(LAPACK_COL_MAJOR, 'N', m, dg, off, NULL, 1);
    hpmg_blas_serial_end(bt);
    if (info != 0)
      e = hpmg_error_set(HPMG_ERR_NUMERIC, "eigenvalue estimate: dstev failed");
    else *lmax = dg[m - 1]; /* ascending */
  }
  free(l.alpha);
  free(l.beta);
  free(dg);
  free(off);
  return e;
}

int hpmg_stagnation(double ring[HPMG_STAGNATION_WINDOW], int it, double rn) {
  const int w = HPMG_STAGNATION_WINDOW, stag = it >= w && rn > 0.5 * ring[it % w];
  ring[it % w] = rn;
  return stag;
}

double hpmg_krylov_rate(const hpmg_krylov_info *info) {
  return info->iterations > 0 && info->r0 > 0 ? pow(info->rnorm / info->r0, 1.0 / info->iterations) : 0.0;
}

void hpmg_krylov_stats(const hpmg_krylov_info *info, hpmg_stats *st) {
  st->iterations = info->iterations;
  st->converged = info->converged;
  st->residual0 = info->r0;
  st->residual = info->rnorm;
  st->rate = hpmg_krylov_rate(info);
  st->operator_applications = info->iterations + 1;
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

/* The small least-squares part of GMRES, on the host. H is the (m+1) x m
 * Hessenberg matrix, column-major. Column j (entries 0..j+1) is new: apply
 * the j earlier Givens rotations to it, make the rotation that zeroes
 * H[j+1][j], apply it to g; returns |g[j+1]|, the residual norm. *rho = the
 * new diagonal (0: breakdown). */
static double gmres_rotate(int m, double *H, double *cs, double *sn, double *g, int j, double *rho) {
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

/* y[0..j) = R^{-1} g with R the leading j x j upper triangle of H. */
static void gmres_backsolve(int m, const double *H, const double *g, int j, double *y) {
  for (int i = j - 1; i >= 0; i--) {
    double t = g[i];
    for (int l = i + 1; l < j; l++) t -= H[(size_t)l * (m + 1) + i] * y[l];
    y[i] = t / H[(size_t)i * (m + 1) + i];
  }
}

hpmg_error hpmg_gmres_work_create(int restart, const hpmg_vec *lend, int nlend, hpmg_gmres_work *w) {
  memset(w, 0, sizeof *w);
  HPMG_CHECK_ARG(restart >= 1 && restart <= 1000, "GMRES restart length must be in 1..1000 (got %d)", restart);
  w->restart = restart;
  const size_t m = (size_t)restart;
  w->v = calloc(m + 1, sizeof(hpmg_vec));
  w->z = calloc(m, sizeof(hpmg_vec));
  w->H = calloc((m + 1) * m, sizeof(double));
  w->cs = calloc(m, sizeof(double));
  w->sn = calloc(m, sizeof(double));
  w->g = calloc(m + 1, sizeof(double));
  w->y = calloc(m, sizeof(double));
  if (!w->v || !w->z || !w->H || !w->cs || !w->sn || !w->g || !w->y) {
    hpmg_gmres_work_destroy(w);
    return hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate GMRES(%d) workspace", restart);
  }
  /* lent vectors in the order v0 z0 v1 z1 (the last slot z_m does not exist) */
  hpmg_vec *slot[4] = {&w->v[0], &w->z[0], &w->v[1], m >= 2 ? &w->z[1] : NULL};
  for (int i = 0; i < nlend && i < 4 && slot[i]; i++) {
    *slot[i] = lend[i];
    slot[i]->owned = 0;
    w->nlent = i + 1;
  }
  return HPMG_SUCCESS;
}

void hpmg_gmres_work_destroy(hpmg_gmres_work *w) {
  if (w->v)
    for (int i = 0; i <= w->restart; i++) hpmg_vec_destroy(&w->v[i]);
  if (w->z)
    for (int i = 0; i < w->restart; i++) hpmg_vec_destroy(&w->z[i]);
  free(w->v); free(w->z); free(w->H); free(w->cs); free(w->sn); free(w->g); free(w->y);
  memset(w, 0, sizeof *w);
}

/* a basis vector like b, allocated on first use (an owned vector of another
 * size, precision or backend is replaced) */
static hpmg_error gmres_vector(const hpmg_gmres_work *w, const hpmg_vec *b, hpmg_vec *slot, const char *what, int j) {
  if (slot->data && slot->be == b->be && slot->real == b->real && slot->n == b->n) return HPMG_SUCCESS;
  if (slot->data && !slot->owned)
    return hpmg_error_set(HPMG_ERR_ARG, "GMRES: a lent vector does not match the right-hand side");
  hpmg_vec_destroy(slot);
  hpmg_error e = hpmg_vec_create(b->be, b->real, b->n, slot);
  if (e == HPMG_ERR_MEMORY)
    return hpmg_error_set(HPMG_ERR_MEMORY, "GMRES(%d) basis vector %s%d does not fit in %s memory (use a smaller "
                          "--restart)", w->restart, what, j, b->be->on_device ? "GPU" : "host");
  return e;
}

hpmg_error hpmg_gmres(const hpmg_linop *A, const hpmg_linop *M, const hpmg_vec *b, hpmg_vec *x, hpmg_gmres_work *w,
                      const hpmg_krylov_params *prm, hpmg_krylov_info *info) {
  const int m = w->restart, maxit = prm->maxit;
  const double rtol = prm->rtol;
  double *H = w->H, *cs = w->cs, *sn = w->sn, *g = w->g, *y = w->y;
#define HH(i, j) H[(size_t)(j) * (m + 1) + (i)]
  info->iterations = 0;
  info->converged = 0;
  HPMG_CALL(gmres_vector(w, b, &w->v[0], "v", 0));
  int it = 0;
  double r0 = 0.0;
  for (;;) { /* restart cycles */
    hpmg_vec *v0 = &w->v[0];
    if (it == 0 && prm->x0_zero) {
      HPMG_CALL(hpmg_v_zero(x));
      HPMG_CALL(hpmg_v_copy(b, v0));
    }
    else HPMG_CALL(hpmg_linop_residual(A, b, x, v0)); /* v0 = b - A x */
    double beta;
    HPMG_CALL(hpmg_v_norm(v0, &beta));
    HPMG_CALL(hpmg_check_residual(beta, it));
    if (it == 0) {
      r0 = info->r0 = beta;
      monitor(prm, 0, beta, r0);
    }
    info->rnorm = beta;
    if (beta <= rtol * r0 || beta == 0.0) {
      info->converged = 1;
      return HPMG_SUCCESS;
    }
    if (it >= maxit) return HPMG_SUCCESS;
    HPMG_CALL(hpmg_v_scale(1.0 / beta, v0));
    g[0] = beta;
    int j = 0, done = 0;
    while (!done) {
      HPMG_CALL(gmres_vector(w, b, &w->z[j], "z", j));
      HPMG_CALL(gmres_vector(w, b, &w->v[j + 1], "v", j + 1));
      HPMG_CALL(M->apply(M->ctx, &w->v[j], &w->z[j]));
      HPMG_CALL(A->apply(A->ctx, &w->z[j], &w->v[j + 1]));
      hpmg_vec *u = &w->v[j + 1];
      for (int i = 0; i <= j; i++) { /* modified Gram-Schmidt */
        HPMG_CALL(hpmg_v_dot(u, &w->v[i], &HH(i, j)));
        HPMG_CALL(hpmg_v_axpy(-HH(i, j), &w->v[i], u));
      }
      double hn;
      HPMG_CALL(hpmg_v_norm(u, &hn));
      HH(j + 1, j) = hn;
      if (hn > 0) HPMG_CALL(hpmg_v_scale(1.0 / hn, u));
      double rho;
      const double res = gmres_rotate(m, H, cs, sn, g, j, &rho);
      it++;
      j++;
      HPMG_CALL(hpmg_check_residual(res, it));
      info->iterations = it;
      info->rnorm = res;
      monitor(prm, it, res, r0);
      /* hn == 0: the Krylov space is invariant, the least-squares solution is exact */
      done = res <= rtol * r0 || it >= maxit || j == m || hn == 0.0;
      if (rho == 0.0)
        return hpmg_error_set(HPMG_ERR_NUMERIC, "GMRES breakdown at iteration %d (singular Hessenberg matrix)", it);
    }
    gmres_backsolve(m, H, g, j, y); /* x += Z y */
    for (int i = 0; i < j; i++) HPMG_CALL(hpmg_v_axpy(y[i], &w->z[i], x));
    if (info->rnorm <= rtol * r0) {
      info->converged = 1;
      return HPMG_SUCCESS;
    }
    if (it >= maxit) return HPMG_SUCCESS;
  }
#undef HH
}
