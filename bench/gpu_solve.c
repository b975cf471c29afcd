/* GPU benchmark of whole solves (scripts/gpu-check): 3D or 2D, sine solution,
 * CG (default), GMRES(30), FMG or V-cycle iteration with one V-cycle
 * (Chebyshev(5), 1+1), relative residual 1e-9, on the GPU through
 * hpmg_cuda_solver; then the finest-level operator kernel alone
 * (ops=0: skip it).
 *   gpu_solve DIM DEGREE REFINE double|mixed|float [repeats] [cg|gmres|fmg|vcycle] [ops] [chebyshev|patch] [profile]
 * (patch: the vertex-patch smoother, fused kernel, 1+1 steps; profile = 1:
 * --profile, and the JSON gets per_level (seconds per level and phase, summed
 * over the solve) and the phase totals)
 * Prints one JSON object: iterations, L2 error, time to solution (fastest of
 * the repeats), DoF/s, and per kernel mode the median time, GB/s (bytes that
 * must move: apply 2, smooth 5 vectors) and GFLOP/s (hpmg_laplace_flops). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "disc/qk/cuda/hpmg_cuda.h"

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: %s DIM DEGREE REFINE double|mixed|float [repeats] [cg|gmres|fmg|vcycle] [ops] [chebyshev|patch] [profile]\n", argv[0]);
    return 2;
  }
  hpmg_problem_options po;
  hpmg_problem_options_default(&po);
  po.dim = atoi(argv[1]);
  po.degree = atoi(argv[2]);
  po.refine = atoi(argv[3]);
  hpmg_solver_options so;
  hpmg_solver_options_default(&so);
  so.smoother = HPMG_SMOOTHER_CHEBYSHEV;
  so.precision = strcmp(argv[4], "mixed") == 0   ? HPMG_PREC_MIXED
                 : strcmp(argv[4], "float") == 0 ? HPMG_PREC_FLOAT
                                                 : HPMG_PREC_DOUBLE;
  const int reps = argc > 5 ? atoi(argv[5]) : 2;
  const char *solver = argc > 6 ? argv[6] : "cg";
  const int ops = argc > 7 ? atoi(argv[7]) : 1;
  const char *smoother = argc > 8 ? argv[8] : "chebyshev";
  if (!strcmp(smoother, "patch")) so.smoother = HPMG_SMOOTHER_PATCH;
  so.profile = argc > 9 ? atoi(argv[9]) : 0;
  so.solver = !strcmp(solver, "gmres") ? HPMG_SOLVER_GMRES
              : !strcmp(solver, "fmg") ? HPMG_SOLVER_FMG
              : !strcmp(solver, "vcycle") ? HPMG_SOLVER_VCYCLE
                                          : HPMG_SOLVER_CG;
  hpmg_cuda_solver s;
  if (hpmg_cuda_solver_create(&po, &so, &s)) {
    fprintf(stderr, "gpu_solve: %s\n", hpmg_last_error());
    return 1;
  }
  const int64_t n = hpmg_cuda_solver_num_dofs(s);
  double *x = malloc(sizeof(double) * (size_t)n);
  hpmg_stats st, best;
  memset(&best, 0, sizeof best);
  double tbest = 1e30;
  for (int r = 0; r < reps; r++) {
    memset(x, 0, sizeof(double) * (size_t)n);
    if (hpmg_cuda_solver_solve(s, NULL, x, 0)) {
      fprintf(stderr, "gpu_solve: %s\n", hpmg_last_error());
      return 1;
    }
    hpmg_cuda_solver_get_stats(s, &st);
    if (st.t_solve < tbest) {
      tbest = st.t_solve;
      best = st;
    }
  }
  hpmg_problem prob;
  double l2 = 0, mx = 0;
  if (!hpmg_problem_create(&po, &prob)) {
    hpmg_problem_error(prob, x, &l2, &mx);
    hpmg_problem_destroy(&prob);
  }
  /* operator kernel alone, finest level */
  hpmg_grid g;
  hpmg_laplace op;
  int64_t c = (int64_t)po.coarse << po.refine, cells[3] = {c, c, c};
  hpmg_grid_init(po.dim, po.degree, cells, po.box, &g);
  hpmg_laplace_create(&g, po.lambda, &op);
  const double flops = hpmg_laplace_flops(&op);
  printf("{\"dim\": %d, \"k\": %d, \"refine\": %d, \"dofs\": %lld, \"precision\": \"%s\", \"solver\": \"%s\", \"smoother\": \"%s\", \"levels\": %d, "
         "\"iterations\": %d, \"converged\": %d, \"relres\": %.3e, \"l2_error\": %.6e, \"max_error\": %.6e, "
         "\"t_setup\": %.4f, \"t_solve\": %.5f, \"dofs_per_s\": %.4e, \"operator_applications\": %lld",
         po.dim, po.degree, po.refine, (long long)n, argv[4], solver, smoother, best.levels, best.iterations, best.converged,
         best.residual0 > 0 ? best.residual / best.residual0 : 0.0, l2, mx, best.t_setup, best.t_solve,
         (double)n / best.t_solve, (long long)best.operator_applications);
  const char *rn[2] = {"double", "float"};
  for (int ri = 0; ri < 2 && ops; ri++)
    for (int m = 0; m < 2; m++) {
      const hpmg_real r = ri ? HPMG_REAL_FLOAT : HPMG_REAL_DOUBLE;
      double t = 0;
      if (hpmg_cuda_solver_time_operator(s, r, m ? HPMG_KERNEL_SMOOTH : HPMG_KERNEL_APPLY, 10, &t)) continue;
      const double bytes = (m ? 5.0 : 2.0) * (ri ? 4.0 : 8.0) * (double)n;
      printf(", \"op_%s_%s\": {\"s\": %.5e, \"GBps\": %.1f, \"GFLOPps\": %.1f, \"GDoFps\": %.2f}", m ? "smooth" : "apply",
             rn[ri], t, bytes / t * 1e-9, flops / t * 1e-9, (double)n / t * 1e-9);
    }
  if (so.profile) {
    printf(", \"t_operator\": %.5f, \"t_smoother\": %.5f, \"t_transfer\": %.5f, \"t_coarse\": %.5f, \"t_krylov\": %.5f, \"per_level\": [",
           best.t_operator, best.t_smoother, best.t_transfer, best.t_coarse, best.t_krylov);
    for (int l = best.levels - 1; l >= 0; l--)
      printf("%s{\"level\": %d, \"dofs\": %lld, \"smoother_s\": %.6f, \"operator_s\": %.6f, \"transfer_s\": %.6f}",
             l == best.levels - 1 ? "" : ", ", l, (long long)best.level_dofs[l], best.t_level_smoother[l],
             best.t_level_operator[l], best.t_level_transfer[l]);
    printf("]");
  }
  printf(", \"flops_per_dof\": %.1f}\n", flops / (double)n);
  hpmg_laplace_destroy(&op);
  hpmg_cuda_solver_destroy(&s);
  free(x);
  return 0;
}
