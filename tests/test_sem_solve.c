/* Spectral elements with static condensation through the public API
 * (HPMG_DISC_SEM, docs/sem.md): harmonic polynomials reproduced exactly
 * (load, Dirichlet lifting, Neumann fluxes, dCG, interior recovery), L2
 * convergence of the recovered field at order p + 1 (p = 2..8, ratios
 * printed), singular problems (projection, mean-free result, refusal
 * without projection), dCG iteration counts against bounds, and the
 * refusals of bad options. */
#include <string.h>
#include "check.h"
#include "test_env.h"
#include "disc/fd/fd_box.h"
#include "disc/sem/sem_system.h"
#include "hpmg.h"

/* harmonic, and GLL quadrature integrates its stiffness and face fluxes
 * exactly for p >= 3: the discrete solution is u itself */
static void poly(int dim, const double x[3], double *u, double g[3]) {
  if (dim == 2) {
    *u = x[0] * x[0] - x[1] * x[1] + 3 * x[0] * x[1] + x[0] - 2 * x[1] + 0.5;
    g[0] = 2 * x[0] + 3 * x[1] + 1, g[1] = -2 * x[1] + 3 * x[0] - 2, g[2] = 0;
  } else {
    *u = x[0] * x[0] + x[1] * x[1] - 2 * x[2] * x[2] + x[0] * x[1] * x[2] + x[0] - x[1] + 0.25;
    g[0] = 2 * x[0] + x[1] * x[2] + 1, g[1] = 2 * x[1] + x[0] * x[2] - 1, g[2] = -4 * x[2] + x[0] * x[1];
  }
}
static int poly_dim;
static double zero_f(const double x[3], void *u) {
  (void)x, (void)u;
  return 0.0;
}
static double poly_dirichlet(const double x[3], void *u) {
  (void)u;
  double v, g[3];
  poly(poly_dim, x, &v, g);
  return v;
}
static double poly_flux(const double x[3], void *face) {
  const int f = *(const int *)face;
  double v, g[3];
  poly(poly_dim, x, &v, g);
  return (f & 1) ? g[f / 2] : -g[f / 2];
}

static void default_sem(hpmg_problem_options *po, int dim, int p, int cells) {
  hpmg_problem_options_default(po);
  po->disc = HPMG_DISC_SEM;
  po->dim = dim;
  po->degree = p;
  for (int d = 0; d < dim; d++) po->cells[d] = cells;
}

static hpmg_error solve(const hpmg_problem_options *po, double tol, const double *b, double **x, hpmg_problem *prob,
                        hpmg_stats *st) {
  hpmg_solver_options so;
  hpmg_solver_options_default(&so);
  so.solver = HPMG_SOLVER_CG; /* dCG (auto is kvMG) */
  so.tol = tol;
  so.maxit = 100000;
  hpmg_solver s;
  *x = NULL;
  hpmg_error e = hpmg_problem_create(po, prob);
  if (e) return e;
  e = hpmg_solver_create(*prob, &so, &s);
  if (e) {
    hpmg_problem_destroy(prob);
    return e;
  }
  const int64_t n = hpmg_problem_num_dofs(*prob);
  *x = calloc((size_t)n, sizeof(double));
  e = hpmg_solver_solve(s, b, *x);
  hpmg_solver_get_stats(s, st);
  hpmg_solver_destroy(&s);
  return e;
}

static int faces[6] = {0, 1, 2, 3, 4, 5};
static double sem_test_coord(const double x[3], void *d) { return x[*(const int *)d]; }

static void check_polynomial(int dim, int p, const hpmg_bc_kind kinds[6], int stretched) {
  hpmg_problem_options po;
  default_sem(&po, dim, p, 3);
  po.cells[1] = 2;
  poly_dim = dim;
  for (int f = 0; f < 2 * dim; f++) {
    po.bc[f].kind = kinds[f];
    po.bc[f].fn = kinds[f] == HPMG_BC_DIRICHLET ? poly_dirichlet : poly_flux;
    po.bc[f].user = &faces[f];
  }
  if (stretched) {
    po.spacing[0].kind = HPMG_SPACING_GEOMETRIC;
    po.spacing[0].param = 1.7;
    po.spacing[1].kind = HPMG_SPACING_TANH;
    po.spacing[1].param = 1.1;
  }
  po.box[0] = 1.3, po.box[1] = 0.8, po.box[2] = 1.1;
  hpmg_problem prob;
  double *x = NULL;
  hpmg_stats st;
  hpmg_problem tmp;
  CHECK(hpmg_problem_create(&po, &tmp) == HPMG_SUCCESS, "polynomial: create: %s", hpmg_last_error());
  const int64_t n = hpmg_problem_num_dofs(tmp);
  double *b = malloc(sizeof(double) * (size_t)n);
  hpmg_problem_load_vector(tmp, zero_f, NULL, b);
  hpmg_problem_destroy(&tmp);
  hpmg_error e = solve(&po, 1e-14, b, &x, &prob, &st);
  CHECK(e == HPMG_SUCCESS, "%dD p=%d polynomial solve: %s", dim, p, hpmg_last_error());
  if (!e) {
    /* the nodes' coordinates: "load vectors" (f at the nodes) of x_d */
    double *cx[3];
    for (int d = 0; d < 3; d++) cx[d] = malloc(sizeof(double) * (size_t)n);
    for (int d = 0; d < dim; d++) hpmg_problem_load_vector(prob, sem_test_coord, &faces[d], cx[d]);
    double err = 0, scale = 0;
    for (int64_t idx = 0; idx < n; idx++) {
      const double xx[3] = {cx[0][idx], cx[1][idx], dim == 3 ? cx[2][idx] : 0.0};
      double u, g[3];
      poly(dim, xx, &u, g);
      err = fmax(err, fabs(x[idx] - u));
      scale = fmax(scale, fabs(u));
    }
    CHECK(err <= 1e-10 * scale, "%dD p=%d %s polynomial field: max error %.3g (scale %.3g)", dim, p,
          stretched ? "stretched" : "uniform", err, scale);
    printf("  polynomial %dD p=%d %-9s bc", dim, p, stretched ? "stretched" : "uniform");
    for (int f = 0; f < 2 * dim; f++) printf(" %c", kinds[f] == HPMG_BC_DIRICHLET ? 'D' : 'N');
    printf(": max error %.2e, %d dCG iterations\n", err, st.iterations);
    for (int d = 0; d < 3; d++) free(cx[d]);
  }
  free(x);
  free(b);
  hpmg_problem_destroy(&prob);
}

/* L2 errors on n and 2n elements per direction, manufactured box solution */
static void check_convergence(int dim, int p, int n, const hpmg_bc_kind kinds[6]) {
  double l2[2], mx[2];
  int its[2];
  for (int r = 0; r < 2; r++) {
    hpmg_problem_options po;
    default_sem(&po, dim, p, n << r);
    for (int f = 0; f < 2 * dim; f++) po.bc[f].kind = kinds[f];
    po.box[0] = 1.0, po.box[1] = 1.5, po.box[2] = 0.75;
    po.lambda = 1.5;
    hpmg_problem prob;
    double *x = NULL;
    hpmg_stats st;
    hpmg_error e = solve(&po, 1e-13, NULL, &x, &prob, &st);
    CHECK(e == HPMG_SUCCESS, "convergence %dD p=%d: %s", dim, p, hpmg_last_error());
    l2[r] = mx[r] = NAN;
    its[r] = st.iterations;
    if (!e) hpmg_problem_error(prob, x, &l2[r], &mx[r]);
    free(x);
    hpmg_problem_destroy(&prob);
  }
  const double order = log2(l2[0] / l2[1]);
  printf("  convergence %dD p=%d, %d -> %d elements: L2 %.3e -> %.3e, ratio %.1f (2^(p+1) = %d), order %.2f; max %.2e; dCG %d, %d\n",
         dim, p, n, 2 * n, l2[0], l2[1], l2[0] / l2[1], 1 << (p + 1), order, mx[1], its[0], its[1]);
  CHECK(order >= p + 1 - 0.3, "%dD p=%d: L2 order %.2f below p + 1 = %d", dim, p, order, p + 1);
  CHECK(its[1] > its[0] && its[1] <= 3 * its[0], "%dD p=%d: dCG iterations %d -> %d on twice the elements", dim, p, its[0],
        its[1]);
}

/* no Dirichlet face, lambda = 0: the result is free of the constants, the
 * projection removes a constant added to f exactly, and without projection
 * the incompatible f is refused */
static void check_singular(int dim, int p) {
  hpmg_problem_options po;
  default_sem(&po, dim, p, 4);
  po.bc[0].kind = po.bc[1].kind = HPMG_BC_PERIODIC;
  for (int f = 2; f < 2 * dim; f++) po.bc[f].kind = HPMG_BC_NEUMANN;
  hpmg_problem prob;
  double *x0 = NULL, *x1 = NULL;
  hpmg_stats st;
  hpmg_error e = solve(&po, 1e-13, NULL, &x0, &prob, &st);
  CHECK(e == HPMG_SUCCESS, "singular %dD: %s", dim, hpmg_last_error());
  double l2 = NAN, mx = NAN;
  if (!e) hpmg_problem_error(prob, x0, &l2, &mx);
  CHECK(l2 < 1e-3 && fabs(st.compat_defect) < 1e-12, "singular %dD p=%d: L2 error %.3g, compat defect %.3g", dim, p, l2,
        st.compat_defect);
  const int64_t n = hpmg_problem_num_dofs(prob);
  hpmg_problem_destroy(&prob);
  /* f + 3.7 with user data: the built-in f at the nodes, boundary data as functions of the same solution are not
   * available here, so compare two user solves: zero-flux Neumann, f and f + 3.7 */
  for (int f = 2; f < 2 * dim; f++) po.bc[f].value = 0;
  double *b = malloc(sizeof(double) * (size_t)n);
  for (int64_t i = 0; i < n; i++) b[i] = check_rand();
  free(x0);
  x0 = NULL;
  e = solve(&po, 1e-13, b, &x0, &prob, &st);
  CHECK(e == HPMG_SUCCESS, "singular %dD random f: %s", dim, hpmg_last_error());
  const double defect0 = st.compat_defect;
  hpmg_problem_destroy(&prob);
  for (int64_t i = 0; i < n; i++) b[i] += 3.7;
  e = solve(&po, 1e-13, b, &x1, &prob, &st);
  CHECK(e == HPMG_SUCCESS, "singular %dD f + 3.7: %s", dim, hpmg_last_error());
  double d = 0, sc = 0;
  for (int64_t i = 0; i < n && x0 && x1; i++) d = fmax(d, fabs(x0[i] - x1[i])), sc = fmax(sc, fabs(x0[i]));
  CHECK(d <= 1e-9 * sc, "singular %dD: f + const changes the projected solution by %.3g (scale %.3g)", dim, d, sc);
  CHECK_CLOSE(st.compat_defect - defect0, 3.7, 1e-10, 3.7, "compat_defect is the mean of f");
  printf("  singular %dD p=%d: manufactured L2 %.2e; f + 3.7: defect %.6f -> %.6f, solutions differ by %.1e\n", dim, p, l2,
         defect0, st.compat_defect, d);
  hpmg_problem_destroy(&prob);
  po.project_rhs = 0;
  free(x1);
  x1 = NULL;
  e = solve(&po, 1e-13, b, &x1, &prob, &st);
  CHECK(e == HPMG_ERR_ARG && strstr(hpmg_last_error(), "compatib"), "singular without projection: %d %s", e,
        hpmg_last_error());
  hpmg_problem_destroy(&prob);
  free(b);
  free(x0);
  free(x1);
}

static void check_refusals(void) {
  hpmg_problem_options po;
  hpmg_problem prob = NULL;
  default_sem(&po, 3, 1, 4);
  CHECK(hpmg_problem_create(&po, &prob) == HPMG_ERR_ARG && strstr(hpmg_last_error(), "--degree"), "degree 1: %s",
        hpmg_last_error());
  po.degree = 33;
  CHECK(hpmg_problem_create(&po, &prob) == HPMG_ERR_ARG && strstr(hpmg_last_error(), "2..32"), "degree 33: %s",
        hpmg_last_error());
  po.degree = 4;
  po.cells[1] = 2;
  po.bc[2].kind = po.bc[3].kind = HPMG_BC_PERIODIC;
  CHECK(hpmg_problem_create(&po, &prob) == HPMG_ERR_ARG && strstr(hpmg_last_error(), "at least 3"), "periodic 2: %s",
        hpmg_last_error());
  po.cells[1] = 4;
  po.bc[2].kind = po.bc[3].kind = HPMG_BC_DIRICHLET;
  const double nodes[5] = {0, 0.25, 0.25, 0.75, 1.0};
  po.spacing[0].kind = HPMG_SPACING_NODES;
  po.spacing[0].nodes = nodes;
  CHECK(hpmg_problem_create(&po, &prob) == HPMG_ERR_ARG, "zero width accepted");
  printf("  zero width: %s\n", hpmg_last_error());
  po.spacing[0].kind = HPMG_SPACING_UNIFORM;
  CHECK(prob == NULL, "a refused problem was created");
  CHECK(hpmg_problem_create(&po, &prob) == HPMG_SUCCESS, "valid options refused: %s", hpmg_last_error());
  hpmg_solver_options so;
  hpmg_solver_options_default(&so);
  so.solver = HPMG_SOLVER_GMRES;
  hpmg_solver s = NULL;
  CHECK(hpmg_solver_create(prob, &so, &s) == HPMG_ERR_ARG && strstr(hpmg_last_error(), "dCG"), "gmres: %s",
        hpmg_last_error());
  so.solver = HPMG_SOLVER_VCYCLE;
  so.smoother = HPMG_SMOOTHER_JACOBI;
  CHECK(hpmg_solver_create(prob, &so, &s) == HPMG_ERR_ARG && strstr(hpmg_last_error(), "star smoother"),
        "vcycle with jacobi: %s", hpmg_last_error());
  so.solver = HPMG_SOLVER_CG;
  so.smoother = HPMG_SMOOTHER_JACOBI;
  so.sweeps_doubling = 1;
  CHECK(hpmg_solver_create(prob, &so, &s) == HPMG_ERR_ARG && strstr(hpmg_last_error(), "kvMG"), "dcg doubling: %s",
        hpmg_last_error());
  CHECK(s == NULL, "a refused solver was created");
  hpmg_problem_destroy(&prob);
}

/* paper 001, Table 1, alpha = 1, p = 4: 8^3 elements on (0, 2 pi)^3, eq. 27,
 * dCG to a 1e-10 residual reduction; published n10 = 71. The paper does not
 * say which diagonal, norm or start it uses (docs/sem.md): the bound only
 * catches a preconditioner or operator that went wrong. */
static void check_table1(void) {
  hpmg_problem_options po;
  default_sem(&po, 3, 4, 8);
  po.rhs = HPMG_RHS_WAVES;
  for (int d = 0; d < 3; d++) po.box[d] = 2 * M_PI;
  hpmg_problem prob;
  double *x = NULL;
  hpmg_stats st;
  hpmg_error e = solve(&po, 1e-10, NULL, &x, &prob, &st);
  CHECK(e == HPMG_SUCCESS, "table 1: %s", hpmg_last_error());
  printf("  paper 001 Table 1, alpha 1, p 4: dCG n10 = %d (published 71), %lld condensed unknowns\n", st.iterations,
         (long long)st.dofs_condensed);
  CHECK(st.iterations >= 57 && st.iterations <= 107, "table 1: dCG n10 = %d outside [0.8, 1.5] x 71", st.iterations);
  free(x);
  hpmg_problem_destroy(&prob);
}

/* eq. 27: gradient and f = lambda u - Laplace u against central differences,
 * and the recovered field converging at order p + 1 once the mesh resolves
 * its waves (2D, 16 -> 32 elements, p = 8) */
static void check_waves(void) {
  for (int dim = 2; dim <= 3; dim++) {
    double worst_g = 0, worst_f = 0;
    for (int t = 0; t < 20; t++) {
      double x[3] = {M_PI * (1 + check_rand()), M_PI * (1 + check_rand()), dim == 3 ? M_PI * (1 + check_rand()) : 0};
      double u, g[3], f;
      const double lam = 0.7, h = 1e-4;
      fd_box_waves(dim, lam, x, &u, g, &f);
      double lap = 0;
      for (int d = 0; d < dim; d++) {
        double xp[3] = {x[0], x[1], x[2]}, xm[3] = {x[0], x[1], x[2]}, up, um;
        xp[d] += h, xm[d] -= h;
        fd_box_waves(dim, lam, xp, &up, NULL, NULL);
        fd_box_waves(dim, lam, xm, &um, NULL, NULL);
        worst_g = fmax(worst_g, fabs((up - um) / (2 * h) - g[d]) / 100.0);
        lap += (up - 2 * u + um) / (h * h);
      }
      worst_f = fmax(worst_f, fabs(lam * u - lap - f) / 1e4);
    }
    CHECK(worst_g < 1e-5 && worst_f < 1e-5, "eq. 27 in %dD: gradient %.3g, f %.3g against central differences (scaled)",
          dim, worst_g, worst_f);
  }
  double l2[2];
  for (int r = 0; r < 2; r++) {
    hpmg_problem_options po;
    default_sem(&po, 2, 8, 16 << r);
    po.rhs = HPMG_RHS_WAVES;
    po.box[0] = po.box[1] = 2 * M_PI;
    hpmg_problem prob;
    double *x = NULL, mx;
    hpmg_stats st;
    hpmg_error e = solve(&po, 1e-12, NULL, &x, &prob, &st);
    CHECK(e == HPMG_SUCCESS, "waves 2D: %s", hpmg_last_error());
    l2[r] = NAN;
    if (!e) hpmg_problem_error(prob, x, &l2[r], &mx);
    free(x);
    hpmg_problem_destroy(&prob);
  }
  printf("  eq. 27 in 2D, p = 8, 16 -> 32 elements: L2 %.3e -> %.3e, order %.2f\n", l2[0], l2[1], log2(l2[0] / l2[1]));
  CHECK(log2(l2[0] / l2[1]) >= 7.5, "eq. 27: order %.2f below 7.5", log2(l2[0] / l2[1]));
}

/* The rounding floor (docs/sem.md, "Error floor"): p = 8 on 12^3 elements,
 * sine load, kMG to 1e-13. Without the difference form of the condensed
 * operator the L2 error stops at 5.6e-13 (the stiffness parts of H_BB u
 * and H_BI H_II^{-1} H_IB u, O(h |u|) each, cancel to O(h^3) only up to
 * rounding); removing the vertex mean alone leaves 1.1e-14, the vertex
 * interpolant, with the interior eigenvectors from LAPACK's dsygv,
 * 4.2e-15..2.0e-14 (its rounding moved with OpenBLAS's threading), and with
 * them from Jacobi rotations in long double 1.66e-15 (Release, Zen 5; the
 * Debug sanitizer build 8.2e-16). The bound 6e-15 is 90x below the floor
 * without the difference form. */
static void check_floor(void) {
  if (test_max_degree(8) < 8) { /* make test-arm: degrees up to 4 under the emulator */
    printf("  floor 3D p=8: skipped (HPMG_TEST_MAX_DEGREE=%d)\n", test_max_degree(8));
    return;
  }
  hpmg_problem_options po;
  default_sem(&po, 3, 8, 12);
  hpmg_solver_options so;
  hpmg_solver_options_default(&so);
  so.solver = HPMG_SOLVER_CG; /* kMG */
  so.smoother = HPMG_SMOOTHER_PATCH;
  so.tol = 1e-13;
  hpmg_problem prob;
  hpmg_solver s;
  double l2 = NAN, mx = NAN, *x = NULL;
  hpmg_stats st = {0};
  hpmg_error e = hpmg_problem_create(&po, &prob);
  if (!e) {
    e = hpmg_solver_create(prob, &so, &s);
    if (!e) {
      x = calloc((size_t)hpmg_problem_num_dofs(prob), sizeof(double));
      e = hpmg_solver_solve(s, NULL, x);
      hpmg_solver_get_stats(s, &st);
      hpmg_solver_destroy(&s);
      if (!e) hpmg_problem_error(prob, x, &l2, &mx);
      free(x);
    }
    hpmg_problem_destroy(&prob);
  }
  CHECK(e == HPMG_SUCCESS, "floor: %s", hpmg_last_error());
  printf("  floor 3D p=8, 12^3 elements, kMG %d iterations: L2 %.3e, max %.3e\n", st.iterations, l2, mx);
  CHECK(l2 < 6e-15, "floor: p=8 on 12^3: L2 error %.3e above 6e-15 (rounding floor)", l2);
}

int main(void) {
  const hpmg_bc_kind D = HPMG_BC_DIRICHLET, N = HPMG_BC_NEUMANN, P = HPMG_BC_PERIODIC;
  check_refusals();
  const hpmg_bc_kind allD[6] = {D, D, D, D, D, D}, mixed[6] = {D, N, N, D, D, N};
  for (int p = 3; p <= 6; p += 3) {
    check_polynomial(2, p, allD, 0);
    check_polynomial(2, p, mixed, 1);
    check_polynomial(3, p, allD, 1);
    check_polynomial(3, p, mixed, 0);
  }
  const hpmg_bc_kind conv2[6] = {D, N, P, P, D, D}, conv3[6] = {D, N, N, D, P, P};
  for (int p = 2; p <= 8; p++) check_convergence(2, p, 3, conv2);
  for (int p = 2; p <= 4; p++) check_convergence(3, p, 3, conv3);
  check_singular(2, 5);
  check_singular(3, 3);
  check_waves();
  check_table1();
  check_floor();
  return check_report();
}
