/* Q_k on general boxes on the GPU (docs/bc.md, "Q_k on the GPU") against
 * the CPU.
 *   kernels: the level operator of box grids (Dirichlet, Neumann and
 *     periodic ends, stretched cells, 2D and 3D, k = 1..4) in every fused
 *     mode, the periodic wrap pass included, and the inverse diagonal, in
 *     double (relative 2-norm error <= 1e-12) and float (<= 1e-5), outputs
 *     poisoned with NaN first; the transfers between the semi-coarsened
 *     levels (identity factors skipped) against hpmg_kron3_apply.
 *   solve: whole solves through the C API (device cpu and cuda, the same
 *     options, smoother Chebyshev): the channel (periodic x, z, Neumann y,
 *     tanh y), mixed D/N/P faces, pure Neumann, fully periodic and
 *     inhomogeneous Dirichlet boxes, 2D and 3D, k = 1..4, CG in double to
 *     1e-12 on two grids: the GPU's L2 errors equal the CPU's (1e-4
 *     relative + 10 tol absolute), its observed order log2(e1/e2) is within 0.3 of k+1 (the
 *     grids of test_qk_box's order cases), its iterations within 1 of the
 *     CPU's; then FMG, GMRES, the V-cycle iteration, Jacobi, mixed and float
 *     precision, a singular f = 1 (the compatibility defect), Dirichlet
 *     face constants, a coarsest level solved by CG, device pointers (the
 *     same solution as host arrays to rounding), and the unit box with uniform Dirichlet
 *     cells against the default mesh path.
 *   patch-sweep: the GPU vertex-patch smoother on box levels (qk_patch.cu,
 *     BOX) against the CPU's general-box path (patch.c) in its order
 *     (--patch-batch all: each color over the whole level, the same colors
 *     in the same sequence), on every level of channel-like hierarchies
 *     (periodic x with an odd cell count, Neumann y tanh-stretched, periodic
 *     or Dirichlet z; Neumann and Dirichlet ends in x with geometric
 *     stretching; 2D and 3D, k = 2, 3, 4; lambda 0 and > 0): one pre step
 *     (colors forward), one post step (backward) and two steps from x = 0
 *     (x poisoned with NaN), every kernel variant and the additive mode, on
 *     random b and x. Tolerance: relative 2-norm 1e-12 in double, 1e-4 in
 *     float. Both devices do the same operations on the same factors
 *     (hpmg_patch_box: one setup), in another order of summation (the
 *     sum-factorized contractions, FMA contraction), so they differ by
 *     rounding amplified by the local solves' conditioning, which the flat
 *     cells raise (float: 1e-4 leaves room for that; a wrong factor, map or
 *     color gives O(1));
 *   patch-cg: whole CG solves with --smoother patch: the GPU's iterations
 *     within 1 of the CPU's and the same L2 error (as "solve" checks);
 *   patch-fmg: the same with FMG.
 * Usage: test_cuda_box [kernels|solve|patch-sweep|patch-cg|patch-fmg] [cpu].
 * "cpu" runs the solve cases on the CPU only (their orders), without a GPU.
 * Exits 77 (skipped) without a CUDA build or a GPU. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cuda_check.h"
#include "grid/box.h"
#include "grid/grid.h"
#include "disc/qk/laplace.h"
#include "disc/qk/patch.h"
#include "disc/qk/qk_host.h"
#include "disc/qk/transfer.h"

static int failures = 0, checks = 0;
static int cpu_only = 0; /* "cpu": the CPU side of the cases only (no GPU needed) */
static const hpmg_bc_kind D = HPMG_BC_DIRICHLET, N = HPMG_BC_NEUMANN, P = HPMG_BC_PERIODIC;

#define CHECK(cond, ...)                                                                                             \
  do {                                                                                                               \
    checks++;                                                                                                        \
    if (!(cond)) {                                                                                                   \
      failures++;                                                                                                    \
      printf("FAIL ");                                                                                               \
      printf(__VA_ARGS__);                                                                                           \
      printf("\n");                                                                                                  \
    }                                                                                                                \
  } while (0)

/* stretch: 0 uniform, 1 tanh in y (the channel's), 2 tanh in every direction, 3 geometric in x and tanh in y */
static void box_options(hpmg_problem_options *po, int dim, int k, const int cells[3], const hpmg_bc_kind bc[6],
                        int stretch, double lambda) {
  hpmg_problem_options_default(po);
  po->dim = dim;
  po->degree = k;
  po->lambda = lambda;
  const double box[3] = {1.0, 2.0, 0.75};
  for (int d = 0; d < 3; d++) po->box[d] = box[d], po->cells[d] = d < dim ? cells[d] : 0;
  for (int f = 0; f < 2 * dim; f++) po->bc[f].kind = bc[f];
  if (stretch == 1) po->spacing[1].kind = HPMG_SPACING_TANH, po->spacing[1].param = dim == 2 ? 1.5 : 0.8;
  for (int d = 0; d < dim && stretch >= 2; d++) {
    po->spacing[d].kind = HPMG_SPACING_TANH;
    po->spacing[d].param = dim == 2 ? 1.5 : 0.8;
  }
  if (stretch == 3) {
    po->spacing[0].kind = HPMG_SPACING_GEOMETRIC;
    po->spacing[0].param = pow(dim == 2 ? 8.0 : 2.0, 1.0 / cells[0]); /* the same total stretch on every grid */
    if (dim == 3) po->spacing[2].kind = HPMG_SPACING_UNIFORM;
  }
}

/* 1 (the mode is skipped: exit 77) where its cases need a GPU and none is
 * there, with the reason; 0 with a GPU or in the "cpu" mode */
static int gpu_missing(void) {
  if (cpu_only || !hpmg_cuda_check()) return 0;
  printf("test_cuda_box: %s: skipped\n", hpmg_last_error());
  return 1;
}

#ifndef HPMG_HAVE_CUDA
static int run_kernels(void) {
  printf("test_cuda_box: this build has no CUDA backend: skipped\n");
  return 77;
}
static int run_patch_sweep(void) { return run_kernels(); }
#else
/* ------------------------------------------------------------- kernels */

static double worst[2] = {0, 0};
static void check_err(const char *what, const char *label, hpmg_real r, double err) {
  const double tol = r == HPMG_REAL_DOUBLE ? 1e-12 : 1e-5;
  if (err > worst[r]) worst[r] = err;
  CHECK(err <= tol, "%-22s %s %s: relative error %.3e > %.0e", what, label, r == HPMG_REAL_DOUBLE ? "double" : "float",
        err, tol);
}

/* cuda_check_operator's report: ctx = the case's label */
static void report(const char *what, hpmg_real r, double err, void *ctx) { check_err(what, ctx, r, err); }

/* the operator of one box grid in every mode, and the inverse diagonal */
static void check_operator(const hpmg_grid *g, double lambda, const char *label) {
  hpmg_laplace op;
  hpmg_cuda_op dop;
  CK(hpmg_laplace_create(g, lambda, &op));
  CK(hpmg_cuda_op_create(&op, &dop));
  for (int ri = 0; ri < 2; ri++) {
    const hpmg_real r = ri ? HPMG_REAL_FLOAT : HPMG_REAL_DOUBLE;
    cuda_op_bufs B;
    cuda_op_bufs_create(r, g->N, &B);
    cuda_check_operator(&op, dop, r, g->N, &B, report, (void *)label);
    cuda_op_bufs_destroy(&B);
  }
  hpmg_cuda_op_destroy(&dop);
  hpmg_laplace_destroy(&op);
}

/* one transfer pair (P from coarse to fine, R back) in both precisions, add 0 and 1 */
static void check_transfer(const hpmg_grid *gc, const hpmg_grid *gf, const char *label) {
  hpmg_kron3 T[2];
  memset(T, 0, sizeof T);
  CK(hpmg_transfer_create_grids(gc, gf, &T[0], &T[1]));
  for (int t = 0; t < 2; t++) {
    hpmg_cuda_kron3 dT;
    CK(hpmg_cuda_kron3_create(&T[t], &dT));
    const int64_t nin = t ? gf->N : gc->N, nout = t ? gc->N : gf->N;
    for (int ri = 0; ri < 2; ri++) {
      const hpmg_real r = ri ? HPMG_REAL_FLOAT : HPMG_REAL_DOUBLE;
      const size_t rs = hpmg_real_size(r);
      void *hin = malloc((size_t)nin * rs), *hout = malloc((size_t)nout * rs), *gout = malloc((size_t)nout * rs);
      void *din, *dout;
      CK(hpmg_cuda_malloc((size_t)nin * rs, &din));
      CK(hpmg_cuda_malloc((size_t)nout * rs, &dout));
      fill(r, nin, hin);
      CK(hpmg_cuda_upload(din, hin, (size_t)nin * rs));
      for (int add = 0; add < 2; add++) {
        fill(r, nout, hout);
        if (add) CK(hpmg_cuda_upload(dout, hout, (size_t)nout * rs));
        else poison(dout, (size_t)nout * rs);
        hpmg_kron3_apply(&T[t], r, hin, hout, add);
        CK(hpmg_cuda_kron3_apply(dT, r, din, dout, add, NULL));
        CK(hpmg_cuda_download(gout, dout, (size_t)nout * rs));
        char what[64];
        snprintf(what, sizeof what, "%s%s", t ? "restriction" : "prolongation", add ? " (add)" : "");
        check_err(what, label, r, relerr(r, nout, gout, hout));
      }
      free(hin), free(hout), free(gout);
      hpmg_cuda_free(din), hpmg_cuda_free(dout);
    }
    hpmg_cuda_kron3_destroy(&dT);
  }
  hpmg_kron3_destroy(&T[0]);
  hpmg_kron3_destroy(&T[1]);
}

/* a box's hierarchy (finest first), as the solvers build it */
typedef struct {
  hpmg_box b;
  hpmg_qk_box_levels L;
  hpmg_grid *g; /* L.g */
  int nl;
} hierarchy;

static void hierarchy_create(int dim, int k, const int cells[3], const hpmg_bc_kind bc[6], int stretch, double lambda,
                             hierarchy *h) {
  hpmg_problem_options po;
  box_options(&po, dim, k, cells, bc, stretch, lambda);
  memset(h, 0, sizeof *h);
  CK(hpmg_box_init(&po, &h->b));
  hpmg_grid fine;
  CK(hpmg_grid_init_box(&h->b, k, &fine));
  CK(hpmg_qk_box_levels_build(&fine, &h->L));
  h->g = h->L.g;
  h->nl = h->L.nl;
}

static void hierarchy_destroy(hierarchy *h) {
  hpmg_qk_box_levels_free(&h->L);
  hpmg_box_destroy(&h->b);
}

static void level_label(char *label, size_t len, const hpmg_grid *g, const hpmg_bc_kind bc[6], int stretch,
                        double lambda) {
  snprintf(label, len, "%dD k=%d cells %lldx%lldx%lld bc %d%d%d%d%d%d stretch %d lambda %g", g->dim, g->k,
           (long long)g->cells[0], (long long)g->cells[1], (long long)g->cells[2], bc[0], bc[1], bc[2], bc[3], bc[4],
           bc[5], stretch, lambda);
}

/* the operator on every level of a box's hierarchy, the transfers between them */
static void check_box(int dim, int k, const int cells[3], const hpmg_bc_kind bc[6], int stretch, double lambda) {
  hierarchy h;
  hierarchy_create(dim, k, cells, bc, stretch, lambda, &h);
  for (int j = 0; j < h.nl; j++) {
    char label[160];
    level_label(label, sizeof label, &h.g[j], bc, stretch, lambda);
    check_operator(&h.g[j], lambda, label);
    if (j > 0) check_transfer(&h.g[j], &h.g[j - 1], label);
  }
  hierarchy_destroy(&h);
}

static int run_kernels(void) {
  if (hpmg_cuda_check()) {
    printf("test_cuda_box: %s: skipped\n", hpmg_last_error());
    return 77;
  }
  const hpmg_bc_kind sets[][6] = {{D, D, D, D, D, D}, {N, N, N, N, N, N}, {P, P, N, N, P, P}, {P, P, P, P, P, P},
                                  {D, N, N, D, P, P}, {N, D, P, P, D, N}, {P, P, D, D, N, N}};
  for (int dim = 2; dim <= 3; dim++)
    for (int k = 1; k <= 4; k++)
      for (int s = 0; s < 7; s++) {
        /* odd, even and prime counts; 3D smaller */
        const int c2[3] = {5 + k, 8, 1}, c3[3] = {4, 3 + k % 2, 6};
        const int *c = dim == 2 ? c2 : c3;
        check_box(dim, k, c, sets[s], s % 4, s == 1 ? 0.0 : 1.5);
      }
  /* a longer periodic box (several z-chunks and blocks along every direction) */
  const int cl[3] = {40, 12, 36};
  check_box(3, 2, cl, sets[3], 1, 0.0);
  check_box(3, 3, cl, sets[2], 3, 0.0);
  printf("test_cuda_box kernels: %d checks, %d failures; worst relative error double %.2e, float %.2e\n", checks,
         failures, worst[0], worst[1]);
  return failures ? 1 : 0;
}

/* ------------------------------------------------- patch smoother sweeps */

static double pworst[2] = {0, 0};
static int pcases = 0;

/* one smoother (variant 0..2: fused, separate, global; 3: additive) in
 * precision r on one level: pre, post and two steps from x = 0, GPU against CPU */
static void patch_case(const hpmg_laplace *op, hpmg_cuda_op dop, hpmg_real r, int variant, const void *b,
                       const void *x0, const char *label) {
  static const char *const vname[] = {"fused", "separate", "global", "additive"};
  const hpmg_patch_mode mode = variant == 3 ? HPMG_PATCH_ADDITIVE : HPMG_PATCH_MULTIPLICATIVE;
  const hpmg_patch_kernel kern = variant == 3 ? HPMG_PATCH_KERNEL_FUSED : (hpmg_patch_kernel)variant;
  const int64_t n = op->g.N;
  const size_t bytes = (size_t)n * hpmg_real_size(r);
  /* the GPU sweeps each color over the whole level: the CPU in that order */
  hpmg_patch_options po = {.mode = mode, .local = HPMG_LOCAL_FDM, .damping = 0,
                           .batch = mode == HPMG_PATCH_MULTIPLICATIVE ? -1 : 0};
  hpmg_smoother *s;
  CK(hpmg_smoother_patch(op, r, &po, &s));
  static const char *const what[] = {"pre", "post", "zero x2"};
  if (cpu_only) { /* the cases themselves: every step changes x */
    void *xc = malloc(bytes);
    for (int c = 0; c < 3; c++) {
      memcpy(xc, x0, bytes);
      CK(s->apply(s, b, xc, c == 2, c == 1, c == 2 ? 2 : 1));
      const double change = relerr(r, n, xc, x0);
      CHECK(change > 1e-3 && isfinite(change), "patch %-8s %-7s %s %s (cpu): relative change of x %.3e",
            vname[variant], what[c], r == HPMG_REAL_DOUBLE ? "double" : "float", label, change);
    }
    free(xc);
    pcases++;
    hpmg_smoother_destroy(&s);
    return;
  }
  hpmg_cuda_patch p;
  CK(hpmg_cuda_patch_create(op, dop, mode, HPMG_LOCAL_FDM, 0.0, kern, &p));
  void *db, *dx, *dw, *xc = malloc(bytes), *xg = malloc(bytes);
  CK(hpmg_cuda_malloc(bytes, &db));
  CK(hpmg_cuda_malloc(bytes, &dx));
  CK(hpmg_cuda_malloc(bytes, &dw));
  CK(hpmg_cuda_upload(db, b, bytes));
  const double tol = r == HPMG_REAL_DOUBLE ? 1e-12 : 1e-4;
  for (int c = 0; c < 3; c++) {
    const int post = c == 1, zero = c == 2, sweeps = zero ? 2 : 1;
    memcpy(xc, x0, bytes);
    CK(s->apply(s, b, xc, zero, post, sweeps));
    if (zero) poison(dx, bytes);
    else CK(hpmg_cuda_upload(dx, x0, bytes));
    poison(dw, bytes); /* a variant that reads an entry it did not write fails */
    CK(hpmg_cuda_patch_apply(p, r, db, dx, hpmg_cuda_patch_needs_work(p) ? dw : NULL, zero, post, sweeps));
    CK(hpmg_cuda_download(xg, dx, bytes));
    const double err = relerr(r, n, xg, xc), change = zero ? 1.0 : relerr(r, n, xc, x0);
    if (err > pworst[r]) pworst[r] = err;
    /* the step must have changed x (a no-op GPU step would match a no-op CPU step) */
    CHECK(err <= tol && change > 1e-3, "patch %-8s %-7s %s %s: relative error %.3e (tol %.0e), relative change of x %.3e",
          vname[variant], what[c], r == HPMG_REAL_DOUBLE ? "double" : "float", label, err, tol, change);
  }
  pcases++;
  hpmg_cuda_free(db);
  hpmg_cuda_free(dx);
  hpmg_cuda_free(dw);
  free(xc);
  free(xg);
  hpmg_cuda_patch_destroy(&p);
  hpmg_smoother_destroy(&s);
}

/* every level of a box's hierarchy: each variant, both precisions */
static void patch_box(int dim, int k, const int cells[3], const hpmg_bc_kind bc[6], int stretch, double lambda) {
  hierarchy h;
  hierarchy_create(dim, k, cells, bc, stretch, lambda, &h);
  for (int j = 0; j < h.nl; j++) {
    const hpmg_grid *g = &h.g[j];
    int patches = 1; /* a single cell between Dirichlet ends has no patch vertex: nothing to compare */
    for (int d = 0; d < dim; d++) patches &= !(g->cells[d] == 1 && bc[2 * d] == D && bc[2 * d + 1] == D);
    if (!patches) continue;
    char label[160];
    level_label(label, sizeof label, g, bc, stretch, lambda);
    hpmg_laplace op;
    hpmg_cuda_op dop = NULL;
    CK(hpmg_laplace_create(g, lambda, &op));
    if (!cpu_only) CK(hpmg_cuda_op_create(&op, &dop));
    for (int ri = 0; ri < 2; ri++) {
      const hpmg_real r = ri ? HPMG_REAL_FLOAT : HPMG_REAL_DOUBLE;
      const size_t bytes = (size_t)g->N * hpmg_real_size(r);
      void *b = malloc(bytes), *x0 = malloc(bytes);
      fill(r, g->N, b);
      fill(r, g->N, x0);
      for (int v = 0; v < 4; v++) patch_case(&op, dop, r, v, b, x0, label);
      free(b);
      free(x0);
    }
    if (dop) hpmg_cuda_op_destroy(&dop);
    hpmg_laplace_destroy(&op);
  }
  printf("patch sweeps %dD k=%d bc %d%d%d%d%d%d stretch %d: %d levels done (%d checks, %d failures)\n", dim, k, bc[0],
         bc[1], bc[2], bc[3], bc[4], bc[5], stretch, h.nl, checks, failures);
  fflush(stdout);
  hierarchy_destroy(&h);
}

static int run_patch_sweep(void) {
  if (gpu_missing()) return 77;
  /* the channel: periodic x (odd count: a third color), Neumann y (half
   * patches) tanh-stretched, periodic or Dirichlet z; then Neumann / Dirichlet
   * x ends with geometric x and tanh y, periodic y of odd count */
  const hpmg_bc_kind ch3[6] = {P, P, N, N, P, P}, chd3[6] = {P, P, N, N, D, D}, ch2[6] = {P, P, N, N, D, D},
                     nd3[6] = {N, D, P, P, N, N}, nd2[6] = {N, D, P, P, D, D};
  for (int k = 2; k <= 4; k++) {
    const int c2[3] = {7, 6, 1}, c2b[3] = {6, 5, 1}, c3[3] = {5, 4, 4}, c3b[3] = {3, 5, 4}, c3c[3] = {4, 5, 3};
    patch_box(2, k, c2, ch2, 1, 0.0);
    patch_box(2, k, c2b, nd2, 3, 1.5);
    patch_box(3, k, c3, ch3, 1, 0.0);
    patch_box(3, k, c3b, chd3, 1, 1.5);
    patch_box(3, k, c3c, nd3, 3, 0.0);
  }
  printf("test_cuda_box patch-sweep: %d checks (%d smoother cases), %d failures; worst relative error double %.2e, "
         "float %.2e\n",
         checks, pcases, failures, pworst[0], pworst[1]);
  return failures ? 1 : 0;
}
#endif

/* --------------------------------------------------------------- solves */

typedef struct {
  double l2, mx, compat;
  int iters, converged;
  hpmg_error err;
  double *x; /* the solution (freed by the caller) */
} result;

static result solve_po(const hpmg_problem_options *po, hpmg_solver_kind solver, hpmg_smoother_kind sm,
                       hpmg_precision prec, double tol, hpmg_device dev, int device_ptrs) {
  result r = {NAN, NAN, NAN, 0, 0, HPMG_SUCCESS, NULL};
  hpmg_problem p;
  if ((r.err = hpmg_problem_create(po, &p))) return r;
  hpmg_solver_options so;
  hpmg_solver_options_default(&so);
  so.solver = solver;
  so.smoother = sm;
  if (sm == HPMG_SMOOTHER_PATCH) so.patch_batch = -1; /* the GPU's order (each color over the level) on the CPU */
  so.precision = prec;
  so.tol = tol;
  so.maxit = 300;
  so.device = dev;
  hpmg_solver s;
  if ((r.err = hpmg_solver_create(p, &so, &s))) {
    hpmg_problem_destroy(&p);
    return r;
  }
  const int64_t n = hpmg_problem_num_dofs(p);
  r.x = calloc((size_t)n, sizeof(double));
#ifdef HPMG_HAVE_CUDA
  if (device_ptrs) { /* b = NULL, x on the device */
    double *dx = NULL;
    r.err = hpmg_cuda_malloc(sizeof(double) * (size_t)n, (void **)&dx);
    if (!r.err) r.err = hpmg_cuda_upload(dx, r.x, sizeof(double) * (size_t)n);
    if (!r.err) r.err = hpmg_solver_solve_device(s, NULL, dx);
    if (!r.err) r.err = hpmg_cuda_download(r.x, dx, sizeof(double) * (size_t)n);
    hpmg_cuda_free(dx);
  } else
#endif
    r.err = hpmg_solver_solve(s, NULL, r.x);
  (void)device_ptrs;
  hpmg_stats st;
  hpmg_solver_get_stats(s, &st);
  r.iters = st.iterations;
  r.converged = st.converged;
  r.compat = st.compat_defect;
  if (!r.err && po->rhs != HPMG_RHS_ONE) hpmg_problem_error(p, r.x, &r.l2, &r.mx); /* sine, waves */
  hpmg_solver_destroy(&s);
  hpmg_problem_destroy(&p);
  return r;
}

static const char *const solver_name[] = {"auto", "cg", "vcycle", "gmres", "fmg"};

static int solver_index(hpmg_solver_kind s) {
  return s == HPMG_SOLVER_CG ? 1 : s == HPMG_SOLVER_VCYCLE ? 2 : s == HPMG_SOLVER_GMRES ? 3 : 4;
}

/* the GPU against the CPU on one problem; returns the GPU's L2 error (the CPU's with cpu_only) */
static double compare(const char *name, const hpmg_problem_options *po, hpmg_solver_kind solver, hpmg_smoother_kind sm,
                      hpmg_precision prec, double tol) {
  const result c = solve_po(po, solver, sm, prec, tol, HPMG_DEVICE_CPU, 0);
  CHECK(!c.err && c.converged, "%s: CPU solve (%s)", name, c.err ? hpmg_last_error() : "not converged");
  if (cpu_only) {
    printf("cpu  %-58s %s: %3d iterations, L2 %.6e\n", name, solver_name[solver_index(solver)], c.iters, c.l2);
    free(c.x);
    return c.l2;
  }
  const result g = solve_po(po, solver, sm, prec, tol, HPMG_DEVICE_CUDA, 0);
  CHECK(!g.err && g.converged, "%s: GPU solve (%s)", name, g.err ? hpmg_last_error() : "not converged");
  /* float: the outer iteration runs in float, whose sums round differently on the two devices */
  const int dit = g.iters - c.iters, itmax = prec == HPMG_PREC_FLOAT ? 2 : 1;
  /* the same discretization error; the algebraic errors left at the tolerance differ (another
   * rounding, an iteration more or less): within 10 tol absolute (|u| ~ 1) */
  int l2ok = fabs(g.l2 - c.l2) <= 1e-4 * c.l2 + 10 * tol;
  if (prec == HPMG_PREC_FLOAT) l2ok = fabs(g.l2 - c.l2) <= 0.1 * c.l2 || fabs(g.l2 - c.l2) < 1e-6;
  if (po->rhs == HPMG_RHS_ONE) { /* no exact solution: the solutions themselves */
    double dmax = 0, xmax = 0;
    hpmg_problem p;
    int64_t nd = 0;
    if (!hpmg_problem_create(po, &p)) nd = hpmg_problem_num_dofs(p), hpmg_problem_destroy(&p);
    for (int64_t i = 0; i < nd && c.x && g.x; i++) dmax = fmax(dmax, fabs(g.x[i] - c.x[i])), xmax = fmax(xmax, fabs(c.x[i]));
    l2ok = dmax <= (prec == HPMG_PREC_FLOAT ? 1e-3 : 1e-6) * xmax;
    CHECK(l2ok, "%s: max |x_gpu - x_cpu| %.3e against max |x| %.3e", name, dmax, xmax);
    CHECK(fabs(g.compat - c.compat) <= 1e-12 * fmax(1.0, fabs(c.compat)), "%s: compatibility defect gpu %.17g cpu %.17g",
          name, g.compat, c.compat);
  }
  const int ok = !c.err && !g.err && g.converged && abs(dit) <= itmax && l2ok;
  printf("%s %-58s %s %s: iterations cpu %3d gpu %3d, L2 cpu %.6e gpu %.6e\n", ok ? "ok  " : "FAIL", name,
         solver_name[solver_index(solver)],
         prec == HPMG_PREC_DOUBLE ? "double" : prec == HPMG_PREC_MIXED ? "mixed " : "float ", c.iters, g.iters, c.l2,
         g.l2);
  CHECK(abs(dit) <= itmax, "%s: iterations gpu %d cpu %d", name, g.iters, c.iters);
  CHECK(l2ok, "%s: L2 gpu %.6e cpu %.6e", name, g.l2, c.l2);
  free(c.x);
  free(g.x);
  return g.l2;
}

typedef struct {
  const char *name;
  hpmg_bc_kind bc[6];
  int stretch;
} bcset;
static const bcset sets2d[] = {{"channel", {P, P, N, N, D, D}, 1},  {"mixed", {D, N, N, D, D, D}, 3},
                               {"neumann", {N, N, N, N, D, D}, 2},  {"periodic", {P, P, P, P, D, D}, 0},
                               {"dirichlet", {D, D, D, D, D, D}, 2}, {"per-dir", {P, P, D, N, D, D}, 0}};
static const bcset sets3d[] = {{"channel", {P, P, N, N, P, P}, 1},   {"mixed", {D, N, N, D, P, P}, 3},
                               {"neumann", {N, N, N, N, N, N}, 2},   {"periodic", {P, P, P, P, P, P}, 0},
                               {"dirichlet", {D, D, D, D, D, D}, 2}};

/* CG in double to 1e-12 on cells and 2 cells: GPU = CPU, order within 0.3 of k+1 */
static void run_order(int dim) {
  const bcset *sets = dim == 2 ? sets2d : sets3d;
  const int nsets = dim == 2 ? 6 : 5;
  for (int k = 1; k <= 4; k++)
    for (int si = 0; si < nsets; si++) {
      const int st = sets[si].stretch;
      int c[3];
      /* test_qk_box's order grids: stretched grids reach the asymptotic range later */
      if (dim == 2) c[0] = st ? (k == 1 ? 16 : k == 2 ? 12 : 16) : (k == 1 ? 8 : k == 2 ? 6 : 4), c[1] = c[0] + 2, c[2] = 1;
      else c[0] = st ? (k == 1 ? 6 : 4) : (k == 1 ? 6 : k == 2 ? 4 : 2), c[1] = c[0] + 2, c[2] = c[0];
      double e[2];
      for (int l = 0; l < 2; l++) {
        const int cl[3] = {c[0] << l, c[1] << l, c[2] << l};
        hpmg_problem_options po;
        box_options(&po, dim, k, cl, sets[si].bc, st, dim == 3 ? 1.5 : 0.0);
        char name[128];
        snprintf(name, sizeof name, "%dD %-9s k=%d cells %dx%dx%d stretch %d", dim, sets[si].name, k, cl[0], cl[1],
                 dim == 3 ? cl[2] : 1, st);
        e[l] = compare(name, &po, HPMG_SOLVER_CG, HPMG_SMOOTHER_CHEBYSHEV, HPMG_PREC_DOUBLE, 1e-12);
      }
      const double rate = log2(e[0] / e[1]);
      printf("     %dD %-9s k=%d: order %.3f\n", dim, sets[si].name, k, rate);
      CHECK(fabs(rate - (k + 1)) <= 0.3, "%dD %s k=%d: order %.3f, expected %d", dim, sets[si].name, k, rate, k + 1);
    }
}

static double one_fn(const double x[3], void *u) {
  (void)x, (void)u;
  return 1.0;
}

static void run_variants(void) {
  const hpmg_smoother_kind C = HPMG_SMOOTHER_CHEBYSHEV, J = HPMG_SMOOTHER_JACOBI;
  const hpmg_precision Dp = HPMG_PREC_DOUBLE, M = HPMG_PREC_MIXED, F = HPMG_PREC_FLOAT;
  const hpmg_solver_kind CG = HPMG_SOLVER_CG, VC = HPMG_SOLVER_VCYCLE, GM = HPMG_SOLVER_GMRES, FM = HPMG_SOLVER_FMG;
  hpmg_problem_options po;
  /* the 3D channel, Q3, tanh y: every solver and precision */
  const int c3[3] = {4, 6, 4};
  box_options(&po, 3, 3, c3, sets3d[0].bc, 1, 0.0);
  compare("3D channel k=3 4x6x4 tanh y", &po, FM, C, Dp, 1e-9);
  compare("3D channel k=3 4x6x4 tanh y", &po, GM, C, Dp, 1e-9);
  compare("3D channel k=3 4x6x4 tanh y", &po, VC, C, Dp, 1e-9);
  compare("3D channel k=3 4x6x4 tanh y", &po, CG, J, Dp, 1e-9);
  compare("3D channel k=3 4x6x4 tanh y", &po, CG, C, M, 1e-9);
  compare("3D channel k=3 4x6x4 tanh y", &po, FM, C, M, 1e-9);
  compare("3D channel k=3 4x6x4 tanh y", &po, GM, C, M, 1e-9);
  compare("3D channel k=3 4x6x4 tanh y", &po, CG, C, F, 1e-3);
  compare("3D channel k=3 4x6x4 tanh y", &po, VC, C, F, 1e-3);
  /* 2D: fully periodic k=2, mixed faces k=4, every precision */
  const int c2[3] = {12, 10, 1}, c2b[3] = {6, 7, 1};
  box_options(&po, 2, 2, c2, sets2d[3].bc, 0, 0.0);
  compare("2D periodic k=2 12x10", &po, FM, C, M, 1e-9);
  compare("2D periodic k=2 12x10", &po, CG, C, F, 1e-3);
  compare("2D periodic k=2 12x10", &po, GM, J, Dp, 1e-9);
  box_options(&po, 2, 4, c2b, sets2d[1].bc, 3, 1.0);
  compare("2D mixed k=4 6x7 geometric x tanh y", &po, FM, C, Dp, 1e-9);
  compare("2D mixed k=4 6x7 geometric x tanh y", &po, CG, C, M, 1e-9);
  /* paper 001's waves on (0, 2 pi)^3: inhomogeneous Dirichlet data from the solution on every face */
  box_options(&po, 3, 3, (const int[3]){6, 5, 4}, sets3d[0].bc, 0, 0.0);
  po.rhs = HPMG_RHS_WAVES;
  for (int d = 0; d < 3; d++) po.box[d] = 2 * M_PI, po.bc[2 * d].kind = po.bc[2 * d + 1].kind = HPMG_BC_DIRICHLET;
  compare("3D waves k=3 6x5x4 (paper 001 eq. 27)", &po, FM, C, Dp, 1e-10);
  /* singular with f = 1: the compatibility defect (1 with zero fluxes) and the zero-mean solution */
  box_options(&po, 3, 2, c3, sets3d[2].bc, 2, 0.0);
  po.rhs = HPMG_RHS_ONE;
  compare("3D neumann k=2 f=1 (projected)", &po, CG, C, Dp, 1e-10);
  compare("3D neumann k=2 f=1 (projected)", &po, FM, C, M, 1e-10);
  /* inhomogeneous Dirichlet face constants and Neumann fluxes (f = 1) */
  box_options(&po, 3, 2, c3, sets3d[1].bc, 3, 0.5);
  po.rhs = HPMG_RHS_ONE;
  po.bc[0].value = 2.5;
  po.bc[3].value = -1.0;
  po.bc[1].value = 0.75;
  compare("3D mixed k=2 face constants", &po, CG, C, Dp, 1e-10);
  box_options(&po, 2, 3, c2b, sets2d[4].bc, 0, 0.0);
  po.rhs = HPMG_RHS_ONE;
  po.bc[2].fn = one_fn;
  po.bc[1].value = -3.0;
  compare("2D dirichlet k=3 face data", &po, FM, C, Dp, 1e-10);
  /* a coarsest level of more than 3000 unknowns: CG coarse solve, singular too (periodic
   * directions keep 3 cells: 3x3x3 cells of Q5, 3375 unknowns) */
  const int cper[3] = {6, 12, 6};
  box_options(&po, 3, 5, cper, sets3d[3].bc, 0, 0.0);
  compare("3D periodic k=5 6x12x6 (CG coarse solve, singular)", &po, CG, C, Dp, 1e-10);
  box_options(&po, 3, 5, cper, sets3d[3].bc, 0, 1.5);
  compare("3D periodic k=5 6x12x6 (CG coarse solve)", &po, FM, C, Dp, 1e-10);
  if (cpu_only) return;
#ifdef HPMG_HAVE_CUDA
  /* device pointers: the same solution as host arrays, to rounding (two
   * solver objects; the H200 run at 9e8c6ef differed by 6.7e-16
   * where bits were asserted, cause not traced) */
  box_options(&po, 3, 2, c3, sets3d[0].bc, 1, 0.0);
  result h = solve_po(&po, CG, C, Dp, 1e-9, HPMG_DEVICE_CUDA, 0), d = solve_po(&po, CG, C, Dp, 1e-9, HPMG_DEVICE_CUDA, 1);
  double dmax = 0;
  hpmg_problem p;
  int64_t n = 0;
  if (!hpmg_problem_create(&po, &p)) n = hpmg_problem_num_dofs(p), hpmg_problem_destroy(&p);
  double xmax = 0;
  for (int64_t i = 0; i < n && h.x && d.x; i++) dmax = fmax(dmax, fabs(h.x[i] - d.x[i])), xmax = fmax(xmax, fabs(h.x[i]));
  const int dp_ok = !h.err && !d.err && h.x && d.x && xmax > 0 && dmax <= 1e-13 * xmax;
  CHECK(dp_ok, "device pointers: max difference %.3e to the host call (max |x| %.3e)", dmax, xmax);
  printf("%s 3D channel k=2 device pointers: max difference to the host call %.1e of max |x| %.2e\n",
         dp_ok ? "ok  " : "FAIL", dmax, xmax);
  free(h.x), free(d.x);
  /* the unit box with uniform Dirichlet cells = the default mesh path (f = 1, homogeneous) */
  for (int dim = 2; dim <= 3; dim++) {
    const int k = 3, c = dim == 2 ? 16 : 8, cu[3] = {c, c, c};
    const hpmg_bc_kind dd[6] = {D, D, D, D, D, D};
    hpmg_problem_options pb, pd;
    box_options(&pb, dim, k, cu, dd, 0, 0.0);
    for (int i = 0; i < 3; i++) pb.box[i] = 1.0;
    pb.rhs = HPMG_RHS_ONE;
    hpmg_problem_options_default(&pd);
    pd.dim = dim, pd.degree = k, pd.coarse = 1, pd.refine = dim == 2 ? 4 : 3, pd.rhs = HPMG_RHS_ONE;
    const result rb = solve_po(&pb, CG, C, Dp, 1e-10, HPMG_DEVICE_CUDA, 0), rd = solve_po(&pd, CG, C, Dp, 1e-10, HPMG_DEVICE_CUDA, 0);
    const int64_t nn = (int64_t)pow(k * c - 1, dim);
    double dm = 0, xm = 0;
    for (int64_t i = 0; i < nn && rb.x && rd.x; i++) dm = fmax(dm, fabs(rb.x[i] - rd.x[i])), xm = fmax(xm, fabs(rd.x[i]));
    const int ok = !rb.err && !rd.err && rb.x && rd.x && dm <= 1e-8 * xm && abs(rb.iters - rd.iters) <= 1;
    CHECK(ok, "%dD unit box as a box: iterations %d (default mesh %d), max difference %.3e of %.3e", dim, rb.iters,
          rd.iters, dm, xm);
    printf("%s %dD k=3 unit box with %d^%d Dirichlet cells: box path %d, default mesh %d iterations, max difference "
           "%.2e of max |x| %.2e\n",
           ok ? "ok  " : "FAIL", dim, c, dim, rb.iters, rd.iters, dm, xm);
    free(rb.x), free(rd.x);
  }
#endif
}

/* --smoother patch on the GPU's box levels against the CPU's: CG (iterations
 * within 1, the same L2 error) or FMG */
static int run_patch_solve(int fmg) {
  if (gpu_missing()) return 77;
  const hpmg_smoother_kind PA = HPMG_SMOOTHER_PATCH;
  const hpmg_precision Dp = HPMG_PREC_DOUBLE, M = HPMG_PREC_MIXED;
  const hpmg_solver_kind S = fmg ? HPMG_SOLVER_FMG : HPMG_SOLVER_CG;
  const double tol = 1e-10;
  hpmg_problem_options po;
  char name[128];
  /* the channel: periodic x of odd count, Neumann y tanh, periodic z (3D) */
  const hpmg_bc_kind ch2[6] = {P, P, N, N, D, D}, ch3[6] = {P, P, N, N, P, P}, chd3[6] = {P, P, N, N, D, D};
  for (int k = 2; k <= 4; k++) {
    const int c2[3] = {k == 2 ? 15 : 9, 12, 1}, c3[3] = {k == 2 ? 7 : 5, k == 2 ? 8 : 6, 4};
    box_options(&po, 2, k, c2, ch2, 1, 0.0);
    snprintf(name, sizeof name, "patch 2D channel k=%d %dx%d tanh y", k, c2[0], c2[1]);
    compare(name, &po, S, PA, Dp, tol);
    box_options(&po, 3, k, c3, ch3, 1, 0.0);
    snprintf(name, sizeof name, "patch 3D channel k=%d %dx%dx%d tanh y", k, c3[0], c3[1], c3[2]);
    compare(name, &po, S, PA, Dp, tol);
  }
  /* Dirichlet z, lambda > 0; geometric x with Neumann and Dirichlet ends */
  const int c3b[3] = {5, 6, 4};
  box_options(&po, 3, 3, c3b, chd3, 1, 1.5);
  compare("patch 3D channel, Dirichlet z, k=3 5x6x4 lambda 1.5", &po, S, PA, Dp, tol);
  const hpmg_bc_kind nd3[6] = {N, D, P, P, N, N};
  box_options(&po, 3, 2, c3b, nd3, 3, 0.0);
  compare("patch 3D N/D x geometric, periodic y, k=2 5x6x4", &po, S, PA, Dp, tol);
  /* mixed precision */
  const int c3c[3] = {5, 6, 4};
  box_options(&po, 3, 3, c3c, ch3, 1, 0.0);
  compare("patch 3D channel k=3 5x6x4 tanh y, mixed", &po, S, PA, M, tol);
  printf("test_cuda_box patch-%s: %d checks, %d failures\n", fmg ? "fmg" : "cg", checks, failures);
  return failures ? 1 : 0;
}

static int run_solve(void) {
  if (gpu_missing()) return 77;
  run_order(2);
  run_order(3);
  run_variants();
  printf("test_cuda_box solve: %d checks, %d failures\n", checks, failures);
  return failures ? 1 : 0;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "kernels";
  cpu_only = argc > 2 && !strcmp(argv[2], "cpu");
  if (!strcmp(mode, "kernels")) return run_kernels();
  if (!strcmp(mode, "solve")) return run_solve();
  if (!strcmp(mode, "patch-sweep")) return run_patch_sweep();
  if (!strcmp(mode, "patch-cg")) return run_patch_solve(0);
  if (!strcmp(mode, "patch-fmg")) return run_patch_solve(1);
  printf("usage: test_cuda_box [kernels|solve|patch-sweep|patch-cg|patch-fmg] [cpu]\n");
  return 2;
}
