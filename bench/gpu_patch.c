/* GPU benchmark of the vertex-patch smoother (scripts/gpu-check, docs/cuda.md):
 *   gpu_patch DIM DEGREE REFINE double|mixed [variants]
 * variants: a comma list of fused, separate, global, additive, chebyshev
 * (default all), and "nosolve" to time the smoothing step only. For each: one
 * JSON line with
 *  - the median time of one smoothing step on the finest level (coarse mesh
 *    1 cell, 2^REFINE cells per direction) in double and float, and the
 *    unknowns updated per second (patch variants only);
 *  - the whole solve (CG + one V-cycle, 1+1 smoothing steps, sine solution,
 *    relative residual 1e-9) in the given precision: iterations, setup and
 *    time to solution (fastest of 2), L2 error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "disc/qk/cuda/hpmg_cuda.h"

static const char *names[] = {"fused", "separate", "global", "additive", "chebyshev"};

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: %s DIM DEGREE REFINE double|mixed [fused,separate,global,additive,chebyshev]\n", argv[0]);
    return 2;
  }
  hpmg_problem_options po;
  hpmg_problem_options_default(&po);
  po.dim = atoi(argv[1]);
  po.degree = atoi(argv[2]);
  po.refine = atoi(argv[3]);
  const hpmg_precision prec = strcmp(argv[4], "mixed") == 0 ? HPMG_PREC_MIXED : HPMG_PREC_DOUBLE;
  const char *list = argc > 5 ? argv[5] : "fused,separate,global,additive,chebyshev";
  const int solve = !strstr(list, "nosolve");
  int rc = 0;
  for (int v = 0; v < 5; v++) {
    if (!strstr(list, names[v])) continue;
    const int patch = v < 4;
    const hpmg_patch_mode mode = v == 3 ? HPMG_PATCH_ADDITIVE : HPMG_PATCH_MULTIPLICATIVE;
    const hpmg_patch_kernel kern = v < 3 ? (hpmg_patch_kernel)v : HPMG_PATCH_KERNEL_FUSED;
    double tstep[2] = {0, 0};
    int64_t nf = 0;
    if (patch) { /* one smoothing step on the finest level, on random vectors */
      hpmg_grid g;
      hpmg_laplace op;
      hpmg_cuda_op dop = NULL;
      hpmg_cuda_patch p = NULL;
      int64_t c = (int64_t)po.coarse << po.refine, cells[3] = {c, c, c};
      void *b = NULL, *x = NULL, *w = NULL;
      hpmg_error e = hpmg_grid_init(po.dim, po.degree, cells, po.box, &g);
      if (!e) e = hpmg_laplace_create(&g, po.lambda, &op);
      if (!e) e = hpmg_cuda_op_create(&op, &dop);
      if (!e) e = hpmg_cuda_patch_create(&op, dop, mode, HPMG_LOCAL_FDM, 0.0, kern, &p);
      nf = g.N;
      if (!e) e = hpmg_cuda_malloc(sizeof(double) * (size_t)g.N, &b);
      if (!e) e = hpmg_cuda_malloc(sizeof(double) * (size_t)g.N, &x);
      if (!e) e = hpmg_cuda_malloc(sizeof(double) * (size_t)g.N, &w);
      for (int ri = 0; ri < 2 && !e; ri++) {
        const hpmg_real r = ri ? HPMG_REAL_FLOAT : HPMG_REAL_DOUBLE;
        e = hpmg_cuda_fill_random(r, g.N, b);
        if (!e) e = hpmg_cuda_fill_random(r, g.N, x);
        if (!e) e = hpmg_cuda_patch_time(p, r, b, x, w, 7, &tstep[ri]);
      }
      if (e) {
        fprintf(stderr, "gpu_patch %s: %s\n", names[v], hpmg_last_error());
        rc = 1;
      }
      hpmg_cuda_free(b);
      hpmg_cuda_free(x);
      hpmg_cuda_free(w);
      hpmg_cuda_patch_destroy(&p);
      hpmg_cuda_op_destroy(&dop);
      hpmg_laplace_destroy(&op);
      if (e) continue;
    }
    if (!solve) {
      if (patch)
        printf("{\"dim\": %d, \"k\": %d, \"refine\": %d, \"dofs\": %lld, \"smoother\": \"%s\", \"step_double_s\": %.5e, "
               "\"step_float_s\": %.5e, \"step_double_GDoFps\": %.3f, \"step_float_GDoFps\": %.3f}\n",
               po.dim, po.degree, po.refine, (long long)nf, names[v], tstep[0], tstep[1], nf / tstep[0] * 1e-9,
               nf / tstep[1] * 1e-9);
      fflush(stdout);
      continue;
    }
    hpmg_solver_options so;
    hpmg_solver_options_default(&so);
    so.solver = HPMG_SOLVER_CG;
    so.smoother = patch ? HPMG_SMOOTHER_PATCH : HPMG_SMOOTHER_CHEBYSHEV;
    so.patch_mode = mode;
    so.patch_kernel = kern;
    so.precision = prec;
    hpmg_cuda_solver s;
    if (hpmg_cuda_solver_create(&po, &so, &s)) {
      fprintf(stderr, "gpu_patch %s: %s\n", names[v], hpmg_last_error());
      rc = 1;
      continue;
    }
    const int64_t n = hpmg_cuda_solver_num_dofs(s);
    double *xh = malloc(sizeof(double) * (size_t)n);
    hpmg_stats st, best;
    memset(&best, 0, sizeof best);
    double tbest = 1e30;
    hpmg_error e = HPMG_SUCCESS;
    for (int r = 0; r < 2 && !e; r++) {
      memset(xh, 0, sizeof(double) * (size_t)n);
      e = hpmg_cuda_solver_solve(s, NULL, xh, 0);
      hpmg_cuda_solver_get_stats(s, &st);
      if (st.t_solve < tbest) {
        tbest = st.t_solve;
        best = st;
      }
    }
    if (e) {
      fprintf(stderr, "gpu_patch %s solve: %s\n", names[v], hpmg_last_error());
      rc = 1;
    }
    double l2 = 0, mx = 0;
    hpmg_problem prob;
    if (!hpmg_problem_create(&po, &prob)) {
      hpmg_problem_error(prob, xh, &l2, &mx);
      hpmg_problem_destroy(&prob);
    }
    printf("{\"dim\": %d, \"k\": %d, \"refine\": %d, \"dofs\": %lld, \"precision\": \"%s\", \"smoother\": \"%s\", "
           "\"step_double_s\": %.5e, \"step_float_s\": %.5e, \"step_double_GDoFps\": %.3f, \"step_float_GDoFps\": %.3f, "
           "\"iterations\": %d, \"converged\": %d, \"relres\": %.3e, \"l2_error\": %.6e, \"t_setup\": %.4f, "
           "\"t_solve\": %.5f, \"dofs_per_s\": %.4e}\n",
           po.dim, po.degree, po.refine, (long long)n, argv[4], names[v], tstep[0], tstep[1],
           tstep[0] > 0 ? nf / tstep[0] * 1e-9 : 0.0, tstep[1] > 0 ? nf / tstep[1] * 1e-9 : 0.0, best.iterations,
           best.converged, best.residual0 > 0 ? best.residual / best.residual0 : 0.0, l2, best.t_setup, best.t_solve,
           (double)n / best.t_solve);
    fflush(stdout);
    free(xh);
    hpmg_cuda_solver_destroy(&s);
  }
  return rc;
}
