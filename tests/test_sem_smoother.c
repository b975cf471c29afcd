/* The star smoother over a mesh (paper 001, Algorithm 2;
 * src/disc/sem/sem_smoother.h) against a dense reference
 *   z = sum_v R_v^T W_v (R_v A R_v^T)^{-1} R_v r
 * built here without the star kernel: A the masked global condensed matrix
 * (columns of hpmg_sem_mesh_apply, itself checked against the assembled
 * Schur complement by test_sem_mesh), R_v the star's skeleton nodes found by
 * enumerating the GLL lattice around each vertex (Dirichlet nodes left out),
 * each star block solved by LAPACKE Cholesky, W_v the degree-7 weights from
 * the GLL positions. 2D and 3D, Dirichlet / Neumann / periodic ends,
 * stretched widths, lambda = 0 and > 0. Also: the same result for 1 and 2
 * threads bit for bit, the dense star inverses of small stars and Algorithm 1
 * alike, and the measured non-symmetry of the smoother. */
#include <lapacke.h>
#include <omp.h>
#include <string.h>
#include "check.h"
#include "sem_test_mesh.h"
#include "core/isa.h"
#include "disc/sem/sem_smoother.h"

static const char *kind_name(const hpmg_sem_smoother *sm) {
  return sm->Z ? "dense stars" : sm->lanes ? "Algorithm 1 in lanes" : "Algorithm 1";
}

static int test_case(const config *c) {
  hpmg_box box;
  hpmg_sem_mesh m;
  CHECK_OK(make_mesh(c, &box, &m));
  const int64_t ns = m.ns;
  const int p = c->p, dim = c->dim;
  double *A = calloc((size_t)(ns * ns), sizeof(double)), *x = calloc((size_t)ns, sizeof(double));
  double *y = malloc(sizeof(double) * (size_t)ns), *work = malloc(sizeof(double) * hpmg_sem_mesh_work_size(&m));
  for (int64_t j = 0; j < ns; j++) { /* column j */
    x[j] = 1.0;
    hpmg_sem_mesh_apply(&m, 1, x, y, work);
    for (int64_t i = 0; i < ns; i++) A[i * ns + j] = y[i];
    x[j] = 0.0;
  }
  double *r = malloc(sizeof(double) * (size_t)ns), *zref = calloc((size_t)ns, sizeof(double));
  for (int64_t i = 0; i < ns; i++) r[i] = m.dirichlet && m.dirichlet[i] ? 0.0 : check_rand();
  /* the dense reference, star by star */
  const int64_t nvt = m.nv[0] * m.nv[1] * (dim == 3 ? m.nv[2] : 1);
  int64_t *S = malloc(sizeof(int64_t) * (size_t)ns);
  double *wS = malloc(sizeof(double) * (size_t)ns), *As = malloc(sizeof(double) * (size_t)(ns * ns));
  double *bs = malloc(sizeof(double) * (size_t)ns);
  int64_t *seen = malloc(sizeof(int64_t) * (size_t)ns);
  for (int64_t i = 0; i < ns; i++) seen[i] = -1;
  int64_t maxstar = 0;
  for (int64_t v = 0; v < nvt; v++) {
    const int64_t J[3] = {v % m.nv[0], (v / m.nv[0]) % m.nv[1], v / (m.nv[0] * m.nv[1])};
    int64_t ks = 0;
    const int span = 2 * p - 1;
    const int n2 = dim == 3 ? span : 1;
    for (int a2 = 0; a2 < n2; a2++)
      for (int a1 = 0; a1 < span; a1++)
        for (int a0 = 0; a0 < span; a0++) {
          const int a[3] = {a0, a1, a2};
          int64_t g[3] = {0, 0, 0};
          int out = 0, onplane = 0;
          double w = 1.0;
          for (int d = 0; d < dim; d++) {
            const int o = a[d] - (p - 1); /* offset from the vertex, -(p-1)..p-1 */
            onplane |= o == 0;
            g[d] = J[d] * p + o;
            if (g[d] < 0 || g[d] >= m.nlat[d]) {
              if (m.periodic[d]) g[d] = (g[d] + m.nlat[d]) % m.nlat[d];
              else out = 1;
            }
            /* distance from the vertex in element widths, through the GLL nodes on [-1, 1] */
            const double t = o >= 0 ? (1.0 + m.el.x[o]) / 2 : 1.0 - (1.0 + m.el.x[p + o]) / 2;
            w *= hpmg_sem_weight7(t);
          }
          if (out || !onplane) continue;
          const int64_t s = hpmg_sem_skeleton_index(&m, g);
          if (s < 0 || (m.dirichlet && m.dirichlet[s])) continue;
          CHECK(seen[s] != v, "vertex %lld: node %lld twice in the star", (long long)v, (long long)s);
          seen[s] = v;
          S[ks] = s;
          wS[ks++] = w;
        }
    if (ks > maxstar) maxstar = ks;
    if (ks == 0) continue;
    for (int64_t i = 0; i < ks; i++) {
      bs[i] = r[S[i]];
      for (int64_t j = 0; j < ks; j++) As[i * ks + j] = A[S[i] * ns + S[j]];
    }
    lapack_int info = LAPACKE_dposv(LAPACK_ROW_MAJOR, 'U', (lapack_int)ks, 1, As, (lapack_int)ks, bs, 1);
    CHECK(info == 0, "vertex %lld: dposv info %d", (long long)v, (int)info);
    for (int64_t i = 0; i < ks; i++) zref[S[i]] += wS[i] * bs[i];
  }
  /* the smoother, with 1 and 2 threads; with its dense star inverses where
   * the stars are small and 3D stars of p = 4..6 in lanes (the default), with
   * Algorithm 1 for every star, and with every star one by one */
  const int nt0 = omp_get_max_threads();
  double *z[2] = {malloc(sizeof(double) * (size_t)ns), malloc(sizeof(double) * (size_t)ns)};
  for (int variant = 0; variant < 3; variant++) {
    const int dense_max = hpmg_sem_star_set_dense_max(variant ? 0 : HPMG_SEM_STAR_DENSE_MAX_DEFAULT);
    const int lanes_pmax = hpmg_sem_star_set_lanes_pmax(variant == 2 ? 0 : HPMG_SEM_STAR_LANES_PMAX_DEFAULT);
    int dense = 0, lanes = 0;
    for (int t = 0; t < 2; t++) {
      omp_set_num_threads(t + 1);
      hpmg_sem_smoother sm;
      CHECK_OK(hpmg_sem_smoother_create(&m, &sm));
      dense = sm.Z != NULL;
      lanes = sm.lanes;
      hpmg_sem_smoother_apply(&sm, r, z[t]);
      if (t == 1 && !variant) { /* non-symmetry: x.S y against y.S x */
        double *q = malloc(sizeof(double) * (size_t)ns), *sq = malloc(sizeof(double) * (size_t)ns);
        for (int64_t i = 0; i < ns; i++) q[i] = m.dirichlet && m.dirichlet[i] ? 0.0 : check_rand();
        hpmg_sem_smoother_apply(&sm, q, sq);
        double a = 0, b = 0;
        for (int64_t i = 0; i < ns; i++) a += r[i] * sq[i], b += q[i] * z[t][i];
        printf("  dim=%d p=%d: r.S q = %.15g, q.S r = %.15g (relative asymmetry %.2e)\n", dim, p, a, b,
               fabs(a - b) / fmax(fabs(a), fabs(b)));
        free(q);
        free(sq);
      }
      hpmg_sem_smoother_destroy(&sm);
    }
    omp_set_num_threads(nt0);
    hpmg_sem_star_set_dense_max(dense_max);
    hpmg_sem_star_set_lanes_pmax(lanes_pmax);
    /* every instruction-set variant of the star kernels this processor runs (core/isa.h) */
    const int isa0 = hpmg_isa_index();
    for (int i = 0; i < HPMG_ISA_COUNT; i++) {
      if (!hpmg_isa_runs(i)) continue;
      CHECK_OK(hpmg_isa_select(hpmg_isa_get(i)->name));
      hpmg_sem_star_set_dense_max(variant ? 0 : HPMG_SEM_STAR_DENSE_MAX_DEFAULT);
      hpmg_sem_star_set_lanes_pmax(variant == 2 ? 0 : HPMG_SEM_STAR_LANES_PMAX_DEFAULT);
      hpmg_sem_smoother sm;
      CHECK_OK(hpmg_sem_smoother_create(&m, &sm));
      double *zi = malloc(sizeof(double) * (size_t)ns);
      hpmg_sem_smoother_apply(&sm, r, zi);
      double di = 0, ri = 0;
      for (int64_t q = 0; q < ns; q++) di += (zi[q] - zref[q]) * (zi[q] - zref[q]), ri += zref[q] * zref[q];
      CHECK(sqrt(di / ri) <= 1e-12, "dim=%d p=%d [%s, %s]: smoother vs dense reference: relative %.3g", dim, p,
            hpmg_isa_get(i)->name, kind_name(&sm), sqrt(di / ri));
      free(zi);
      hpmg_sem_smoother_destroy(&sm);
      hpmg_sem_star_set_dense_max(dense_max);
      hpmg_sem_star_set_lanes_pmax(lanes_pmax);
    }
    CHECK_OK(hpmg_isa_select(hpmg_isa_get(isa0)->name));
    /* the default takes the dense inverses exactly where the stars are small */
    const int small = (dim == 3 ? 3 * (2 * p - 1) * (2 * p - 1) : 2 * (2 * p - 1)) <= HPMG_SEM_STAR_DENSE_MAX_DEFAULT;
    CHECK(dense == (!variant && small), "dim=%d p=%d: dense star inverses %s", dim, p, dense ? "used" : "not used");
    /* stars in lanes exactly for 3D p = 4..6 unless turned off */
    CHECK(lanes == (variant < 2 && dim == 3 && p >= 4 && p <= HPMG_SEM_STAR_LANES_PMAX_DEFAULT),
          "dim=%d p=%d: stars in lanes %s", dim, p, lanes ? "used" : "not used");
    double dn = 0, rn = 0;
    int same = 1;
    for (int64_t i = 0; i < ns; i++) {
      dn += (z[0][i] - zref[i]) * (z[0][i] - zref[i]);
      rn += zref[i] * zref[i];
      same &= z[0][i] == z[1][i];
    }
    const double rel = sqrt(dn / rn);
    CHECK(rel <= 1e-12, "dim=%d p=%d cells %lldx%lldx%lld (%s): smoother vs dense reference: relative %.3g", dim, p,
          (long long)c->cells[0], (long long)c->cells[1], (long long)c->cells[2],
          dense ? "dense stars" : lanes ? "Algorithm 1 in lanes" : "Algorithm 1", rel);
    CHECK(same, "dim=%d p=%d: 1 and 2 threads differ", dim, p);
    printf("  dim=%d p=%d cells %lldx%lldx%lld lambda %g (%s): ns %lld, largest star %lld: relative difference %.2e\n",
           dim, p, (long long)c->cells[0], (long long)c->cells[1], (long long)c->cells[2], c->lambda,
           dense ? "dense stars" : lanes ? "Algorithm 1 in lanes" : "Algorithm 1", (long long)ns, (long long)maxstar, rel);
  }
  free(z[0]);
  free(z[1]);
  free(A);
  free(x);
  free(y);
  free(work);
  free(r);
  free(zref);
  free(S);
  free(wS);
  free(As);
  free(bs);
  free(seen);
  hpmg_sem_mesh_destroy(&m);
  hpmg_box_destroy(&box);
  return 0;
}

/* which meshes get the dense star inverses: p = 2 on 70 x 2 x 2 elements,
 * uniform (3 classes per direction) and geometric in x (every one of the 71
 * positions its own class, more than the 64 allowed: Algorithm 1) */
static int test_dense_choice(void) {
  const hpmg_bc_kind D = HPMG_BC_DIRICHLET;
  const hpmg_spacing_kind U = HPMG_SPACING_UNIFORM, G = HPMG_SPACING_GEOMETRIC;
  for (int stretched = 0; stretched < 2; stretched++) {
    const config c = {3, 2, {70, 2, 2}, {{D, D}, {D, D}, {D, D}}, {stretched ? G : U, U, U}, {1.02, 0, 0}, 0.0};
    hpmg_box box;
    hpmg_sem_mesh m;
    hpmg_sem_smoother sm;
    CHECK_OK(make_mesh(&c, &box, &m));
    CHECK_OK(hpmg_sem_smoother_create(&m, &sm));
    CHECK(stretched ? !sm.Z && !sm.cls[0] : sm.Z && sm.ncls[0] == 3 && sm.ncls[1] == 3 && sm.ncls[2] == 3,
          "p = 2 on 70x2x2 (%s): dense star inverses %s, classes %d %d %d", stretched ? "geometric x" : "uniform",
          sm.Z ? "used" : "not used", sm.ncls[0], sm.ncls[1], sm.ncls[2]);
    printf("  p=2 70x2x2 %s: %s\n", stretched ? "geometric in x (71 distinct positions)" : "uniform (3x3x3 classes)",
           sm.Z ? "dense star inverses" : "Algorithm 1");
    hpmg_sem_smoother_destroy(&sm);
    hpmg_sem_mesh_destroy(&m);
    hpmg_box_destroy(&box);
  }
  return 0;
}

int main(void) {
  const hpmg_bc_kind D = HPMG_BC_DIRICHLET, N = HPMG_BC_NEUMANN, P = HPMG_BC_PERIODIC;
  const hpmg_spacing_kind U = HPMG_SPACING_UNIFORM, G = HPMG_SPACING_GEOMETRIC, T = HPMG_SPACING_TANH;
  const config cases[] = {
      {2, 2, {3, 4, 1}, {{D, D}, {D, D}}, {U, U}, {0, 0}, 0.0},
      {2, 4, {3, 3, 1}, {{D, N}, {P, P}}, {G, U}, {1.5, 0}, 0.0},
      {2, 5, {4, 3, 1}, {{N, N}, {N, D}}, {T, G}, {1.2, 2.0}, 1.5},
      {2, 7, {3, 4, 1}, {{P, P}, {P, P}}, {U, G}, {0, 1.7}, 0.5},
      {3, 2, {3, 2, 2}, {{D, D}, {D, D}, {D, D}}, {U, U, U}, {0, 0, 0}, 0.0},
      {3, 3, {3, 3, 2}, {{D, N}, {P, P}, {N, D}}, {G, U, T}, {1.5, 0, 1.1}, 0.0},
      {3, 4, {2, 3, 3}, {{N, N}, {D, N}, {P, P}}, {U, G, U}, {0, 2.0, 0}, 2.0},
      {3, 5, {3, 3, 3}, {{P, P}, {P, P}, {P, P}}, {G, G, U}, {1.3, 0.7, 0}, 1.0},
      {3, 6, {2, 2, 2}, {{D, D}, {N, D}, {D, N}}, {G, U, U}, {2.0, 0, 0}, 0.0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) test_case(&cases[i]);
  test_dense_choice();
  return check_report();
}
