/* Benchmark driver: the same problem as the peers in ../shared/peers (unit
 * box, homogeneous Dirichlet, u = prod sin(pi x_i)), solved R times through
 * the public API; prints one line in the peers' format
 *   peer=hpmg dim=3 k=4 L=6 dofs=... iters=... solve_s=<best> first_solve_s=... l2err=...
 * so bench/run_sweep.sh can put hpmg and deal.II side by side (isa=: the CPU
 * kernel variant that ran; HPMG_ISA selects another one).
 * usage: solve_bench DIM K L [--precision double|float|mixed] [--smoother chebyshev|jacobi|gs|sgs]
 *                            [--cheby-degree M] [--tol T] [--repeat R] [--threads N] [--lambda V] */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include "hpmg.h"

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s DIM K L [--precision P] [--smoother S] [--cheby-degree M] [--tol T] [--repeat R] [--threads N] [--lambda V] [--solver cg|gmres|fmg|vcycle|auto] (defaults: chebyshev, cg)\n", argv[0]);
    return 2;
  }
  hpmg_problem_options po;
  hpmg_solver_options so;
  hpmg_problem_options_default(&po);
  hpmg_solver_options_default(&so);
  po.dim = atoi(argv[1]);
  po.degree = atoi(argv[2]);
  po.refine = atoi(argv[3]);
  int repeat = 3;
  const char *prec = "double";
  so.smoother = HPMG_SMOOTHER_CHEBYSHEV; /* the peers' method (CG + Chebyshev V-cycle) unless */
  so.solver = HPMG_SOLVER_CG;            /* --smoother / --solver say otherwise (auto: the default) */
  for (int i = 4; i + 1 < argc; i += 2) {
    const char *o = argv[i], *v = argv[i + 1];
    if (!strcmp(o, "--precision")) {
      prec = v;
      so.precision = !strcmp(v, "float") ? HPMG_PREC_FLOAT : !strcmp(v, "mixed") ? HPMG_PREC_MIXED : HPMG_PREC_DOUBLE;
    } else if (!strcmp(o, "--smoother")) {
      so.smoother = !strcmp(v, "jacobi") ? HPMG_SMOOTHER_JACOBI : !strcmp(v, "gs") ? HPMG_SMOOTHER_GS
                  : !strcmp(v, "sgs") ? HPMG_SMOOTHER_SGS : !strcmp(v, "patch") ? HPMG_SMOOTHER_PATCH
                  : !strcmp(v, "auto") ? HPMG_SMOOTHER_AUTO : !strcmp(v, "chebyshev") ? HPMG_SMOOTHER_CHEBYSHEV
                  : (hpmg_smoother_kind)-1;
      if ((int)so.smoother < 0) {
        fprintf(stderr, "solve_bench: unknown smoother %s\n", v);
        return 2;
      }
    } else if (!strcmp(o, "--cheby-degree")) so.cheby_degree = atoi(v);
    else if (!strcmp(o, "--tol")) so.tol = atof(v);
    else if (!strcmp(o, "--repeat")) repeat = atoi(v);
    else if (!strcmp(o, "--threads")) so.threads = atoi(v);
    else if (!strcmp(o, "--lambda")) po.lambda = atof(v);
    else if (!strcmp(o, "--solver")) {
      so.solver = !strcmp(v, "gmres") ? HPMG_SOLVER_GMRES : !strcmp(v, "fmg") ? HPMG_SOLVER_FMG
                : !strcmp(v, "vcycle") ? HPMG_SOLVER_VCYCLE : !strcmp(v, "cg") ? HPMG_SOLVER_CG
                : !strcmp(v, "auto") ? HPMG_SOLVER_AUTO : (hpmg_solver_kind)-1;
      if ((int)so.solver < 0) {
        fprintf(stderr, "solve_bench: unknown solver %s\n", v);
        return 2;
      }
    }
    else {
      fprintf(stderr, "solve_bench: unknown option %s\n", o);
      return 2;
    }
  }
  /* the names of what runs (auto resolved) */
  if (so.solver == HPMG_SOLVER_AUTO) so.solver = hpmg_default_solver(po.dim, po.degree, &so);
  if (so.smoother == HPMG_SMOOTHER_AUTO) so.smoother = hpmg_default_smoother(po.dim, po.degree, &so);
  static const char *snames[] = {"chebyshev", "jacobi", "gs", "sgs", "patch"}, *vnames[] = {"cg", "vcycle", "gmres", "fmg"};
  const char *smoother = snames[so.smoother], *solvername = vnames[so.solver];
  hpmg_problem prob;
  hpmg_solver solver;
  double t0 = omp_get_wtime();
  if (hpmg_problem_create(&po, &prob) || hpmg_solver_create(prob, &so, &solver)) {
    fprintf(stderr, "solve_bench: %s\n", hpmg_last_error());
    return 1;
  }
  double setup = omp_get_wtime() - t0;
  const int64_t n = hpmg_problem_num_dofs(prob);
  double *x = malloc(sizeof(double) * (size_t)n);
  double best = 1e30, first = 0;
  hpmg_stats st, bst = {0};
  for (int r = 0; r < repeat; r++) {
    memset(x, 0, sizeof(double) * (size_t)n);
    if (hpmg_solver_solve(solver, NULL, x)) {
      fprintf(stderr, "solve_bench: %s\n", hpmg_last_error());
      return 1;
    }
    hpmg_solver_get_stats(solver, &st);
    if (r == 0) first = st.t_solve;
    if (st.t_solve < best) {
      best = st.t_solve;
      bst = st;
    }
  }
  double l2, maxerr;
  hpmg_problem_error(prob, x, &l2, &maxerr);
  int64_t total = 1;
  for (int d = 0; d < po.dim; d++) total *= (int64_t)po.degree * ((int64_t)1 << po.refine) + 1;
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  printf("peer=hpmg isa=%s dim=%d k=%d L=%d dofs=%lld free_dofs=%lld threads=%d precision=%s solver=%s smoother=%s cheby_degree=%d "
         "iters=%d setup_s=%.4f solve_s=%.4f dofs_per_s=%.4e first_solve_s=%.4f l2err=%.6e maxerr=%.6e relres=%.3e "
         "operator_s=%.4f smoother_s=%.4f transfer_s=%.4f coarse_s=%.4f krylov_s=%.4f matvecs=%lld rss_gb=%.2f\n",
         hpmg_cpu_isa(), po.dim, po.degree, po.refine, (long long)total, (long long)n, omp_get_max_threads(), prec, solvername, smoother,
         so.cheby_degree, bst.iterations, setup, best, total / best, first, l2, maxerr, bst.residual / bst.residual0,
         bst.t_operator, bst.t_smoother, bst.t_transfer, bst.t_coarse, bst.t_krylov,
         (long long)bst.operator_applications, ru.ru_maxrss / 1048576.0);
  free(x);
  hpmg_solver_destroy(&solver);
  hpmg_problem_destroy(&prob);
  return 0;
}
