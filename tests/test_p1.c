/* P1 finite elements on the built-in meshes (docs/p1.md): mesh counts, the
 * exact nonzero count (counted here from the cells, not from the library's
 * pattern), P1 identities of the assembled matrix, threaded = serial
 * assembly, convergence order 2 in L2, Jacobi-CG iteration counts, pure
 * Neumann, Dirichlet/Robin against exactly reproduced solutions, bad input.
 * usage: test_p1 [all | cg3 | file MESH VOLUME] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "api/p1.h"
#include "check.h"
#include "disc/p1/assembly.h"
#include "disc/p1/mesh.h"
#include "hpmg.h"

static int cmp_u64(const void *a, const void *b) {
  const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* nonzeros of the full P1 matrix: distinct (i, j) node pairs sharing a cell */
static int64_t count_pairs(const hpmg_p1_mesh *m) {
  const int nv = m->dim + 1;
  const int64_t np = m->num_cells * nv * nv;
  uint64_t *k = malloc(sizeof *k * (size_t)np);
  int64_t q = 0;
  for (int64_t c = 0; c < m->num_cells; c++)
    for (int a = 0; a < nv; a++)
      for (int b = 0; b < nv; b++)
        k[q++] = (uint64_t)m->cell_nodes[c * nv + a] * (uint64_t)m->num_nodes + (uint64_t)m->cell_nodes[c * nv + b];
  qsort(k, (size_t)np, sizeof *k, cmp_u64);
  int64_t u = 0;
  for (int64_t i = 0; i < np; i++) u += i == 0 || k[i] != k[i - 1];
  free(k);
  return u;
}

static void test_counts(void) {
  static const int64_t nodes3[3] = {729, 4913, 35937}, tets3[3] = {3072, 24576, 196608};
  for (int L = 0; L <= 2; L++)
    for (int irr = 0; irr < 2; irr++) {
      char spec[32];
      snprintf(spec, sizeof spec, "%s:%d", irr ? "irregular" : "regular", L);
      hpmg_p1_mesh m;
      hpmg_p1_pattern p;
      if (hpmg_p1_mesh_builtin(spec, 3, &m)) {
        CHECK(0, "%s: %s", spec, hpmg_last_error());
        continue;
      }
      CHECK(m.num_nodes == nodes3[L] && m.num_cells == tets3[L], "%s: %lld nodes %lld tets", spec, (long long)m.num_nodes,
            (long long)m.num_cells);
      const int64_t n = 8 << L;
      CHECK(m.num_facets == 12 * n * n, "%s: %lld boundary facets", spec, (long long)m.num_facets);
      CHECK(!hpmg_p1_pattern_build(&m, &p), "%s: pattern: %s", spec, hpmg_last_error());
      const int64_t pairs = count_pairs(&m);
      CHECK(p.nnz == pairs, "%s: nnz %lld, counted %lld", spec, (long long)p.nnz, (long long)pairs);
      if (!irr) printf("regular:%d: %lld nodes, %lld tets, nnz %lld\n", L, (long long)m.num_nodes, (long long)m.num_cells,
                       (long long)p.nnz);
      /* volume and positivity */
      double vol = 0.0, vmin = 1e300, loc[16];
      const hpmg_p1_coef one = {NULL, 1, 0.0};
      for (int64_t c = 0; c < m.num_cells; c++) {
        const double v = hpmg_p1_local_matrix(&m, &one, c, loc);
        vol += v;
        vmin = fmin(vmin, v);
      }
      CHECK(vmin > 0 && fabs(vol - 64.0) < 1e-9, "%s: volume %.15g, smallest cell %g", spec, vol, vmin);
      hpmg_p1_pattern_destroy(&p);
      hpmg_p1_mesh_destroy(&m);
    }
  for (int L = 0; L <= 3; L++) {
    char spec[32];
    snprintf(spec, sizeof spec, "regular:%d", L);
    hpmg_p1_mesh m;
    hpmg_p1_pattern p;
    if (hpmg_p1_mesh_builtin(spec, 2, &m)) {
      CHECK(0, "%s 2D: %s", spec, hpmg_last_error());
      continue;
    }
    const int64_t n = 8 << L;
    CHECK(m.num_nodes == (n + 1) * (n + 1) && m.num_cells == 2 * n * n && m.num_facets == 4 * n, "%s 2D counts", spec);
    CHECK(!hpmg_p1_pattern_build(&m, &p), "2D pattern");
    CHECK(p.nnz == count_pairs(&m), "%s 2D: nnz %lld", spec, (long long)p.nnz);
    hpmg_p1_pattern_destroy(&p);
    hpmg_p1_mesh_destroy(&m);
  }
}

/* A's identities on the assembly level: symmetric (bitwise), stiffness rows
 * sum to zero, sum of all entries of S + M = volume, threaded = serial */
static void test_identities(const char *spec, int dim, int tensor) {
  hpmg_p1_mesh m;
  hpmg_p1_pattern p;
  if (hpmg_p1_mesh_builtin(spec, dim, &m) || hpmg_p1_pattern_build(&m, &p)) {
    CHECK(0, "%s: %s", spec, hpmg_last_error());
    return;
  }
  const int nv = p.nv, tc = dim == 3 ? 6 : 3;
  double *sig = malloc(sizeof(double) * (size_t)(m.num_cells * tc));
  for (int64_t c = 0; c < m.num_cells; c++) { /* an anisotropic SPD tensor varying per cell */
    double *s = sig + c * tc;
    if (dim == 3) s[0] = 2 + (c % 3), s[1] = 1.5, s[2] = 1 + 0.1 * (c % 7), s[3] = 0.3, s[4] = -0.2, s[5] = 0.1;
    else s[0] = 2 + (c % 3), s[1] = 1.5, s[2] = 0.4;
  }
  double *val = malloc(sizeof(double) * (size_t)p.nnz), *ref = malloc(sizeof(double) * (size_t)p.nnz);
  double *scr = malloc(sizeof(double) * (size_t)(p.ncells * nv * nv));
  for (int pass = 0; pass < 2; pass++) {
    const double lambda = pass == 0 ? 0.0 : 1.0;
    const hpmg_p1_coef cf = {tensor ? sig : NULL, tensor ? tc : 1, lambda};
    hpmg_p1_assemble(&m, &p, &cf, scr, val);
    hpmg_p1_assemble_serial(&m, &p, &cf, ref);
    CHECK(!memcmp(val, ref, sizeof(double) * (size_t)p.nnz), "%s: threaded assembly differs from the serial loop", spec);
    { /* the GPU's scheme on the host: entry-major upper triangles, per-entry gather through the lists */
      uint32_t *cptr, *cidx;
      const int nloc = nv * (nv + 1) / 2;
      double *up = malloc(sizeof(double) * (size_t)(nloc * p.ncells)), loc[16];
      CHECK(!hpmg_p1_contributions(&p, &cptr, &cidx), "contributions: %s", hpmg_last_error());
      for (int64_t c = 0; c < p.ncells; c++) {
        hpmg_p1_local_matrix(&m, &cf, c, loc);
        for (int k = 0; k < nv; k++)
          for (int l = k; l < nv; l++) up[hpmg_p1_packed(k, l, nv) * p.ncells + c] = loc[k * nv + l];
      }
      int64_t diff = 0;
      for (int64_t q = 0; q < p.nnz; q++) {
        double sum = 0.0;
        for (uint32_t t = cptr[q]; t < cptr[q + 1]; t++) sum += up[cidx[t]];
        diff += sum != val[q];
      }
      CHECK(diff == 0 && cptr[p.nnz] == (uint32_t)(p.ncells * nv * nv), "%s: the per-entry gather differs in %lld entries",
            spec, (long long)diff);
      hpmg_free(&cptr), hpmg_free(&cidx), free(up);
    }
    int64_t asym = 0;
    double rowmax = 0.0, amax = 0.0, total = 0.0;
    for (int64_t i = 0; i < p.n; i++) {
      double rs = 0.0;
      for (int64_t q = p.rowptr[i]; q < p.rowptr[i + 1]; q++) {
        const int64_t t = hpmg_p1_find(&p, p.col[q], i);
        asym += t < 0 || val[t] != val[q];
        rs += val[q];
        amax = fmax(amax, fabs(val[q]));
      }
      total += rs;
      rowmax = fmax(rowmax, fabs(rs));
    }
    CHECK(asym == 0, "%s: %lld entries not bitwise symmetric", spec, (long long)asym);
    if (pass == 0) CHECK(rowmax <= 1e-13 * amax, "%s: stiffness row sum %.3e (max entry %.3e)", spec, rowmax, amax);
    else CHECK(fabs(total - (dim == 3 ? 64.0 : 16.0)) <= 1e-11, "%s: sum of all entries of S + M = %.15g", spec, total);
  }
  free(sig), free(val), free(ref), free(scr);
  hpmg_p1_pattern_destroy(&p);
  hpmg_p1_mesh_destroy(&m);
}

/* one solve through the public API; returns the error code */
static hpmg_error solve(const char *mesh, int dim, double lambda, hpmg_rhs_kind rhs, const hpmg_p1_bc *bc, int nbc,
                        double tol, const double *b, int *iters, double *l2, double *maxerr, double *mean, double *defect,
                        int64_t *dofs) {
  hpmg_problem_options po;
  hpmg_problem_options_default(&po);
  po.disc = HPMG_DISC_P1;
  po.dim = dim;
  po.mesh = mesh;
  po.lambda = lambda;
  po.rhs = rhs;
  po.p1_bc = bc;
  po.num_p1_bc = nbc;
  hpmg_problem prob;
  hpmg_error e = hpmg_problem_create(&po, &prob);
  if (e) return e;
  hpmg_solver_options so;
  hpmg_solver_options_default(&so);
  so.tol = tol;
  so.maxit = 100000;
  hpmg_solver s;
  if ((e = hpmg_solver_create(prob, &so, &s))) {
    hpmg_problem_destroy(&prob);
    return e;
  }
  const int64_t n = hpmg_problem_num_dofs(prob);
  double *x = calloc((size_t)n, sizeof *x);
  e = hpmg_solver_solve(s, b, x);
  hpmg_stats st;
  hpmg_solver_get_stats(s, &st);
  if (iters) *iters = st.iterations;
  if (defect) *defect = st.compat_defect;
  if (dofs) *dofs = n;
  if (!e) hpmg_problem_error(prob, x, l2, maxerr);
  if (mean) {
    double sm = 0.0, mx = 0.0;
    for (int64_t i = 0; i < n; i++) sm += x[i], mx = fmax(mx, fabs(x[i]));
    *mean = sm / (double)n / (mx > 0 ? mx : 1.0);
  }
  free(x);
  hpmg_solver_destroy(&s);
  hpmg_problem_destroy(&prob);
  return e;
}

static const char *const faces[6] = {"xmin", "xmax", "ymin", "ymax", "zmin", "zmax"};

static void test_order(int dim, hpmg_p1_bc_kind kind, double lambda, int Lmax) {
  hpmg_p1_bc bc[6];
  memset(bc, 0, sizeof bc);
  int nbc = kind == HPMG_P1_BC_NEUMANN ? 0 : 2 * dim;
  for (int f = 0; f < nbc; f++) bc[f].group = faces[f], bc[f].kind = kind, bc[f].robin_alpha = kind == HPMG_P1_BC_ROBIN ? 2.0 : 0.0;
  double e[8] = {0};
  for (int L = 0; L <= Lmax; L++) {
    char spec[32];
    snprintf(spec, sizeof spec, "irregular:%d", L);
    hpmg_error err = solve(spec, dim, lambda, HPMG_RHS_SINE, bc, nbc, 1e-12, NULL, NULL, &e[L], NULL, NULL, NULL, NULL);
    CHECK(!err, "order %dD %s: %s", dim, spec, hpmg_last_error());
  }
  const double order = log2(e[Lmax - 1] / e[Lmax]);
  printf("L2 errors %dD, bc kind %d, lambda %g:", dim, (int)kind, lambda);
  for (int L = 0; L <= Lmax; L++) printf(" %.3e", e[L]);
  printf("  order %.3f\n", order);
  CHECK(order >= 1.8 && order <= 2.2, "%dD bc %d lambda %g: L2 order %.3f not in [1.8, 2.2]", dim, (int)kind, lambda, order);
}

static void test_cg(int L, int lo, int hi) {
  char spec[32];
  snprintf(spec, sizeof spec, "regular:%d", L);
  int it = 0;
  int64_t n = 0;
  hpmg_error e = solve(spec, 3, 1.0, HPMG_RHS_VECTOR_ONE, NULL, 0, 1e-8, NULL, &it, NULL, NULL, NULL, NULL, &n);
  printf("Jacobi-CG %s (%lld nodes), b = 1, lambda = 1, rtol 1e-8: %d iterations\n", spec, (long long)n, it);
  CHECK(!e, "%s: %s", spec, hpmg_last_error());
  CHECK(it >= lo && it <= hi, "%s: %d CG iterations, expected %d..%d", spec, it, lo, hi);
}

/* pure Neumann, lambda = 0: singular; b projected, mean-zero solution */
static void test_neumann(void) {
  int it;
  double mean, defect, l2;
  hpmg_error e = solve("regular:1", 3, 0.0, HPMG_RHS_VECTOR_ONE, NULL, 0, 1e-10, NULL, &it, NULL, NULL, &mean, &defect, NULL);
  CHECK(!e, "pure Neumann, b = 1: %s", hpmg_last_error());
  CHECK(fabs(mean) < 1e-12 && defect > 0.99, "pure Neumann: mean %.3e, defect %.3e (b = 1 lies along the null space)",
        mean, defect);
  /* manufactured cos solution: compatible up to quadrature, converges modulo constants */
  e = solve("regular:1", 3, 0.0, HPMG_RHS_SINE, NULL, 0, 1e-10, NULL, &it, &l2, NULL, &mean, &defect, NULL);
  CHECK(!e && fabs(mean) < 1e-12 && defect < 1e-3 && l2 < 0.1, "pure Neumann sine: %s mean %.3e defect %.3e l2 %.3e",
        e ? hpmg_last_error() : "", mean, defect, l2);
  printf("pure Neumann sine regular:1: %d iterations, defect %.3e, L2 error %.3e\n", it, defect, l2);
}

/* linear u is reproduced exactly by P1 (f = 0, lambda = 0) */
typedef struct {
  int face;
  double alpha;
} robin_data;
static double lin_u(const double x[3], void *u) { return 1.0 + x[0] + 2.0 * x[1] + 3.0 * x[2]; }
static double lin_robin(const double x[3], void *u) { /* alpha u + du/dn on face f of [0,4]^3 */
  const robin_data *r = u;
  const double grad[3] = {1.0, 2.0, 3.0}, sign = r->face % 2 ? 1.0 : -1.0;
  return r->alpha * lin_u(x, NULL) + sign * grad[r->face / 2];
}
static double lin_flux(const double x[3], void *u) {
  const robin_data *r = u;
  const double grad[3] = {1.0, 2.0, 3.0};
  return (r->face % 2 ? 1.0 : -1.0) * grad[r->face / 2];
}

static void test_linear_exact(void) {
  hpmg_p1_bc bc[6];
  robin_data rd[6];
  double *zero = calloc(35937, sizeof(double));
  hpmg_problem_options po;
  for (int variant = 0; variant < 3; variant++) {
    memset(bc, 0, sizeof bc);
    for (int f = 0; f < 6; f++) {
      rd[f].face = f, rd[f].alpha = 2.0;
      bc[f].group = faces[f];
      bc[f].user = &rd[f];
      if (variant == 0) bc[f].kind = HPMG_P1_BC_DIRICHLET, bc[f].fn = lin_u;
      else if (variant == 1) bc[f].kind = HPMG_P1_BC_ROBIN, bc[f].fn = lin_robin, bc[f].robin_alpha = 2.0;
      else if (f == 0) bc[f].kind = HPMG_P1_BC_DIRICHLET, bc[f].fn = lin_u; /* mixed: Dirichlet on xmin */
      else bc[f].kind = HPMG_P1_BC_NEUMANN, bc[f].fn = lin_flux;
    }
    hpmg_problem_options_default(&po);
    po.disc = HPMG_DISC_P1, po.mesh = "irregular:1", po.p1_bc = bc, po.num_p1_bc = 6, po.rhs = HPMG_RHS_ONE;
    hpmg_problem prob;
    hpmg_solver s;
    hpmg_solver_options so;
    hpmg_solver_options_default(&so);
    so.tol = 1e-13, so.maxit = 100000;
    if (hpmg_problem_create(&po, &prob) || hpmg_solver_create(prob, &so, &s)) {
      CHECK(0, "linear variant %d: %s", variant, hpmg_last_error());
      continue;
    }
    const int64_t n = hpmg_problem_num_dofs(prob);
    double *x = calloc((size_t)n, sizeof *x);
    hpmg_error e = hpmg_solver_solve(s, zero, x); /* b = (phi, f) with f = 0; the boundary terms are the solver's */
    CHECK(!e, "linear variant %d: %s", variant, hpmg_last_error());
    /* nodal comparison needs the node coordinates: through the problem's mesh */
    const hpmg_p1_mesh *mm = hpmg_p1_problem_mesh(hpmg_problem_p1(prob));
    double err = 0.0;
    for (int64_t i = 0; i < n; i++) {
      const double xi[3] = {mm->x[0][i], mm->x[1][i], mm->x[2][i]};
      err = fmax(err, fabs(x[i] - lin_u(xi, NULL)));
    }
    printf("linear solution, %s: max nodal error %.3e\n", variant == 0 ? "Dirichlet" : variant == 1 ? "Robin" : "Dirichlet + Neumann", err);
    CHECK(err < 1e-9, "linear solution variant %d: max nodal error %.3e", variant, err);
    free(x);
    hpmg_solver_destroy(&s);
    hpmg_problem_destroy(&prob);
  }
  free(zero);
}

static void test_bad_input(void) {
  hpmg_problem_options po;
  hpmg_problem prob;
  hpmg_p1_bc bc = {.group = "nosuchgroup", .kind = HPMG_P1_BC_DIRICHLET};
  hpmg_problem_options_default(&po);
  po.disc = HPMG_DISC_P1, po.mesh = "regular:0", po.p1_bc = &bc, po.num_p1_bc = 1;
  CHECK(hpmg_problem_create(&po, &prob) == HPMG_ERR_ARG && strstr(hpmg_last_error(), "nosuchgroup") &&
            strstr(hpmg_last_error(), "xmin"),
        "unknown group: %s", hpmg_last_error());
  hpmg_problem_options_default(&po);
  po.disc = HPMG_DISC_P1, po.mesh = "regular:0", po.lambda = -1;
  CHECK(hpmg_problem_create(&po, &prob) == HPMG_ERR_ARG, "lambda < 0 accepted");
  const double bad_t[6] = {1, 1, 1, 2, 0, 0}; /* xy = 2: not positive definite */
  hpmg_p1_sigma sg = {.region = "domain", .tensor = bad_t};
  hpmg_problem_options_default(&po);
  po.disc = HPMG_DISC_P1, po.mesh = "regular:0", po.sigma = &sg, po.num_sigma = 1;
  CHECK(hpmg_problem_create(&po, &prob) == HPMG_ERR_ARG && strstr(hpmg_last_error(), "positive definite"),
        "non-SPD sigma: %s", hpmg_last_error());
  hpmg_p1_sigma sn = {.region = "domain", .value = -1};
  po.sigma = &sn;
  CHECK(hpmg_problem_create(&po, &prob) == HPMG_ERR_ARG, "negative sigma accepted");
  hpmg_p1_sigma sr = {.region = "nosuchregion", .value = 2};
  po.sigma = &sr;
  CHECK(hpmg_problem_create(&po, &prob) == HPMG_ERR_ARG && strstr(hpmg_last_error(), "nosuchregion"), "unknown region: %s",
        hpmg_last_error());
  hpmg_problem_options_default(&po);
  po.disc = HPMG_DISC_P1, po.mesh = "cube:3";
  CHECK(hpmg_problem_create(&po, &prob) != HPMG_SUCCESS, "mesh spec cube:3 accepted");
  hpmg_p1_bc bv = {.group = "xmin", .kind = HPMG_P1_BC_DIRICHLET, .value = 1};
  hpmg_problem_options_default(&po);
  po.disc = HPMG_DISC_P1, po.mesh = "regular:0", po.p1_bc = &bv, po.num_p1_bc = 1; /* rhs sine: data from u */
  CHECK(hpmg_problem_create(&po, &prob) == HPMG_ERR_ARG, "a Dirichlet value with the manufactured rhs accepted");
  /* solver other than CG refused */
  hpmg_problem_options_default(&po);
  po.disc = HPMG_DISC_P1, po.mesh = "regular:0";
  if (!hpmg_problem_create(&po, &prob)) {
    hpmg_solver_options so;
    hpmg_solver_options_default(&so);
    so.solver = HPMG_SOLVER_FMG;
    hpmg_solver s;
    CHECK(hpmg_solver_create(prob, &so, &s) == HPMG_ERR_ARG, "FMG on P1 accepted");
    hpmg_problem_destroy(&prob);
  } else CHECK(0, "regular:0: %s", hpmg_last_error());
}

/* a mesh file: the identities on the problem's matrix (sum of all entries of
 * S + M = the volume, stiffness rows sum to zero, symmetry) and threaded =
 * serial assembly on the mesh as read */
static void test_file(const char *path, double volume) {
  for (int pass = 0; pass < 2; pass++) {
    hpmg_problem_options po;
    hpmg_problem_options_default(&po);
    po.disc = HPMG_DISC_P1, po.mesh = path, po.lambda = pass;
    hpmg_problem prob;
    if (hpmg_problem_create(&po, &prob)) {
      CHECK(0, "%s: %s", path, hpmg_last_error());
      return;
    }
    int64_t n, nnz;
    const int64_t *rp;
    const int32_t *col;
    const double *val;
    if (hpmg_p1_problem_matrix(hpmg_problem_p1(prob), &n, &nnz, &rp, &col, &val)) {
      CHECK(0, "%s: %s", path, hpmg_last_error());
      hpmg_problem_destroy(&prob);
      return;
    }
    double total = 0.0, rowmax = 0.0, amax = 0.0;
    int64_t asym = 0;
    for (int64_t i = 0; i < n; i++) {
      double rs = 0.0;
      for (int64_t q = rp[i]; q < rp[i + 1]; q++) {
        rs += val[q];
        amax = fmax(amax, fabs(val[q]));
        int64_t t = -1;
        for (int64_t u = rp[col[q]]; u < rp[col[q] + 1]; u++)
          if (col[u] == i) t = u;
        asym += t < 0 || val[t] != val[q];
      }
      total += rs;
      rowmax = fmax(rowmax, fabs(rs));
    }
    CHECK(asym == 0, "%s: %lld entries not symmetric", path, (long long)asym);
    if (pass == 0) CHECK(rowmax <= 1e-12 * amax, "%s: stiffness row sums up to %.3e", path, rowmax);
    else CHECK(fabs(total - volume) <= 1e-12 * volume, "%s: sum of the entries of S + M = %.15g, volume %g", path, total, volume);
    printf("%s: %lld nodes, %lld nonzeros, %s %.3e\n", path, (long long)n, (long long)nnz,
           pass ? "sum of S + M minus the volume" : "largest stiffness row sum", pass ? total - volume : rowmax);
    hpmg_problem_destroy(&prob);
  }
  hpmg_p1_mesh m;
  hpmg_p1_pattern p;
  if (hpmg_p1_mesh_read(path, &m) || hpmg_p1_pattern_build(&m, &p)) {
    CHECK(0, "%s: %s", path, hpmg_last_error());
    return;
  }
  CHECK(p.nnz == count_pairs(&m), "%s: nnz %lld against the counted pairs", path, (long long)p.nnz);
  const int nv = p.nv;
  double *a = malloc(sizeof(double) * (size_t)p.nnz), *b = malloc(sizeof(double) * (size_t)p.nnz);
  double *scr = malloc(sizeof(double) * (size_t)(p.ncells * nv * nv));
  const hpmg_p1_coef cf = {NULL, 1, 1.0};
  hpmg_p1_assemble(&m, &p, &cf, scr, a);
  hpmg_p1_assemble_serial(&m, &p, &cf, b);
  CHECK(!memcmp(a, b, sizeof(double) * (size_t)p.nnz), "%s: threaded assembly differs from the serial loop", path);
  free(a), free(b), free(scr);
  hpmg_p1_pattern_destroy(&p);
  hpmg_p1_mesh_destroy(&m);
}

int main(int argc, char **argv) {
  const char *what = argc > 1 ? argv[1] : "all";
  if (!strcmp(what, "file") && argc > 3) {
    test_file(argv[2], atof(argv[3]));
    return check_report();
  }
  if (!strcmp(what, "cg3")) {
    /* paper 003 Table 5: 329 CG iterations with its (unstated) tet split; Kuhn's split here needs fewer */
    test_cg(3, 205, 250); /* measured: 228 */
    return check_report();
  }
  test_counts();
  test_identities("regular:1", 3, 0);
  test_identities("irregular:1", 3, 1);
  test_identities("irregular:2", 2, 1);
  test_bad_input();
  test_neumann();
  test_linear_exact();
  test_order(3, HPMG_P1_BC_NEUMANN, 1.0, 2);
  test_order(3, HPMG_P1_BC_DIRICHLET, 0.0, 2);
  test_order(2, HPMG_P1_BC_ROBIN, 0.0, 4);
  test_order(2, HPMG_P1_BC_NEUMANN, 0.0, 4);
  test_cg(2, 105, 135); /* measured: 119 */
  return check_report();
}
