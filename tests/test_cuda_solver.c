/* Whole solves on the GPU against the CPU solver with the same options, for
 * every outer iteration (CG, V-cycle, GMRES, FMG) and precision (double,
 * mixed, float): the same iteration counts (float: within 1, see below), the
 * same L2 errors (to 1e-4 relative, or both at the round-off floor), the
 * same lambda_max on the finest level; host and device-pointer calls give
 * the same bits. The accuracy cases (difference form of the operator) run
 * where the former GPU kernel had a round-off floor and require the CPU's L2
 * error to 5% (L2_5PERCENT cases). Exits 77 (skipped) without a CUDA build or
 * a GPU. */
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
#include "disc/qk/cuda/hpmg_cuda.h"
#include "disc/qk/smoother.h"

static int failures = 0;

enum { L2_DEFAULT, L2_5PERCENT };

static void one_r(int dim, int k, int coarse, int refine, hpmg_precision prec, hpmg_smoother_kind sm,
                  hpmg_solver_kind solver, double lambda, int restart, int l2mode, hpmg_cycle_kind cycle) {
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
  so.cycle = cycle;
  if (restart > 0) so.restart = restart;
  /* float: the residual of a float iteration stagnates near 1e-4 relative on these
   * grids (eps_float times the condition), on the CPU as on the GPU */
  if (prec == HPMG_PREC_FLOAT) so.tol = 1e-3;
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
  /* lambda_max of the finest level vs the CPU estimate on the same operator, both in float,
   * where the reductions' orders differ: to 1e-6 relative */
  double lcpu = 0, lgpu = hpmg_cuda_solver_lambda_max(gs, hpmg_cuda_solver_num_levels(gs) - 1);
  if (sm != HPMG_SMOOTHER_JACOBI) {
    hpmg_grid g;
    hpmg_laplace op;
    int64_t c = (int64_t)coarse << refine, cells[3] = {c, c, c};
    hpmg_grid_init(dim, k, cells, po.box, &g);
    hpmg_laplace_create(&g, lambda, &op);
    hpmg_estimate_lambda_max(&op, HPMG_REAL_FLOAT, so.cheby_eig_iters, &lcpu);
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
  /* errors agree to 1e-4, or both sit at the round-off floor (< 1e-12), where they measure
   * rounding, which the CPU's thread count and the two summation orders move by factors:
   * there the GPU's may exceed the CPU's by at most 1.5x (L2_5PERCENT: 5%) and may be
   * smaller (H200 host, 16 threads, at b2edaf0: 2D Q6 mixed FMG CPU 3.83e-14, GPU 7.73e-15;
   * 2D Q3 L10 CG 2.24e-14 and 2.08e-14; the CPU's reductions alone move the latter by
   * 0.04% from run to run). L2_5PERCENT: within 5% relative (mixed: the float V-cycles round
   * differently on the CPU and the GPU, and the CPU's with the thread count, which moves
   * the algebraic error left at the tolerance by 1-2%: 2D Q3 on 512^2 cells, GMRES,
   * 4.55e-12 vs 4.51e-12 at 06c51c0, 4.60e-12 vs 4.51e-12 at c05db6b on the H100 host).
   * Float: the solution carries float round-off (~1e-7 relative), which differs between the
   * CPU and GPU summation orders: within 10%, or closer than 1e-6. */
  const int at_floor = l2c < 1e-12 && l2g < 1e-12;
  int l2ok = fabs(l2g - l2c) <= 1e-4 * l2c || (at_floor && l2g < 1.5 * l2c);
  if (l2mode == L2_5PERCENT) l2ok = fabs(l2g - l2c) <= 5e-2 * l2c || (at_floor && l2g <= 1.05 * l2c);
  if (prec == HPMG_PREC_FLOAT) l2ok = fabs(l2g - l2c) <= 0.1 * l2c || fabs(l2g - l2c) < 1e-6;
  /* float: the outer iteration itself runs in float, where the CPU's and the GPU's dot
   * products (both accumulated in double, in another order) and kernels round differently;
   * a residual that lands next to the tolerance can then take one more or one fewer step */
  const int dit = sg.iterations - sc.iterations;
  const int itok = prec == HPMG_PREC_FLOAT ? abs(dit) <= 1 : dit == 0;
  const int ok = itok && l2ok && (sm == HPMG_SMOOTHER_JACOBI || fabs(lgpu - lcpu) <= 1e-6 * lcpu) && !ed &&
                 dmax == 0.0 && sg.converged;
  const char *sn = solver == HPMG_SOLVER_CG ? "cg" : solver == HPMG_SOLVER_GMRES ? "gmres" :
                   solver == HPMG_SOLVER_FMG ? "fmg" : "vcycle";
  const char *pn = prec == HPMG_PREC_DOUBLE ? "double" : prec == HPMG_PREC_MIXED ? "mixed" : "float";
  printf("%s %dD k=%d coarse %d refine %d %s %s %s%s%s: N=%lld iterations cpu %d gpu %d, L2 cpu %.6e gpu %.6e, "
         "lambda_max cpu %.10g gpu %.10g, device-pointer diff %.1e, gpu solve %.4f s\n",
         ok ? "ok  " : "FAIL", dim, k, coarse, refine, pn, sm == HPMG_SMOOTHER_JACOBI ? "jacobi" : "chebyshev", sn,
         l2mode == L2_5PERCENT ? " (L2 to 5%)" : "", cycle == HPMG_CYCLE_ADD_RESIDUAL ? " add-residual" : "",
         (long long)n, sc.iterations, sg.iterations, l2c, l2g, lcpu,
         lgpu, dmax, sg.t_solve);
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

static void one(int dim, int k, int coarse, int refine, hpmg_precision prec, hpmg_smoother_kind sm,
                hpmg_solver_kind solver, double lambda) {
  one_r(dim, k, coarse, refine, prec, sm, solver, lambda, 0, L2_DEFAULT, HPMG_CYCLE_STANDARD);
}

int main(void) {
  if (hpmg_cuda_check()) {
    printf("test_cuda_solver: %s: skipped\n", hpmg_last_error());
    return 77;
  }
  const hpmg_smoother_kind C = HPMG_SMOOTHER_CHEBYSHEV;
  const hpmg_precision D = HPMG_PREC_DOUBLE, M = HPMG_PREC_MIXED, F = HPMG_PREC_FLOAT;
  const hpmg_cycle_kind ST = HPMG_CYCLE_STANDARD, AR = HPMG_CYCLE_ADD_RESIDUAL;
  const hpmg_solver_kind CG = HPMG_SOLVER_CG, VC = HPMG_SOLVER_VCYCLE, GM = HPMG_SOLVER_GMRES, FM = HPMG_SOLVER_FMG;
  for (int k = 1; k <= 10; k += 3) one(2, k, 1, k == 1 ? 7 : 5, D, C, CG, 0.0);
  for (int k = 1; k <= 8; k++) one(3, k, 1, k <= 2 ? 4 : k <= 5 ? 3 : 2, D, C, CG, 0.0);
  one(3, 3, 1, 3, M, C, CG, 0.0);
  one(3, 5, 1, 2, M, C, CG, 10.0);
  one(2, 4, 1, 6, M, C, CG, 0.0);
  one(2, 2, 1, 6, D, HPMG_SMOOTHER_JACOBI, CG, 0.0);
  one(2, 3, 1, 5, D, C, VC, 0.0);
  one(3, 2, 8, 1, D, C, CG, 0.0); /* coarse level of 3375 unknowns: CG coarse solve */
  /* V-cycle iteration in mixed and float; CG in float */
  one(3, 2, 1, 4, M, C, VC, 0.0);
  one(2, 5, 1, 5, F, C, VC, 0.0);
  one(3, 4, 1, 3, F, C, CG, 0.0);
  one(2, 3, 1, 6, F, C, CG, 0.0);
  /* GMRES(30) with one V-cycle, 2D and 3D, several k, every precision */
  one(2, 2, 1, 6, D, C, GM, 0.0);
  one(2, 5, 1, 5, D, C, GM, 0.0);
  one(2, 9, 1, 4, D, C, GM, 0.0);
  one(3, 1, 1, 4, D, C, GM, 0.0);
  one(3, 3, 1, 3, D, C, GM, 0.0);
  one(3, 6, 1, 2, D, C, GM, 0.0);
  one(3, 4, 1, 3, D, C, GM, 5.0);
  one(2, 3, 1, 6, M, C, GM, 0.0);
  one(3, 2, 1, 4, M, C, GM, 0.0);
  one(3, 7, 1, 2, M, C, GM, 0.0);
  one(3, 3, 1, 3, F, C, GM, 0.0);
  one(2, 4, 1, 5, F, C, GM, 0.0);
  one(2, 2, 1, 6, D, HPMG_SMOOTHER_JACOBI, GM, 0.0);
  /* restarts: GMRES(2) and GMRES(1) need several restart cycles */
  one_r(2, 3, 1, 5, D, C, GM, 0.0, 2, L2_DEFAULT, ST);
  one_r(3, 2, 1, 3, M, C, GM, 0.0, 1, L2_DEFAULT, ST);
  /* FMG start + V-cycles, 2D and 3D, several k, every precision */
  one(2, 1, 1, 7, D, C, FM, 0.0);
  one(2, 4, 1, 5, D, C, FM, 0.0);
  one(3, 2, 1, 4, D, C, FM, 0.0);
  one(3, 5, 1, 3, D, C, FM, 0.0);
  one(3, 8, 1, 2, D, C, FM, 0.0);
  one(3, 3, 1, 3, M, C, FM, 0.0);
  one(2, 6, 1, 5, M, C, FM, 0.0);
  one(3, 2, 1, 4, F, C, FM, 0.0);
  one(3, 2, 8, 1, D, C, FM, 0.0); /* CG coarse solve inside FMG */
  /* the authors' cycle (coarse correction + residual, paper 000's counts): FMG, V-cycle, GMRES */
  one_r(2, 1, 1, 7, D, C, FM, 0.0, 0, L2_DEFAULT, AR);
  one_r(3, 2, 1, 4, D, C, VC, 0.0, 0, L2_DEFAULT, AR);
  one_r(2, 3, 1, 6, M, C, GM, 0.0, 0, L2_DEFAULT, AR);
  /* accuracy (difference form): where the former kernel had a round-off floor
   * (2D Q3 on 1024^2 cells: CPU 2.1e-14, former GPU ~3e-11); in 3D the floor shows only
   * at sizes beyond a CPU reference here: there the cases check "same as the CPU" */
  one_r(2, 3, 1, 10, D, C, CG, 0.0, 0, L2_5PERCENT, ST);
  one_r(2, 3, 1, 9, M, C, GM, 0.0, 0, L2_5PERCENT, ST);
  one_r(3, 3, 1, 5, D, C, CG, 0.0, 0, L2_5PERCENT, ST);
  one_r(3, 7, 1, 3, D, C, GM, 0.0, 0, L2_5PERCENT, ST);
  one_r(3, 5, 1, 4, M, C, FM, 0.0, 0, L2_5PERCENT, ST);
  printf("test_cuda_solver: %d failures\n", failures);
  return failures ? 1 : 0;
}
#endif
