/* The multigrid cycle, written once over hpmg_level_ops (mg.h). */
#include <stdlib.h>
#include <string.h>
#include "mg.h"

hpmg_error hpmg_mg_init(hpmg_mg *mg, int nlevels, hpmg_real real, const hpmg_cycle_options *opt, int fine_aliases) {
  memset(mg, 0, sizeof *mg);
  HPMG_CHECK_ARG(nlevels >= 1, "a multigrid hierarchy needs at least one level");
  mg->lv = calloc((size_t)nlevels, sizeof *mg->lv);
  if (!mg->lv) return hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate %d levels", nlevels);
  mg->nlevels = nlevels;
  for (int l = 0; l < nlevels; l++) mg->lv[l].sweep_factor = 1;
  mg->real = real;
  mg->opt = *opt;
  mg->fine_aliases = fine_aliases;
  return HPMG_SUCCESS;
}

double hpmg_mg_level_bytes(hpmg_real real, double n, int own_bx, int need_r) {
  return ((own_bx ? 2 : 0) + (need_r ? 1 : 0)) * n * (double)hpmg_real_size(real);
}

hpmg_error hpmg_mg_setup(hpmg_mg *mg, const int *need_r) {
  for (int l = 0; l < mg->nlevels; l++) {
    hpmg_level *L = &mg->lv[l];
    if (!(mg->fine_aliases && l == mg->nlevels - 1)) {
      HPMG_CALL(hpmg_vec_create(L->be, mg->real, L->n, &L->b));
      HPMG_CALL(hpmg_vec_create(L->be, mg->real, L->n, &L->x));
    }
    if (!need_r || need_r[l]) HPMG_CALL(hpmg_vec_create(L->be, mg->real, L->n, &L->r));
    if (l > 0 && mg->lv[l - 1].be != L->be) {
      HPMG_CALL(hpmg_vec_create(L->be, mg->real, mg->lv[l - 1].n, &L->cb));
      HPMG_CALL(hpmg_vec_create(L->be, mg->real, mg->lv[l - 1].n, &L->cx));
    }
  }
  return HPMG_SUCCESS;
}

void hpmg_mg_destroy(hpmg_mg *mg) {
  for (int l = 0; mg->lv && l < mg->nlevels; l++) {
    hpmg_level *L = &mg->lv[l];
    if (L->ops && L->ops->destroy) L->ops->destroy(L);
    hpmg_vec_destroy(&L->b);
    hpmg_vec_destroy(&L->x);
    hpmg_vec_destroy(&L->r);
    hpmg_vec_destroy(&L->cb);
    hpmg_vec_destroy(&L->cx);
    hpmg_vec_destroy(&L->fmg_b);
    hpmg_vec_destroy(&L->fmg_x);
  }
  free(mg->lv);
  memset(mg, 0, sizeof *mg);
}

/* v = a (host doubles) on L's backend in the cycle's precision, created where v has no entries */
static hpmg_error shift_set(const hpmg_mg *mg, const hpmg_level *L, const double *a, hpmg_vec *v) {
  if (!a) {
    hpmg_vec_destroy(v);
    return HPMG_SUCCESS;
  }
  if (!v->n) HPMG_CALL(hpmg_vec_create(L->be, mg->real, L->n, v));
  const hpmg_backend *H = hpmg_backend_host();
  const hpmg_vec src = hpmg_vec_wrap(H, HPMG_REAL_DOUBLE, L->n, (void *)a);
  if (L->be == H) return hpmg_v_convert(&src, v);
  hpmg_vec tmp = {0};
  hpmg_error e = hpmg_vec_create(H, mg->real, L->n, &tmp);
  if (!e) e = hpmg_v_convert(&src, &tmp);
  if (!e) e = hpmg_v_transfer(&tmp, v);
  hpmg_vec_destroy(&tmp);
  return e;
}

hpmg_error hpmg_mg_set_fmg_shift(hpmg_mg *mg, int l, const double *b_shift, const double *x_shift) {
  HPMG_CHECK_ARG(l >= 0 && l < mg->nlevels, "FMG shift: level %d of %d", l, mg->nlevels);
  hpmg_level *L = &mg->lv[l];
  HPMG_CALL(shift_set(mg, L, b_shift, &L->fmg_b));
  return shift_set(mg, L, x_shift, &L->fmg_x);
}

void hpmg_mg_reset_stats(hpmg_mg *mg) {
  mg->t_coarse = 0;
  mg->matvecs = 0;
  for (int l = 0; l < mg->nlevels; l++) {
    hpmg_level *L = &mg->lv[l];
    L->t_smooth = L->t_op = L->t_transfer = L->t_comm = 0;
    L->matvecs = 0;
  }
}

/* --------------------------------------------------------------- timers */

double hpmg_mg_clock(const hpmg_mg *mg, const hpmg_backend *be) {
  if (!mg->opt.timing) return 0.0;
  if (mg->opt.timing == 2) be->sync();
  return hpmg_wtime();
}
static double tic(const hpmg_mg *mg, const hpmg_level *L) { return hpmg_mg_clock(mg, L->be); }
static void toc(const hpmg_mg *mg, const hpmg_level *L, double t0, double *acc) {
  if (mg->opt.timing) *acc += tic(mg, L) - t0;
}
#define TIMED(mg, L, acc, expr)                                                                                        \
  do {                                                                                                                 \
    const double t0_ = tic(mg, L);                                                                                     \
    HPMG_CALL(expr);                                                                                                   \
    toc(mg, L, t0_, acc);                                                                                              \
  } while (0)

/* --------------------------------------------------------------- pieces */

static int crosses(const hpmg_mg *mg, int l) { return mg->lv[l - 1].be != mg->lv[l].be; }

/* where level l writes the coarser level's right-hand side ... */
static hpmg_vec *coarse_rhs(hpmg_mg *mg, int l) { return crosses(mg, l) ? &mg->lv[l].cb : &mg->lv[l - 1].b; }
/* ... and the copy to that level's backend after */
static hpmg_error coarse_rhs_done(hpmg_mg *mg, int l) {
  hpmg_level *L = &mg->lv[l];
  if (crosses(mg, l)) TIMED(mg, L, &L->t_comm, hpmg_v_transfer(&L->cb, &mg->lv[l - 1].b));
  return HPMG_SUCCESS;
}
/* the coarser level's x on level l's backend */
static hpmg_error coarse_x(hpmg_mg *mg, int l, const hpmg_vec **xc) {
  hpmg_level *L = &mg->lv[l];
  *xc = &mg->lv[l - 1].x;
  if (crosses(mg, l)) {
    TIMED(mg, L, &L->t_comm, hpmg_v_transfer(&mg->lv[l - 1].x, &L->cx));
    *xc = &L->cx;
  }
  return HPMG_SUCCESS;
}

static hpmg_error coarse_solve(hpmg_mg *mg) {
  hpmg_level *L = &mg->lv[0];
  TIMED(mg, L, &mg->t_coarse, L->ops->coarse_solve(L));
  return HPMG_SUCCESS;
}

static hpmg_error smooth(hpmg_mg *mg, hpmg_level *L, int x_is_zero, int post, int sweeps) {
  sweeps *= L->sweep_factor;
  if (sweeps == 0) return x_is_zero ? hpmg_v_zero(&L->x) : HPMG_SUCCESS;
  TIMED(mg, L, &L->t_smooth, L->ops->smooth(L, x_is_zero, post, sweeps));
  return HPMG_SUCCESS;
}

/* the coarse right-hand side R (b - A x); x_is_zero: R b (the residual is b,
 * kept in r where the cycle adds it to the correction); has_rf: it holds R b
 * already (FMG) */
static hpmg_error restrict_residual(hpmg_mg *mg, int l, int x_is_zero, int has_rf) {
  hpmg_level *L = &mg->lv[l];
  hpmg_vec *c = coarse_rhs(mg, l);
  const int add_r = mg->opt.add_residual;
  if (has_rf && !x_is_zero && L->ops->restrict_update && !add_r) {
    TIMED(mg, L, &L->t_op, L->ops->restrict_update(L, c));
    mg->matvecs++;
  } else if (x_is_zero && !add_r) {
    TIMED(mg, L, &L->t_transfer, L->ops->restrict_to(L, &L->b, c));
  } else if (!x_is_zero && L->ops->residual_restrict && !add_r) {
    TIMED(mg, L, &L->t_op, L->ops->residual_restrict(L, c));
    mg->matvecs++;
  } else {
    if (x_is_zero) TIMED(mg, L, &L->t_op, hpmg_v_copy(&L->b, &L->r));
    else {
      TIMED(mg, L, &L->t_op, L->ops->residual(L));
      mg->matvecs++;
    }
    TIMED(mg, L, &L->t_transfer, L->ops->restrict_to(L, &L->r, c));
  }
  return coarse_rhs_done(mg, l);
}

/* the coarse-grid correction x += P x_c (+ r) and the post-smoothing */
static hpmg_error correct(hpmg_mg *mg, int l) {
  hpmg_level *L = &mg->lv[l];
  const hpmg_vec *xc;
  HPMG_CALL(coarse_x(mg, l, &xc));
  if (L->ops->correct_smooth && mg->opt.post > 0 && !mg->opt.add_residual) {
    TIMED(mg, L, &L->t_smooth, L->ops->correct_smooth(L, xc, mg->opt.post * L->sweep_factor));
    return HPMG_SUCCESS;
  }
  const double t0 = tic(mg, L);
  HPMG_CALL(L->ops->prolong(L, xc, 1));
  if (mg->opt.add_residual) HPMG_CALL(hpmg_v_axpy(1.0, &L->r, &L->x)); /* r: still the level residual */
  toc(mg, L, t0, &L->t_transfer);
  return smooth(mg, L, 0, 1, mg->opt.post);
}

static hpmg_error vcycle(hpmg_mg *mg, int l, int x_is_zero, int presmoothed, int has_rf) {
  if (l == 0) return coarse_solve(mg);
  hpmg_level *L = &mg->lv[l];
  if (!presmoothed) HPMG_CALL(smooth(mg, L, x_is_zero, 0, mg->opt.pre));
  HPMG_CALL(restrict_residual(mg, l, x_is_zero && !presmoothed && mg->opt.pre == 0, has_rf));
  HPMG_CALL(vcycle(mg, l - 1, 1, 0, 0));
  return correct(mg, l);
}

hpmg_error hpmg_mg_vcycle(hpmg_mg *mg, int l, int x_is_zero) { return vcycle(mg, l, x_is_zero, 0, 0); }

hpmg_error hpmg_mg_fmg(hpmg_mg *mg, int finest_cycle) {
  const int top = mg->nlevels - 1;
  for (int l = top; l > 0; l--) {
    hpmg_level *L = &mg->lv[l], *C = &mg->lv[l - 1];
    TIMED(mg, L, &L->t_transfer, L->ops->restrict_to(L, &L->b, coarse_rhs(mg, l)));
    HPMG_CALL(coarse_rhs_done(mg, l));
    if (C->fmg_b.n) TIMED(mg, C, &C->t_transfer, hpmg_v_axpy(1.0, &C->fmg_b, &C->b));
  }
  HPMG_CALL(coarse_solve(mg));
  for (int l = 1; l <= top; l++) {
    hpmg_level *L = &mg->lv[l], *C = &mg->lv[l - 1];
    const int cycle = l < top || finest_cycle;
    int presmoothed = 0;
    const hpmg_vec *xc;
    HPMG_CALL(coarse_x(mg, l, &xc));
    if (cycle && L->ops->interp_smooth && mg->opt.pre > 0 && !L->fmg_x.n) {
      TIMED(mg, L, &L->t_smooth, L->ops->interp_smooth(L, xc, mg->opt.pre * L->sweep_factor));
      presmoothed = 1;
    } else if (L->ops->fmg_interp) TIMED(mg, L, &L->t_transfer, L->ops->fmg_interp(L, xc));
    else TIMED(mg, L, &L->t_transfer, L->ops->prolong(L, xc, 0));
    if (L->fmg_x.n) TIMED(mg, L, &L->t_transfer, hpmg_v_axpy(1.0, &L->fmg_x, &L->x));
    /* the coarse right-hand side of this level still holds the restriction
     * of b made above (the cycles on coarser levels wrote only theirs), which
     * a level's restrict_update reuses: without the coarse level's shift */
    if (C->fmg_b.n) TIMED(mg, C, &C->t_transfer, hpmg_v_axpy(-1.0, &C->fmg_b, &C->b));
    if (cycle) HPMG_CALL(vcycle(mg, l, 0, presmoothed, 1));
  }
  return HPMG_SUCCESS;
}

hpmg_error hpmg_mg_precondition(hpmg_mg *mg, const hpmg_vec *r, hpmg_vec *z) {
  hpmg_level *F = &mg->lv[mg->nlevels - 1];
  if (mg->fine_aliases && r->real == mg->real && z->real == mg->real) {
    F->b = hpmg_vec_wrap(F->be, mg->real, F->n, r->data);
    F->x = hpmg_vec_wrap(F->be, mg->real, F->n, z->data);
    return hpmg_mg_vcycle(mg, mg->nlevels - 1, 1);
  }
  HPMG_CALL(hpmg_v_convert(r, &F->b));
  HPMG_CALL(hpmg_mg_vcycle(mg, mg->nlevels - 1, 1));
  return hpmg_v_convert(&F->x, z);
}

hpmg_error hpmg_mg_coarse_cg(const hpmg_linop *A, const hpmg_linop *M, const hpmg_vec *b, hpmg_vec *x, hpmg_vec work[4]) {
  const int64_t cap = 10 * b->n + 100;
  const hpmg_krylov_params prm = {.rtol = 1e-14, .maxit = (int)(cap < 1000000 ? cap : 1000000), .x0_zero = 1};
  hpmg_krylov_info info;
  return hpmg_pcg(A, M, b, x, work, 0, &prm, &info);
}

static hpmg_error mg_apply(void *ctx, const hpmg_vec *r, hpmg_vec *z) { return hpmg_mg_precondition(ctx, r, z); }

hpmg_linop hpmg_mg_linop(hpmg_mg *mg) {
  hpmg_linop M = {0};
  M.ctx = mg;
  M.apply = mg_apply;
  return M;
}
