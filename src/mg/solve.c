#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "solve.h"

static void monitor(const hpmg_krylov_params *prm, int it, double rn, double r0) {
  if (prm->mon) prm->mon(prm->mctx, it, rn, r0);
}

hpmg_error hpmg_mg_stationary(hpmg_mg *mg, const hpmg_linop *A, const hpmg_vec *b, hpmg_vec *x, hpmg_vec work[2],
                              int min_it, double r0_ref, const hpmg_krylov_params *prm, hpmg_krylov_info *info) {
  const int top = mg->nlevels - 1;
  hpmg_level *F = &mg->lv[top];
  const int in_place = b == &F->b && x == &F->x;
  const int mixed = !in_place && x->real != mg->real;
  HPMG_CHECK_ARG(!(mixed && mg->fine_aliases), "a hierarchy whose finest vectors alias the caller's runs in the "
                                                "outer precision (mixed precision needs fine_aliases = 0)");
  HPMG_CHECK_ARG(work || (in_place && A->residual_norm), "the stationary iteration needs its work vectors here");
  double r0 = r0_ref, ring[HPMG_STAGNATION_WINDOW];
  info->iterations = 0;
  info->converged = 0;
  info->stagnated = 0;
  for (int it = 0;; it++) {
    double rn;
    if (in_place && A->residual_norm) HPMG_CALL(A->residual_norm(A->ctx, b, x, &rn));
    else {
      HPMG_CALL(hpmg_linop_residual(A, b, x, &work[0]));
      if (mixed) HPMG_CALL(hpmg_v_norm_convert(&work[0], &F->b, &rn)); /* F->b = (float) r */
      else HPMG_CALL(hpmg_v_norm(&work[0], &rn));
    }
    HPMG_CALL(hpmg_check_residual(rn, it));
    if (it == 0) {
      if (!(r0 > 0)) r0 = rn;
      info->r0 = r0;
    }
    info->rnorm = rn;
    info->iterations = it;
    monitor(prm, it, rn, r0);
    if (it >= min_it && rn <= prm->rtol * r0) {
      info->converged = 1;
      return HPMG_SUCCESS;
    }
    if (it == prm->maxit || (info->stagnated = hpmg_stagnation(ring, it, rn))) return HPMG_SUCCESS;
    if (in_place) HPMG_CALL(hpmg_mg_vcycle(mg, top, 0));
    else if (mixed) {
      HPMG_CALL(hpmg_mg_vcycle(mg, top, 1));
      HPMG_CALL(hpmg_v_add_converted(&F->x, x, &work[1]));
    } else {
      HPMG_CALL(hpmg_mg_precondition(mg, &work[0], &work[1]));
      HPMG_CALL(hpmg_v_axpy(1.0, &work[1], x));
    }
  }
}

hpmg_error hpmg_mg_fmg_solve(hpmg_mg *mg, const hpmg_linop *A, const hpmg_vec *b, hpmg_vec *x, hpmg_vec work[2],
                             const hpmg_krylov_params *prm, hpmg_krylov_info *info) {
  hpmg_level *F = &mg->lv[mg->nlevels - 1];
  double r0;
  HPMG_CALL(hpmg_v_norm(b, &r0));
  info->r0 = r0;
  info->iterations = 0;
  info->converged = 0;
  if (!isfinite(r0)) return hpmg_error_set(HPMG_ERR_NUMERIC, "right-hand side norm is %g", r0);
  if (r0 == 0.0) { /* A x = 0 */
    HPMG_CALL(hpmg_v_zero(x));
    info->rnorm = 0.0;
    info->converged = 1;
    monitor(prm, 0, 0.0, 0.0);
    return HPMG_SUCCESS;
  }
  const int mixed = x->real != mg->real;
  if (mixed || !mg->fine_aliases) {
    /* the start's finest cycle of a mixed-precision solve runs as x += V(b -
     * A x) with the residual in the outer precision, so that the float
     * rounding of the interpolated x is corrected by that cycle */
    const int correct = mixed && mg->nlevels > 1;
    HPMG_CALL(hpmg_v_convert(b, &F->b));
    HPMG_CALL(hpmg_mg_fmg(mg, !correct));
    HPMG_CALL(hpmg_v_convert(&F->x, x));
    if (correct) {
      HPMG_CALL(hpmg_linop_residual(A, b, x, &work[0]));
      HPMG_CALL(hpmg_v_convert(&work[0], &F->b));
      HPMG_CALL(hpmg_mg_vcycle(mg, mg->nlevels - 1, 1));
      HPMG_CALL(hpmg_v_add_converted(&F->x, x, &work[1]));
    }
  } else {
    F->b = hpmg_vec_wrap(F->be, mg->real, F->n, b->data);
    F->x = hpmg_vec_wrap(F->be, mg->real, F->n, x->data);
    HPMG_CALL(hpmg_mg_fmg(mg, 1));
  }
  return hpmg_mg_stationary(mg, A, b, x, work, 1, r0, prm, info);
}

/* ------------------------------------------------------------ the driver */

static double gmres_extra(const hpmg_mg_solve_options *o) {
  if (o->solver != HPMG_SOLVER_GMRES) return 0.0;
  const double extra = hpmg_gmres_vectors(o->restart) - 4.0; /* v0 z0 v1 z1 are the work vectors */
  return extra > 0 ? extra : 0.0;
}

double hpmg_mg_solver_memory(double n, hpmg_real kreal, const hpmg_mg_solve_options *o) {
  const double ks = (double)hpmg_real_size(kreal);
  return (4.0 + gmres_extra(o)) * n * ks + (kreal == HPMG_REAL_FLOAT ? 2.0 * n * 4.0 + n * 8.0 : 0.0);
}

/* the outer operator: counted, and timed as the cycle is */
static double outer_tic(hpmg_mg_solver *s) { return hpmg_mg_clock(s->mg, s->be); }
static void outer_toc(hpmg_mg_solver *s, double t0) {
  s->outer_matvecs++;
  if (s->mg->opt.timing) s->t_outer_op += outer_tic(s) - t0;
}
static hpmg_error outer_apply(void *ctx, const hpmg_vec *x, hpmg_vec *y) {
  hpmg_mg_solver *s = ctx;
  const double t0 = outer_tic(s);
  HPMG_CALL(s->A.apply(s->A.ctx, x, y));
  outer_toc(s, t0);
  return HPMG_SUCCESS;
}
static hpmg_error outer_residual(void *ctx, const hpmg_vec *b, const hpmg_vec *x, hpmg_vec *r) {
  hpmg_mg_solver *s = ctx;
  const double t0 = outer_tic(s);
  HPMG_CALL(hpmg_linop_residual(&s->A, b, x, r));
  outer_toc(s, t0);
  return HPMG_SUCCESS;
}
static hpmg_error outer_residual_norm(void *ctx, const hpmg_vec *b, const hpmg_vec *x, double *rn) {
  hpmg_mg_solver *s = ctx;
  const double t0 = outer_tic(s);
  HPMG_CALL(s->A.residual_norm(s->A.ctx, b, x, rn));
  outer_toc(s, t0);
  return HPMG_SUCCESS;
}

static void history(void *ctx, int it, double rn, double r0) {
  hpmg_mg_solver *s = ctx;
  hpmg_history_record(s->hist, &s->nhist, s->o.maxit + 2, it, rn, r0, s->o.verbose);
}

hpmg_error hpmg_mg_solver_create(hpmg_mg_solver *s, hpmg_mg *mg, hpmg_linop A, const hpmg_backend *be, int64_t n,
                                 hpmg_real kreal, const hpmg_mg_solve_options *o) {
  memset(s, 0, sizeof *s);
  s->mg = mg;
  s->A = A;
  s->be = be;
  s->n = n;
  s->kreal = kreal;
  s->o = *o;
  for (int i = 0; i < 4; i++) HPMG_CALL(hpmg_vec_create(be, kreal, n, &s->work[i]));
  if (kreal == HPMG_REAL_FLOAT) {
    HPMG_CALL(hpmg_vec_create(be, kreal, n, &s->kb));
    HPMG_CALL(hpmg_vec_create(be, kreal, n, &s->kx));
    HPMG_CALL(hpmg_vec_create(be, HPMG_REAL_DOUBLE, n, &s->check));
  }
  if (o->solver == HPMG_SOLVER_GMRES) HPMG_CALL(hpmg_gmres_work_create(o->restart, s->work, 4, &s->gmres));
  s->hist = calloc((size_t)o->maxit + 2, sizeof(double));
  if (!s->hist) return hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate the residual history");
  return HPMG_SUCCESS;
}

void hpmg_mg_solver_destroy(hpmg_mg_solver *s) {
  hpmg_gmres_work_destroy(&s->gmres);
  for (int i = 0; i < 4; i++) hpmg_vec_destroy(&s->work[i]);
  hpmg_vec_destroy(&s->kb);
  hpmg_vec_destroy(&s->kx);
  hpmg_vec_destroy(&s->check);
  free(s->hist);
  memset(s, 0, sizeof *s);
}

hpmg_error hpmg_mg_solver_solve(hpmg_mg_solver *s, const hpmg_vec *b, hpmg_vec *x, hpmg_stats *st) {
  hpmg_mg *mg = s->mg;
  hpmg_mg_reset_stats(mg);
  s->t_outer_op = 0;
  s->outer_matvecs = 0;
  s->nhist = 0;
  hpmg_linop A = {s, outer_apply, outer_residual, s->A.residual_norm ? outer_residual_norm : NULL};
  hpmg_linop M = hpmg_mg_linop(mg);
  hpmg_krylov_params prm = {.rtol = s->o.tol, .maxit = s->o.maxit, .mon = history, .mctx = s,
                            .project = s->o.project, .pctx = s->o.pctx};
  hpmg_krylov_info info;
  memset(&info, 0, sizeof info);
  if (s->be->sync) HPMG_CALL(s->be->sync());
  const double t0 = hpmg_wtime();
  const hpmg_vec *kb = b;
  hpmg_vec *kx = x;
  hpmg_error e = HPMG_SUCCESS;
  if (s->kreal != b->real) { /* --precision float: the whole iteration on float copies */
    e = hpmg_v_convert(b, &s->kb);
    if (!e) e = hpmg_v_convert(x, &s->kx);
    kb = &s->kb;
    kx = &s->kx;
  }
  if (!e) switch (s->o.solver) {
    case HPMG_SOLVER_CG: e = hpmg_pcg(&A, &M, kb, kx, s->work, 0, &prm, &info); break;
    case HPMG_SOLVER_GMRES: e = hpmg_gmres(&A, &M, kb, kx, &s->gmres, &prm, &info); break;
    case HPMG_SOLVER_FMG: e = hpmg_mg_fmg_solve(mg, &A, kb, kx, s->work, &prm, &info); break;
    default: e = hpmg_mg_stationary(mg, &A, kb, kx, s->work, 0, 0.0, &prm, &info);
    }
  if (!e && kx != x) e = hpmg_v_convert(kx, x);
  if (s->be->sync) {
    hpmg_error e2 = s->be->sync();
    if (!e) e = e2;
  }
  st->t_solve = hpmg_wtime() - t0;
  /* The recursively updated Krylov residual drifts from the true one in low
   * precision (float CG keeps "converging" below float round-off). Judge
   * convergence by the true residual b - Ax, recomputed in double. */
  double true_res = 0.0;
  hpmg_vec *rt = s->kreal == HPMG_REAL_FLOAT ? &s->check : &s->work[3];
  if (!e) e = hpmg_linop_residual(&s->A, b, x, rt);
  if (!e) e = hpmg_v_norm(rt, &true_res);
  st->iterations = info.iterations;
  st->residual0 = info.r0;
  st->residual = e ? info.rnorm : true_res;
  st->converged = !e && info.converged && !(true_res > 10.0 * s->o.tol * info.r0);
  info.converged = st->converged;
  info.rnorm = st->residual;
  st->rate = hpmg_krylov_rate(&info);
  double op = s->t_outer_op, sm = 0, tr = 0, comm = 0;
  int64_t apps = s->outer_matvecs + mg->matvecs;
  for (int l = 0; l < mg->nlevels; l++) {
    const hpmg_level *L = &mg->lv[l];
    op += L->t_op;
    sm += L->t_smooth;
    tr += L->t_transfer;
    comm += L->t_comm;
    apps += L->matvecs;
    if (l < HPMG_STATS_MAX_LEVELS) {
      st->level_dofs[l] = L->n;
      st->t_level_smoother[l] = L->t_smooth;
      st->t_level_operator[l] = L->t_op;
      st->t_level_transfer[l] = L->t_transfer;
    }
  }
  st->t_operator = op;
  st->t_smoother = sm;
  st->t_transfer = tr + comm;
  st->t_coarse = mg->t_coarse;
  st->t_krylov = mg->opt.timing ? st->t_solve - op - sm - tr - comm - mg->t_coarse : 0.0;
  st->operator_applications = apps;
  HPMG_CALL(e);
  if (!info.converged) return hpmg_not_converged(&info, info.r0 > 0 ? info.rnorm / info.r0 : 0.0, s->o.tol);
  return HPMG_SUCCESS;
}
