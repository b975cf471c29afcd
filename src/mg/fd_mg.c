/* FD multigrid: level hierarchy across backends, V-cycle, FMG, PCG, FFT
 * dispatch (paper 002, Algorithms 3.1-3.3). The cycle code is written once
 * against fd_ops; a level lives on the GPU or the CPU, and the one level
 * below the last GPU level keeps a device mirror of its u and f so that the
 * split costs one copy down (f) and one copy up (u) per visit. */
#include <math.h>
#include <omp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "fft/fd_fft.h"
#include "mg/fd_mg.h"

typedef struct {
  int64_t n, count;     /* intervals, points (n+1)^d */
  void *u, *f, *r;      /* on this level's backend */
  void *du, *df;        /* device mirrors (the first CPU level of a split) */
  const fd_ops *ops;
} fd_level;

struct fd_solver_s {
  fd_config cfg;
  int nlev, split;
  fd_level *lev;
  const fd_ops *cpu, *gpu;
  void *cg[5];          /* x, r, p, q, b on level 0's backend (CG only) */
  void *stage;          /* host staging of level-0 size in the working precision */
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
    for (int l = 0; l < L; l++) {
      const double p = (double)fd_points(c->dim, (int64_t)1 << (L - l));
      if (l < split) d += 3 * sz * p;
      else h += 3 * sz * p;
      if (l == split && split > 0) d += 2 * sz * p;
    }
    if (c->solver == FD_SOLVER_CG) *(split > 0 ? &d : &h) += 5 * sz * n0;
    if (split > 0 || c->prec == FD_FLOAT) h += sz * n0;
  }
  *host = h;
  *dev = d;
  return HPMG_SUCCESS;
}

/* ------------------------------------------------------------------ helpers */

static double tic(fd_solver s, const fd_ops *ops) {
  if (ops->on_device && s->cfg.profile) ops->sync();
  return hpmg_wtime();
}
#define TIMED(s, ops, field, expr)                                                             \
  do {                                                                                         \
    double t0_ = tic(s, ops);                                                                  \
    HPMG_CALL(expr);                                                                           \
    (s)->st.field += tic(s, ops) - t0_;                                                        \
  } while (0)

static int on_dev(fd_solver s, int l) { return l < s->split; }
/* level l on the GPU, level l + 1 on the CPU: the split's one crossing */
static int crosses(fd_solver s, int l) { return on_dev(s, l) && !on_dev(s, l + 1); }

void fd_solver_destroy(fd_solver *sp) {
  if (!sp || !*sp) return;
  fd_solver s = *sp;
  if (s->lev) {
    for (int l = 0; l < s->nlev; l++) {
      fd_level *lv = &s->lev[l];
      if (lv->ops) {
        lv->ops->free(&lv->u); lv->ops->free(&lv->f); lv->ops->free(&lv->r);
      }
      if (s->gpu) { s->gpu->free(&lv->du); s->gpu->free(&lv->df); }
    }
    const fd_ops *o0 = s->lev[0].ops;
    for (int i = 0; i < 5; i++) if (o0 && s->cg[i]) o0->free(&s->cg[i]);
  }
  hpmg_free(&s->stage);
  fd_fft_destroy(&s->fft);
  hpmg_free(&s->lev);
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
  HPMG_CALL(hpmg_calloc(sizeof(fd_level) * (size_t)s->nlev, &s->lev));
  for (int l = 0; l < s->nlev; l++) {
    fd_level *lv = &s->lev[l];
    lv->n = n0 >> l;
    lv->count = fd_points(c->dim, lv->n);
    lv->ops = on_dev(s, l) ? s->gpu : s->cpu;
    const size_t b = sz * (size_t)lv->count;
    HPMG_CALL(lv->ops->alloc(b, &lv->u));
    HPMG_CALL(lv->ops->alloc(b, &lv->f));
    HPMG_CALL(lv->ops->alloc(b, &lv->r));
    if (s->split > 0 && l == s->split) {
      HPMG_CALL(s->gpu->alloc(b, &lv->du));
      HPMG_CALL(s->gpu->alloc(b, &lv->df));
    }
  }
  if (c->solver == FD_SOLVER_CG)
    for (int i = 0; i < 5; i++) HPMG_CALL(s->lev[0].ops->alloc(sz * (size_t)s->lev[0].count, &s->cg[i]));
  if (s->split > 0 || c->prec == FD_FLOAT)
    HPMG_CALL(hpmg_malloc(sz * (size_t)s->lev[0].count, &s->stage));
  return HPMG_SUCCESS;
}

hpmg_error fd_solver_create(const fd_config *cfg, fd_solver *sp) {
  HPMG_CHECK_ARG(sp, "fd: NULL solver pointer");
  *sp = NULL;
  HPMG_CALL(fd_config_check(cfg));
  const double t0 = hpmg_wtime();
  if (cfg->threads > 0) omp_set_num_threads(cfg->threads);
  const fd_ops *gpu = NULL;
  if (cfg->device == FD_DEVICE_CUDA && cfg->solver != FD_SOLVER_FFT)
    HPMG_CALL(fd_ops_cuda(cfg->prec, &gpu));
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

/* ------------------------------------------------------------- cycle parts */

/* the smoother's weight in fd_ops' smooth: Jacobi's damping or GS's SOR weight */
static double relax_weight(const fd_config *c) { return c->smoother == FD_SMOOTH_JACOBI ? c->omega : c->sor; }

static hpmg_error smooth(fd_solver s, int l, int sweeps, int backward) {
  fd_level *lv = &s->lev[l];
  if (sweeps == 0) return HPMG_SUCCESS;
  TIMED(s, lv->ops, t_smooth,
        lv->ops->smooth(s->cfg.dim, lv->n, s->cfg.smoother, relax_weight(&s->cfg), sweeps, backward, &lv->u,
                        lv->f, &lv->r));
  return HPMG_SUCCESS;
}

/* The coarsest level has one unknown: one Gauss-Seidel step solves it. */
static hpmg_error coarse_solve(fd_solver s) {
  fd_level *lv = &s->lev[s->nlev - 1];
  TIMED(s, lv->ops, t_coarse,
        lv->ops->smooth(s->cfg.dim, lv->n, FD_SMOOTH_MCGS, 1.0, 1, 0, &lv->u, lv->f, &lv->r));
  return HPMG_SUCCESS;
}

/* Where level l writes f_{l+1}: on its own backend, crossing to the CPU's
 * f_{l+1} after (restrict_done) when level l + 1 is not on the device. */
static void *coarse_rhs(fd_solver s, int l) {
  return crosses(s, l) ? s->lev[l + 1].df : s->lev[l + 1].f;
}
static hpmg_error restrict_done(fd_solver s, int l) {
  fd_level *lv = &s->lev[l], *cv = &s->lev[l + 1];
  if (crosses(s, l))
    TIMED(s, lv->ops, t_comm, lv->ops->to_host(cv->df, cv->f, fd_prec_size(s->cfg.prec) * (size_t)cv->count));
  return HPMG_SUCCESS;
}

/* f_{l+1} = 4 R src (src on level l's backend) */
static hpmg_error restrict_to(fd_solver s, int l, const void *src) {
  fd_level *lv = &s->lev[l];
  TIMED(s, lv->ops, t_transfer, lv->ops->restrict_rhs(s->cfg.dim, lv->n, src, coarse_rhs(s, l)));
  return restrict_done(s, l);
}

/* f_{l+1} = 4 R (f_l - A u_l), the cycle's coarse right-hand side: in one
 * kernel where the backend has residual_restrict, else through r_l. With
 * has_rf, f_{l+1} (where level l writes it) holds 4 R f_l already, and a
 * backend with restrict_update subtracts 4 R A u_l without reading f_l. */
static hpmg_error restrict_residual(fd_solver s, int l, int has_rf) {
  fd_level *lv = &s->lev[l];
  const int dim = s->cfg.dim;
  if (has_rf && lv->ops->restrict_update) {
    TIMED(s, lv->ops, t_residual, lv->ops->restrict_update(dim, lv->n, lv->u, coarse_rhs(s, l)));
    return restrict_done(s, l);
  }
  if (!lv->ops->residual_restrict) {
    TIMED(s, lv->ops, t_residual, lv->ops->residual(dim, lv->n, lv->u, lv->f, lv->r));
    return restrict_to(s, l, lv->r);
  }
  TIMED(s, lv->ops, t_residual, lv->ops->residual_restrict(dim, lv->n, lv->u, lv->f, coarse_rhs(s, l)));
  return restrict_done(s, l);
}

typedef enum { PROLONG_SET, PROLONG_ADD, PROLONG_CUBIC } prolong_mode;

/* u_{l+1} on level l's backend (copied up from the CPU if the split is between) */
static hpmg_error coarse_u(fd_solver s, int l, const void **uc) {
  fd_level *lv = &s->lev[l], *cv = &s->lev[l + 1];
  *uc = cv->u;
  if (crosses(s, l)) {
    TIMED(s, lv->ops, t_comm, lv->ops->to_device(cv->u, cv->du, fd_prec_size(s->cfg.prec) * (size_t)cv->count));
    *uc = cv->du;
  }
  return HPMG_SUCCESS;
}

/* u_l = P u_{l+1}, u_l += P u_{l+1}, or u_l = Pc u_{l+1} (FMG's cubic
 * interpolation), crossing from the CPU if needed */
static hpmg_error prolong_from(fd_solver s, int l, prolong_mode mode) {
  fd_level *lv = &s->lev[l];
  const void *uc;
  HPMG_CALL(coarse_u(s, l, &uc));
  if (mode == PROLONG_CUBIC) TIMED(s, lv->ops, t_transfer, lv->ops->prolong_cubic(s->cfg.dim, lv->n, uc, lv->u));
  else TIMED(s, lv->ops, t_transfer, lv->ops->prolong(s->cfg.dim, lv->n, uc, lv->u, mode == PROLONG_ADD));
  return HPMG_SUCCESS;
}

/* the cycle's coarse-grid correction u_l += P u_{l+1} and post-smoothing:
 * in one call where the backend has correct_smooth (CUDA: the correction
 * inside the first smoothing pass, timed as smoothing) */
static hpmg_error correct_and_smooth(fd_solver s, int l) {
  fd_level *lv = &s->lev[l];
  if (!lv->ops->correct_smooth || s->cfg.post == 0) {
    HPMG_CALL(prolong_from(s, l, PROLONG_ADD));
    return smooth(s, l, s->cfg.post, 1);
  }
  const void *uc;
  HPMG_CALL(coarse_u(s, l, &uc));
  TIMED(s, lv->ops, t_smooth,
        lv->ops->correct_smooth(s->cfg.dim, lv->n, uc, s->cfg.smoother, relax_weight(&s->cfg), s->cfg.post, 1, &lv->u, lv->f,
                                &lv->r));
  return HPMG_SUCCESS;
}

/* Algorithm 3.1 on levels l0..L-1, with u_{l0} the initial guess;
 * presmoothed: level l0's pre-smoothing is already done (FMG's interp_smooth);
 * has_rf: f_{l0+1} holds 4 R f_{l0} (FMG, see restrict_residual). */
static hpmg_error vcycle_from(fd_solver s, int l0, int presmoothed, int has_rf) {
  const int L = s->nlev;
  for (int l = l0; l < L - 1; l++) {
    if (!(presmoothed && l == l0)) HPMG_CALL(smooth(s, l, s->cfg.pre, 0));
    HPMG_CALL(restrict_residual(s, l, has_rf && l == l0));
    fd_level *cv = &s->lev[l + 1];
    TIMED(s, cv->ops, t_transfer, cv->ops->zero(cv->count, cv->u));
  }
  HPMG_CALL(coarse_solve(s));
  for (int l = L - 2; l >= l0; l--) HPMG_CALL(correct_and_smooth(s, l));
  return HPMG_SUCCESS;
}
static hpmg_error vcycle(fd_solver s, int l0) { return vcycle_from(s, l0, 0, 0); }

/* FMG's cubic interpolation u_l = Pc u_{l+1} and the pre-smoothing of
 * level l's V-cycle: in one call where the backend has interp_smooth (CUDA:
 * the interpolation inside the first smoothing pass, timed as smoothing).
 * Returns in *presmoothed whether the pre-smoothing is done. */
static hpmg_error interp_and_smooth(fd_solver s, int l, int *presmoothed) {
  fd_level *lv = &s->lev[l];
  *presmoothed = 0;
  if (!lv->ops->interp_smooth || s->cfg.pre == 0) return prolong_from(s, l, PROLONG_CUBIC);
  const void *uc;
  HPMG_CALL(coarse_u(s, l, &uc));
  TIMED(s, lv->ops, t_smooth,
        lv->ops->interp_smooth(s->cfg.dim, lv->n, uc, s->cfg.smoother, relax_weight(&s->cfg), s->cfg.pre, &lv->u, lv->f, &lv->r));
  *presmoothed = 1;
  return HPMG_SUCCESS;
}

/* Algorithm 3.2: right-hand sides by restriction of f_0, exact coarsest
 * solve, then interpolate (cubic Pc by default, the cycle's linear P as in
 * the paper with FD_FMG_LINEAR) and one V-cycle per level. When level l's
 * V-cycle starts, f_{l+1} still holds 4 R f_l: its V-cycle (stage l + 1)
 * wrote only coarser levels' right-hand sides, and where level l + 1 is on
 * the CPU, the device copy df that level l writes was last written by the
 * restriction above. So the cycle's first restriction needs only 4 R A u_l. */
static hpmg_error fmg(fd_solver s) {
  const int L = s->nlev;
  for (int l = 0; l < L - 1; l++) HPMG_CALL(restrict_to(s, l, s->lev[l].f));
  HPMG_CALL(s->lev[L - 1].ops->zero(s->lev[L - 1].count, s->lev[L - 1].u));
  HPMG_CALL(coarse_solve(s));
  for (int l = L - 2; l >= 0; l--) {
    int pre = 0;
    if (s->cfg.fmg_interp == FD_FMG_CUBIC) HPMG_CALL(interp_and_smooth(s, l, &pre));
    else HPMG_CALL(prolong_from(s, l, PROLONG_SET));
    HPMG_CALL(vcycle_from(s, l, pre, 1));
  }
  return HPMG_SUCCESS;
}

static hpmg_error norm0(fd_solver s, const void *u, const void *f, double *res) {
  fd_level *lv = &s->lev[0];
  TIMED(s, lv->ops, t_norm, lv->ops->residual_norm(s->cfg.dim, lv->n, u, f, res));
  return HPMG_SUCCESS;
}

static void monitor(fd_solver s, int it, double res) {
  if (s->cfg.monitor) s->cfg.monitor(s->cfg.monitor_ctx, it, res, s->st.res0);
}

static hpmg_error pcg(fd_solver s) {
  fd_level *lv = &s->lev[0];
  const fd_ops *o = lv->ops;
  const int64_t N = lv->count;
  void *x = s->cg[0], *r = s->cg[1], *p = s->cg[2], *q = s->cg[3], *b = s->cg[4];
  HPMG_CALL(o->copy(N, lv->f, b));
  HPMG_CALL(o->zero(N, x));
  HPMG_CALL(o->copy(N, b, r));
  double rr, rz, pq;
  HPMG_CALL(o->dot(N, r, r, &rr));
  s->st.res0 = s->st.res = sqrt(rr);
  monitor(s, 0, s->st.res0);
  if (s->st.res0 == 0) { s->st.converged = 1; return HPMG_SUCCESS; }
  /* z = M r, M = one V-cycle from zero; z lives in level 0's u */
#define PRECOND()                                                                              \
  do {                                                                                         \
    HPMG_CALL(o->copy(N, r, lv->f));                                                           \
    HPMG_CALL(o->zero(N, lv->u));                                                              \
    HPMG_CALL(vcycle(s, 0));                                                                   \
  } while (0)
  PRECOND();
  HPMG_CALL(o->copy(N, lv->u, p));
  HPMG_CALL(o->dot(N, r, lv->u, &rz));
  for (int it = 1; it <= s->cfg.maxit; it++) {
    double t0 = tic(s, o);
    HPMG_CALL(o->apply(s->cfg.dim, lv->n, p, q));
    HPMG_CALL(o->dot(N, p, q, &pq));
    const double alpha = rz / pq;
    HPMG_CALL(o->axpby(N, alpha, p, 1.0, x));
    HPMG_CALL(o->axpby(N, -alpha, q, 1.0, r));
    HPMG_CALL(o->dot(N, r, r, &rr));
    s->st.t_krylov += tic(s, o) - t0;
    s->st.res = sqrt(rr);
    s->st.iterations = it;
    monitor(s, it, s->st.res);
    if (!(s->st.res == s->st.res)) return hpmg_error_set(HPMG_ERR_NUMERIC, "fd: CG residual is NaN");
    if (s->st.res <= s->cfg.tol * s->st.res0) { s->st.converged = 1; break; }
    PRECOND();
    double rz_new;
    t0 = tic(s, o);
    HPMG_CALL(o->dot(N, r, lv->u, &rz_new));
    HPMG_CALL(o->axpby(N, 1.0, lv->u, rz_new / rz, p));
    rz = rz_new;
    s->st.t_krylov += tic(s, o) - t0;
  }
#undef PRECOND
  /* solution back into level 0's u; true residual for the report */
  HPMG_CALL(o->copy(N, x, lv->u));
  HPMG_CALL(o->copy(N, b, lv->f));
  return norm0(s, lv->u, lv->f, &s->st.res);
}

/* ---------------------------------------------------- host <-> level data */

static void to_prec(fd_prec p, int64_t N, const double *src, void *dst) {
  if (p == FD_DOUBLE) {
    if ((const void *)src != dst) memcpy(dst, src, sizeof(double) * (size_t)N);
    return;
  }
  float *d = (float *)dst;
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < N; i++) d[i] = (float)src[i];
}
static void from_prec(fd_prec p, int64_t N, const void *src, double *dst) {
  if (p == FD_DOUBLE) {
    if (src != (const void *)dst) memcpy(dst, src, sizeof(double) * (size_t)N);
    return;
  }
  const float *s = (const float *)src;
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < N; i++) dst[i] = (double)s[i];
}

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

/* stage b (or the built-in rhs) into dst on a backend with ops o */
static hpmg_error load_rhs(fd_solver s, const fd_ops *o, int64_t n, const double *b, void *dst,
                           fd_prec p) {
  const int64_t N = fd_points(s->cfg.dim, n);
  const size_t bytes = fd_prec_size(p) * (size_t)N;
  if (!o->on_device && p == FD_DOUBLE) {
    if (b) memcpy(dst, b, bytes);
    else fd_rhs_sine(s->cfg.dim, n, (double *)dst);
    return HPMG_SUCCESS;
  }
  void *stage = s->stage;
  if (!b) {
    if (p == FD_DOUBLE) { fd_rhs_sine(s->cfg.dim, n, (double *)stage); }
    else {
      /* generate in double a row block at a time would be nicer; the full
       * double array is avoided by converting in place from the back */
      double *tmp;
      HPMG_CALL(hpmg_malloc(sizeof(double) * (size_t)N, &tmp));
      fd_rhs_sine(s->cfg.dim, n, tmp);
      to_prec(p, N, tmp, stage);
      hpmg_free(&tmp);
    }
  } else {
    to_prec(p, N, b, stage);
  }
  if (o->on_device) return o->to_device(stage, dst, bytes);
  memcpy(dst, stage, bytes);
  return HPMG_SUCCESS;
}

static hpmg_error store_solution(fd_solver s, const fd_ops *o, int64_t n, const void *src, double *x,
                                 fd_prec p) {
  const int64_t N = fd_points(s->cfg.dim, n);
  const size_t bytes = fd_prec_size(p) * (size_t)N;
  if (!o->on_device && p == FD_DOUBLE) { memcpy(x, src, bytes); return HPMG_SUCCESS; }
  if (o->on_device) {
    HPMG_CALL(o->to_host(src, s->stage, bytes));
    from_prec(p, N, s->stage, x);
  } else {
    from_prec(p, N, src, x);
  }
  return HPMG_SUCCESS;
}

hpmg_error fd_solver_solve(fd_solver s, const double *b, double *x) {
  HPMG_CHECK_ARG(s && x, "fd: NULL solver or solution vector");
  const fd_config *c = &s->cfg;
  const int64_t n0 = (int64_t)1 << c->refine;
  const double setup = s->st.t_setup, plan = s->st.t_plan;
  memset(&s->st.iterations, 0, sizeof(fd_stats) - offsetof(fd_stats, iterations));
  s->st.t_setup = setup;
  s->st.t_plan = plan;
  { double hb, db; fd_memory_estimate(c, &hb, &db); s->st.bytes_host = hb; s->st.bytes_device = db; }

  if (c->solver == FD_SOLVER_FFT) {
    const fd_prec p = fd_fft_prec(s->fft);
    const fd_ops *o = c->device == FD_DEVICE_CUDA ? NULL : fd_ops_cpu(p);
    void *buf = fd_fft_buffer(s->fft);
    if (o) HPMG_CALL(load_rhs(s, o, n0, b, buf, p));
    else {
      const fd_ops *g;
      HPMG_CALL(fd_ops_cuda(p, &g));
      HPMG_CALL(load_rhs(s, g, n0, b, buf, p));
      o = g;
    }
    HPMG_CALL(o->sync());
    const double t0 = hpmg_wtime();
    HPMG_CALL(fd_fft_execute(s->fft));
    HPMG_CALL(o->sync());
    s->st.t_fft = s->st.t_solve = hpmg_wtime() - t0;
    s->st.iterations = 1;
    s->st.converged = 1;
    HPMG_CALL(store_solution(s, o, n0, buf, x, p));
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

  fd_level *l0 = &s->lev[0];
  const fd_ops *o = l0->ops;
  HPMG_CALL(load_rhs(s, o, n0, b, l0->f, c->prec));
  HPMG_CALL(o->zero(l0->count, l0->u));
  /* FMG is one pass with no stopping test: its time to solution excludes the
   * two residual norms of the report (||f|| now, with u = 0, and the final
   * one after the pass), as the FFT solver's excludes its residual check
   * (docs/fd.md). They are not counted in t_norm either. */
  const int fmg_pass = c->solver == FD_SOLVER_FMG;
  if (fmg_pass) HPMG_CALL(o->residual_norm(c->dim, l0->n, l0->u, l0->f, &s->st.res0));
  HPMG_CALL(o->sync());
  const double t0 = hpmg_wtime();
  hpmg_error err = HPMG_SUCCESS;
  if (c->solver == FD_SOLVER_CG) {
    err = pcg(s);
  } else if (fmg_pass) {
    HPMG_CALL(fmg(s));
    s->st.iterations = 1;
    s->st.converged = 1;
  } else {
    /* zero initial guess: the initial residual is ||f|| */
    HPMG_CALL(norm0(s, l0->u, l0->f, &s->st.res0));
    s->st.res = s->st.res0;
    monitor(s, 0, s->st.res0);
    if (s->st.res0 > 0) {
      for (int it = 1; it <= c->maxit; it++) {
        HPMG_CALL(vcycle(s, 0));
        HPMG_CALL(norm0(s, l0->u, l0->f, &s->st.res));
        s->st.iterations = it;
        monitor(s, it, s->st.res);
        if (!(s->st.res == s->st.res) || s->st.res > 1e10 * s->st.res0)
          return hpmg_error_set(HPMG_ERR_NUMERIC, "fd: V-cycle diverged (residual %g at iteration %d)",
                                s->st.res, it);
        if (s->st.res <= c->tol * s->st.res0) { s->st.converged = 1; break; }
      }
    } else {
      s->st.converged = 1;
    }
  }
  HPMG_CALL(o->sync());
  s->st.t_solve = hpmg_wtime() - t0;
  if (err) return err;
  if (fmg_pass) {
    HPMG_CALL(o->residual_norm(c->dim, l0->n, l0->u, l0->f, &s->st.res));
    monitor(s, 0, s->st.res0);
    monitor(s, 1, s->st.res);
  }
  if (s->st.iterations > 0 && s->st.res0 > 0)
    s->st.rate = pow(s->st.res / s->st.res0, 1.0 / s->st.iterations);
  HPMG_CALL(store_solution(s, o, n0, l0->u, x, c->prec));
  if (!s->st.converged)
    return hpmg_error_set(HPMG_ERR_NOT_CONVERGED,
                          "fd: relative residual %.3e after %d iterations, tolerance %.1e",
                          s->st.res / s->st.res0, s->st.iterations, c->tol);
  return HPMG_SUCCESS;
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
  else ops->dot(fd_points(dim, n), b, b, &r), r = sqrt(r);
  return r;
}
