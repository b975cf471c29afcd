/* The public objects on a finite-difference problem (fd.h). */
#include "fd.h"
#include <math.h>
#include <stdlib.h>
#include <omp.h>
#include <string.h>
#include "la/krylov.h"
#include "la/vec.h"
#include "disc/fd/fd_box.h"
#include "disc/fd/fd_direct.h"
#include "disc/fd/fd_mg.h"

struct hpmg_fd_run_s {
  fd_solver fd;
  fd_box_solver box;   /* general box: the solver, the problem's options and box, the assembled rhs */
  fd_direct direct;    /* general box, solver FFT: the transform + tridiagonal direct solver */
  int direct_dev;      /* its device (1: CUDA, b and u staged through dev_b/dev_u) */
  void *dev_b, *dev_u;
  hpmg_stats dst;      /* the direct solve's statistics */
  const hpmg_problem_options *po;
  const hpmg_box *bx;
  double *rhs;
  int dim;
  int64_t n;           /* intervals per direction */
  double *x, *b;       /* grid vectors over (n+1)^d points: solution, h^2-scaled rhs (on first use) */
  double *history;     /* residual per iteration of the last solve */
  int nhistory, cap, verbose;
  double bytes_host, bytes_device;
};

hpmg_error hpmg_fd_problem_check(const hpmg_problem_options *o) {
  if (fd_box_needed(o)) {
    hpmg_box b;
    HPMG_CALL(hpmg_box_init(o, &b));
    hpmg_box_destroy(&b);
    HPMG_CHECK_ARG(o->lambda >= 0 && isfinite(o->lambda), "--lambda must be >= 0 and finite (got %g)", o->lambda);
    HPMG_CHECK_ARG(o->rhs == HPMG_RHS_SINE || o->rhs == HPMG_RHS_ONE,
                   "finite differences on a general box take rhs sine (the manufactured solution) or one (f = 1 with "
                   "the options' boundary data)");
    return HPMG_SUCCESS;
  }
  fd_config c;
  fd_config_default(&c);
  c.dim = o->dim;
  c.refine = o->refine;
  HPMG_CALL(fd_config_check(&c));
  int unit = 1;
  for (int d = 0; d < o->dim; d++) unit &= o->box[d] == 1.0;
  HPMG_CHECK_ARG(o->coarse == 1 && unit && o->lambda == 0 && o->rhs == HPMG_RHS_SINE,
                 "coarse and rhs apply to Q_k problems only: a finite-difference problem on the unit box with "
                 "2^refine cells is -Laplace u = f with the built-in f of u = prod sin(pi x_i) or a user's b");
  return HPMG_SUCCESS;
}

/* the public options as an FD configuration; Q_k-only options are refused */
static hpmg_error config_from(const hpmg_problem_options *po, const hpmg_solver_options *so, fd_config *c) {
  HPMG_CHECK_ARG(so, "solver options are NULL");
  fd_config_default(c);
  c->dim = po->dim;
  c->refine = po->refine;
  switch (so->solver) {
  case HPMG_SOLVER_AUTO:
  case HPMG_SOLVER_VCYCLE: c->solver = FD_SOLVER_VCYCLE; break;
  case HPMG_SOLVER_FMG: c->solver = FD_SOLVER_FMG; break;
  case HPMG_SOLVER_CG: c->solver = FD_SOLVER_CG; break;
  case HPMG_SOLVER_FFT: c->solver = FD_SOLVER_FFT; break;
  case HPMG_SOLVER_GMRES:
    return hpmg_error_set(HPMG_ERR_ARG, "GMRES is for Q_k problems; finite differences have cg, vcycle, fmg and fft");
  default: return hpmg_error_set(HPMG_ERR_ARG, "unknown solver %d", (int)so->solver);
  }
  switch (so->smoother) {
  case HPMG_SMOOTHER_AUTO:
  case HPMG_SMOOTHER_MCGS: c->smoother = FD_SMOOTH_MCGS; break;
  case HPMG_SMOOTHER_RBGS: c->smoother = FD_SMOOTH_RBGS; break;
  case HPMG_SMOOTHER_JACOBI: c->smoother = FD_SMOOTH_JACOBI; break;
  case HPMG_SMOOTHER_CHEBYSHEV:
  case HPMG_SMOOTHER_GS:
  case HPMG_SMOOTHER_SGS:
  case HPMG_SMOOTHER_PATCH:
    return hpmg_error_set(HPMG_ERR_ARG, "smoothers chebyshev, gs, sgs and patch are for Q_k problems; finite "
                                        "differences have jacobi, rbgs and mcgs");
  default: return hpmg_error_set(HPMG_ERR_ARG, "unknown smoother %d", (int)so->smoother);
  }
  HPMG_CHECK_ARG(so->patch_mode == HPMG_PATCH_MULTIPLICATIVE && so->local_solver == HPMG_LOCAL_FDM &&
                     so->patch_damping == 0 && so->patch_order == HPMG_PATCH_ORDER_ZORDER && so->patch_batch == 0 &&
                     so->patch_kernel == HPMG_PATCH_KERNEL_FUSED && so->gs_order == HPMG_GS_ORDER_LEXICOGRAPHIC &&
                     so->cycle == HPMG_CYCLE_STANDARD,
                 "the patch options, gs_order and cycle apply to Q_k problems only");
  switch (so->precision) {
  case HPMG_PREC_DOUBLE: c->prec = FD_DOUBLE; break;
  case HPMG_PREC_FLOAT: c->prec = FD_FLOAT; break;
  case HPMG_PREC_MIXED:
    return hpmg_error_set(HPMG_ERR_ARG, "mixed precision is for Q_k problems; finite differences run double or float");
  default: return hpmg_error_set(HPMG_ERR_ARG, "unknown precision %d", (int)so->precision);
  }
  HPMG_CHECK_ARG(so->device == HPMG_DEVICE_CPU || so->device == HPMG_DEVICE_CUDA, "unknown device %d", (int)so->device);
  c->device = so->device == HPMG_DEVICE_CUDA ? FD_DEVICE_CUDA : FD_DEVICE_CPU;
  HPMG_CHECK_ARG(so->fmg_interp == HPMG_FMG_INTERP_CUBIC || so->fmg_interp == HPMG_FMG_INTERP_LINEAR,
                 "fd: unknown FMG interpolation %d", (int)so->fmg_interp);
  c->fmg_interp = so->fmg_interp == HPMG_FMG_INTERP_LINEAR ? FD_FMG_LINEAR : FD_FMG_CUBIC;
  /* 0 is the public "default" (FD_SOR_DEFAULT inside), every other value is a weight */
  HPMG_CHECK_ARG(so->sor == 0 || (so->sor > 0 && so->sor < 2),
                 "fd: Gauss-Seidel over-relaxation weight must be in (0,2) (got %g)", so->sor);
  c->sor = so->sor == 0 ? FD_SOR_DEFAULT : so->sor;
  c->omega = so->jacobi_omega;
  c->pre = so->pre == HPMG_SWEEPS_AUTO ? FD_SWEEPS_DEFAULT : so->pre;
  c->post = so->post == HPMG_SWEEPS_AUTO ? FD_SWEEPS_DEFAULT : so->post;
  c->tol = so->tol;
  c->maxit = so->maxit;
  c->threads = so->threads;
  c->split = so->split == HPMG_SPLIT_AUTO ? FD_SPLIT_AUTO : so->split;
  c->fft_measure = so->fft_measure != 0;
  c->profile = so->profile != 0;
  return fd_config_check(c);
}

/* the public options on a general box (fd_box.h); what it does not have is refused */
/* the box's properties the options depend on: non-uniform directions, the
 * auto line direction */
typedef struct {
  int nonuniform, line;
} box_info;
/* of bx, or (NULL) of the box of po */
static hpmg_error box_props(const hpmg_problem_options *po, const hpmg_box *bx, box_info *bi) {
  hpmg_box local;
  if (!bx) {
    HPMG_CALL(hpmg_box_init(po, &local));
    bx = &local;
  }
  bi->nonuniform = 0;
  for (int d = 0; d < bx->dim; d++) bi->nonuniform += !bx->uniform[d];
  bi->line = fd_box_auto_line(bx);
  if (bx == &local) hpmg_box_destroy(&local);
  return HPMG_SUCCESS;
}

static hpmg_error box_config_from(const hpmg_problem_options *po, const hpmg_box *bx, const hpmg_solver_options *so,
                                  fd_box_config *c) {
  HPMG_CHECK_ARG(so, "solver options are NULL");
  memset(c, 0, sizeof *c);
  switch (so->solver) {
  case HPMG_SOLVER_VCYCLE: c->solver = HPMG_SOLVER_VCYCLE; break;
  case HPMG_SOLVER_FMG: c->solver = HPMG_SOLVER_FMG; break;
  case HPMG_SOLVER_AUTO: /* CG: the fastest to the tolerance on the CPU and the GPU, and robust
                            where the cycle alone converges slowly (docs/bc.md, "Solvers") */
  case HPMG_SOLVER_CG: c->solver = HPMG_SOLVER_CG; break;
  case HPMG_SOLVER_FFT: {
    /* the direct solver (fd_direct.h): transforms along uniform directions,
     * tridiagonal solves along at most one non-uniform one */
    box_info bi;
    HPMG_CALL(box_props(po, bx, &bi));
    HPMG_CHECK_ARG(bi.nonuniform <= 1, "the FFT (transform + tridiagonal) solver takes at most one non-uniform "
                                       "direction (this box has %d): use cg, vcycle or fmg", bi.nonuniform);
    HPMG_CHECK_ARG(so->precision == HPMG_PREC_DOUBLE, "the direct solver on a general box runs in double precision");
    c->solver = HPMG_SOLVER_FFT;
    c->project_rhs = po->project_rhs;
    c->tol = so->tol;
    c->maxit = so->maxit;
    c->threads = so->threads;
    c->line = so->device == HPMG_DEVICE_CUDA; /* the direct solver's device (line is unused) */
    c->sor = 1;
    return HPMG_SUCCESS;
  }
  default: return hpmg_error_set(HPMG_ERR_ARG, "finite differences on a general box have the solvers cg, vcycle and fmg");
  }
  switch (so->smoother) {
  case HPMG_SMOOTHER_AUTO: c->line = -1; break;
  case HPMG_SMOOTHER_MCGS:
  case HPMG_SMOOTHER_RBGS: c->line = 0; break;
  default:
    return hpmg_error_set(HPMG_ERR_ARG, "finite differences on a general box smooth with auto (line Gauss-Seidel along "
                                        "a stretched direction, else multicolour GS) or mcgs (multicolour point GS)");
  }
  HPMG_CHECK_ARG(so->patch_mode == HPMG_PATCH_MULTIPLICATIVE && so->local_solver == HPMG_LOCAL_FDM &&
                     so->patch_damping == 0 && so->patch_order == HPMG_PATCH_ORDER_ZORDER && so->patch_batch == 0 &&
                     so->patch_kernel == HPMG_PATCH_KERNEL_FUSED && so->gs_order == HPMG_GS_ORDER_LEXICOGRAPHIC &&
                     so->cycle == HPMG_CYCLE_STANDARD,
                 "the patch options, gs_order and cycle apply to Q_k problems only");
  HPMG_CHECK_ARG(so->precision == HPMG_PREC_DOUBLE, "finite differences on a general box run in double precision");
  HPMG_CHECK_ARG(so->device == HPMG_DEVICE_CPU || so->device == HPMG_DEVICE_CUDA, "unknown device %d", (int)so->device);
  c->device = so->device == HPMG_DEVICE_CUDA;
  HPMG_CHECK_ARG(so->split == HPMG_SPLIT_AUTO && so->fft_measure == 0, "split and fft_measure do not apply on a general box");
  HPMG_CHECK_ARG(so->sor == 0 || (so->sor > 0 && so->sor < 2), "fd: Gauss-Seidel over-relaxation weight must be in (0,2) (got %g)", so->sor);
  c->sor = so->sor == 0 ? 1.0 : so->sor;
  /* sweeps: V(1,1); the V-cycle iteration and FMG with line smoothing on a
   * stretched grid V(2,2) (3D channel 64x48x64 tanh 2.9: 58 cycles with
   * V(1,1), 23 with V(2,2); CG 15 and 10, no faster, docs/bc.md) */
  int sweeps = 1;
  if (c->line == -1 && c->solver != HPMG_SOLVER_CG && (so->pre == HPMG_SWEEPS_AUTO || so->post == HPMG_SWEEPS_AUTO)) {
    box_info bi;
    HPMG_CALL(box_props(po, bx, &bi));
    if (bi.line >= 0) sweeps = 2;
  }
  c->pre = so->pre == HPMG_SWEEPS_AUTO ? sweeps : so->pre;
  c->post = so->post == HPMG_SWEEPS_AUTO ? sweeps : so->post;
  HPMG_CHECK_ARG(c->pre >= 0 && c->post >= 0 && c->pre <= 100 && c->post <= 100 && c->pre + c->post >= 1,
                 "fd: pre/post sweeps must be in 0..100 and not both 0");
  HPMG_CHECK_ARG(c->solver != HPMG_SOLVER_CG || c->pre == c->post,
                 "CG needs a symmetric V-cycle: use --pre equal to --post (got %d/%d)", c->pre, c->post);
  HPMG_CHECK_ARG(so->tol > 0 && so->tol < 1, "fd: tol must be in (0,1) (got %g)", so->tol);
  HPMG_CHECK_ARG(so->maxit >= (c->solver == HPMG_SOLVER_FMG ? 0 : 1) && so->maxit <= 1000000,
                 "fd: maxit must be in 1..1000000, or 0 with fmg (the FMG pass alone; got %d)", so->maxit);
  HPMG_CHECK_ARG(so->threads >= 0 && so->threads <= 4096, "fd: threads must be in 0..4096 (got %d)", so->threads);
  HPMG_CHECK_ARG(so->fmg_interp == HPMG_FMG_INTERP_CUBIC || so->fmg_interp == HPMG_FMG_INTERP_LINEAR,
                 "fd: unknown FMG interpolation %d", (int)so->fmg_interp);
  c->fmg_cubic = so->fmg_interp == HPMG_FMG_INTERP_CUBIC;
  c->tol = so->tol;
  c->maxit = so->maxit;
  c->threads = so->threads;
  c->verbose = so->verbose;
  c->project_rhs = po->project_rhs;
  return HPMG_SUCCESS;
}

hpmg_error hpmg_fd_box_options_resolve(const hpmg_problem_options *po, const hpmg_box *bx, hpmg_solver_options *so) {
  fd_box_config c;
  HPMG_CALL(box_config_from(po, bx, so, &c));
  so->solver = c.solver;
  if (c.solver == HPMG_SOLVER_FFT) return HPMG_SUCCESS;
  so->smoother = c.line == 0 ? HPMG_SMOOTHER_MCGS : HPMG_SMOOTHER_AUTO;
  so->pre = c.pre;
  so->post = c.post;
  so->sor = c.sor;
  return HPMG_SUCCESS;
}

hpmg_error hpmg_fd_box_run_create(const hpmg_problem_options *po, const hpmg_box *bx, const hpmg_solver_options *so,
                                  hpmg_fd_run *out) {
  *out = NULL;
  fd_box_config c;
  HPMG_CALL(box_config_from(po, bx, so, &c));
  const double need = fd_box_memory(bx, &c, NULL);
  const uint64_t avail = hpmg_memory_available();
  if (avail > 0 && need > 0.9 * (double)avail) {
    char b1[32], b2[32];
    return hpmg_error_set(HPMG_ERR_MEMORY, "the problem needs about %s of host memory; %s is available",
                          hpmg_format_bytes(need, b1, sizeof b1), hpmg_format_bytes((double)avail, b2, sizeof b2));
  }
  struct hpmg_fd_run_s *r;
  HPMG_CALL(hpmg_calloc(sizeof *r, &r));
  r->po = po;
  r->bx = bx;
  r->dim = po->dim;
  r->verbose = so->verbose;
  const int64_t N = hpmg_box_unknowns(bx);
  hpmg_error e = hpmg_malloc(sizeof(double) * (size_t)N, &r->rhs);
  if (!e && c.solver == HPMG_SOLVER_FFT) {
    const double t0 = hpmg_wtime();
    if (c.threads > 0) omp_set_num_threads(c.threads);
    r->direct_dev = so->device == HPMG_DEVICE_CUDA;
    e = fd_direct_create(bx, po->lambda, r->direct_dev, so->fft_measure, &r->direct);
    if (!e && r->direct_dev) {
      const hpmg_backend *be;
      e = hpmg_backend_cuda(&be);
      if (!e) e = be->alloc(sizeof(double) * (size_t)N, &r->dev_b);
      if (!e) e = be->alloc(sizeof(double) * (size_t)N, &r->dev_u);
    }
    r->dst.t_setup = hpmg_wtime() - t0;
    r->dst.t_plan = e ? 0 : fd_direct_plan_seconds(r->direct);
    r->dst.levels = 1;
    r->dst.dofs = N;
    r->dst.bytes_host = 24.0 * (double)N;
  } else if (!e) e = fd_box_solver_create(bx, po->lambda, &c, &r->box);
  if (e) {
    hpmg_fd_run_destroy(&r);
    return e;
  }
  *out = r;
  return HPMG_SUCCESS;
}

hpmg_error hpmg_fd_options_resolve(const hpmg_problem_options *po, hpmg_solver_options *so) {
  if (fd_box_needed(po)) return hpmg_fd_box_options_resolve(po, NULL, so);
  fd_config c;
  HPMG_CALL(config_from(po, so, &c));
  fd_config_resolve(&c);
  static const hpmg_solver_kind solvers[] = {[FD_SOLVER_VCYCLE] = HPMG_SOLVER_VCYCLE, [FD_SOLVER_FMG] = HPMG_SOLVER_FMG,
                                             [FD_SOLVER_CG] = HPMG_SOLVER_CG, [FD_SOLVER_FFT] = HPMG_SOLVER_FFT};
  static const hpmg_smoother_kind smoothers[] = {[FD_SMOOTH_JACOBI] = HPMG_SMOOTHER_JACOBI,
                                                 [FD_SMOOTH_RBGS] = HPMG_SMOOTHER_RBGS, [FD_SMOOTH_MCGS] = HPMG_SMOOTHER_MCGS};
  so->solver = solvers[c.solver];
  so->smoother = smoothers[c.smoother];
  so->pre = c.pre;
  so->post = c.post;
  so->sor = c.sor;
  return HPMG_SUCCESS;
}

hpmg_error hpmg_fd_memory_estimate(const hpmg_problem_options *po, const hpmg_solver_options *so, double *host,
                                   double *device) {
  if (fd_box_needed(po)) {
    fd_box_config c;
    hpmg_box b;
    HPMG_CALL(box_config_from(po, NULL, so, &c));
    HPMG_CALL(hpmg_box_init(po, &b));
    *host = fd_box_memory(&b, &c, device);
    hpmg_box_destroy(&b);
    return HPMG_SUCCESS;
  }
  fd_config c;
  HPMG_CALL(config_from(po, so, &c));
  HPMG_CALL(fd_memory_estimate(&c, host, device));
  const int64_t n = (int64_t)1 << c.refine;
  const double points = (double)fd_points(c.dim, n), unknowns = pow((double)(n - 1), c.dim);
  /* the grid solution vector; a double right-hand side while solving (float
   * staging, GPU, the FFT solver's residual check); the caller's x */
  *host += 8.0 * points + (c.solver == FD_SOLVER_FFT || c.prec == FD_FLOAT || c.device == FD_DEVICE_CUDA ? 8.0 * points : 0.0) +
           8.0 * unknowns;
  return HPMG_SUCCESS;
}

hpmg_error hpmg_fd_point_values(int dim, int refine, hpmg_function f, void *user, double *b) {
  const int64_t n = (int64_t)1 << refine, m = n - 1, nz = dim == 3 ? m : 1;
  const double h = 1.0 / (double)n;
  int64_t bad = 0;
#pragma omp parallel for collapse(2) reduction(+ : bad) schedule(static)
  for (int64_t k = 0; k < nz; k++)
    for (int64_t j = 0; j < m; j++)
      for (int64_t i = 0; i < m; i++) {
        const double x[3] = {(double)(i + 1) * h, (double)(j + 1) * h, dim == 3 ? (double)(k + 1) * h : 0.0};
        const double v = f(x, user);
        bad += !isfinite(v);
        b[(k * m + j) * m + i] = v;
      }
  if (bad) return hpmg_error_set(HPMG_ERR_NUMERIC, "the right-hand side function returned %lld non-finite values", (long long)bad);
  return HPMG_SUCCESS;
}

void hpmg_fd_error(int dim, int refine, const double *x, double *l2h, double *rms, double *maxerr) {
  fd_error_norms_interior(dim, (int64_t)1 << refine, x, l2h, rms, maxerr);
}

static void run_monitor(void *ctx, int it, double res, double res0) {
  struct hpmg_fd_run_s *r = ctx;
  hpmg_history_record(r->history, &r->nhistory, r->cap, it, res, res0, r->verbose);
}

hpmg_error hpmg_fd_run_create(const hpmg_problem_options *po, const hpmg_solver_options *so, hpmg_fd_run *out) {
  *out = NULL;
  fd_config c;
  HPMG_CALL(config_from(po, so, &c));
  double hb, db;
  HPMG_CALL(hpmg_fd_memory_estimate(po, so, &hb, &db));
  const uint64_t avail = hpmg_memory_available();
  if (avail > 0 && hb > 0.9 * (double)avail) {
    char b1[32], b2[32];
    return hpmg_error_set(HPMG_ERR_MEMORY, "--refine %d in %dD needs about %s of host memory; %s is available", c.refine,
                          c.dim, hpmg_format_bytes(hb, b1, sizeof b1), hpmg_format_bytes((double)avail, b2, sizeof b2));
  }
  struct hpmg_fd_run_s *r;
  HPMG_CALL(hpmg_calloc(sizeof *r, &r));
  r->dim = c.dim;
  r->n = (int64_t)1 << c.refine;
  r->cap = c.maxit + 2;
  r->verbose = so->verbose;
  r->bytes_host = hb;
  r->bytes_device = db;
  c.monitor = run_monitor;
  c.monitor_ctx = r;
  hpmg_error e = hpmg_malloc(sizeof(double) * (size_t)r->cap, &r->history);
  if (!e) e = hpmg_malloc(sizeof(double) * (size_t)fd_points(c.dim, r->n), &r->x);
  if (!e) e = fd_solver_create(&c, &r->fd);
  if (e) {
    hpmg_fd_run_destroy(&r);
    return e;
  }
  *out = r;
  return HPMG_SUCCESS;
}

void hpmg_fd_run_destroy(hpmg_fd_run *rp) {
  struct hpmg_fd_run_s *r = *rp;
  if (!r) return;
  fd_box_solver_destroy(&r->box);
  fd_direct_destroy(&r->direct);
  if (r->dev_b || r->dev_u) {
    const hpmg_backend *be;
    if (hpmg_backend_cuda(&be) == HPMG_SUCCESS) {
      be->free(&r->dev_b);
      be->free(&r->dev_u);
    }
  }
  hpmg_free(&r->rhs);
  fd_solver_destroy(&r->fd);
  hpmg_free(&r->x);
  hpmg_free(&r->b);
  hpmg_free(&r->history);
  hpmg_free(rp);
}

/* general box: b holds f at the unknowns (NULL: the built-in problem); the
 * BC data join it in fd_box_rhs */
static hpmg_error box_solve(hpmg_fd_run r, const double *b, double *x) {
  const hpmg_problem_options *po = r->po;
  if (!b && po->rhs == HPMG_RHS_SINE)
    for (int f = 0; f < 2 * po->dim; f++)
      HPMG_CHECK_ARG(po->bc[f].value == 0 && !po->bc[f].fn && !po->bc[f].values,
                     "the built-in right-hand side (rhs sine: the manufactured solution, docs/bc.md) takes its boundary "
                     "data from that solution: leave the faces' value, fn and values unset, or pass b");
  if (b) {
    const int64_t bad = hpmg_vec_count_nonfinite(HPMG_REAL_DOUBLE, hpmg_box_unknowns(r->bx), b);
    if (bad) return hpmg_error_set(HPMG_ERR_NUMERIC, "%lld non-finite entries (NaN/Inf) in the right-hand side", (long long)bad);
  }
  HPMG_CALL(fd_box_rhs(po, r->bx, b, r->rhs));
  if (r->box) return fd_box_solve(r->box, r->rhs, x);
  /* the direct solver: the same compatibility rule, its own projection */
  hpmg_stats *st = &r->dst;
  const double setup = st->t_setup, plan = st->t_plan;
  memset(st, 0, sizeof *st);
  st->t_setup = setup;
  st->t_plan = plan;
  st->levels = 1;
  st->dofs = hpmg_box_unknowns(r->bx);
  st->bytes_host = 24.0 * (double)st->dofs;
  const size_t bytes = sizeof(double) * (size_t)st->dofs;
  if (hpmg_box_neumann_like(r->bx) && po->lambda == 0) {
    double sb, sa, sw;
    HPMG_CALL(fd_box_sums(r->bx, r->rhs, &sb, &sa, &sw));
    HPMG_CALL(fd_box_compat_check(sb, sa, sw, po->project_rhs));
    st->compat_defect = sb / sw;
  }
  const hpmg_backend *be = NULL;
  if (r->direct_dev) {
    HPMG_CALL(hpmg_backend_cuda(&be));
    HPMG_CALL(be->to_device(r->rhs, r->dev_b, bytes));
    HPMG_CALL(be->sync());
  }
  const double t0 = hpmg_wtime();
  HPMG_CALL(fd_direct_solve(r->direct, r->direct_dev ? r->dev_b : r->rhs, r->direct_dev ? r->dev_u : x));
  if (be) HPMG_CALL(be->sync());
  st->t_solve = st->t_fft = hpmg_wtime() - t0;
  if (be) HPMG_CALL(be->to_host(r->dev_u, x, bytes));
  /* the residual against the projected right-hand side, in double on the host */
  if (st->compat_defect != 0) {
    double sb, sa, sw;
    HPMG_CALL(fd_box_sums(r->bx, r->rhs, &sb, &sa, &sw));
    fdb_geom g;
    HPMG_CALL(fd_box_geom(r->bx, 0.0, &g));
    const int64_t nx = g.n[0], ny = g.n[1], nz = g.n[2];
    for (int64_t k = 0; k < nz; k++)
      for (int64_t j = 0; j < ny; j++)
        for (int64_t i = 0; i < nx; i++) r->rhs[(k * ny + j) * nx + i] -= sb / sw * g.w[0][i] * g.w[1][j] * g.w[2][k];
    fd_box_geom_free(&g);
  }
  HPMG_CALL(fd_box_residual_norm(r->bx, po->lambda, NULL, r->rhs, &st->residual0));
  HPMG_CALL(fd_box_residual_norm(r->bx, po->lambda, x, r->rhs, &st->residual));
  st->iterations = 1;
  st->converged = 1;
  st->rate = st->residual0 > 0 ? st->residual / st->residual0 : 0;
  return HPMG_SUCCESS;
}

hpmg_error hpmg_fd_run_solve(hpmg_fd_run r, const double *b, double *x) {
  if (r->box || r->direct) return box_solve(r, b, x);
  const int64_t n = r->n, m = n - 1, s1 = n + 1, s2 = (n + 1) * (n + 1), nz = r->dim == 3 ? m : 1, k0 = r->dim == 3;
  if (b) { /* h^2 b at the interior points of the grid vector, 0 on the boundary */
    const int64_t N = fd_points(r->dim, n), bad = hpmg_vec_count_nonfinite(HPMG_REAL_DOUBLE, nz * m * m, b);
    if (bad) return hpmg_error_set(HPMG_ERR_NUMERIC, "%lld non-finite entries (NaN/Inf) in the right-hand side", (long long)bad);
    if (!r->b) HPMG_CALL(hpmg_malloc(sizeof(double) * (size_t)N, &r->b));
    const double h2 = 1.0 / ((double)n * (double)n);
    memset(r->b, 0, sizeof(double) * (size_t)N);
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t k = 0; k < nz; k++)
      for (int64_t j = 0; j < m; j++)
        for (int64_t i = 0; i < m; i++) r->b[(k + k0) * s2 + (j + 1) * s1 + i + 1] = h2 * b[(k * m + j) * m + i];
  }
  const hpmg_error e = fd_solver_solve(r->fd, b ? r->b : NULL, r->x);
  if (e == HPMG_SUCCESS || e == HPMG_ERR_NOT_CONVERGED) {
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t k = 0; k < nz; k++)
      for (int64_t j = 0; j < m; j++)
        for (int64_t i = 0; i < m; i++) x[(k * m + j) * m + i] = r->x[(k + k0) * s2 + (j + 1) * s1 + i + 1];
  }
  return e;
}

void hpmg_fd_run_get_stats(hpmg_fd_run r, hpmg_stats *st) {
  if (r->box) {
    fd_box_get_stats(r->box, st);
    return;
  }
  if (r->direct) {
    *st = r->dst;
    return;
  }
  fd_stats f;
  fd_solver_get_stats(r->fd, &f);
  memset(st, 0, sizeof *st);
  st->dofs = f.unknowns;
  st->levels = f.levels;
  st->iterations = f.iterations;
  st->converged = f.converged;
  st->residual0 = f.res0;
  st->residual = f.res;
  st->rate = f.rate;
  st->t_setup = f.t_setup;
  st->t_operator = f.t_residual;
  st->t_smoother = f.t_smooth;
  st->t_transfer = f.t_transfer;
  st->t_coarse = f.t_coarse;
  st->t_krylov = f.t_krylov;
  st->t_solve = f.t_solve;
  st->bytes_host = r->bytes_host;
  st->bytes_device = r->bytes_device;
  st->t_norm = f.t_norm;
  st->t_comm = f.t_comm;
  st->t_fft = f.t_fft;
  st->t_plan = f.t_plan;
  st->split = f.split;
  st->split_costs = (hpmg_split_costs){f.split_costs.measured, f.split_costs.gpu_launch_s, f.split_costs.gpu_bw,
                                       f.split_costs.cpu_bw, f.split_costs.cpu_barrier_s, f.split_costs.link_latency_s,
                                       f.split_costs.link_bw};
}

int hpmg_fd_run_history(hpmg_fd_run r, const double **h) {
  if (r->box) return fd_box_history(r->box, h);
  if (r->direct) {
    *h = NULL;
    return 0;
  }
  *h = r->history;
  return r->nhistory;
}

void hpmg_fd_run_set_verbose(hpmg_fd_run r, int verbose) {
  r->verbose = verbose;
  if (r->box) fd_box_set_verbose(r->box, verbose);
}
