/* Whole solves through the public API.
 *   order DIM KMAX     L2 error converges at order k+1 (observed within 0.2), k = 1..KMAX
 *   iters DIM K L0 L1  multigrid-CG iteration counts bounded under refinement
 *   helmholtz          -Laplace u + lambda u: converges, same counts, right order
 *   precision DIM K L  mixed = double (iterations, error); float stalls only at float round-off
 *   smoothers          jacobi, gs, sgs and vcycle iteration also converge
 *   api                caller-provided right-hand side equals the built-in one; bad input refused */
#include <string.h>
#include "check.h"
#include "hpmg.h"
#include "la/vec.h"
#include "ops/laplace.h"

hpmg_error hpmg_problem_builtin_rhs(hpmg_problem p, double *b);

/* ||b - A fl(x)|| / ||b||: the residual of the double solution rounded to
 * float, i.e. the smallest residual a float iterate can be expected to reach. */
static double float_rounding_residual(int dim, int k, int L) {
  hpmg_problem_options po;
  hpmg_problem_options_default(&po);
  po.dim = dim; po.degree = k; po.refine = L;
  hpmg_solver_options so;
  hpmg_solver_options_default(&so);
  so.tol = 1e-13;
  hpmg_problem p;
  hpmg_solver s;
  if (hpmg_problem_create(&po, &p) || hpmg_solver_create(p, &so, &s)) return NAN;
  int64_t n = hpmg_problem_num_dofs(p), c = (int64_t)1 << L, cells[3] = {c, c, c};
  double *x = calloc(n, 8), *b = malloc(8 * n), *r = malloc(8 * n);
  hpmg_solver_solve(s, NULL, x);
  hpmg_problem_builtin_rhs(p, b);
  for (int64_t i = 0; i < n; i++) x[i] = (double)(float)x[i];
  hpmg_grid g;
  hpmg_laplace op;
  hpmg_grid_init(dim, k, cells, po.box, &g);
  hpmg_laplace_create(&g, 0.0, &op);
  hpmg_laplace_residual(&op, HPMG_REAL_DOUBLE, b, x, r);
  double rho = hpmg_vec_norm(HPMG_REAL_DOUBLE, n, r) / hpmg_vec_norm(HPMG_REAL_DOUBLE, n, b);
  hpmg_laplace_destroy(&op);
  free(x); free(b); free(r);
  hpmg_solver_destroy(&s);
  hpmg_problem_destroy(&p);
  return rho;
}

typedef struct {
  int iters, converged;
  double l2, maxerr, relres;
} result;

static result solve(hpmg_problem_options po, hpmg_solver_options so) {
  result r = {-1, 0, NAN, NAN, NAN};
  hpmg_problem p;
  hpmg_solver s;
  if (hpmg_problem_create(&po, &p) || hpmg_solver_create(p, &so, &s)) {
    printf("setup failed: %s\n", hpmg_last_error());
    return r;
  }
  int64_t n = hpmg_problem_num_dofs(p);
  double *x = calloc(n, sizeof(double));
  hpmg_error e = hpmg_solver_solve(s, NULL, x);
  hpmg_stats st;
  hpmg_solver_get_stats(s, &st);
  r.iters = st.iterations;
  r.converged = e == HPMG_SUCCESS && st.converged;
  r.relres = st.residual / st.residual0;
  hpmg_problem_error(p, x, &r.l2, &r.maxerr);
  free(x);
  hpmg_solver_destroy(&s);
  hpmg_problem_destroy(&p);
  return r;
}

static hpmg_problem_options prob(int dim, int k, int L) {
  hpmg_problem_options po;
  hpmg_problem_options_default(&po);
  po.dim = dim;
  po.degree = k;
  po.refine = L;
  return po;
}

static hpmg_solver_options solver(void) {
  hpmg_solver_options so;
  hpmg_solver_options_default(&so);
  return so;
}

static void order(int dim, int kmax) {
  hpmg_solver_options so = solver();
  so.tol = 1e-13;
  for (int k = 1; k <= kmax; k++) {
    /* two meshes in the asymptotic range, errors well above round-off */
    int L = dim == 2 ? (k <= 2 ? 4 : k <= 4 ? 3 : 2) : (k <= 2 ? 3 : k <= 4 ? 2 : 1);
    result a = solve(prob(dim, k, L), so), b = solve(prob(dim, k, L + 1), so);
    double p = log2(a.l2 / b.l2);
    printf("order dim %d k %d: L=%d err %.4e, L=%d err %.4e, observed order %.3f (expected %d)\n", dim, k, L, a.l2,
           L + 1, b.l2, p, k + 1);
    CHECK(a.converged && b.converged, "dim %d k %d: solves converge", dim, k);
    CHECK(fabs(p - (k + 1)) <= 0.2, "dim %d k %d: observed L2 order %.3f, expected %d +- 0.2", dim, k, p, k + 1);
  }
}

static void iters(int dim, int k, int L0, int L1) {
  int mn = 1000, mx = 0;
  for (int L = L0; L <= L1; L++) {
    result r = solve(prob(dim, k, L), solver());
    printf("iterations dim %d k %d L %d: %d (relres %.2e, L2 %.3e)\n", dim, k, L, r.iters, r.relres, r.l2);
    CHECK(r.converged, "dim %d k %d L %d converges", dim, k, L);
    mn = r.iters < mn ? r.iters : mn;
    mx = r.iters > mx ? r.iters : mx;
  }
  CHECK(mx - mn <= 1, "dim %d k %d: iteration counts vary from %d to %d under refinement", dim, k, mn, mx);
  CHECK(mx <= 8, "dim %d k %d: at most 8 CG iterations to 1e-9 (got %d)", dim, k, mx);
}

static void helmholtz(void) {
  for (int dim = 2; dim <= 3; dim++) {
    int k = 3, L = dim == 2 ? 4 : 2;
    double lambdas[] = {0.0, 10.0, 1e3, 1e6};
    for (int i = 0; i < 4; i++) {
      hpmg_problem_options po = prob(dim, k, L);
      po.lambda = lambdas[i];
      result r = solve(po, solver()), r2;
      po.refine = L + 1;
      r2 = solve(po, solver());
      double p = log2(r.l2 / r2.l2);
      printf("helmholtz dim %d lambda %g: iterations %d/%d, L2 %.3e -> %.3e (order %.2f)\n", dim, lambdas[i], r.iters,
             r2.iters, r.l2, r2.l2, p);
      CHECK(r.converged && r2.converged, "helmholtz dim %d lambda %g converges", dim, lambdas[i]);
      CHECK(r.iters <= 8 && r2.iters <= 8, "helmholtz dim %d lambda %g: iterations %d/%d", dim, lambdas[i], r.iters, r2.iters);
      CHECK(fabs(p - (k + 1)) <= 0.3, "helmholtz dim %d lambda %g: order %.2f", dim, lambdas[i], p);
    }
  }
}

static void precision(int dim, int k, int L) {
  hpmg_solver_options so = solver();
  result d = solve(prob(dim, k, L), so);
  so.precision = HPMG_PREC_MIXED;
  result m = solve(prob(dim, k, L), so);
  printf("precision dim %d k %d L %d: double %d it L2 %.6e | mixed %d it L2 %.6e\n", dim, k, L, d.iters, d.l2, m.iters,
         m.l2);
  CHECK(d.converged && m.converged, "double and mixed converge");
  CHECK(d.iters == m.iters, "mixed needs the same iterations as double (%d vs %d)", m.iters, d.iters);
  CHECK(fabs(m.l2 - d.l2) <= 1e-3 * d.l2, "mixed L2 error %.6e equals double %.6e to 3 digits", m.l2, d.l2);
  /* float everywhere: converges to float-level tolerances, stalls only near float round-off */
  so.precision = HPMG_PREC_FLOAT;
  so.tol = 1e-5;
  result f5 = solve(prob(dim, k, L), so);
  so.tol = 1e-9;
  so.maxit = 30;
  result f9 = solve(prob(dim, k, L), so);
  const double rho = float_rounding_residual(dim, k, L);
  printf("float: tol 1e-5 -> %d it (relres %.2e); tol 1e-9 -> converged=%d, stalls at true relres %.2e; "
         "float-rounded exact solution has relres %.2e\n", f5.iters, f5.relres, f9.converged, f9.relres, rho);
  CHECK(!f9.converged, "float alone cannot reach 1e-9 (true residual)");
  CHECK(f9.relres <= 10 * rho, "float stalls at %.2e, no earlier than float round-off allows (10 x %.2e)", f9.relres, rho);
  so.tol = 10 * rho;
  result ft = solve(prob(dim, k, L), so);
  CHECK(ft.converged, "float converges to 10x its round-off level %.2e (relres %.2e)", 10 * rho, ft.relres);
}

static void smoothers(void) {
  struct {
    hpmg_smoother_kind s;
    hpmg_solver_kind k;
    int maxit;
  } c[] = {{HPMG_SMOOTHER_JACOBI, HPMG_SOLVER_CG, 40}, {HPMG_SMOOTHER_GS, HPMG_SOLVER_CG, 30},
           {HPMG_SMOOTHER_SGS, HPMG_SOLVER_CG, 30},   {HPMG_SMOOTHER_CHEBYSHEV, HPMG_SOLVER_VCYCLE, 30},
           {HPMG_SMOOTHER_SGS, HPMG_SOLVER_VCYCLE, 40}};
  for (int i = 0; i < 5; i++) {
    hpmg_solver_options so = solver();
    so.smoother = c[i].s;
    so.solver = c[i].k;
    int its[2];
    for (int L = 3; L <= 4; L++) {
      result r = solve(prob(2, 2, L), so);
      its[L - 3] = r.iters;
      CHECK(r.converged && r.iters <= c[i].maxit, "smoother %d solver %d L %d: converged %d in %d", (int)c[i].s,
            (int)c[i].k, L, r.converged, r.iters);
    }
    printf("smoother %d solver %d: iterations %d, %d\n", (int)c[i].s, (int)c[i].k, its[0], its[1]);
    CHECK(abs(its[1] - its[0]) <= 2, "iterations stay bounded under refinement");
  }
}

static double f_sine(const double x[3], void *user) {
  int dim = *(int *)user;
  double s = dim * M_PI * M_PI * sin(M_PI * x[0]) * sin(M_PI * x[1]);
  return dim == 3 ? s * sin(M_PI * x[2]) : s;
}

static int api(void) {
  for (int dim = 2; dim <= 3; dim++) {
    hpmg_problem_options po = prob(dim, 3, dim == 2 ? 3 : 2);
    hpmg_problem p;
    CHECK_OK(hpmg_problem_create(&po, &p));
    int64_t n = hpmg_problem_num_dofs(p);
    double *b = malloc(8 * n), *x1 = calloc(n, 8), *x2 = calloc(n, 8);
    CHECK_OK(hpmg_problem_load_vector(p, f_sine, &dim, b));
    hpmg_solver_options so = solver();
    hpmg_solver s;
    CHECK_OK(hpmg_solver_create(p, &so, &s));
    CHECK_OK(hpmg_solver_solve(s, b, x1));
    CHECK_OK(hpmg_solver_solve(s, NULL, x2));
    double d = 0;
    for (int64_t i = 0; i < n; i++) d = fmax(d, fabs(x1[i] - x2[i]));
    CHECK(d < 1e-12, "dim %d: user load vector gives the built-in solution (diff %.3e)", dim, d);
    b[n / 2] = NAN;
    CHECK(hpmg_solver_solve(s, b, x1) == HPMG_ERR_NUMERIC, "NaN in the right-hand side is refused");
    CHECK(strstr(hpmg_last_error(), "non-finite") != NULL, "message: %s", hpmg_last_error());
    free(b); free(x1); free(x2);
    hpmg_solver_destroy(&s);
    hpmg_problem_destroy(&p);
  }
  hpmg_problem_options po = prob(3, 9, 2);
  po.degree = 11;
  hpmg_problem p;
  CHECK(hpmg_problem_create(&po, &p) == HPMG_ERR_ARG, "degree 11 refused");
  CHECK(strstr(hpmg_last_error(), "degree") != NULL, "message names the degree: %s", hpmg_last_error());
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  if (!strcmp(argv[1], "order")) order(atoi(argv[2]), atoi(argv[3]));
  else if (!strcmp(argv[1], "iters")) iters(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), atoi(argv[5]));
  else if (!strcmp(argv[1], "helmholtz")) helmholtz();
  else if (!strcmp(argv[1], "precision")) precision(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
  else if (!strcmp(argv[1], "smoothers")) smoothers();
  else if (!strcmp(argv[1], "api")) api();
  else return 2;
  return check_report();
}
