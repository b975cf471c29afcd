/* Example: solve -Laplace u = f on the unit square with the 5-point
 * finite-difference stencil (a problem with disc = HPMG_DISC_FD) and a
 * right-hand side given as a C function, through the public API; check that
 * the error against the exact solution is second order in h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "hpmg.h"

static double f(const double x[3], void *user) {
  (void)user;
  return 2 * M_PI * M_PI * sin(M_PI * x[0]) * sin(M_PI * x[1]);
}

/* solves on 2^refine intervals per direction; returns the max error, or -1 */
static double solve(int refine) {
  hpmg_problem_options po;
  hpmg_problem_options_default(&po);
  po.disc = HPMG_DISC_FD;
  po.dim = 2;
  po.refine = refine;
  hpmg_problem prob;
  if (hpmg_problem_create(&po, &prob)) { fprintf(stderr, "%s\n", hpmg_last_error()); return -1; }

  hpmg_solver_options so;
  hpmg_solver_options_default(&so); /* V-cycle iteration with multicolor Gauss-Seidel here */
  so.tol = 1e-10;
  hpmg_solver solver;
  if (hpmg_solver_create(prob, &so, &solver)) {
    fprintf(stderr, "%s\n", hpmg_last_error());
    hpmg_problem_destroy(&prob);
    return -1;
  }
  int64_t n = hpmg_problem_num_dofs(prob);
  double *b = malloc(sizeof(double) * n), *x = calloc(n, sizeof(double)), l2 = -1, maxerr = -1;
  if (!b || !x || hpmg_problem_load_vector(prob, f, NULL, b) || hpmg_solver_solve(solver, b, x) ||
      hpmg_problem_error(prob, x, &l2, &maxerr))
    fprintf(stderr, "%s\n", b && x ? hpmg_last_error() : "out of memory");
  hpmg_stats st;
  hpmg_solver_get_stats(solver, &st);
  printf("example fd: 2^%d intervals, %lld unknowns, %d levels, %d V-cycles, relative residual %.2e, "
         "L2 error %.3e, max error %.3e\n", refine, (long long)n, st.levels, st.iterations,
         st.residual0 > 0 ? st.residual / st.residual0 : 0.0, l2, maxerr);
  if (!st.converged) maxerr = -1;
  free(b);
  free(x);
  hpmg_solver_destroy(&solver);
  hpmg_problem_destroy(&prob);
  return maxerr;
}

int main(void) {
  /* the stencil's error for this u is (pi^2/12) h^2 max|u| to leading order */
  const double e6 = solve(6), e7 = solve(7), h7 = 1.0 / 128;
  const int ok = e6 > 0 && e7 > 0 && e7 < h7 * h7 && e6 / e7 > 3.8 && e6 / e7 < 4.2;
  printf("example fd: error ratio h -> h/2 %.3f (second order: 4)%s\n", e7 > 0 ? e6 / e7 : 0.0, ok ? "" : ": FAILED");
  return ok ? 0 : 1;
}
