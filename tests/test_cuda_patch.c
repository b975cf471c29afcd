/* The GPU vertex-patch smoother (src/disc/qk/cuda/qk_patch.cu) against the CPU one
 * (src/disc/qk/patch.c) on random x and b: one pre-smoothing step (colors
 * forward), one post step (colors backward), and two steps from x = 0 (x
 * poisoned with NaN on the GPU, so the zeroing is checked), for every kernel
 * variant (fused, separate, global) and the additive mode, every degree
 * (2D k = 1..10, 3D k = 1..8), double (relative 2-norm error <= 1e-12) and
 * float (<= 1e-5). Meshes of 4-5 cells per direction with odd and even
 * vertex counts, anisotropic boxes, lambda = 0 and > 0, plus meshes with a
 * single patch and with none. The work vector is poisoned with NaN, so a
 * variant that reads an entry it did not write fails. Then whole solves
 * (--smoother patch, CG and V-cycle, double and mixed, every variant) give
 * the CPU's iteration counts and errors.
 * usage: test_cuda_patch [kmax3 [kmax2 [solves [kmin3]]]]  (smaller runs
 * under compute-sanitizer: e.g. `test_cuda_patch 2 3 0`, or one 3D degree
 * with `test_cuda_patch 6 0 0 6`).
 * Exits 77 (skipped) without a CUDA build or without a GPU. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cuda_check.h"
#ifndef HPMG_HAVE_CUDA
int main(void) {
  printf("test_cuda_patch: this build has no CUDA backend: skipped\n");
  return 77;
}
#else
#include "disc/qk/cuda/hpmg_cuda.h"
#include "disc/qk/patch.h"

static size_t rs(hpmg_real r) { return r == HPMG_REAL_DOUBLE ? 8 : 4; }

static int failures = 0, checks = 0;
static double worst[2] = {0, 0};
static const char *kname[] = {"fused", "separate", "global"};



static void check(const char *what, const char *variant, int dim, int k, hpmg_real r, double err, double changed) {
  const double tol = r == HPMG_REAL_DOUBLE ? 1e-12 : 1e-5;
  checks++;
  if (err > worst[r]) worst[r] = err;
  /* the step must also have changed x (a no-op GPU step would match a no-op CPU step) */
  if (!(err <= tol) || !(changed > 1e-3)) {
    failures++;
    printf("FAIL %-10s %-14s dim %d k %2d %s: relative error %.3e (tol %.0e), relative change of x %.3e\n", what,
           variant, dim, k, r == HPMG_REAL_DOUBLE ? "double" : "float ", err, tol, changed);
  }
}

/* one case: step (pre / post / zero), on one level, one precision, one variant */
static void compare(const hpmg_laplace *op, hpmg_cuda_op dop, hpmg_real r, hpmg_patch_mode mode, int variant,
                    const void *b, const void *x0) {
  const hpmg_grid *g = &op->g;
  const int64_t n = g->N;
  const size_t bytes = (size_t)n * rs(r);
  /* the GPU sweeps each color over the whole level: the CPU reference in
   * the same order (--patch-batch all; the CPU default is Z-order batches) */
  hpmg_patch_options po = {.mode = mode, .local = HPMG_LOCAL_FDM, .damping = 0,
                           .batch = mode == HPMG_PATCH_MULTIPLICATIVE ? -1 : 0};
  hpmg_smoother *s;
  CK(hpmg_smoother_patch(op, r, &po, &s));
  hpmg_cuda_patch p;
  CK(hpmg_cuda_patch_create(op, dop, mode, HPMG_LOCAL_FDM, 0.0, (hpmg_patch_kernel)variant, &p));
  void *db, *dx, *dw, *xc = malloc(bytes), *xg = malloc(bytes);
  CK(hpmg_cuda_malloc(bytes, &db));
  CK(hpmg_cuda_malloc(bytes, &dx));
  CK(hpmg_cuda_malloc(bytes, &dw));
  CK(hpmg_cuda_upload(db, b, bytes));
  char vname[32];
  snprintf(vname, sizeof vname, "%s", mode == HPMG_PATCH_ADDITIVE ? "additive" : kname[variant]);
  static const char *what[] = {"pre", "post", "zero x2"};
  for (int c = 0; c < 3; c++) {
    const int post = c == 1, zero = c == 2, sweeps = zero ? 2 : 1;
    memcpy(xc, x0, bytes);
    CK(s->apply(s, b, xc, zero, post, sweeps));
    if (zero) poison(dx, bytes);
    else CK(hpmg_cuda_upload(dx, x0, bytes));
    poison(dw, bytes);
    CK(hpmg_cuda_patch_apply(p, r, db, dx, hpmg_cuda_patch_needs_work(p) ? dw : NULL, zero, post, sweeps));
    CK(hpmg_cuda_download(xg, dx, bytes));
    const double change = zero ? 1.0 : relerr(r, n, xc, x0);
    check(what[c], vname, g->dim, g->k, r, n > 0 ? relerr(r, n, xg, xc) : 0.0, g->cells[0] > 1 ? change : 1.0);
  }
  hpmg_cuda_free(db);
  hpmg_cuda_free(dx);
  hpmg_cuda_free(dw);
  free(xc);
  free(xg);
  hpmg_cuda_patch_destroy(&p);
  hpmg_smoother_destroy(&s);
}

static void test_level(int dim, int k, const int64_t cells[3], const double box[3], double lambda) {
  hpmg_grid g;
  hpmg_laplace op;
  CK(hpmg_grid_init(dim, k, cells, box, &g));
  CK(hpmg_laplace_create(&g, lambda, &op));
  hpmg_cuda_op dop;
  CK(hpmg_cuda_op_create(&op, &dop));
  const int64_t n = g.N;
  for (int ri = 0; ri < 2; ri++) {
    const hpmg_real r = ri ? HPMG_REAL_FLOAT : HPMG_REAL_DOUBLE;
    void *b = malloc((size_t)n * rs(r) + 8), *x0 = malloc((size_t)n * rs(r) + 8);
    for (int64_t i = 0; i < n; i++) {
      set(r, b, i, urand());
      set(r, x0, i, urand());
    }
    for (int v = 0; v < 3; v++) compare(&op, dop, r, HPMG_PATCH_MULTIPLICATIVE, v, b, x0);
    compare(&op, dop, r, HPMG_PATCH_ADDITIVE, 0, b, x0);
    free(b);
    free(x0);
  }
  hpmg_cuda_op_destroy(&dop);
  hpmg_laplace_destroy(&op);
}

/* whole solve: the same iteration count as the CPU, errors to 1e-4 */
static void solve(int dim, int k, int coarse, int refine, hpmg_precision prec, hpmg_solver_kind solver,
                  hpmg_patch_mode mode, hpmg_patch_kernel kern, double lambda) {
  hpmg_problem_options po;
  hpmg_problem_options_default(&po);
  po.dim = dim;
  po.degree = k;
  po.coarse = coarse;
  po.refine = refine;
  po.lambda = lambda;
  po.box[1] = 0.8;
  if (dim == 3) po.box[2] = 1.2;
  hpmg_solver_options so;
  hpmg_solver_options_default(&so);
  so.smoother = HPMG_SMOOTHER_PATCH;
  so.patch_mode = mode;
  so.patch_kernel = kern;
  so.patch_batch = mode == HPMG_PATCH_MULTIPLICATIVE ? -1 : 0; /* the GPU's order on the CPU */
  so.precision = prec;
  so.solver = solver;
  hpmg_problem prob;
  CK(hpmg_problem_create(&po, &prob));
  const int64_t n = hpmg_problem_num_dofs(prob);
  double *xc = calloc((size_t)n, sizeof(double)), *xg = calloc((size_t)n, sizeof(double));
  hpmg_stats sc, sg;
  hpmg_solver cs;
  so.device = HPMG_DEVICE_CPU;
  CK(hpmg_solver_create(prob, &so, &cs));
  hpmg_error ec = hpmg_solver_solve(cs, NULL, xc);
  hpmg_solver_get_stats(cs, &sc);
  hpmg_solver gs;
  so.device = HPMG_DEVICE_CUDA;
  CK(hpmg_solver_create(prob, &so, &gs));
  hpmg_error eg = hpmg_solver_solve(gs, NULL, xg);
  hpmg_solver_get_stats(gs, &sg);
  double l2c, l2g, mc, mg;
  hpmg_problem_error(prob, xc, &l2c, &mc);
  hpmg_problem_error(prob, xg, &l2g, &mg);
  const int l2ok = fabs(l2g - l2c) <= 1e-4 * l2c || (l2c < 1e-12 && l2g < 1.5 * l2c && l2c < 1.5 * l2g);
  const int ok = !ec && !eg && sc.iterations == sg.iterations && l2ok && sg.converged;
  printf("%s solve %dD k=%d refine %d %s %s %s %s: N=%lld iterations cpu %d gpu %d, L2 cpu %.6e gpu %.6e, "
         "gpu solve %.4f s (smoother %.4f s)\n",
         ok ? "ok  " : "FAIL", dim, k, refine, prec == HPMG_PREC_DOUBLE ? "double" : "mixed",
         solver == HPMG_SOLVER_CG ? "cg" : "vcycle", mode == HPMG_PATCH_ADDITIVE ? "additive" : "multiplicative",
         kname[kern], (long long)n, sc.iterations, sg.iterations, l2c, l2g, sg.t_solve, sg.t_smoother);
  if (ec || eg) printf("     %s\n", hpmg_last_error());
  failures += !ok;
  checks++;
  hpmg_solver_destroy(&gs);
  hpmg_solver_destroy(&cs);
  hpmg_problem_destroy(&prob);
  free(xc);
  free(xg);
}

int main(int argc, char **argv) {
  if (hpmg_cuda_check()) {
    printf("test_cuda_patch: %s: skipped\n", hpmg_last_error());
    return 77;
  }
  const int kmax3 = argc > 1 ? atoi(argv[1]) : 8, kmax2 = argc > 2 ? atoi(argv[2]) : 10;
  const int solves = argc > 3 ? atoi(argv[3]) : 1, kmin3 = argc > 4 ? atoi(argv[4]) : 1;
  /* refusals */
  hpmg_error e = hpmg_cuda_patch_check(2, 3, HPMG_PATCH_MULTIPLICATIVE, HPMG_LOCAL_DENSE, HPMG_PATCH_KERNEL_FUSED);
  checks++;
  if (e != HPMG_ERR_BACKEND) failures++, printf("FAIL dense local solver not refused\n");
  e = hpmg_cuda_patch_check(3, 9, HPMG_PATCH_MULTIPLICATIVE, HPMG_LOCAL_FDM, HPMG_PATCH_KERNEL_FUSED);
  checks++;
  if (e != HPMG_ERR_BACKEND) failures++, printf("FAIL 3D k=9 not refused\n");
  for (int k = 1; k <= kmax2; k++) {
    const int64_t cells[3] = {5, 4, 1};
    const double box[3] = {1.0, 0.7, 1.0};
    test_level(2, k, cells, box, k % 2 ? 0.0 : 3.5);
  }
  printf("2D k=1..%d done (%d checks, %d failures)\n", kmax2, checks, failures);
  fflush(stdout);
  for (int k = kmin3; k <= kmax3; k++) {
    const int64_t cells[3] = {4, 5, 3};
    const double box[3] = {1.0, 0.8, 1.3};
    test_level(3, k, cells, box, k % 2 ? 2.0 : 0.0);
    printf("3D k=%d done (%d checks, %d failures)\n", k, checks, failures);
    fflush(stdout);
  }
  { /* a single patch (2 cells per direction), and a mesh without patches (1 cell in x) */
    const int64_t one[3] = {2, 2, 2}, none[3] = {1, 3, 2};
    const double box[3] = {1.0, 1.0, 1.0};
    test_level(3, 2, one, box, 0.0);
    test_level(2, 3, one, box, 1.0);
    test_level(3, 2, none, box, 0.0);
  }
  if (solves) {
    const hpmg_precision D = HPMG_PREC_DOUBLE, M = HPMG_PREC_MIXED;
    const hpmg_patch_mode MU = HPMG_PATCH_MULTIPLICATIVE, AD = HPMG_PATCH_ADDITIVE;
    for (int v = 0; v < 3; v++) {
      solve(2, 3, 1, 4, D, HPMG_SOLVER_CG, MU, (hpmg_patch_kernel)v, 0.0);
      solve(3, 2, 1, 3, D, HPMG_SOLVER_CG, MU, (hpmg_patch_kernel)v, 0.0);
      solve(3, 4, 1, 2, D, HPMG_SOLVER_VCYCLE, MU, (hpmg_patch_kernel)v, 0.0);
    }
    solve(2, 7, 1, 3, D, HPMG_SOLVER_CG, MU, HPMG_PATCH_KERNEL_FUSED, 0.0);
    solve(3, 3, 1, 3, M, HPMG_SOLVER_CG, MU, HPMG_PATCH_KERNEL_FUSED, 0.0);
    solve(3, 5, 1, 2, M, HPMG_SOLVER_CG, MU, HPMG_PATCH_KERNEL_SEPARATE, 10.0);
    solve(3, 1, 1, 4, D, HPMG_SOLVER_VCYCLE, MU, HPMG_PATCH_KERNEL_FUSED, 0.0);
    solve(2, 4, 1, 4, D, HPMG_SOLVER_CG, AD, HPMG_PATCH_KERNEL_FUSED, 0.0);
    solve(3, 3, 1, 2, M, HPMG_SOLVER_CG, AD, HPMG_PATCH_KERNEL_FUSED, 0.0);
  }
  printf("test_cuda_patch: %d checks, %d failures; worst relative error double %.2e, float %.2e\n", checks, failures,
         worst[0], worst[1]);
  return failures ? 1 : 0;
}
#endif
