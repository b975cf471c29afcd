/* The p-multigrid of paper 001 (src/disc/sem/sem_pmg.h):
 *  - degrees of the levels;
 *  - transfers: the prolongation reproduces every polynomial of the coarse
 *    degree at the fine skeleton nodes (the embedded interpolation), and the
 *    restriction is its exact transpose (y.J x = J^T y.x), 2D and 3D, every
 *    BC kind, stretched widths;
 *  - the h-multigrid coarse solve (HPMG_SEM_COARSE_HMG): the degree-1 to
 *    p = 2 prolongation is the multilinear interpolation and the exact
 *    transpose of the restriction; the degree-1 multigrid reaches its
 *    tolerance on stretched mixed-BC and singular boxes; kMG needs at most
 *    one iteration more than with the CG coarse solve; --solver auto = kvMG;
 *  - the exact coarse solve (HPMG_SEM_COARSE_FDM, the default on these
 *    meshes): it inverts the masked condensed operator to rounding (1e-12
 *    times the ratio of the largest to the smallest element width; every BC
 *    kind, stretched, lambda = 0 and > 0, 2D and 3D), and kMG needs no more
 *    iterations with it than with the h-MG one; AUTO takes it below the
 *    threshold and the h-MG above;
 *  - iteration counts through the public API against paper 001: Fig. 6
 *    (homogeneous 8^3 mesh, pseudo-random f, Dirichlet: MG 3, kMG and kvMG
 *    2-3 iterations to a 1e-10 reduction) and Table 1 (8^3 elements on
 *    (0, 2 pi)^3, eq. 27, geometric widths alpha = 1, 1.5, 2) for p = 4 and
 *    8 (argument "full": also p = 16 and Fig. 6 at p = 8, 12, 16, 24, 32; label slow),
 *    each within the published count + 1 or below (one row + 2, see
 *    test_table1); Fig. 7 (p = 8 on k^3 elements, k = 2, 3, 4, pseudo-random
 *    f: the MG variants' n10 does not grow with k, dCG's does).
 *    HPMG_TEST_MAX_DEGREE (tests/test_env.h) caps the degrees
 *    (the Arm build under qemu-user).
 * AUTO's threshold and the iteration counts run with the argument
 * "iterations" (label integration), the rest without (label unit). */
#include <string.h>
#include "check.h"
#include "core/hash.h"
#include "test_env.h"
#include "sem_test_mesh.h"
#include "disc/qk/qk_host.h"
#include "disc/sem/sem_pmg.h"
#include "disc/sem/sem_system.h"
#include "hpmg.h"

static int test_degrees(void) {
  int deg[HPMG_SEM_PMG_MAX_LEVELS];
  const int want[][8] = {{2, 1, 2},          {3, 2, 2, 3},          {4, 2, 2, 4},           {6, 3, 2, 4, 6},
                         {8, 3, 2, 4, 8},    {12, 3, 2, 4, 12},     {15, 3, 2, 4, 15},      {16, 4, 2, 4, 8, 16},
                         {17, 4, 2, 4, 8, 17}, {24, 4, 2, 4, 8, 24}, {32, 5, 2, 4, 8, 16, 32}};
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

/* kMG's iterations to a 1e-10 reduction from a random right-hand side (seed)
 * with coarse solver ck (resolved: the kind it resolved to); -1 on failure */
static int kmg_iterations(const hpmg_box *box, const hpmg_sem_mesh *fine, hpmg_sem_coarse_kind ck, unsigned seed,
                          hpmg_sem_coarse_kind *resolved) {
  hpmg_sem_pmg pm;
  if (hpmg_sem_pmg_create(box, fine, HPMG_SEM_SOLVE_KMG, 1, 1, ck, &pm)) return -1;
  if (resolved) *resolved = pm.coarse;
  double *rhs = malloc(sizeof(double) * (size_t)fine->ns), *x = calloc((size_t)fine->ns, sizeof(double));
  check_rng = seed;
  for (int64_t i = 0; i < fine->ns; i++) rhs[i] = fine->dirichlet && fine->dirichlet[i] ? 0.0 : check_rand();
  hpmg_krylov_params prm = {0};
  prm.rtol = 1e-10;
  prm.maxit = 200;
  prm.x0_zero = 1;
  hpmg_krylov_info in;
  const int ok = !hpmg_sem_pmg_solve(&pm, rhs, x, &prm, &in) && in.converged;
  free(rhs);
  free(x);
  hpmg_sem_pmg_destroy(&pm);
  return ok ? in.iterations : -1;
}

static int test_transfer(const config *c) {
  hpmg_problem_options o;
  sem_test_options(c, &o);
  hpmg_box box;
  hpmg_sem_mesh fine;
  CHECK_OK(hpmg_box_init(&o, &box));
  CHECK_OK(hpmg_sem_mesh_create(&box, c->p, 0.5, &fine));
  hpmg_sem_pmg pm;
  CHECK_OK(hpmg_sem_pmg_create(&box, &fine, HPMG_SEM_SOLVE_KMG, 1, 1, HPMG_SEM_COARSE_CG, &pm));
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

/* The degree-1 level (HPMG_SEM_COARSE_HMG): the prolongation to p = 2 is the
 * multilinear interpolation (a function of degree 1 per variable, set at the
 * free vertices, is reproduced at every p = 2 skeleton node whose element
 * has no Dirichlet vertex, and Dirichlet nodes get exactly 0), and the
 * restriction is its exact transpose. */
static int test_transfer_q1(const config *c) {
  hpmg_problem_options o;
  sem_test_options(c, &o);
  hpmg_box box;
  hpmg_sem_mesh fine;
  CHECK_OK(hpmg_box_init(&o, &box));
  CHECK_OK(hpmg_sem_mesh_create(&box, c->p, 0.5, &fine));
  hpmg_sem_pmg pm;
  CHECK_OK(hpmg_sem_pmg_create(&box, &fine, HPMG_SEM_SOLVE_KMG, 1, 1, HPMG_SEM_COARSE_HMG, &pm));
  CHECK(pm.hlev == 1 && pm.hmg.nlevels == 2, "dim=%d: a degree-1 level below p = 2 (hlev %d)", c->dim, pm.hlev);
  const hpmg_sem_mesh *m = pm.m[0];
  const hpmg_grid *g = &pm.q1;
  const int64_t nc = g->N, nf = m->ns;
  double *xc = malloc(sizeof(double) * (size_t)nc), *yf = malloc(sizeof(double) * (size_t)nf);
  double *Jx = malloc(sizeof(double) * (size_t)nf), *JTy = malloc(sizeof(double) * (size_t)nc);
  for (int64_t i = 0; i < nc; i++) xc[i] = check_rand();
  for (int64_t i = 0; i < nf; i++) yf[i] = check_rand();
  hpmg_sem_pmg_prolong(&pm, 0, xc, Jx);
  hpmg_sem_pmg_restrict(&pm, 0, yf, JTy);
  double a = 0, b = 0, sa = 0;
  for (int64_t i = 0; i < nf; i++) a += yf[i] * Jx[i], sa += fabs(yf[i] * Jx[i]);
  for (int64_t i = 0; i < nc; i++) b += JTy[i] * xc[i];
  CHECK(fabs(a - b) <= 1e-13 * sa, "dim=%d p=1->2: y.Jx = %.17g, J^T y.x = %.17g", c->dim, a, b);
  /* a function of degree 1 per variable at the free vertices */
  for (int64_t i2 = 0; i2 < g->n[2]; i2++)
    for (int64_t i1 = 0; i1 < g->n[1]; i1++)
      for (int64_t i0 = 0; i0 < g->n[0]; i0++) {
        const int64_t i[3] = {i0, i1, i2};
        double x[3] = {0, 0, 0};
        for (int d = 0; d < c->dim; d++) x[d] = m->periodic[d] ? 0.25 : m->x[d][i[d] + g->off[d]];
        xc[hpmg_grid_index(g, i0, i1, i2)] = poly(x, 1);
      }
  hpmg_sem_pmg_prolong(&pm, 0, xc, Jx);
  double *xl[3] = {NULL, NULL, NULL};
  for (int d = 0; d < c->dim; d++) CHECK_OK(hpmg_sem_lattice_coords(m, d, &xl[d]));
  double err = 0, scale = 0, dirmax = 0;
  int64_t checked = 0;
  const int64_t n2 = c->dim == 3 ? m->nlat[2] : 1;
  for (int64_t g2 = 0; g2 < n2; g2++)
    for (int64_t g1 = 0; g1 < m->nlat[1]; g1++)
      for (int64_t g0 = 0; g0 < m->nlat[0]; g0++) {
        const int64_t gg[3] = {g0, g1, g2};
        const int64_t s = hpmg_sem_skeleton_index(m, gg);
        if (s < 0) continue;
        if (m->dirichlet && m->dirichlet[s]) {
          dirmax = fmax(dirmax, fabs(Jx[s]));
          continue;
        }
        int near_dirichlet = 0; /* an element with a Dirichlet vertex: those vertices are not unknowns */
        for (int d = 0; d < c->dim; d++)
          near_dirichlet |= (m->bc[2 * d] == HPMG_BC_DIRICHLET && gg[d] < m->p) ||
                            (m->bc[2 * d + 1] == HPMG_BC_DIRICHLET && gg[d] > m->nlat[d] - 1 - m->p);
        if (near_dirichlet) continue;
        double x[3] = {xl[0][g0], xl[1][g1], c->dim == 3 ? xl[2][g2] : 0.0};
        for (int d = 0; d < c->dim; d++)
          if (m->periodic[d]) x[d] = 0.25;
        const double u = poly(x, 1);
        scale = fmax(scale, fabs(u));
        err = fmax(err, fabs(Jx[s] - u));
        checked++;
      }
  CHECK(checked > 0 && err <= 1e-13 * scale, "dim=%d p=1->2: degree 1 prolonged: max error %.3g (scale %.3g, %lld nodes)",
        c->dim, err, scale, (long long)checked);
  CHECK(dirmax == 0.0, "dim=%d p=1->2: prolongation at Dirichlet nodes %.3g, not 0", c->dim, dirmax);
  printf("  transfer dim=%d p=1->2: adjoint %.2e, multilinear error %.2e (%lld nodes)\n", c->dim, fabs(a - b) / sa,
         err / scale, (long long)checked);
  for (int d = 0; d < 3; d++) free(xl[d]);
  free(xc);
  free(yf);
  free(Jx);
  free(JTy);
  hpmg_sem_pmg_destroy(&pm);
  hpmg_sem_mesh_destroy(&fine);
  hpmg_box_destroy(&box);
  return 0;
}

/* The h-multigrid coarse solve on its own: from a random right-hand side
 * (mean zero where singular) its residual ||b - A_1 x|| is at most
 * coarse_rtol ||b|| (and the solve is not a single exact step where the
 * grid coarsens: at least one V-cycle, at most 10); and a whole kMG solve
 * with it needs at most one iteration more than with the CG coarse solve to
 * 1e-12 (rhs random; MG with it: the Table 1 and Fig. 6 counts below). */
static int test_coarse_hmg(const config *c) {
  hpmg_box box;
  hpmg_sem_mesh fine;
  CHECK_OK(make_mesh(c, &box, &fine));
  hpmg_sem_pmg pm;
  CHECK_OK(hpmg_sem_pmg_create(&box, &fine, HPMG_SEM_SOLVE_KMG, 1, 1, HPMG_SEM_COARSE_HMG, &pm));
  CHECK(pm.hlev == 1, "a degree-1 level");
  const int singular = hpmg_sem_singular(&fine);
  CHECK(pm.q1_singular == singular, "the degree-1 level is singular (%d) as the mesh (%d)", pm.q1_singular, singular);
  hpmg_level *L = &pm.hmg.lv[0];
  const int64_t n = L->n;
  double *b = L->b.data, *r = malloc(sizeof(double) * (size_t)n), bn = 0, rn = 0, mean = 0;
  for (int64_t i = 0; i < n; i++) b[i] = check_rand(), mean += b[i] / (double)n;
  for (int64_t i = 0; i < n && singular; i++) b[i] -= mean;
  for (int64_t i = 0; i < n; i++) bn += b[i] * b[i];
  hpmg_krylov_info info;
  CHECK_OK(hpmg_sem_pmg_coarse_hmg(&pm, &info));
  const hpmg_linop A = hpmg_qk_host_linop(&pm.qmg);
  hpmg_vec vr = hpmg_vec_wrap(hpmg_backend_host(), HPMG_REAL_DOUBLE, n, r);
  CHECK_OK(A.apply(A.ctx, &L->x, &vr));
  for (int64_t i = 0; i < n; i++) rn += (b[i] - r[i]) * (b[i] - r[i]);
  rn = sqrt(rn), bn = sqrt(bn);
  CHECK(rn <= pm.q1_rtol * bn, "coarse h-MG: residual %.3g of %.3g (rtol %.g)", rn, bn, pm.q1_rtol);
  CHECK(info.iterations >= 1 && info.iterations <= 10, "coarse h-MG: %d V-cycles (%d levels)", info.iterations,
        pm.qmg.nlevels);
  printf("  coarse h-MG dim=%d %s: %lld unknowns, %d levels, %d V-cycles, residual %.2e of rtol %.0e\n", c->dim,
         singular ? "singular" : "regular", (long long)n, pm.qmg.nlevels, info.iterations, rn / bn, pm.q1_rtol);
  free(r);
  hpmg_sem_pmg_destroy(&pm);
  /* whole solves: h-MG coarse vs CG coarse */
  {
    const int its[2] = {kmg_iterations(&box, &fine, HPMG_SEM_COARSE_HMG, 4242, NULL),
                        kmg_iterations(&box, &fine, HPMG_SEM_COARSE_CG, 4242, NULL)};
    CHECK(its[0] > 0 && its[1] > 0, "kMG: a solve failed (%d, %d iterations): %s", its[0], its[1], hpmg_last_error());
    printf("  dim=%d p=%d kMG: %d iterations with the h-MG coarse solve, %d with CG\n", c->dim, c->p, its[0], its[1]);
    CHECK(its[0] <= its[1] + 1, "dim=%d p=%d: %d iterations with the h-MG coarse solve, %d with CG", c->dim, c->p, its[0],
          its[1]);
  }
  hpmg_sem_mesh_destroy(&fine);
  hpmg_box_destroy(&box);
  return 0;
}

/* The exact coarse solve (HPMG_SEM_COARSE_FDM, sem_fdm.h): the fast
 * diagonalization of the full system, read on the skeleton, inverts the
 * masked condensed operator: A x = b to 1e-12 (relative, measured ~1e-15)
 * for random b (zero sum where singular), degrees 2, 3, 5, every BC kind,
 * stretched widths, lambda = 0 and > 0, 2D and 3D; AUTO takes it on small
 * meshes, and kMG needs no more iterations with it than with the h-MG one */
static int test_coarse_fdm(const config *c0) {
  const int degs[] = {2, 3, 5};
  for (int k = 0; k < 3; k++) {
    config c = *c0;
    c.p = degs[k];
    hpmg_box box;
    hpmg_sem_mesh m;
    CHECK_OK(make_mesh(&c, &box, &m));
    hpmg_sem_fdm f;
    CHECK_OK(hpmg_sem_fdm_create(&m, &f));
    const int64_t ns = m.ns;
    double *b = malloc(sizeof(double) * (size_t)ns), *x = malloc(sizeof(double) * (size_t)ns),
           *y = malloc(sizeof(double) * (size_t)ns), *w = malloc(sizeof(double) * hpmg_sem_mesh_work_size(&m));
    check_rng = 777 + (unsigned)k;
    for (int64_t i = 0; i < ns; i++) b[i] = m.dirichlet && m.dirichlet[i] ? 0.0 : check_rand();
    const int singular = hpmg_sem_singular(&m);
    hpmg_vec vb = hpmg_vec_wrap(hpmg_backend_host(), HPMG_REAL_DOUBLE, ns, b),
             vy = hpmg_vec_wrap(hpmg_backend_host(), HPMG_REAL_DOUBLE, ns, y);
    if (singular) CHECK_OK(hpmg_sem_project_constants(NULL, &vb));
    hpmg_sem_fdm_solve(&f, b, x);
    hpmg_sem_mesh_apply(&m, 1, x, y, w);
    if (singular) CHECK_OK(hpmg_sem_project_constants(NULL, &vy));
    double rn = 0, bn = 0;
    for (int64_t i = 0; i < ns; i++) rn += (y[i] - b[i]) * (y[i] - b[i]), bn += b[i] * b[i];
    const double rel = sqrt(rn / bn);
    /* the rounding of the 1D eigenbases grows with the spread of the element widths */
    double hmin = INFINITY, hmax = 0;
    for (int d = 0; d < c.dim; d++)
      for (int64_t j = 0; j < m.cells[d]; j++) {
        const double h = m.x[d][j + 1] - m.x[d][j];
        hmin = fmin(hmin, h), hmax = fmax(hmax, h);
      }
    CHECK(rel <= 1e-12 * hmax / hmin, "fdm dim=%d p=%d %s lambda=%g: |A x - b| / |b| = %.3g (widths %.3g..%.3g)",
          c.dim, c.p, singular ? "singular" : "regular", c.lambda, rel, hmin, hmax);
    printf("  fdm dim=%d p=%d cells %lldx%lldx%lld %s lambda=%g: %lld lattice unknowns, |A x - b| / |b| = %.2e, "
           "widths %.3g..%.3g\n",
           c.dim, c.p, (long long)c.cells[0], (long long)c.cells[1], (long long)c.cells[2],
           singular ? "singular" : "regular", c.lambda, (long long)f.N, rel, hmin, hmax);
    free(b), free(x), free(y), free(w);
    hpmg_sem_fdm_destroy(&f);
    hpmg_sem_mesh_destroy(&m);
    hpmg_box_destroy(&box);
  }
  /* whole solves, degree 4: AUTO = FDM here, and its iterations against the h-MG coarse solve's */
  config c = *c0;
  c.p = 4;
  hpmg_box box;
  hpmg_sem_mesh fine;
  CHECK_OK(make_mesh(&c, &box, &fine));
  hpmg_sem_coarse_kind kind = HPMG_SEM_COARSE_AUTO;
  const int its[2] = {kmg_iterations(&box, &fine, HPMG_SEM_COARSE_AUTO, 4243, &kind),
                      kmg_iterations(&box, &fine, HPMG_SEM_COARSE_HMG, 4243, NULL)};
  CHECK(kind == HPMG_SEM_COARSE_FDM, "AUTO on %lld elements: coarse kind %d, not FDM", (long long)fine.ne, (int)kind);
  CHECK(its[0] > 0 && its[1] > 0, "kMG: a solve failed (%d, %d iterations): %s", its[0], its[1], hpmg_last_error());
  printf("  dim=%d p=4 kMG: %d iterations with the FDM coarse solve, %d with h-MG\n", c.dim, its[0], its[1]);
  CHECK(its[0] <= its[1], "dim=%d p=4: %d iterations with the FDM coarse solve, %d with h-MG", c.dim, its[0], its[1]);
  hpmg_sem_mesh_destroy(&fine);
  hpmg_box_destroy(&box);
  return 0;
}

/* AUTO's two rules, each on either side of its threshold, building the
 * hierarchy only: the cost of a solve (2D, p = 2, E x E elements: 64 E
 * flops per element, FDM at E = 290, the h-multigrid at 310) and of the
 * setup (3D column of 1 x 1 x nz elements, degree 4: 80 nz^2 per element,
 * FDM at nz = 40, the h-multigrid at 60) */
static int test_coarse_auto(void) {
  const hpmg_bc_kind D = HPMG_BC_DIRICHLET;
  const struct {
    int dim, p;
    int64_t cells[3];
    hpmg_sem_coarse_kind want;
  } cases[] = {{2, 2, {290, 290, 1}, HPMG_SEM_COARSE_FDM},
               {2, 2, {310, 310, 1}, HPMG_SEM_COARSE_HMG},
               {3, 4, {1, 1, 40}, HPMG_SEM_COARSE_FDM},
               {3, 4, {1, 1, 60}, HPMG_SEM_COARSE_HMG}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    const config c = {cases[k].dim, cases[k].p, {cases[k].cells[0], cases[k].cells[1], cases[k].cells[2]},
                      {{D, D}, {D, D}, {D, D}}, {0, 0, 0}, {0, 0, 0}, 0.0};
    hpmg_box box;
    hpmg_sem_mesh fine;
    CHECK_OK(make_mesh(&c, &box, &fine));
    hpmg_sem_pmg pm;
    CHECK_OK(hpmg_sem_pmg_create(&box, &fine, HPMG_SEM_SOLVE_KMG, 1, 1, HPMG_SEM_COARSE_AUTO, &pm));
    const double ne = (double)fine.ne, fs = hpmg_sem_fdm_flops(pm.m[0]) / ne,
                 fu = hpmg_sem_fdm_setup_flops(pm.m[0]) / ne;
    CHECK(pm.coarse == cases[k].want, "AUTO on %lldx%lldx%lld elements (FDM %.0f / %.0f flops per element): kind %d",
          (long long)c.cells[0], (long long)c.cells[1], (long long)c.cells[2], fs, fu, (int)pm.coarse);
    printf("  AUTO on %lldx%lldx%lld elements: FDM %.0f flops per element and solve, %.0f in the setup: %s\n",
           (long long)c.cells[0], (long long)c.cells[1], (long long)c.cells[2], fs, fu,
           pm.coarse == HPMG_SEM_COARSE_FDM ? "FDM" : "h-MG");
    hpmg_sem_pmg_destroy(&pm);
    hpmg_sem_mesh_destroy(&fine);
    hpmg_box_destroy(&box);
  }
  return 0;
}

/* --solver auto: kvMG (the star smoother, sweeps doubled), dCG with Jacobi asked for */
static int test_auto(void) {
  hpmg_problem_options po;
  hpmg_problem_options_default(&po);
  po.disc = HPMG_DISC_SEM;
  po.degree = 4;
  for (int d = 0; d < 3; d++) po.cells[d] = 2;
  hpmg_problem prob;
  CHECK_OK(hpmg_problem_create(&po, &prob));
  hpmg_solver_options so;
  hpmg_solver_options_default(&so);
  CHECK(so.solver == HPMG_SOLVER_AUTO, "the default solver is auto");
  CHECK_OK(hpmg_solver_options_resolve(prob, &so));
  CHECK(so.solver == HPMG_SOLVER_CG && so.smoother == HPMG_SMOOTHER_PATCH && so.sweeps_doubling == 1,
        "auto: kvMG (solver %d, smoother %d, doubling %d)", (int)so.solver, (int)so.smoother, so.sweeps_doubling);
  hpmg_solver_options_default(&so);
  so.smoother = HPMG_SMOOTHER_JACOBI;
  CHECK_OK(hpmg_solver_options_resolve(prob, &so));
  CHECK(so.solver == HPMG_SOLVER_CG && so.smoother == HPMG_SMOOTHER_JACOBI && so.sweeps_doubling == 0,
        "auto with jacobi: dCG");
  hpmg_solver_options_default(&so);
  so.smoother = HPMG_SMOOTHER_CHEBYSHEV;
  CHECK(hpmg_solver_options_resolve(prob, &so) == HPMG_ERR_ARG && strstr(hpmg_last_error(), "--solver auto"),
        "auto with chebyshev refused: %s", hpmg_last_error());
  hpmg_problem_destroy(&prob);
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

/* pseudo-random f in [-1, 1): a hash of the point and the seed check_rng
 * (only read here), so the values do not depend on the order in which the
 * load vector's threads visit the nodes (check_rand() from them raced, and
 * the counts at the 1e-10 threshold changed from run to run) */
static double rand_f(const double x[3], void *u) {
  (void)u;
  return hpmg_hash_uniform(x, check_rng);
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

/* Fig. 7 of paper 001 (p = 16, n_e = k^3 up to 28^3): the MG variants'
 * iteration count does not grow with the element count, dCG's does. Here
 * p = 8 on k^3 elements of (0, 2 pi)^3, k = 2, 3, 4, pseudo-random f: each
 * MG variant's n10 at k = 3, 4 at most its n10 at k = 2 (measured 3, 3, 3
 * for each), dCG's strictly more at k = 4 than at k = 2 (41, 58, 81). The larger k
 * and p = 16: bench/sem_fig7.sh (docs/sem.md). */
static void test_fig7(void) {
  hpmg_problem_options po;
  hpmg_problem_options_default(&po);
  po.disc = HPMG_DISC_SEM;
  po.dim = 3;
  po.degree = test_max_degree(8);
  int its[4][3];
  for (int k = 2; k <= 4; k++) {
    for (int d = 0; d < 3; d++) po.cells[d] = k, po.box[d] = 2 * M_PI;
    printf("  Fig. 7, p = %d, %d^3 elements, random f:", po.degree, k);
    for (int s = DCG; s <= KVMG; s++) {
      check_rng = 4242 + k;
      its[s][k - 2] = n10(&po, s, 1);
      printf(" %s %d", names[s], its[s][k - 2]);
      fflush(stdout);
      CHECK(its[s][k - 2] >= 1, "Fig. 7 k=%d: %s failed", k, names[s]);
    }
    printf("\n");
  }
  /* below p = 6 (HPMG_TEST_MAX_DEGREE, the Arm run's 4) rho sits near an
   * integer n10 and drifts slowly with k: at p = 4 MG takes 4, 4, 5 (kMG and
   * kvMG 4, 4, 4), so one more iteration is allowed there */
  const int slack = po.degree < 6;
  for (int s = MG; s <= KVMG; s++)
    for (int k = 3; k <= 4; k++)
      CHECK(its[s][k - 2] <= its[s][0] + slack,
            "Fig. 7 p=%d: %s n10 grows with the element count: %d on 2^3, %d on %d^3 (allowed: %d more)", po.degree,
            names[s], its[s][0], its[s][k - 2], k, slack);
  CHECK(its[DCG][2] > its[DCG][0], "Fig. 7 p=%d: dCG n10 %d on 2^3, %d on 4^3 (expected to grow)", po.degree,
        its[DCG][0], its[DCG][2]);
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

/* no argument: the components (unit: degrees, transfers, the coarse solves);
 * "iterations": AUTO's threshold (meshes of ~300^2 elements) and the paper's
 * iteration counts (integration); "full": both, over the paper's whole range */
int main(int argc, char **argv) {
  const int full = argc > 1 && !strcmp(argv[1], "full");
  const int unit = full || argc < 2, iterations = full || (argc > 1 && !strcmp(argv[1], "iterations"));
  if (!unit && !iterations) {
    fprintf(stderr, "usage: %s [iterations|full]\n", argv[0]);
    return 2;
  }
  const hpmg_bc_kind D = HPMG_BC_DIRICHLET, N = HPMG_BC_NEUMANN, P = HPMG_BC_PERIODIC;
  const hpmg_spacing_kind U = HPMG_SPACING_UNIFORM, G = HPMG_SPACING_GEOMETRIC, T = HPMG_SPACING_TANH;
  const config cases[] = {
      {2, 8, {3, 4, 1}, {{D, N}, {N, N}}, {G, T}, {1.5, 1.2, 0}, 0},
      {2, 6, {3, 3, 1}, {{P, P}, {D, D}}, {U, G}, {0, 2.0, 0}, 0},
      {3, 4, {3, 2, 2}, {{N, N}, {N, N}, {N, N}}, {G, U, T}, {1.5, 0, 1.1}, 0},
      {3, 8, {3, 3, 2}, {{D, N}, {P, P}, {N, D}}, {U, G, U}, {0, 1.7, 0}, 0},
      {3, 5, {2, 2, 2}, {{D, D}, {D, D}, {D, D}}, {U, U, U}, {0, 0, 0}, 0},
  };
  const int pmax = test_max_degree(full ? 16 : 8);
  if (iterations) {
    test_coarse_auto();
    /* Fig. 6 over the paper's whole range with "full" (p = 24 and 32: 5.6 and 17 M GLL nodes) */
    const int fig6[] = {3, 4, 6, 8, 12, 16, 24, 32};
    const int pmax6 = test_max_degree(full ? 32 : 8);
    for (size_t i = 0; i < sizeof fig6 / sizeof fig6[0]; i++)
      if ((fig6[i] <= 6 || full) && fig6[i] <= pmax6) test_fig6(fig6[i]);
    for (int p = 4; p <= pmax; p *= 2) test_table1(p);
    test_fig7();
  }
  if (!unit) return check_report();
  test_degrees();
  test_auto();
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    if (cases[i].p <= pmax) test_transfer(&cases[i]), test_transfer_q1(&cases[i]);
  /* the coarse solve: stretched with mixed ends and lambda > 0 (3D, 2D), and singular (all Neumann, periodic) */
  const config coarse_cases[] = {
      {3, 4, {8, 6, 4}, {{D, N}, {P, P}, {N, D}}, {G, U, T}, {1.7, 0, 1.2}, 0.5},
      {2, 8, {16, 12, 1}, {{N, D}, {D, N}}, {T, G}, {1.3, 2.0, 0}, 0.0},
      {3, 4, {8, 4, 6}, {{N, N}, {P, P}, {N, N}}, {G, U, U}, {1.5, 0, 0}, 0.0},
  };
  for (size_t i = 0; i < sizeof coarse_cases / sizeof coarse_cases[0]; i++) test_coarse_hmg(&coarse_cases[i]);
  for (size_t i = 0; i < sizeof coarse_cases / sizeof coarse_cases[0]; i++) test_coarse_fdm(&coarse_cases[i]);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) test_coarse_fdm(&cases[i]);
  return check_report();
}
