/* FD multigrid (paper 002, Algorithms 3.1-3.3) on the solver core: the
 * finite-difference levels fill the slots of hpmg_level_ops (mg/mg.h) with
 * the kernels of their backend's fd_ops table, and the V-cycle, FMG, the
 * multigrid preconditioner, the V-cycle iteration (mg/solve.h) and CG
 * (la/krylov.h) are the core's. A level lives on the GPU or the CPU; where
 * the split falls, the core copies through mirrors of the coarser level's b
 * and x on the GPU level, one copy down (b) and one up (x) per visit. Also
 * here: the configuration and its checks, the memory estimate, the split
 * model, the FFT dispatch and the error norms. */
#include <math.h>
#include <omp.h>
#include <stddef.h>
#include <string.h>
#include "disc/fd/fd_fft.h"
#include "la/vec.h"
#include "disc/fd/fd_mg.h"
#include "mg/mg.h"
#include "mg/solve.h"

/* the solver hands fd_prec to the core as hpmg_real */
_Static_assert((int)FD_DOUBLE == (int)HPMG_REAL_DOUBLE && (int)FD_FLOAT == (int)HPMG_REAL_FLOAT,
               "fd_prec and hpmg_real must agree");

/* What a level's slots need: the level's grid and kernels, and the smoother. */
typedef struct {
  int dim;
  int64_t n;             /* intervals per direction */
  const fd_ops *ops;     /* the kernels of the level's backend, in the cycle's precision */
  fd_smoother_kind kind;
  double weight;         /* Jacobi's damping or the Gauss-Seidel smoothers' SOR weight */
  hpmg_level_ops slots;  /* fd_slots less the fused slots this level does not have */
} fd_level;

/* The core's hierarchy counts levels from the coarsest (mg.lv[0], 2
 * intervals: one unknown); the paper, the split and fd_config count them
 * from the finest: paper level l is mg.lv[nlev - 1 - l]. */
struct fd_solver_s {
  fd_config cfg;
  int nlev, split;       /* split: the finest `split` levels are on the GPU */
  fd_level *lev;         /* lev[i]: the ctx of mg.lv[i] */
  hpmg_mg mg;
  const fd_ops *cpu, *gpu;
  const hpmg_backend *gpu_be;
  hpmg_vec cg[5];        /* CG: x, b, and hpmg_pcg's work vectors z, p, q on the finest level's backend */
  void *stage;           /* host staging of the finest level's size (in the working precision) */
  fd_fft fft;
  fd_stats st;
};

void fd_config_default(fd_config *c) {
  memset(c, 0, sizeof *c);
  c->dim = 2;
  c->refine = 10;
  c->smoother = FD_SMOOTH_MCGS;
  c->omega = 0.8;
  c->sor = FD_SOR_DEFAULT;
  c->solver = FD_SOLVER_VCYCLE;
  c->pre = FD_SWEEPS_DEFAULT;
  c->post = FD_SWEEPS_DEFAULT;
  c->fmg_interp = FD_FMG_CUBIC;
  c->tol = 1e-6;
  c->maxit = 100;
  c->prec = FD_DOUBLE;
  c->device = FD_DEVICE_CPU;
  c->split = FD_SPLIT_AUTO;
}

void fd_config_resolve(fd_config *c) {
  const int fmg3 = c->solver == FD_SOLVER_FMG && c->dim == 3;
  /* 3D FMG with the cubic interpolation and mcgs (the default FMG): FMG(2,1)
   * with SOR 1.3 ends closer to the discrete solution than FMG(2,2) with
   * plain GS (algebraic error 1.2-1.3 against 1.9 times the discretization
   * error at L = 5..8) and costs one sweep less (docs/fd.md); other 3D FMG
   * (the paper's linear interpolation) keeps (2,2) and plain GS */
  const int tuned = fmg3 && c->fmg_interp == FD_FMG_CUBIC && c->smoother == FD_SMOOTH_MCGS;
  if (c->pre == FD_SWEEPS_DEFAULT) c->pre = fmg3 ? 2 : 1;
  if (c->post == FD_SWEEPS_DEFAULT) c->post = fmg3 && !tuned ? 2 : 1;
  if (c->sor == FD_SOR_DEFAULT) c->sor = tuned ? 1.3 : 1.0;
}

hpmg_error fd_config_check(const fd_config *cfg) {
  HPMG_CHECK_ARG(cfg, "fd: NULL configuration");
  fd_config resolved = *cfg;
  fd_config_resolve(&resolved);
  const fd_config *c = &resolved;
  HPMG_CHECK_ARG(c->dim == 2 || c->dim == 3, "fd: dim must be 2 or 3 (got %d)", c->dim);
  const int maxr = c->dim == 2 ? FD_MAX_REFINE_2D : FD_MAX_REFINE_3D;
  HPMG_CHECK_ARG(c->refine >= 1 && c->refine <= maxr,
                 "fd: refine must be in 1..%d in %dD (got %d)", maxr, c->dim, c->refine);
  HPMG_CHECK_ARG(c->smoother >= FD_SMOOTH_JACOBI && c->smoother <= FD_SMOOTH_MCGS,
                 "fd: unknown smoother %d", (int)c->smoother);
  HPMG_CHECK_ARG(c->omega > 0 && c->omega < 2, "fd: Jacobi weight must be in (0,2) (got %g)", c->omega);
  HPMG_CHECK_ARG(c->sor > 0 && c->sor < 2, "fd: Gauss-Seidel over-relaxation weight must be in (0,2) (got %g)", c->sor);
  HPMG_CHECK_ARG(c->solver >= FD_SOLVER_VCYCLE && c->solver <= FD_SOLVER_FFT,
                 "fd: unknown solver %d", (int)c->solver);
  HPMG_CHECK_ARG(c->pre >= 0 && c->pre <= 100 && c->post >= 0 && c->post <= 100,
                 "fd: pre/post sweeps must be in 0..100 (got %d, %d)", c->pre, c->post);
  HPMG_CHECK_ARG(c->solver == FD_SOLVER_FFT || c->pre + c->post >= 1,
                 "fd: pre + post smoothing sweeps must be at least 1");
  HPMG_CHECK_ARG(c->fmg_interp == FD_FMG_LINEAR || c->fmg_interp == FD_FMG_CUBIC,
                 "fd: unknown FMG interpolation %d", (int)c->fmg_interp);
  HPMG_CHECK_ARG(c->tol > 0 && c->tol < 1, "fd: tol must be in (0,1) (got %g)", c->tol);
  HPMG_CHECK_ARG(c->maxit >= 1 && c->maxit <= 1000000, "fd: maxit must be in 1..1000000 (got %d)",
                 c->maxit);
  HPMG_CHECK_ARG(c->threads >= 0 && c->threads <= 4096, "fd: threads must be in 0..4096 (got %d)",
                 c->threads);
  HPMG_CHECK_ARG(c->prec == FD_DOUBLE || c->prec == FD_FLOAT, "fd: unknown precision");
  HPMG_CHECK_ARG(c->device == FD_DEVICE_CPU || c->device == FD_DEVICE_CUDA, "fd: unknown device");
  if (c->device == FD_DEVICE_CPU)
    HPMG_CHECK_ARG(c->split == FD_SPLIT_AUTO || c->split == 0,
                   "fd: --split needs --device cuda (got split %d on the CPU)", c->split);
  else
    HPMG_CHECK_ARG(c->split == FD_SPLIT_AUTO || (c->split >= 0 && c->split <= c->refine),
                   "fd: split must be auto or in 0..L = 0..%d (got %d)", c->refine, c->split);
  return HPMG_SUCCESS;
}

/* Cost model of one V-cycle visit of a level (seconds), used by split auto:
 * a GPU level costs its kernel launches (2 x colors + 4 kernels) plus its
 * traffic (about 12 vector passes) at the GPU bandwidth; a CPU level costs
 * the traffic at the CPU bandwidth plus one OpenMP fork/join per kernel (none
 * below 32 intervals, where kernels run on one thread); the split itself
 * costs two host<->device copies. The constants are measured at run time by
 * fd_split_calibrate (docs/fd.md); fd_split_costs_default holds the orders of
 * magnitude of an H100/H200 node. */
void fd_split_costs_default(fd_split_costs *c) {
  c->gpu_launch_s = 4e-6;
  c->gpu_bw = 2.5e12;
  c->cpu_bw = 2e10;
  c->cpu_barrier_s = 2e-6;
  c->link_latency_s = 8e-6;
  c->link_bw = 2e10;
  c->measured = 0;
}

int fd_split_model(int dim, int L, const fd_split_costs *c) {
  const double colors = dim == 2 ? 4 : 8, kernels = 2 * colors + 4;
  double best = 1e300;
  int best_s = L;
  for (int s = 1; s <= L; s++) {
    double t = 0;
    for (int l = 0; l < L; l++) {
      const int64_t n = (int64_t)1 << (L - l);
      const double bytes = 12.0 * 8.0 * (double)fd_points(dim, n);
      if (l < s) t += kernels * c->gpu_launch_s + bytes / c->gpu_bw;
      else t += bytes / c->cpu_bw + (n >= 32 ? kernels * c->cpu_barrier_s : 0);
    }
    if (s < L) {
      const int64_t n = (int64_t)1 << (L - s);
      t += 2 * (c->link_latency_s + 8.0 * (double)fd_points(dim, n) / c->link_bw);
    }
    if (t < best) { best = t; best_s = s; }
  }
  return best_s;
}

int fd_split_auto(int dim, int L) {
  fd_split_costs c;
  fd_split_costs_default(&c);
  return fd_split_model(dim, L, &c);
}

hpmg_error fd_split_calibrate(fd_split_costs *c) {
  fd_split_costs_default(c);
  HPMG_CALL(fd_cuda_calibrate(&c->gpu_launch_s, &c->gpu_bw, &c->link_latency_s, &c->link_bw));
  /* CPU: y += a x over 2 x 16 MiB (best of 5), and empty parallel loops */
  const int64_t n = (int64_t)1 << 21;
  double *x = NULL, *y = NULL;
  hpmg_error e = hpmg_calloc(sizeof(double) * (size_t)n, &x);
  if (!e) e = hpmg_calloc(sizeof(double) * (size_t)n, &y);
  if (e) {
    hpmg_free(&x);
    hpmg_free(&y);
    return e;
  }
  double best = 1e30;
  for (int r = 0; r < 5; r++) {
    const double t0 = hpmg_wtime();
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) y[i] += 0.5 * x[i];
    const double t = hpmg_wtime() - t0;
    if (t < best) best = t;
  }
  c->cpu_bw = 3.0 * 8.0 * (double)n / best;
  double s = 0;
  const double t0 = hpmg_wtime();
  for (int r = 0; r < 200; r++) {
#pragma omp parallel for schedule(static) reduction(+ : s)
    for (int i = 0; i < 64; i++) s += y[i];
  }
  c->cpu_barrier_s = (hpmg_wtime() - t0) / 200 + 0.0 * s;
  hpmg_free(&x);
  hpmg_free(&y);
  c->measured = 1;
  return HPMG_SUCCESS;
}

static int resolved_split(const fd_config *c) {
  if (c->device == FD_DEVICE_CPU) return 0;
  return c->split == FD_SPLIT_AUTO ? fd_split_auto(c->dim, c->refine) : c->split;
}

hpmg_error fd_memory_estimate(const fd_config *c, double *host, double *dev) {
  HPMG_CALL(fd_config_check(c));
  const double sz = (double)fd_prec_size(c->prec);
  const int L = c->refine, split = resolved_split(c);
  const double n0 = (double)fd_points(c->dim, (int64_t)1 << L);
  double h = 0, d = 0;
  if (c->solver == FD_SOLVER_FFT) {
    if (c->device == FD_DEVICE_CPU) h += 8 * n0; /* FFTW works in double */
    else { h += sz * n0; d += fd_cuda_fft_bytes(c->dim, (int64_t)1 << L, c->prec); }
  } else {
    /* per level b, x and r (hpmg_mg_setup); the coarsest GPU level holds
     * mirrors of the finest CPU level's b and x */
    for (int l = 0; l < L; l++) {
      const double p = (double)fd_points(c->dim, (int64_t)1 << (L - l));
      *(l < split ? &d : &h) += hpmg_mg_level_bytes((hpmg_real)c->prec, p, 1, 1);
      if (l == split && split > 0) d += 2 * sz * p;
    }
    /* CG: x, b and hpmg_pcg's work vectors z, p, q (its r is the finest b) */
    if (c->solver == FD_SOLVER_CG) *(split > 0 ? &d : &h) += 5 * sz * n0;
    if (split > 0) h += sz * n0; /* the host staging of b and x */
  }
  *host = h;
  *dev = d;
  return HPMG_SUCCESS;
}

/* ------------------------------------------------------------ level slots */

static fd_level *FL(const hpmg_level *L) { return L->ctx; }

/* pre-smoothing forward, post-smoothing backward (reverse color order); the
 * Jacobi sweep and the GPU's z-marching GS pass work out of place and swap
 * x.data with r.data (the hierarchy is created with fine_aliases = 0) */
static hpmg_error slot_smooth(hpmg_level *L, int x_is_zero, int post, int sweeps) {
  const fd_level *q = FL(L);
  if (x_is_zero) HPMG_CALL(hpmg_v_zero(&L->x));
  return q->ops->smooth(q->dim, q->n, q->kind, q->weight, sweeps, post, &L->x.data, L->b.data, &L->r.data);
}

static hpmg_error slot_residual(hpmg_level *L) {
  const fd_level *q = FL(L);
  return q->ops->residual(q->dim, q->n, L->x.data, L->b.data, L->r.data);
}

static hpmg_error slot_restrict(hpmg_level *L, const hpmg_vec *fine, hpmg_vec *coarse) {
  const fd_level *q = FL(L);
  return q->ops->restrict_rhs(q->dim, q->n, fine->data, coarse->data);
}

static hpmg_error slot_prolong(hpmg_level *L, const hpmg_vec *xc, int add) {
  const fd_level *q = FL(L);
  return q->ops->prolong(q->dim, q->n, xc->data, L->x.data, add);
}

/* The coarsest level has one unknown: one Gauss-Seidel step from zero solves it. */
static hpmg_error slot_coarse_solve(hpmg_level *L) {
  const fd_level *q = FL(L);
  HPMG_CALL(hpmg_v_zero(&L->x));
  return q->ops->smooth(q->dim, q->n, FD_SMOOTH_MCGS, 1.0, 1, 0, &L->x.data, L->b.data, &L->r.data);
}

static hpmg_error slot_residual_restrict(hpmg_level *L, hpmg_vec *coarse) {
  const fd_level *q = FL(L);
  return q->ops->residual_restrict(q->dim, q->n, L->x.data, L->b.data, coarse->data);
}

static hpmg_error slot_restrict_update(hpmg_level *L, hpmg_vec *coarse) {
  const fd_level *q = FL(L);
  return q->ops->restrict_update(q->dim, q->n, L->x.data, coarse->data);
}

static hpmg_error slot_correct_smooth(hpmg_level *L, const hpmg_vec *xc, int sweeps) {
  const fd_level *q = FL(L);
  return q->ops->correct_smooth(q->dim, q->n, xc->data, q->kind, q->weight, sweeps, 1, &L->x.data, L->b.data,
                                &L->r.data);
}

/* FMG's cubic interpolation Pc to a new level (FD_FMG_CUBIC) */
static hpmg_error slot_fmg_interp(hpmg_level *L, const hpmg_vec *xc) {
  const fd_level *q = FL(L);
  return q->ops->prolong_cubic(q->dim, q->n, xc->data, L->x.data);
}

static hpmg_error slot_interp_smooth(hpmg_level *L, const hpmg_vec *xc, int sweeps) {
  const fd_level *q = FL(L);
  return q->ops->interp_smooth(q->dim, q->n, xc->data, q->kind, q->weight, sweeps, &L->x.data, L->b.data,
                               &L->r.data);
}

/* Every slot; a level drops the fused ones its kernels lack (the cycle then
 * composes them from the plain ones) and FMG's interpolation slots unless
 * the configuration asks for the cubic one (the linear one is prolong). */
static const hpmg_level_ops fd_slots = {
    .smooth = slot_smooth,
    .residual = slot_residual,
    .restrict_to = slot_restrict,
    .prolong = slot_prolong,
    .coarse_solve = slot_coarse_solve,
    .residual_restrict = slot_residual_restrict,
    .restrict_update = slot_restrict_update,
    .correct_smooth = slot_correct_smooth,
    .fmg_interp = slot_fmg_interp,
    .interp_smooth = slot_interp_smooth,
};

/* the smoother's weight in fd_ops' smooth: Jacobi's damping or GS's SOR weight */
static double relax_weight(const fd_config *c) { return c->smoother == FD_SMOOTH_JACOBI ? c->omega : c->sor; }

static void level_init(fd_solver s, int i, const fd_ops *ops, const hpmg_backend *be) {
  const fd_config *c = &s->cfg;
  fd_level *q = &s->lev[i];
  q->dim = c->dim;
  q->n = (int64_t)2 << i;
  q->ops = ops;
  q->kind = c->smoother;
  q->weight = relax_weight(c);
  q->slots = fd_slots;
  if (!ops->residual_restrict) q->slots.residual_restrict = NULL;
  if (!ops->restrict_update) q->slots.restrict_update = NULL;
  if (!ops->correct_smooth) q->slots.correct_smooth = NULL;
  if (c->fmg_interp != FD_FMG_CUBIC) q->slots.fmg_interp = NULL;
  if (c->fmg_interp != FD_FMG_CUBIC || !ops->interp_smooth) q->slots.interp_smooth = NULL;
  hpmg_level *L = &s->mg.lv[i];
  L->ops = &q->slots;
  L->ctx = q;
  L->be = be;
  L->n = fd_points(c->dim, q->n);
}

/* --------------------------------------------------------- the operator */

static const fd_level *finest(const struct fd_solver_s *s) { return &s->lev[s->nlev - 1]; }
static const hpmg_backend *finest_be(const struct fd_solver_s *s) { return s->mg.lv[s->nlev - 1].be; }

/* wall clock; with cfg.profile after the finest level's queued work, as the
 * cycle's timers (timing = 2) */
static hpmg_error tic(fd_solver s, double *t) {
  if (s->cfg.profile) HPMG_CALL(finest_be(s)->sync());
  *t = hpmg_wtime();
  return HPMG_SUCCESS;
}

/* The finest level's operator for the outer iterations, in its precision on
 * its backend; its residual norms are the solve's t_norm. */
static hpmg_error op_apply(void *ctx, const hpmg_vec *x, hpmg_vec *y) {
  const fd_level *q = finest(ctx);
  return q->ops->apply(q->dim, q->n, x->data, y->data);
}
static hpmg_error op_residual(void *ctx, const hpmg_vec *b, const hpmg_vec *x, hpmg_vec *r) {
  const fd_level *q = finest(ctx);
  return q->ops->residual(q->dim, q->n, x->data, b->data, r->data);
}
static hpmg_error op_residual_norm(void *ctx, const hpmg_vec *b, const hpmg_vec *x, double *nrm) {
  fd_solver s = ctx;
  const fd_level *q = finest(s);
  double t0, t1;
  HPMG_CALL(tic(s, &t0));
  HPMG_CALL(q->ops->residual_norm(q->dim, q->n, x->data, b->data, nrm));
  HPMG_CALL(tic(s, &t1));
  s->st.t_norm += t1 - t0;
  return HPMG_SUCCESS;
}

/* ---------------------------------------------------------------- setup */

static int on_dev(fd_solver s, int l) { return l < s->split; }

void fd_solver_destroy(fd_solver *sp) {
  if (!sp || !*sp) return;
  fd_solver s = *sp;
  hpmg_mg_destroy(&s->mg); /* before s->lev: the levels' slots live there */
  for (int i = 0; i < 5; i++) hpmg_vec_destroy(&s->cg[i]);
  hpmg_free(&s->lev);
  hpmg_free(&s->stage);
  fd_fft_destroy(&s->fft);
  hpmg_free(sp);
}

static hpmg_error solver_alloc(fd_solver s) {
  const fd_config *c = &s->cfg;
  const size_t sz = fd_prec_size(c->prec);
  const int64_t n0 = (int64_t)1 << c->refine;
  if (c->solver == FD_SOLVER_FFT) {
    HPMG_CALL(fd_fft_create(c->dim, n0, c->prec, c->device == FD_DEVICE_CUDA, c->fft_measure, &s->fft));
    if (c->device == FD_DEVICE_CUDA) HPMG_CALL(hpmg_malloc(sz * (size_t)fd_points(c->dim, n0), &s->stage));
    s->st.t_plan = fd_fft_plan_seconds(s->fft);
    return HPMG_SUCCESS;
  }
  const hpmg_real real = (hpmg_real)c->prec;
  /* profile: each phase timed after the backend's queued work */
  const hpmg_cycle_options co = {.pre = c->pre, .post = c->post, .add_residual = 0, .timing = c->profile ? 2 : 1};
  HPMG_CALL(hpmg_calloc(sizeof(fd_level) * (size_t)s->nlev, &s->lev));
  HPMG_CALL(hpmg_mg_init(&s->mg, s->nlev, real, &co, 0));
  for (int i = 0; i < s->nlev; i++) {
    const int gpu = on_dev(s, s->nlev - 1 - i);
    level_init(s, i, gpu ? s->gpu : s->cpu, gpu ? s->gpu_be : hpmg_backend_host());
  }
  HPMG_CALL(hpmg_mg_setup(&s->mg, NULL)); /* r on every level: the smoothers' tmp */
  if (c->solver == FD_SOLVER_CG)
    for (int i = 0; i < 5; i++) HPMG_CALL(hpmg_vec_create(finest_be(s), real, s->mg.lv[s->nlev - 1].n, &s->cg[i]));
  if (s->split > 0) HPMG_CALL(hpmg_malloc(sz * (size_t)fd_points(c->dim, n0), &s->stage));
  return HPMG_SUCCESS;
}

hpmg_error fd_solver_create(const fd_config *cfg, fd_solver *sp) {
  HPMG_CHECK_ARG(sp, "fd: NULL solver pointer");
  *sp = NULL;
  HPMG_CALL(fd_config_check(cfg));
  const double t0 = hpmg_wtime();
  if (cfg->threads > 0) omp_set_num_threads(cfg->threads);
  const fd_ops *gpu = NULL;
  const hpmg_backend *gpu_be = NULL;
  if (cfg->device == FD_DEVICE_CUDA && cfg->solver != FD_SOLVER_FFT) {
    HPMG_CALL(fd_ops_cuda(cfg->prec, &gpu));
    HPMG_CALL(hpmg_backend_cuda(&gpu_be));
  }
  double hb, db;
  HPMG_CALL(fd_memory_estimate(cfg, &hb, &db));
  const uint64_t avail = hpmg_memory_available();
  if (avail > 0 && hb > 0.9 * (double)avail) {
    char b1[32], b2[32];
    return hpmg_error_set(HPMG_ERR_MEMORY, "fd: the problem needs %s of host memory, %s available",
                          hpmg_format_bytes(hb, b1, sizeof b1), hpmg_format_bytes((double)avail, b2, sizeof b2));
  }
  fd_solver s;
  HPMG_CALL(hpmg_calloc(sizeof *s, &s));
  s->cfg = *cfg;
  fd_config_resolve(&s->cfg);
  s->nlev = cfg->refine;
  s->cpu = fd_ops_cpu(cfg->prec);
  s->gpu = gpu;
  s->gpu_be = gpu_be;
  s->split = gpu ? resolved_split(cfg) : 0; /* no GPU levels on the CPU, nor for FFT on CUDA */
  if (gpu && cfg->split == FD_SPLIT_AUTO) { /* measure the model's constants */
    fd_split_costs sc;
    if (fd_split_calibrate(&sc) == HPMG_SUCCESS) s->split = fd_split_model(cfg->dim, cfg->refine, &sc);
    s->st.split_costs = sc;
  }
  s->st.levels = s->nlev;
  s->st.split = s->split;
  s->st.bytes_host = hb;
  s->st.bytes_device = db;
  const int64_t ni = ((int64_t)1 << cfg->refine) - 1;
  s->st.unknowns = cfg->dim == 2 ? ni * ni : ni * ni * ni;
  hpmg_error e = solver_alloc(s);
  if (e) { fd_solver_destroy(&s); return e; }
  s->st.t_setup = hpmg_wtime() - t0;
  *sp = s;
  return HPMG_SUCCESS;
}

void fd_solver_get_stats(fd_solver s, fd_stats *st) { *st = s->st; }

/* ---------------------------------------------------- host <-> level data */

void fd_rhs_sine(int dim, int64_t n, double *b) {
  const double h = 1.0 / (double)n, pi = 3.14159265358979323846;
  const double scale = h * h * dim * pi * pi;
  const int64_t s1 = n + 1, s2 = (n + 1) * (n + 1), nz = dim == 3 ? n + 1 : 1;
#pragma omp parallel for schedule(static)
  for (int64_t k = 0; k < nz; k++) {
    const double sk = dim == 3 ? sin(pi * (double)k * h) : 1.0;
    for (int64_t j = 0; j <= n; j++) {
      const double sj = sin(pi * (double)j * h);
      for (int64_t i = 0; i <= n; i++) {
        const int interior = i > 0 && i < n && j > 0 && j < n && (dim == 2 || (k > 0 && k < n));
        b[k * s2 + j * s1 + i] = interior ? scale * sk * sj * sin(pi * (double)i * h) : 0.0;
      }
    }
  }
}


/* b (or the built-in right-hand side) into dst: (n+1)^d values in precision
 * p on backend be, through the host staging where be is a device */
static hpmg_error load_rhs(fd_solver s, const hpmg_backend *be, int64_t n, const double *b, void *dst, hpmg_real p) {
  const int64_t N = fd_points(s->cfg.dim, n);
  const size_t bytes = hpmg_real_size(p) * (size_t)N;
  void *host = be->on_device ? s->stage : dst;
  if (b) hpmg_vec_convert(N, HPMG_REAL_DOUBLE, b, p, host);
  else if (p == HPMG_REAL_DOUBLE) fd_rhs_sine(s->cfg.dim, n, (double *)host);
  else {
    double *tmp;
    HPMG_CALL(hpmg_malloc(sizeof(double) * (size_t)N, &tmp));
    fd_rhs_sine(s->cfg.dim, n, tmp);
    hpmg_vec_convert(N, HPMG_REAL_DOUBLE, tmp, p, host);
    hpmg_free(&tmp);
  }
  if (be->on_device) HPMG_CALL(be->to_device(host, dst, bytes));
  return HPMG_SUCCESS;
}

static hpmg_error store_solution(fd_solver s, const hpmg_backend *be, int64_t n, const void *src, double *x,
                                 hpmg_real p) {
  const int64_t N = fd_points(s->cfg.dim, n);
  if (be->on_device) {
    HPMG_CALL(be->to_host(src, s->stage, hpmg_real_size(p) * (size_t)N));
    src = s->stage;
  }
  hpmg_vec_convert(N, p, src, HPMG_REAL_DOUBLE, x);
  return HPMG_SUCCESS;
}

/* ---------------------------------------------------------------- solve */

static hpmg_error solve_fft(fd_solver s, const double *b, double *x) {
  const fd_config *c = &s->cfg;
  const int64_t n0 = (int64_t)1 << c->refine;
  const hpmg_real p = (hpmg_real)fd_fft_prec(s->fft);
  const hpmg_backend *be = hpmg_backend_host();
  if (c->device == FD_DEVICE_CUDA) HPMG_CALL(hpmg_backend_cuda(&be));
  void *buf = fd_fft_buffer(s->fft);
  HPMG_CALL(load_rhs(s, be, n0, b, buf, p));
  HPMG_CALL(be->sync());
  const double t0 = hpmg_wtime();
  HPMG_CALL(fd_fft_execute(s->fft));
  HPMG_CALL(be->sync());
  s->st.t_fft = s->st.t_solve = hpmg_wtime() - t0;
  s->st.iterations = 1;
  s->st.converged = 1;
  HPMG_CALL(store_solution(s, be, n0, buf, x, p));
  /* residual in double on the host, against the same rhs */
  double *rhs;
  HPMG_CALL(hpmg_malloc(sizeof(double) * (size_t)fd_points(c->dim, n0), &rhs));
  if (b) memcpy(rhs, b, sizeof(double) * (size_t)fd_points(c->dim, n0));
  else fd_rhs_sine(c->dim, n0, rhs);
  s->st.res0 = fd_residual_norm_host(c->dim, n0, NULL, rhs);
  s->st.res = fd_residual_norm_host(c->dim, n0, x, rhs);
  hpmg_free(&rhs);
  s->st.rate = s->st.res0 > 0 ? s->st.res / s->st.res0 : 0;
  return HPMG_SUCCESS;
}

/* the phase times of fd_stats from the hierarchy's timers */
static void collect_times(fd_solver s) {
  fd_stats *st = &s->st;
  for (int i = 0; i < s->mg.nlevels; i++) {
    const hpmg_level *L = &s->mg.lv[i];
    st->t_smooth += L->t_smooth;
    st->t_residual += L->t_op; /* residuals, and the fused residual + restriction */
    st->t_transfer += L->t_transfer;
    st->t_comm += L->t_comm;
  }
  st->t_coarse = s->mg.t_coarse;
  /* CG: the solve's time outside the cycles and the norms, i.e. the outer
   * iteration's operator applications and vector work and the
   * preconditioner's copies into and out of the finest level (without
   * cfg.profile, also GPU work queued by the cycle and waited for there).
   * The V-cycle iteration runs in place and FMG is one pass: no outer
   * vector work, 0. */
  if (s->cfg.solver == FD_SOLVER_CG) {
    const double rest = st->t_solve - st->t_smooth - st->t_residual - st->t_transfer - st->t_comm - st->t_coarse -
                        st->t_norm;
    st->t_krylov = rest > 0 ? rest : 0;
  }
}

static hpmg_error solve_mg(fd_solver s, const double *b, double *x) {
  const fd_config *c = &s->cfg;
  const int64_t n0 = (int64_t)1 << c->refine;
  hpmg_mg *mg = &s->mg;
  hpmg_level *F = &mg->lv[mg->nlevels - 1];
  const fd_level *q = finest(s);
  const int cg = c->solver == FD_SOLVER_CG, fmg_pass = c->solver == FD_SOLVER_FMG;
  /* CG iterates on its own x and b: the preconditioner overwrites the finest
   * level's b and x. The V-cycle iteration and FMG work on those in place. */
  hpmg_vec *xs = cg ? &s->cg[0] : &F->x, *bs = cg ? &s->cg[1] : &F->b;
  HPMG_CALL(load_rhs(s, F->be, n0, b, bs->data, mg->real));
  if (!cg) HPMG_CALL(hpmg_v_zero(xs)); /* CG starts from x = 0 itself (x0_zero) */
  hpmg_mg_reset_stats(mg);
  /* FMG is one pass with no stopping test: its time to solution excludes the
   * two residual norms of the report (||f|| now, with u = 0, and the final
   * one after the pass), as the FFT solver's excludes its residual check
   * (docs/fd.md). They are not counted in t_norm either. */
  if (fmg_pass) HPMG_CALL(q->ops->residual_norm(q->dim, q->n, xs->data, bs->data, &s->st.res0));
  const hpmg_linop A = {s, op_apply, op_residual, op_residual_norm};
  const hpmg_krylov_params prm = {.rtol = c->tol, .maxit = c->maxit, .x0_zero = 1, .mon = c->monitor, .mctx = c->monitor_ctx};
  hpmg_krylov_info info;
  memset(&info, 0, sizeof info);
  HPMG_CALL(F->be->sync());
  const double t0 = hpmg_wtime();
  hpmg_error err;
  if (cg) {
    /* CG's residual r is the finest level's b: the preconditioner's copy of
     * r into b is then no copy (the core skips a copy onto itself), and the
     * cycle only reads b (its slots swap x and r, never b) */
    hpmg_vec work[4] = {hpmg_vec_wrap(F->be, mg->real, F->n, F->b.data), s->cg[2], s->cg[3], s->cg[4]};
    const hpmg_linop M = hpmg_mg_linop(mg);
    err = hpmg_pcg(&A, &M, bs, xs, work, 0, &prm, &info);
    /* the report's residual is the true one, not CG's recursively updated one */
    if (!err) err = op_residual_norm(s, bs, xs, &info.rnorm);
  } else if (fmg_pass) {
    err = hpmg_mg_fmg(mg, 1);
    info.iterations = 1;
    info.converged = 1;
  } else {
    /* zero initial guess; in place, the norms from op_residual_norm (the
     * work vectors are not used) */
    err = hpmg_mg_stationary(mg, &A, &F->b, &F->x, NULL, 0, 0.0, &prm, &info);
  }
  const hpmg_error e_sync = F->be->sync();
  if (!err) err = e_sync;
  s->st.t_solve = hpmg_wtime() - t0;
  collect_times(s);
  s->st.iterations = info.iterations;
  s->st.converged = info.converged;
  if (!fmg_pass) {
    s->st.res0 = info.r0;
    s->st.res = info.rnorm;
  }
  HPMG_CALL(err);
  if (fmg_pass) {
    HPMG_CALL(q->ops->residual_norm(q->dim, q->n, xs->data, bs->data, &s->st.res));
    if (c->monitor) {
      c->monitor(c->monitor_ctx, 0, s->st.res0, s->st.res0);
      c->monitor(c->monitor_ctx, 1, s->st.res, s->st.res0);
    }
  }
  if (s->st.iterations > 0 && s->st.res0 > 0) s->st.rate = pow(s->st.res / s->st.res0, 1.0 / s->st.iterations);
  HPMG_CALL(store_solution(s, F->be, n0, xs->data, x, mg->real));
  if (!s->st.converged) {
    info.rnorm = s->st.res;
    return hpmg_not_converged(&info, s->st.res0 > 0 ? s->st.res / s->st.res0 : 0.0, c->tol);
  }
  return HPMG_SUCCESS;
}

hpmg_error fd_solver_solve(fd_solver s, const double *b, double *x) {
  HPMG_CHECK_ARG(s && x, "fd: NULL solver or solution vector");
  /* the per-solve fields start over; setup time and memory are the creation's */
  const double setup = s->st.t_setup, plan = s->st.t_plan, hb = s->st.bytes_host, db = s->st.bytes_device;
  memset(&s->st.iterations, 0, sizeof(fd_stats) - offsetof(fd_stats, iterations));
  s->st.t_setup = setup;
  s->st.t_plan = plan;
  s->st.bytes_host = hb;
  s->st.bytes_device = db;
  return s->cfg.solver == FD_SOLVER_FFT ? solve_fft(s, b, x) : solve_mg(s, b, x);
}

/* -------------------------------------------------------------- diagnostics */

/* x over all (n+1)^d points, or (interior_only) over the (n-1)^d interior
 * ones with the boundary taken as 0; the same loop either way, so that both
 * layouts of one solution give bitwise the same norms */
static void error_norms(int dim, int64_t n, const double *x, int interior_only, double *l2h, double *rms,
                        double *maxerr) {
  const double h = 1.0 / (double)n, pi = 3.14159265358979323846;
  const int64_t s1 = n + 1, s2 = (n + 1) * (n + 1), nz = dim == 3 ? n + 1 : 1;
  const int64_t m = n - 1, m2 = (n - 1) * (n - 1), k0 = dim == 3; /* interior layout */
  double sum = 0, mx = 0;
#pragma omp parallel for schedule(static) reduction(+ : sum) reduction(max : mx)
  for (int64_t k = 0; k < nz; k++) {
    const double sk = dim == 3 ? sin(pi * (double)k * h) : 1.0;
    for (int64_t j = 0; j <= n; j++) {
      const double sj = sin(pi * (double)j * h) * sk;
      for (int64_t i = 0; i <= n; i++) {
        const int interior = i > 0 && i < n && j > 0 && j < n && (dim == 2 || (k > 0 && k < n));
        const double exact = interior ? sj * sin(pi * (double)i * h) : 0.0;
        const double xv = !interior_only ? x[k * s2 + j * s1 + i]
                          : interior     ? x[(k - k0) * m2 + (j - 1) * m + (i - 1)]
                                         : 0.0;
        const double e = xv - exact;
        sum += e * e;
        if (fabs(e) > mx) mx = fabs(e);
      }
    }
  }
  const double pts = (double)fd_points(dim, n);
  if (l2h) *l2h = sqrt(sum * pow(h, dim));
  if (rms) *rms = sqrt(sum / pts);
  if (maxerr) *maxerr = mx;
}

void fd_error_norms(int dim, int64_t n, const double *x, double *l2h, double *rms, double *maxerr) {
  error_norms(dim, n, x, 0, l2h, rms, maxerr);
}

void fd_error_norms_interior(int dim, int64_t n, const double *x, double *l2h, double *rms, double *maxerr) {
  error_norms(dim, n, x, 1, l2h, rms, maxerr);
}

double fd_residual_norm_host(int dim, int64_t n, const double *x, const double *b) {
  const fd_ops *ops = fd_ops_cpu(FD_DOUBLE);
  double r = 0;
  if (x) ops->residual_norm(dim, n, x, b, &r);
  else r = hpmg_vec_norm(HPMG_REAL_DOUBLE, fd_points(dim, n), b);
  return r;
}
