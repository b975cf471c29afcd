/* Public solver object: multigrid hierarchy + outer iteration, statistics. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "disc/qk/cuda/hpmg_cuda.h"
#include "fd.h"
#include "p1.h"
#include "sem.h"
#include "disc/fd/fd_box.h"
#include "disc/qk/qk_box.h"
#include "disc/qk/qk_host.h"
#include "la/krylov.h"
#include "mg/solve.h"
#include "problem_impl.h"

hpmg_error hpmg_problem_builtin_rhs(hpmg_problem p, double *b);

struct hpmg_solver_s {
  hpmg_cuda_solver cuda; /* non-NULL: the solve runs on the GPU (everything below unused) */
  hpmg_fd_run fd;        /* non-NULL: a finite-difference problem (everything below unused) */
  hpmg_p1_solver p1;     /* non-NULL: a P1 problem (everything below unused) */
  hpmg_sem_solver sem;   /* non-NULL: spectral elements (everything below unused) */
  struct hpmg_problem_s *prob;
  hpmg_solver_options o;
  hpmg_mg mg;             /* the Q_k levels on the host */
  hpmg_mg_solver drv;     /* the outer iteration over them */
  hpmg_stats st;
  /* Q_k on a general box with a singular operator (no Dirichlet face,
   * lambda = 0): the weights m = M 1 and their sum (qk_box_weights) */
  int singular;
  double *w, sumw;
  int fmg_shift_builtin; /* Q_k box with FMG: the builtin flag of the solve FMG's shifts were made for, -1: none yet */
};

void hpmg_solver_options_default(hpmg_solver_options *o) {
  memset(o, 0, sizeof *o);
  o->solver = HPMG_SOLVER_AUTO;
  o->smoother = HPMG_SMOOTHER_AUTO;
  o->patch_mode = HPMG_PATCH_MULTIPLICATIVE;
  o->local_solver = HPMG_LOCAL_FDM;
  o->patch_damping = 0.0;
  o->restart = 30;
  o->cheby_degree = 5;
  o->cheby_range = 15.0;
  o->cheby_eig_iters = 12;
  o->jacobi_omega = 2.0 / 3.0;
  o->pre = 1;
  o->post = 1;
  o->tol = 1e-9;
  o->maxit = 200;
  o->threads = 0;
  o->precision = HPMG_PREC_DOUBLE;
  o->verbose = 0;
  o->profile = 0;
  o->sor = 0.0;
  o->fmg_interp = HPMG_FMG_INTERP_CUBIC;
  o->split = HPMG_SPLIT_AUTO;
  o->fft_measure = 0;
}

hpmg_smoother_kind hpmg_default_smoother(int dim, int degree, const hpmg_solver_options *o) {
  /* Measured to solution, one V-cycle (1+1), 1e-9, mixed precision:
   * CPU (docs/performance.md, 2 cores): Chebyshev(5)-Jacobi is 1.5-4x
   *   faster than the patch smoother in 3D for every k (CG; FMG at 3D Q7 too)
   *   and in 2D up to k = 5; the patch smoother is faster in 2D for k = 6..10.
   * GPU, H200 (bench/results/gpu-default-smoother/{fmg,cg}): with FMG (the
   *   default solver) the fused patch kernel is faster in 3D for k = 2..8
   *   (1.25-3.8x) and in 2D at k = 2, 6, 10 (2.3-5.4x; k = 3..9 in between
   *   are taken as patch), Chebyshev at 3D k = 1 (FMG at 1.3e8 unknowns:
   *   0.136 against 0.227 s, bench/results/gpu-perf); with CG the patch
   *   kernel is faster for 3D k = 3..8 (1.2-2.4x), Chebyshev at 3D k = 2
   *   (1.4x), and in 2D the patch kernel for k = 2, 4, 6, 8, 10 (1.6-4.1x;
   *   k = 1 not measured), taken for GMRES and the V-cycle iteration too. */
  const hpmg_solver_kind solver = o->solver == HPMG_SOLVER_AUTO ? hpmg_default_solver(dim, degree, o) : o->solver;
  const int patch_ok = !(solver == HPMG_SOLVER_CG && o->pre != o->post);
  if (!patch_ok) return HPMG_SMOOTHER_CHEBYSHEV;
  if (o->device == HPMG_DEVICE_CUDA) {
    const int kmin3 = solver == HPMG_SOLVER_FMG ? 2 : 3; /* 3D k = 2: Chebyshev except with FMG */
    return (dim == 3 && degree >= kmin3 && degree <= 8) || (dim == 2 && degree >= 2) ? HPMG_SMOOTHER_PATCH
                                                                                     : HPMG_SMOOTHER_CHEBYSHEV;
  }
  return dim == 2 && degree >= 6 ? HPMG_SMOOTHER_PATCH : HPMG_SMOOTHER_CHEBYSHEV;
}

hpmg_solver_kind hpmg_default_solver(int dim, int degree, const hpmg_solver_options *o) {
  (void)dim, (void)degree, (void)o; /* measured: FMG everywhere (hpmg.h, docs/performance.md) */
  return HPMG_SOLVER_FMG;
}

/* o with the solver resolved (AUTO -> hpmg_default_solver) */
static hpmg_solver_options resolved_solver(const hpmg_solver_options *o, int dim, int degree) {
  hpmg_solver_options r = *o;
  if (r.solver == HPMG_SOLVER_AUTO) r.solver = hpmg_default_solver(dim, degree, o);
  return r;
}

static hpmg_smoother_kind resolved_smoother(const hpmg_solver_options *o, int dim, int degree) {
  return o->smoother == HPMG_SMOOTHER_AUTO ? hpmg_default_smoother(dim, degree, o) : o->smoother;
}

static void patch_options(const hpmg_solver_options *o, hpmg_patch_options *p) {
  p->mode = o->patch_mode;
  p->local = o->local_solver;
  p->damping = o->patch_damping;
  p->order = o->patch_order;
  p->batch = o->patch_batch;
}

/* Options that depend on the discretization (dim, degree) are checked here too. */
static hpmg_error solver_options_check(const hpmg_solver_options *o, int dim, int degree) {
  HPMG_CHECK_ARG(o, "solver options are NULL");
  HPMG_CHECK_ARG(o->solver != HPMG_SOLVER_FFT, "the FFT solver is for finite-difference problems (disc fd)");
  HPMG_CHECK_ARG(o->smoother != HPMG_SMOOTHER_RBGS && o->smoother != HPMG_SMOOTHER_MCGS,
                 "smoothers rbgs and mcgs are for finite-difference problems (disc fd)");
  HPMG_CHECK_ARG(o->sor == 0 && o->fmg_interp == HPMG_FMG_INTERP_CUBIC && o->split == HPMG_SPLIT_AUTO && o->fft_measure == 0,
                 "sor, fmg_interp, split and fft_measure apply to finite-difference problems only (disc fd)");
  HPMG_CHECK_ARG(o->solver >= HPMG_SOLVER_CG && o->solver <= HPMG_SOLVER_FMG, "unknown solver %d", (int)o->solver);
  HPMG_CHECK_ARG(o->smoother >= HPMG_SMOOTHER_CHEBYSHEV && o->smoother <= HPMG_SMOOTHER_AUTO, "unknown smoother %d", (int)o->smoother);
  HPMG_CHECK_ARG(o->patch_kernel == HPMG_PATCH_KERNEL_FUSED || o->patch_kernel == HPMG_PATCH_KERNEL_SEPARATE ||
                     o->patch_kernel == HPMG_PATCH_KERNEL_GLOBAL,
                 "unknown --patch-kernel %d (fused, separate or global)", (int)o->patch_kernel);
  HPMG_CHECK_ARG(o->restart >= 1 && o->restart <= 1000, "--restart must be in 1..1000 (got %d)", o->restart);
  const hpmg_smoother_kind sm = resolved_smoother(o, dim, degree);
  if (sm == HPMG_SMOOTHER_PATCH) {
    hpmg_patch_options p;
    patch_options(o, &p);
    HPMG_CALL(hpmg_patch_check(dim, degree, &p));
  } else {
    HPMG_CHECK_ARG(o->patch_mode == HPMG_PATCH_MULTIPLICATIVE && o->local_solver == HPMG_LOCAL_FDM && o->patch_damping == 0 &&
                       o->patch_order == HPMG_PATCH_ORDER_ZORDER && o->patch_batch == 0 &&
                       o->patch_kernel == HPMG_PATCH_KERNEL_FUSED,
                   "--patch-mode, --local-solver, --patch-damping, --patch-order, --patch-batch and --patch-kernel apply to --smoother patch only%s",
                   o->smoother == HPMG_SMOOTHER_AUTO ? " (the default smoother here is chebyshev)" : "");
  }
  HPMG_CHECK_ARG(o->gs_order == HPMG_GS_ORDER_LEXICOGRAPHIC || o->gs_order == HPMG_GS_ORDER_CELLWISE,
                 "unknown --gs-order %d (lexicographic or cellwise)", (int)o->gs_order);
  HPMG_CHECK_ARG(o->gs_order == HPMG_GS_ORDER_LEXICOGRAPHIC || sm == HPMG_SMOOTHER_GS || sm == HPMG_SMOOTHER_SGS,
                 "--gs-order applies to --smoother gs and sgs only");
  HPMG_CHECK_ARG(o->cheby_degree >= 1 && o->cheby_degree <= 100, "--cheby-degree must be in 1..100 (got %d)", o->cheby_degree);
  HPMG_CHECK_ARG(o->cheby_range > 1 && isfinite(o->cheby_range), "--cheby-range must be > 1 (got %g)", o->cheby_range);
  HPMG_CHECK_ARG(o->cheby_eig_iters >= 1 && o->cheby_eig_iters <= 1000, "eigenvalue iterations must be in 1..1000");
  HPMG_CHECK_ARG(o->jacobi_omega > 0 && o->jacobi_omega < 2, "--jacobi-omega must be in (0,2) (got %g)", o->jacobi_omega);
  HPMG_CHECK_ARG(o->pre >= 0 && o->pre <= 100 && o->post >= 0 && o->post <= 100, "--pre/--post must be in 0..100");
  HPMG_CHECK_ARG(o->pre + o->post >= 1, "--pre and --post cannot both be 0 (the cycle would not smooth)");
  HPMG_CALL(hpmg_cycle_check(o->solver, o->cycle));
  HPMG_CHECK_ARG(o->tol > 0 && o->tol < 1, "--tol must be in (0,1) (got %g)", o->tol);
  HPMG_CHECK_ARG(o->maxit >= 1 && o->maxit <= 1000000, "--maxit must be in 1..1000000 (got %d)", o->maxit);
  HPMG_CHECK_ARG(o->threads >= 0 && o->threads <= 4096, "--threads must be in 0..4096 (got %d)", o->threads);
  HPMG_CHECK_ARG(o->precision >= HPMG_PREC_DOUBLE && o->precision <= HPMG_PREC_MIXED, "unknown precision %d", (int)o->precision);
  HPMG_CHECK_ARG(o->device == HPMG_DEVICE_CPU || o->device == HPMG_DEVICE_CUDA, "unknown device %d", (int)o->device);
  HPMG_CHECK_ARG(!(o->solver == HPMG_SOLVER_CG && o->smoother == HPMG_SMOOTHER_GS && o->pre != o->post),
                 "CG needs a symmetric V-cycle: with --smoother gs use --pre equal to --post (got %d/%d)", o->pre, o->post);
  /* post-smoothing reverses the colors: pre and post are A-adjoint only in equal numbers */
  HPMG_CHECK_ARG(!(o->solver == HPMG_SOLVER_CG && sm == HPMG_SMOOTHER_PATCH && o->patch_mode == HPMG_PATCH_MULTIPLICATIVE &&
                   o->pre != o->post),
                 "CG needs a symmetric V-cycle: with the multiplicative patch smoother use --pre equal to --post "
                 "(got %d/%d), or --solver gmres", o->pre, o->post);
  return HPMG_SUCCESS;
}

/* Stretched cells on a Q_k box: AUTO is the vertex patch (exact local
 * solves on the flat cells; with the partially semi-coarsened levels of
 * hpmg_qk_box_levels_build its CG iterations on the tanh channel are within
 * 1.0-1.33x of the uniform grid's, Chebyshev's within 1.0-1.5x; docs/bc.md),
 * where the cycle allows it (CG: pre = post). o: the solver resolved. */
static int box_stretched(const hpmg_box *b) {
  int stretched = 0;
  for (int d = 0; d < b->dim; d++) stretched |= !b->uniform[d];
  return stretched;
}
/* 1: the same default on the GPU, whose box levels run the patch smoother
 * too (qk_patch.cu, up to QK_PATCH_MAX_K2 / K3): on the Q3 channel
 * 128x96x128 (tanh 2.9, H200, 2c797c7, scripts/gpu-check-all boxpatch) CG
 * takes 12 iterations in 0.60 s against Chebyshev's 22 in 0.93 s, FMG 20
 * cycles against 96; with the balanced coarsening and the variable V-cycle
 * (c1678ce) FMG 3 cycles in 0.44 s against 19 in 1.63 s
 * (bench/results/qk-box-gpu-patch); 0: Chebyshev there */
#define QK_BOX_CUDA_AUTO_PATCH 1
static int qk_box_auto_patch(const hpmg_box *b, int degree, const hpmg_solver_options *o) {
  const int dev = o->device == HPMG_DEVICE_CPU ||
                  (QK_BOX_CUDA_AUTO_PATCH && o->device == HPMG_DEVICE_CUDA &&
                   degree <= (b->dim == 3 ? QK_PATCH_MAX_K3 : QK_PATCH_MAX_K2));
  return o->smoother == HPMG_SMOOTHER_AUTO && box_stretched(b) && dev && degree <= HPMG_FDM_MAX_DEGREE &&
         !(o->solver == HPMG_SOLVER_CG && o->pre != o->post);
}

/* The defaults of a Q_k box on the GPU: the Chebyshev smoother where
 * qk_box_auto_patch above did not choose the patch smoother (uniform cells),
 * and where cells are stretched (box_stretched), the solver was left to AUTO
 * and the smoother is not the patch one, CG: FMG with Chebyshev does not hold
 * up on flat cells (Q3 channel 128x96x128, tanh 2.9, H200, c1678ce: 19
 * cycles to 1e-9 in 1.63 s, CG 10 iterations in 0.74 s; before the balanced
 * coarsening, 906a351: 96 cycles, stagnating at 5.8e-3 on 256x192x256). With
 * the patch smoother FMG stays the default, as on the CPU (3 cycles in 0.44 s
 * against CG's 6 iterations in 0.50 s; bench/results/qk-box-gpu-patch).
 * asked: the solver before AUTO was resolved. */
static void qk_box_cuda_defaults(const hpmg_box *b, hpmg_solver_kind asked, hpmg_solver_options *o) {
  if (o->device != HPMG_DEVICE_CUDA) return;
  if (o->smoother == HPMG_SMOOTHER_AUTO) o->smoother = HPMG_SMOOTHER_CHEBYSHEV;
  if (asked == HPMG_SOLVER_AUTO && box_stretched(b) && o->smoother != HPMG_SMOOTHER_PATCH) o->solver = HPMG_SOLVER_CG;
}

/* Q_k on a general box (problem->qkbox): what its levels do not take yet,
 * and the default smoother on stretched cells (CPU) and on the GPU. */
static hpmg_error qk_box_check(const struct hpmg_problem_s *prob, hpmg_solver_kind asked, hpmg_solver_options *o) {
  if (!prob->qkbox) return HPMG_SUCCESS;
  if (qk_box_auto_patch(&prob->box, prob->o.degree, o)) o->smoother = HPMG_SMOOTHER_PATCH;
  qk_box_cuda_defaults(&prob->box, asked, o);
  HPMG_CHECK_ARG(o->gs_order == HPMG_GS_ORDER_LEXICOGRAPHIC,
                 "--gs-order cellwise needs the default mesh (--coarse/--refine), not a general box (--cells, --bc, --grid)");
  return HPMG_SUCCESS;
}

static void qk_options(const hpmg_solver_options *o, int dim, int degree, hpmg_qk_smoother_options *m,
                       hpmg_cycle_options *c, hpmg_mg_solve_options *d) {
  memset(m, 0, sizeof *m);
  m->smoother = resolved_smoother(o, dim, degree);
  patch_options(o, &m->patch);
  m->cheby_degree = o->cheby_degree;
  m->cheby_eig_iters = o->cheby_eig_iters;
  m->cheby_range = o->cheby_range;
  m->jacobi_omega = o->jacobi_omega;
  m->gs_order = o->gs_order;
  m->symmetric = o->solver == HPMG_SOLVER_CG;
  memset(c, 0, sizeof *c);
  c->pre = o->pre;
  c->post = o->post;
  c->add_residual = o->cycle == HPMG_CYCLE_ADD_RESIDUAL;
  c->timing = 1;
  memset(d, 0, sizeof *d);
  d->solver = o->solver;
  d->tol = o->tol;
  d->maxit = o->maxit;
  d->restart = o->restart;
  d->verbose = o->verbose;
}

static double smoother_work_vectors_bytes(const hpmg_qk_smoother_options *m, hpmg_real real, double n) {
  return (m->smoother == HPMG_SMOOTHER_CHEBYSHEV ? 2 : m->smoother == HPMG_SMOOTHER_JACOBI ? 1 : 0) * n *
         (double)hpmg_real_size(real);
}

/* box_grid: the finest grid of a general Q_k box when known (a problem's;
 * its options keep no node arrays), else NULL (built here from po) */
static hpmg_error memory_estimate(const hpmg_problem_options *po, const hpmg_solver_options *so, const hpmg_grid *box_grid,
                                  double *bytes) {
  HPMG_CALL(hpmg_problem_options_check(po));
  HPMG_CHECK_ARG(po && so, "memory estimate: NULL options");
  if (po->disc == HPMG_DISC_P1) { /* built-in meshes; 0 for a file (its size is known after reading) */
    hpmg_solver_options r = *so;
    HPMG_CALL(hpmg_p1_options_resolve(&r));
    *bytes = hpmg_p1_memory_estimate(po);
    return HPMG_SUCCESS;
  }
  if (po->disc == HPMG_DISC_SEM) {
    hpmg_solver_options r = *so;
    HPMG_CALL(hpmg_sem_options_resolve(&r));
    *bytes = hpmg_sem_memory_estimate(po);
    return HPMG_SUCCESS;
  }
  if (po->disc == HPMG_DISC_FD) {
    double host, device;
    HPMG_CALL(hpmg_fd_memory_estimate(po, so, &host, &device));
    *bytes = so->device == HPMG_DEVICE_CUDA ? device : host;
    return HPMG_SUCCESS;
  }
  const hpmg_solver_options *so0 = so, rso = resolved_solver(so, po->dim, po->degree);
  so = &rso;
  HPMG_CALL(solver_options_check(so, po->dim, po->degree));
  if (so->device == HPMG_DEVICE_CUDA) { /* the CUDA backend gets the smoother resolved */
    hpmg_solver_options r = *so;
    if (qk_box_needed(po)) { /* the box's defaults (its spacing decides the solver) */
      hpmg_box b;
      HPMG_CALL(hpmg_box_init(po, &b));
      if (qk_box_auto_patch(&b, po->degree, &r)) r.smoother = HPMG_SMOOTHER_PATCH; /* as qk_box_check */
      qk_box_cuda_defaults(&b, so0->solver, &r);
      hpmg_box_destroy(&b);
    }
    r.smoother = resolved_smoother(&r, po->dim, po->degree);
    return hpmg_cuda_memory_estimate(po, &r, bytes);
  }
  hpmg_qk_smoother_options m;
  hpmg_cycle_options c;
  hpmg_mg_solve_options d;
  qk_options(so, po->dim, po->degree, &m, &c, &d);
  const int aliases = so->precision != HPMG_PREC_MIXED;
  const hpmg_real real = so->precision == HPMG_PREC_DOUBLE ? HPMG_REAL_DOUBLE : HPMG_REAL_FLOAT;
  const hpmg_real kreal = so->precision == HPMG_PREC_FLOAT ? HPMG_REAL_FLOAT : HPMG_REAL_DOUBLE;
  double n = pow((double)po->coarse * ldexp(1.0, po->refine) * po->degree - 1, po->dim);
  if (qk_box_needed(po)) { /* general box: the levels of hpmg_qk_host_create_box */
    int nl;
    int64_t N[QK_BOX_MAX_LEVELS] = {0};
    hpmg_qk_box_levels *B;
    HPMG_CALL(hpmg_malloc(sizeof *B, &B));
    hpmg_error e = HPMG_SUCCESS;
    if (box_grid) e = hpmg_qk_box_levels_build(box_grid, B);
    else {
      hpmg_box b;
      hpmg_grid g;
      e = hpmg_box_init(po, &b);
      if (!e) {
        e = hpmg_grid_init_box(&b, po->degree, &g);
        if (!e) e = hpmg_qk_box_levels_build(&g, B);
        if (qk_box_auto_patch(&b, po->degree, so)) m.smoother = HPMG_SMOOTHER_PATCH;
        hpmg_box_destroy(&b);
      }
    }
    nl = e ? 0 : B->nl;
    for (int j = 0; j < nl; j++) N[j] = B->g[j].N;
    if (!e) hpmg_qk_box_levels_free(B);
    hpmg_free(&B);
    HPMG_CALL(e);
    double total = 0;
    n = (double)N[0];
    for (int level = 0; level < nl; level++)
      total += hpmg_mg_level_bytes(real, (double)N[level], !(level == 0 && aliases), 1) +
               smoother_work_vectors_bytes(&m, real, (double)N[level]) +
               (m.smoother == HPMG_SMOOTHER_PATCH && level < nl - 1
                    ? hpmg_patch_memory(po->dim, po->degree, real, &m.patch, (double)N[level], omp_get_max_threads())
                    : 0.0);
    /* FMG's shifts (qk_box_fmg_shifts): one more vector per level, made with 4 doubles per unknown of the finest */
    if (qk_box_dirichlet(po) && (d.solver == HPMG_SOLVER_FMG || so->solver == HPMG_SOLVER_AUTO)) {
      for (int level = 0; level < nl; level++) total += (double)N[level] * (double)hpmg_real_size(real);
      total += 4 * n * 8.0;
    }
    *bytes = total + hpmg_mg_solver_memory(n, kreal, &d) + 3 * n * 8.0 /* b, x, the weights */;
    return HPMG_SUCCESS;
  }
  *bytes = hpmg_qk_host_memory(po->dim, po->degree, po->coarse, po->refine, real, &m, aliases) +
           hpmg_mg_solver_memory(n, kreal, &d) + 2 * n * 8.0 /* caller's b and x */;
  return HPMG_SUCCESS;
}

hpmg_error hpmg_memory_estimate(const hpmg_problem_options *po, const hpmg_solver_options *so, double *bytes) {
  return memory_estimate(po, so, NULL, bytes);
}

hpmg_error hpmg_solver_options_resolve(hpmg_problem prob, hpmg_solver_options *o) {
  HPMG_CHECK_ARG(prob && o, "problem or options are NULL");
  if (prob->fdbox) return hpmg_fd_box_options_resolve(&prob->o, &prob->box, o);
  if (prob->o.disc == HPMG_DISC_FD) return hpmg_fd_options_resolve(&prob->o, o);
  if (prob->o.disc == HPMG_DISC_P1) return hpmg_p1_options_resolve(o);
  if (prob->sem) return hpmg_sem_options_resolve(o);
  hpmg_solver_options r = resolved_solver(o, prob->o.dim, prob->o.degree);
  HPMG_CALL(qk_box_check(prob, o->solver, &r));
  HPMG_CALL(solver_options_check(&r, prob->o.dim, prob->o.degree));
  r.smoother = resolved_smoother(&r, prob->o.dim, prob->o.degree);
  *o = r;
  return HPMG_SUCCESS;
}

hpmg_error hpmg_solver_create(hpmg_problem prob, const hpmg_solver_options *o, hpmg_solver *out) {
  *out = NULL;
  HPMG_CHECK_ARG(prob && o, "problem or options are NULL");
  if (prob->sem) {
    struct hpmg_solver_s *f = calloc(1, sizeof *f);
    if (!f) return hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate solver");
    f->prob = prob;
    f->o = *o;
    hpmg_error e = hpmg_sem_solver_create(prob->sem, o, &f->sem);
    if (e) {
      free(f);
      return e;
    }
    *out = f;
    return HPMG_SUCCESS;
  }
  if (prob->p1) {
    struct hpmg_solver_s *f = calloc(1, sizeof *f);
    if (!f) return hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate solver");
    f->prob = prob;
    f->o = *o;
    hpmg_error e = hpmg_p1_solver_create(prob->p1, o, &f->p1);
    if (e) {
      free(f);
      return e;
    }
    *out = f;
    return HPMG_SUCCESS;
  }
  if (prob->o.disc == HPMG_DISC_FD) {
    struct hpmg_solver_s *f = calloc(1, sizeof *f);
    if (!f) return hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate solver");
    f->prob = prob;
    f->o = *o;
    hpmg_error e = prob->fdbox ? hpmg_fd_box_run_create(&prob->o, &prob->box, o, &f->fd)
                               : hpmg_fd_run_create(&prob->o, o, &f->fd);
    if (e) {
      free(f);
      return e;
    }
    *out = f;
    return HPMG_SUCCESS;
  }
  hpmg_solver_options ro = resolved_solver(o, prob->o.dim, prob->o.degree);
  HPMG_CALL(qk_box_check(prob, o->solver, &ro));
  o = &ro; /* from here on the solver is concrete */
  HPMG_CALL(solver_options_check(o, prob->o.dim, prob->o.degree));
  if (o->device == HPMG_DEVICE_CUDA) { /* the GPU backend checks GPU memory itself */
    struct hpmg_solver_s *g = calloc(1, sizeof *g);
    if (!g) return hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate solver");
    g->prob = prob;
    g->o = *o;
    hpmg_solver_options r = *o; /* the CUDA backend gets the smoother resolved */
    r.smoother = resolved_smoother(o, prob->o.dim, prob->o.degree);
    hpmg_problem_options po = prob->o; /* a box's given nodes: the box's copy (the options keep none) */
    for (int d = 0; d < 3 && prob->qkbox; d++)
      if (po.spacing[d].kind == HPMG_SPACING_NODES) po.spacing[d].nodes = prob->box.x[d];
    hpmg_error e = hpmg_cuda_solver_create(&po, &r, &g->cuda);
    if (!e) e = hpmg_cuda_memory_estimate(&po, &r, &g->st.bytes_device);
    if (e) {
      hpmg_cuda_solver_destroy(&g->cuda);
      free(g);
      return e;
    }
    *out = g;
    return HPMG_SUCCESS;
  }
  double need;
  HPMG_CALL(memory_estimate(&prob->o, o, prob->qkbox ? &prob->g : NULL, &need));
  uint64_t avail = hpmg_memory_available();
  if (avail > 0 && need > 0.9 * (double)avail) {
    char a[32], b[32];
    return hpmg_error_set(HPMG_ERR_MEMORY, "problem needs about %s but only %s of memory is available",
                          hpmg_format_bytes(need, a, sizeof a), hpmg_format_bytes((double)avail, b, sizeof b));
  }
  if (o->threads > 0) omp_set_num_threads(o->threads);
  struct hpmg_solver_s *s = calloc(1, sizeof *s);
  if (!s) return hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate solver");
  *out = s;
  double t0 = hpmg_wtime();
  s->prob = prob;
  s->o = *o;
  s->fmg_shift_builtin = -1;
  hpmg_qk_smoother_options m;
  hpmg_cycle_options c;
  hpmg_mg_solve_options d;
  qk_options(o, prob->o.dim, prob->o.degree, &m, &c, &d);
  const hpmg_real real = o->precision == HPMG_PREC_DOUBLE ? HPMG_REAL_DOUBLE : HPMG_REAL_FLOAT;
  const hpmg_real kreal = o->precision == HPMG_PREC_FLOAT ? HPMG_REAL_FLOAT : HPMG_REAL_DOUBLE;
  hpmg_error e = HPMG_SUCCESS;
  if (prob->qkbox) {
    s->singular = qk_box_singular(&prob->g, prob->o.lambda);
    if (s->singular) { /* the constants are A's null space: projections in CG and in the coarse solve */
      d.project = qk_box_project_mean;
      e = hpmg_malloc(sizeof(double) * (size_t)prob->g.N, &s->w);
      if (!e) e = qk_box_weights(&prob->g, s->w);
      for (int64_t i = 0; i < prob->g.N && !e; i++) s->sumw += s->w[i];
    }
    e = e ? e : hpmg_qk_host_create_box(&prob->g, prob->o.lambda, s->singular, real, &m, &c,
                                        o->precision != HPMG_PREC_MIXED, &s->mg);
  } else {
    e = hpmg_qk_host_create(prob->o.dim, prob->o.degree, prob->o.coarse, prob->o.refine, prob->o.box, prob->o.lambda,
                            real, &m, &c, o->precision != HPMG_PREC_MIXED, &s->mg);
  }
  const int64_t n = e ? 0 : s->mg.lv[s->mg.nlevels - 1].n;
  if (!e) e = hpmg_mg_solver_create(&s->drv, &s->mg, hpmg_qk_host_linop(&s->mg), hpmg_backend_host(), n, kreal, &d);
  if (e) {
    hpmg_solver_destroy(out);
    return e;
  }
  s->st.dofs = n;
  s->st.levels = s->mg.nlevels;
  s->st.bytes_host = need;
  s->st.t_setup = hpmg_wtime() - t0;
  return HPMG_SUCCESS;
}

void hpmg_solver_destroy(hpmg_solver *sp) {
  struct hpmg_solver_s *s = *sp;
  if (!s) return;
  if (s->p1) {
    hpmg_p1_solver_destroy(&s->p1);
    free(s);
    *sp = NULL;
    return;
  }
  if (s->sem) {
    hpmg_sem_solver_destroy(&s->sem);
    free(s);
    *sp = NULL;
    return;
  }
  if (s->fd) {
    hpmg_fd_run_destroy(&s->fd);
    free(s);
    *sp = NULL;
    return;
  }
  if (s->cuda) {
    hpmg_cuda_solver_destroy(&s->cuda);
    free(s);
    *sp = NULL;
    return;
  }
  hpmg_mg_solver_destroy(&s->drv);
  hpmg_mg_destroy(&s->mg);
  hpmg_free(&s->w);
  free(s);
  *sp = NULL;
}

hpmg_error hpmg_solver_solve_device(hpmg_solver s, const double *b, double *x) {
  HPMG_CHECK_ARG(s && x, "solve: solver and solution must be non-NULL");
  HPMG_CHECK_ARG(!s->fd && !s->p1 && !s->sem, "hpmg_solver_solve_device solves Q_k problems only (use hpmg_solver_solve)");
  HPMG_CHECK_ARG(s->cuda, "hpmg_solver_solve_device needs a solver created with device = HPMG_DEVICE_CUDA");
  return hpmg_cuda_solver_solve(s->cuda, b, x, 1);
}

hpmg_error hpmg_solver_solve(hpmg_solver s, const double *b, double *x) {
  HPMG_CHECK_ARG(s && x, "solve: solver and solution must be non-NULL");
  if (s->prob && (s->prob->qkbox || s->prob->fdbox)) s->prob->box_builtin = b == NULL;
  if (s->fd) return hpmg_fd_run_solve(s->fd, b, x);
  if (s->p1) return hpmg_p1_solver_solve(s->p1, b, x);
  if (s->sem) return hpmg_sem_solver_solve(s->sem, b, x);
  if (s->cuda) return hpmg_cuda_solver_solve(s->cuda, b, x, 0);
  const int64_t n = s->drv.n;
  double *bb = NULL;
  if (s->prob->qkbox) { /* the boundary data join b (docs/bc.md) */
    HPMG_CALL(hpmg_malloc(sizeof(double) * (size_t)n, &bb));
    double c = 0;
    hpmg_error e = qk_box_solve_rhs(&s->prob->o, &s->prob->box, &s->prob->g, b, s->singular ? s->w : NULL, s->sumw,
                                    bb, &c);
    if (!e && hpmg_vec_count_nonfinite(HPMG_REAL_DOUBLE, n, x))
      e = hpmg_error_set(HPMG_ERR_NUMERIC, "%lld non-finite entries (NaN/Inf) in the initial guess",
                         (long long)hpmg_vec_count_nonfinite(HPMG_REAL_DOUBLE, n, x));
    if (!e && s->drv.o.solver == HPMG_SOLVER_FMG) {
      const hpmg_grid *g[QK_BOX_MAX_LEVELS];
      for (int l = 0; l < s->mg.nlevels; l++) g[l] = &hpmg_qk_host_operator(&s->mg, l)->g;
      e = qk_box_fmg_shifts(&s->prob->o, &s->prob->box, b == NULL, g, &s->mg, &s->fmg_shift_builtin, &s->st.t_setup);
    }
    if (!e) {
      hpmg_vec vb = hpmg_vec_wrap(hpmg_backend_host(), HPMG_REAL_DOUBLE, n, bb);
      hpmg_vec vx = hpmg_vec_wrap(hpmg_backend_host(), HPMG_REAL_DOUBLE, n, x);
      e = hpmg_mg_solver_solve(&s->drv, &vb, &vx, &s->st);
      if (s->singular && (e == HPMG_SUCCESS || e == HPMG_ERR_NOT_CONVERGED)) { /* mean zero: sum m x = 0 */
        double mx = 0;
        for (int64_t i = 0; i < n; i++) mx += s->w[i] * x[i];
        for (int64_t i = 0; i < n; i++) x[i] -= mx / s->sumw;
        s->st.compat_defect = c;
      }
    }
    hpmg_free(&bb);
    return e;
  }
  if (!b) {
    HPMG_CALL(hpmg_malloc(sizeof(double) * (size_t)n, &bb));
    hpmg_error e = hpmg_problem_builtin_rhs(s->prob, bb);
    if (e) {
      hpmg_free(&bb);
      return e;
    }
    b = bb;
  }
  int64_t bad_b = hpmg_vec_count_nonfinite(HPMG_REAL_DOUBLE, n, b), bad_x = hpmg_vec_count_nonfinite(HPMG_REAL_DOUBLE, n, x);
  if (bad_b || bad_x) {
    hpmg_free(&bb);
    return hpmg_error_set(HPMG_ERR_NUMERIC, "%lld non-finite entries (NaN/Inf) in the %s", (long long)(bad_b ? bad_b : bad_x),
                          bad_b ? "right-hand side" : "initial guess");
  }
  hpmg_vec vb = hpmg_vec_wrap(hpmg_backend_host(), HPMG_REAL_DOUBLE, n, (void *)b);
  hpmg_vec vx = hpmg_vec_wrap(hpmg_backend_host(), HPMG_REAL_DOUBLE, n, x);
  hpmg_error e = hpmg_mg_solver_solve(&s->drv, &vb, &vx, &s->st);
  hpmg_free(&bb);
  return e;
}

void hpmg_solver_get_stats(hpmg_solver s, hpmg_stats *st) {
  if (s->fd) hpmg_fd_run_get_stats(s->fd, st);
  else if (s->p1) hpmg_p1_solver_get_stats(s->p1, st);
  else if (s->sem) hpmg_sem_solver_get_stats(s->sem, st);
  else if (s->cuda) {
    hpmg_cuda_solver_get_stats(s->cuda, st);
    st->bytes_host = 0;
    st->bytes_device = s->st.bytes_device;
  } else *st = s->st;
}

/* Residual history of the last solve (internal, for the CLI's JSON). */
int hpmg_solver_history(hpmg_solver s, const double **h) {
  if (s->fd) return hpmg_fd_run_history(s->fd, h);
  if (s->p1) return hpmg_p1_solver_history(s->p1, h);
  if (s->sem) return hpmg_sem_solver_history(s->sem, h);
  if (s->cuda) return hpmg_cuda_solver_history(s->cuda, h);
  *h = s->drv.hist;
  return s->drv.nhist;
}

/* Switch the per-iteration lines on or off for the next solves (internal, for
 * the command line's --repeat; the CPU and FD solvers). */
void hpmg_solver_set_verbose(hpmg_solver s, int verbose) {
  s->o.verbose = verbose;
  s->drv.o.verbose = verbose;
  if (s->fd) hpmg_fd_run_set_verbose(s->fd, verbose);
  if (s->p1) hpmg_p1_solver_set_verbose(s->p1, verbose);
  if (s->sem) hpmg_sem_solver_set_verbose(s->sem, verbose);
}
