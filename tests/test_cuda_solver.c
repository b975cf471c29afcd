/* Whole solves on the GPU against the CPU solver with the same options:
 * the same iteration counts, the same L2 errors (to 1e-4 relative), the same
 * lambda_max on the finest level; host and device-pointer calls give the same
 * bits. Exits 77 (skipped) without a CUDA build or a GPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifndef HPMG_HAVE_CUDA
int main(void) {
  printf("test_cuda_solver: this build has no CUDA backend: skipped\n");
  return 77;
}
#else
#include "cuda/hpmg_cuda.h"
#include "smoothers/smoother.h"

static int failures = 0;

static void one(int dim, int k, int coarse, int refine, hpmg_precision prec, hpmg_smoother_kind sm,
                hpmg_solver_kind solver, double lambda) {
  hpmg_problem_options po;
  hpmg_problem_options_default(&po);
  po.dim = dim;
  po.degree = k;
  po.coarse = coarse;
  po.refine = refine;
  po.lambda = lambda;
  if (dim == 3) po.box[2] = 1.2;
  hpmg_solver_options so;
  hpmg_solver_options_default(&so);
  so.smoother = sm;
  so.precision = prec;
  so.solver = solver;
  hpmg_problem prob;
  if (hpmg_problem_create(&po, &prob)) {
    printf("FAIL problem: %s\n", hpmg_last_error());
    failures++;
    return;
  }
  const int64_t n = hpmg_problem_num_dofs(prob);
  double *xc = calloc((size_t)n, sizeof(double)), *xg = calloc((size_t)n, sizeof(double));
  hpmg_solver cs;
  hpmg_stats sc, sg;
  hpmg_error ec = hpmg_solver_create(prob, &so, &cs);
  if (!ec) ec = hpmg_solver_solve(cs, NULL, xc);
  if (ec) {
    printf("FAIL cpu solve: %s\n", hpmg_last_error());
    failures++;
    return;
  }
  hpmg_solver_get_stats(cs, &sc);
  hpmg_cuda_solver gs;
  hpmg_error eg = hpmg_cuda_solver_create(&po, &so, &gs);
  if (!eg) eg = hpmg_cuda_solver_solve(gs, NULL, xg, 0);
  if (eg) {
    printf("FAIL gpu solve: %s\n", hpmg_last_error());
    failures++;
    return;
  }
  hpmg_cuda_solver_get_stats(gs, &sg);
  double l2c, l2g, mc, mg;
  hpmg_problem_error(prob, xc, &l2c, &mc);
  hpmg_problem_error(prob, xg, &l2g, &mg);
  /* lambda_max of the finest level vs the CPU estimate on the same operator */
  double lcpu = 0, lgpu = hpmg_cuda_solver_lambda_max(gs, hpmg_cuda_solver_num_levels(gs) - 1);
  if (sm != HPMG_SMOOTHER_JACOBI) {
    hpmg_grid g;
    hpmg_laplace op;
    int64_t c = (int64_t)coarse << refine, cells[3] = {c, c, c};
    hpmg_grid_init(dim, k, cells, po.box, &g);
    hpmg_laplace_create(&g, lambda, &op);
    hpmg_estimate_lambda_max(&op, HPMG_REAL_DOUBLE, so.cheby_eig_iters, &lcpu);
    lcpu *= 1.2;
    hpmg_laplace_destroy(&op);
  }
  /* device pointers: same bits as the host call */
  double *db, *dx, *bh = malloc(sizeof(double) * (size_t)n), *xd = calloc((size_t)n, sizeof(double));
  hpmg_error ed = hpmg_cuda_malloc(sizeof(double) * (size_t)n, (void **)&db);
  if (!ed) ed = hpmg_cuda_malloc(sizeof(double) * (size_t)n, (void **)&dx);
  extern hpmg_error hpmg_problem_builtin_rhs(hpmg_problem p, double *b);
  if (!ed) ed = hpmg_problem_builtin_rhs(prob, bh);
  if (!ed) ed = hpmg_cuda_upload(db, bh, sizeof(double) * (size_t)n);
  if (!ed) ed = hpmg_cuda_upload(dx, xd, sizeof(double) * (size_t)n);
  if (!ed) ed = hpmg_cuda_solver_solve(gs, db, dx, 1);
  if (!ed) ed = hpmg_cuda_download(xd, dx, sizeof(double) * (size_t)n);
  double dmax = 0;
  for (int64_t i = 0; i < n; i++) dmax = fmax(dmax, fabs(xd[i] - xg[i]));
  /* errors agree to 1e-4, or both sit at the round-off floor (< 1e-12) within a factor 1.5 */
  const int l2ok = fabs(l2g - l2c) <= 1e-4 * l2c || (l2c < 1e-12 && l2g < 1.5 * l2c && l2c < 1.5 * l2g);
  const int ok = sc.iterations == sg.iterations && l2ok &&
                 (sm == HPMG_SMOOTHER_JACOBI || fabs(lgpu - lcpu) <= 1e-9 * lcpu) && !ed && dmax == 0.0 &&
                 sg.converged;
  printf("%s %dD k=%d coarse %d refine %d %s %s %s: N=%lld iterations cpu %d gpu %d, L2 cpu %.6e gpu %.6e, "
         "lambda_max cpu %.10g gpu %.10g, device-pointer diff %.1e, gpu solve %.4f s\n",
         ok ? "ok  " : "FAIL", dim, k, coarse, refine, prec == HPMG_PREC_DOUBLE ? "double" : "mixed",
         sm == HPMG_SMOOTHER_JACOBI ? "jacobi" : "chebyshev", solver == HPMG_SOLVER_CG ? "cg" : "vcycle",
         (long long)n, sc.iterations, sg.iterations, l2c, l2g, lcpu, lgpu, dmax, sg.t_solve);
  if (ed) printf("     device-pointer solve: %s\n", hpmg_last_error());
  failures += !ok;
  hpmg_cuda_free(db);
  hpmg_cuda_free(dx);
  free(bh);
  free(xd);
  hpmg_cuda_solver_destroy(&gs);
  hpmg_solver_destroy(&cs);
  hpmg_problem_destroy(&prob);
  free(xc);
  free(xg);
}

int main(void) {
  if (hpmg_cuda_check()) {
    printf("test_cuda_solver: %s: skipped\n", hpmg_last_error());
    return 77;
  }
  const hpmg_smoother_kind C = HPMG_SMOOTHER_CHEBYSHEV;
  const hpmg_precision D = HPMG_PREC_DOUBLE, M = HPMG_PREC_MIXED;
  for (int k = 1; k <= 10; k += 3) one(2, k, 1, k == 1 ? 7 : 5, D, C, HPMG_SOLVER_CG, 0.0);
  for (int k = 1; k <= 8; k++) one(3, k, 1, k <= 2 ? 4 : k <= 5 ? 3 : 2, D, C, HPMG_SOLVER_CG, 0.0);
  one(3, 3, 1, 3, M, C, HPMG_SOLVER_CG, 0.0);
  one(3, 5, 1, 2, M, C, HPMG_SOLVER_CG, 10.0);
  one(2, 4, 1, 6, M, C, HPMG_SOLVER_CG, 0.0);
  one(2, 2, 1, 6, D, HPMG_SMOOTHER_JACOBI, HPMG_SOLVER_CG, 0.0);
  one(2, 3, 1, 5, D, C, HPMG_SOLVER_VCYCLE, 0.0);
  one(3, 2, 8, 1, D, C, HPMG_SOLVER_CG, 0.0); /* coarse level of 3375 unknowns: CG coarse solve */
  printf("test_cuda_solver: %d failures\n", failures);
  return failures ? 1 : 0;
}
#endif
