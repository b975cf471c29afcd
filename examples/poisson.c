/* Example: solve -Laplace u = f on the unit square with a right-hand side given
 * as a C function, through the public API, and check the error. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "hpmg.h"

static double f(const double x[3], void *user) {
  (void)user;
  return 2 * M_PI * M_PI * sin(M_PI * x[0]) * sin(M_PI * x[1]);
}

int main(void) {
  hpmg_problem_options po;
  hpmg_problem_options_default(&po);
  po.dim = 2;
  po.degree = 3;
  po.refine = 5;
  hpmg_problem prob;
  if (hpmg_problem_create(&po, &prob)) { fprintf(stderr, "%s\n", hpmg_last_error()); return 1; }

  hpmg_solver_options so;
  hpmg_solver_options_default(&so);
  hpmg_solver solver;
  if (hpmg_solver_create(prob, &so, &solver)) { fprintf(stderr, "%s\n", hpmg_last_error()); return 1; }

  int64_t n = hpmg_problem_num_dofs(prob);
  double *b = malloc(sizeof(double) * n), *x = calloc(n, sizeof(double));
  if (hpmg_problem_load_vector(prob, f, NULL, b) || hpmg_solver_solve(solver, b, x)) {
    fprintf(stderr, "%s\n", hpmg_last_error());
    return 1;
  }
  hpmg_stats st;
  hpmg_solver_get_stats(solver, &st);
  double l2, maxerr;
  hpmg_problem_error(prob, x, &l2, &maxerr);
  printf("example: %lld unknowns, %d CG iterations, L2 error %.3e, max error %.3e\n", (long long)n, st.iterations, l2,
         maxerr);
  int ok = st.converged && l2 < 1e-5;
  free(b);
  free(x);
  hpmg_solver_destroy(&solver);
  hpmg_problem_destroy(&prob);
  return ok ? 0 : 1;
}
