/* Vertex-patch smoother on general boxes (src/disc/qk/patch.h): stretched
 * cells, Dirichlet, Neumann and periodic ends, against a dense global matrix
 * assembled here from the 1D element matrices (fem.h) and nothing else: per
 * direction the 1D mass and stiffness matrices over the free nodes (Dirichlet
 * end nodes eliminated, Neumann end nodes kept, periodic node k*cells = node
 * 0), their Kronecker sum, and the patches' local spaces from the geometry.
 *   local      each patch's local correction R_j^T A_j^{-1} R_j r (fdm and
 *              dense local solvers) equals a Cholesky solve with the patch's
 *              block of the global matrix, 1e-12 relative, and is 0 outside
 *   residual   the localized residual of each patch equals (b - A x) on the
 *              patch interior (0 on a half patch's placeholder positions)
 *   sweep      one multiplicative sweep (colors forward, and backward for
 *              post-smoothing) and one additive step equal the textbook
 *              formulas with the dense matrix; float to float accuracy
 *   threads    the general sweep gives bitwise the same x on 1, 2, 3 threads
 *   simd       lane groups (one patch per SIMD lane; shared factors on channel
 *              grids, factors per lane when stretched in every direction)
 *              equal one patch at a time
 *   plain      the general-box path on a plain grid equals the plain path
 *              bitwise (multiplicative one patch at a time, additive)
 *   robust     x += S (b - A x) with the dense A: the energy-norm error
 *              contraction per step on a grid stretched to cell aspect ratio
 *              50 is no worse than on the uniform grid (plus 0.02), both modes
 *   errors     a periodic direction of 1 cell, or periodic on one end only,
 *              is refused
 * Cases: 2D and 3D, k = 1..4, stretched Dirichlet, Neumann (half patches),
 * periodic with an odd count (3 colors) and with 2 cells, mixed ends. */
#include <omp.h>
#include <string.h>
#include "check.h"
#include "fem/fem.h"
#include "la/vec.h"
#include "disc/qk/patch.h"
#include "test_env.h"

#define D_ HPMG_BC_DIRICHLET
#define N_ HPMG_BC_NEUMANN
#define P_ HPMG_BC_PERIODIC

typedef struct {
  hpmg_grid g;
  hpmg_laplace op; /* only g and lambda: the smoother reads nothing else */
  double *xn[3];
  double *A;       /* dense global matrix, N x N */
  int64_t N;
} box;

static void box_free(box *B) {
  for (int d = 0; d < 3; d++) free(B->xn[d]);
  free(B->A);
}

/* Cell boundaries of direction d: uniform (s = 1) or geometrically graded
 * towards the min end with ratio s between the widest and the narrowest cell. */
static double *nodes(int64_t cells, double len, double s) {
  double *x = malloc(sizeof(double) * (size_t)(cells + 1));
  const double q = cells > 1 ? pow(s, 1.0 / (double)(cells - 1)) : 1.0;
  double tot = 0;
  for (int64_t c = 0; c < cells; c++) tot += pow(q, (double)c);
  x[0] = 0;
  for (int64_t c = 0; c < cells; c++) x[c + 1] = x[c] + len * pow(q, (double)c) / tot;
  x[cells] = len;
  return x;
}

/* The level's grid on the box len: per-face BCs, direction d graded with
 * widest / narrowest cell stretch[d] (its boundaries in xn[d], the caller's
 * to free; NULL where uniform), the unknowns per direction counted here
 * (independently of the library's grid code). */
static int grid_make(int dim, int k, const int64_t cells[3], const hpmg_bc_kind bc[6], const double stretch[3],
                     const double len[3], hpmg_grid *g, double *xn[3]) {
  for (int d = 0; d < 3; d++) xn[d] = NULL;
  if (hpmg_grid_init(dim, k, cells, len, g)) return 1;
  g->N = 1;
  for (int d = 0; d < dim; d++) {
    g->bc[2 * d] = bc[2 * d];
    g->bc[2 * d + 1] = bc[2 * d + 1];
    if (stretch[d] != 1) g->xn[d] = xn[d] = nodes(cells[d], len[d], stretch[d]);
    g->off[d] = bc[2 * d] == D_;
    g->n[d] = bc[2 * d] == P_ ? k * cells[d] : k * cells[d] - 1 + (bc[2 * d] == N_) + (bc[2 * d + 1] == N_);
    g->N *= g->n[d];
  }
  return 0;
}

/* Free index of global node gn of direction d, -1 if it is no unknown. */
static int64_t free_index(const hpmg_grid *g, int d, int64_t gn) {
  if (g->bc[2 * d] == P_) {
    const int64_t K = g->k * g->cells[d];
    return ((gn % K) + K) % K;
  }
  const int64_t fi = gn - (g->bc[2 * d] == D_);
  return fi >= 0 && fi < g->n[d] ? fi : -1;
}

/* The level and its dense matrix. stretch[d]: widest / narrowest cell. */
static int box_make(int dim, int k, const int64_t cells[3], const hpmg_bc_kind bc[6], const double stretch[3],
                    double lambda, box *B) {
  memset(B, 0, sizeof *B);
  const double len[3] = {1.0, 0.7, 1.3};
  if (grid_make(dim, k, cells, bc, stretch, len, &B->g, B->xn)) {
    printf("grid: %s\n", hpmg_last_error());
    return 1;
  }
  hpmg_grid *g = &B->g;
  B->op.g = *g;
  B->op.lambda = lambda;
  B->N = g->N;
  /* 1D assembled matrices */
  double *M1[3], *K1[3];
  for (int d = 0; d < 3; d++) {
    const int64_t n = g->n[d];
    M1[d] = calloc((size_t)(n * n), sizeof(double));
    K1[d] = calloc((size_t)(n * n), sizeof(double));
    if (d >= dim) {
      M1[d][0] = 1;
      continue;
    }
    double Me[25], Ke[25];
    for (int64_t c = 0; c < cells[d]; c++) {
      hpmg_element_mass(k, hpmg_grid_cell_width(g, d, c), Me);
      hpmg_element_stiffness(k, hpmg_grid_cell_width(g, d, c), Ke);
      for (int a = 0; a <= k; a++)
        for (int b = 0; b <= k; b++) {
          const int64_t i = free_index(g, d, c * k + a), j = free_index(g, d, c * k + b);
          if (i < 0 || j < 0) continue;
          M1[d][i * n + j] += Me[a * (k + 1) + b];
          K1[d][i * n + j] += Ke[a * (k + 1) + b];
        }
    }
  }
  const int64_t N = B->N, n0 = g->n[0], n1 = g->n[1];
  B->A = malloc(sizeof(double) * (size_t)(N * N));
  for (int64_t r = 0; r < N; r++) {
    const int64_t i0 = r % n0, i1 = (r / n0) % n1, i2 = r / (n0 * n1);
    for (int64_t c = 0; c < N; c++) {
      const int64_t j0 = c % n0, j1 = (c / n0) % n1, j2 = c / (n0 * n1);
      const double m0 = M1[0][i0 * n0 + j0], m1 = M1[1][i1 * n1 + j1], m2 = M1[2][i2 * g->n[2] + j2];
      const double k0 = K1[0][i0 * n0 + j0], k1 = K1[1][i1 * n1 + j1], k2 = K1[2][i2 * g->n[2] + j2];
      B->A[r * N + c] = k2 * m1 * m0 + m2 * k1 * m0 + m2 * m1 * k0 + lambda * m2 * m1 * m0;
    }
  }
  for (int d = 0; d < 3; d++) {
    free(M1[d]);
    free(K1[d]);
  }
  return 0;
}

/* Patch vertices per direction and the colors (the smoother's rule restated:
 * parity of v - vmin, 2 for the last vertex of an odd periodic count). */
static void vertex_range(const hpmg_grid *g, int d, int64_t *lo, int64_t *hi) {
  if (d >= g->dim) {
    *lo = *hi = 0;
    return;
  }
  const hpmg_bc_kind a = g->bc[2 * d], b = g->bc[2 * d + 1];
  *lo = a == D_ ? 1 : 0;
  *hi = a == P_ ? g->cells[d] - 1 : b == N_ ? g->cells[d] : g->cells[d] - 1;
}
static int ncolors(const hpmg_grid *g, int d) {
  return d >= g->dim ? 1 : g->bc[2 * d] == P_ && g->cells[d] % 2 ? 3 : 2;
}
static int color_of(const hpmg_grid *g, const int64_t v[3]) {
  int c = 0, mul = 1;
  for (int d = 0; d < g->dim; d++) {
    int64_t lo, hi;
    vertex_range(g, d, &lo, &hi);
    const int nc = ncolors(g, d), cd = nc == 3 && v[d] == hi ? 2 : (int)((v[d] - lo) & 1);
    c += mul * cd;
    mul *= nc;
  }
  return c;
}

/* Global indices of the (2k-1)^d local positions of the patch of v (-1: not an unknown). */
static int patch_map(const hpmg_grid *g, const int64_t v[3], int64_t *map) {
  const int k = g->k, m = 2 * k - 1, mz = g->dim == 3 ? m : 1;
  int c = 0;
  for (int j2 = 0; j2 < mz; j2++)
    for (int j1 = 0; j1 < m; j1++)
      for (int j0 = 0; j0 < m; j0++) {
        const int64_t i0 = free_index(g, 0, (v[0] - 1) * k + 1 + j0), i1 = free_index(g, 1, (v[1] - 1) * k + 1 + j1);
        const int64_t i2 = g->dim == 3 ? free_index(g, 2, (v[2] - 1) * k + 1 + j2) : 0;
        map[c++] = i0 < 0 || i1 < 0 || i2 < 0 ? -1 : hpmg_grid_index(g, i0, i1, i2);
      }
  return c;
}

/* Solve the SPD system S z = r (n x n, row-major, overwritten) by Cholesky. */
static int chol_solve(int n, double *S, double *z) {
  for (int j = 0; j < n; j++) {
    double d = S[j * n + j];
    for (int p = 0; p < j; p++) d -= S[j * n + p] * S[j * n + p];
    if (!(d > 0)) return 1;
    S[j * n + j] = sqrt(d);
    for (int i = j + 1; i < n; i++) {
      double s = S[i * n + j];
      for (int p = 0; p < j; p++) s -= S[i * n + p] * S[j * n + p];
      S[i * n + j] = s / S[j * n + j];
    }
  }
  for (int i = 0; i < n; i++) {
    double s = z[i];
    for (int p = 0; p < i; p++) s -= S[i * n + p] * z[p];
    z[i] = s / S[i * n + i];
  }
  for (int i = n - 1; i >= 0; i--) {
    double s = z[i];
    for (int p = i + 1; p < n; p++) s -= S[p * n + i] * z[p];
    z[i] = s / S[i * n + i];
  }
  return 0;
}

/* y += omega R_j^T A_j^{-1} R_j r with the dense block (reference). */
static int dense_correction(const box *B, const int64_t v[3], const double *r, double *y, double omega) {
  const int k = B->g.k, nl = B->g.dim == 3 ? (2 * k - 1) * (2 * k - 1) * (2 * k - 1) : (2 * k - 1) * (2 * k - 1);
  int64_t *map = malloc(sizeof(int64_t) * nl), *idx = malloc(sizeof(int64_t) * nl);
  patch_map(&B->g, v, map);
  int n = 0;
  for (int i = 0; i < nl; i++)
    if (map[i] >= 0) idx[n++] = map[i];
  double *S = malloc(sizeof(double) * n * n), *z = malloc(sizeof(double) * n);
  for (int i = 0; i < n; i++) {
    z[i] = r[idx[i]];
    for (int j = 0; j < n; j++) S[i * n + j] = B->A[idx[i] * B->N + idx[j]];
  }
  const int bad = chol_solve(n, S, z);
  for (int i = 0; i < n && !bad; i++) y[idx[i]] += omega * z[i];
  free(map); free(idx); free(S); free(z);
  return bad;
}

static void residual_dense(const box *B, const double *b, const double *x, double *r) {
  const int64_t N = B->N;
  for (int64_t i = 0; i < N; i++) {
    double s = b[i];
    for (int64_t j = 0; j < N; j++) s -= B->A[i * N + j] * x[j];
    r[i] = s;
  }
}

static double *rand_vec(int64_t n) {
  double *v = malloc(sizeof(double) * (size_t)n);
  for (int64_t i = 0; i < n; i++) v[i] = check_rand();
  return v;
}

static double max_abs(int64_t n, const double *a) {
  double s = 0;
  for (int64_t i = 0; i < n; i++) s = fmax(s, fabs(a[i]));
  return s;
}

/* Iterate over the patch vertices. */
#define FOR_PATCHES(g, v)                                                                      \
  int64_t lo_[3], hi_[3];                                                                      \
  for (int d_ = 0; d_ < 3; d_++) vertex_range((g), d_, &lo_[d_], &hi_[d_]);                    \
  for (v[2] = lo_[2]; v[2] <= hi_[2]; v[2]++)                                                   \
    for (v[1] = lo_[1]; v[1] <= hi_[1]; v[1]++)                                                 \
      for (v[0] = lo_[0]; v[0] <= hi_[0]; v[0]++)

typedef struct {
  const char *name;
  int64_t cells[3];
  hpmg_bc_kind bc[6];
  double stretch[3];
  double lambda;
} box_case;

static const box_case cases2[] = {
    {"stretched Dirichlet", {4, 3, 1}, {D_, D_, D_, D_}, {8, 3, 1}, 0.0},
    {"Neumann half patches", {3, 4, 1}, {N_, D_, N_, N_}, {1, 5, 1}, 2.0},
    {"periodic 3 + 2 cells", {3, 2, 1}, {P_, P_, P_, P_}, {4, 1, 1}, 1.0},
    {"mixed (periodic 5, N-D)", {5, 3, 1}, {P_, P_, D_, N_}, {1, 20, 1}, 0.0},
    {"Neumann, one cell", {1, 3, 1}, {N_, N_, D_, D_}, {1, 2, 1}, 0.0},
};
static const box_case cases3[] = {
    {"stretched Dirichlet", {3, 3, 2}, {D_, D_, D_, D_, D_, D_}, {6, 1, 3}, 0.0},
    {"Neumann half patches", {2, 3, 2}, {N_, N_, D_, N_, N_, D_}, {1, 4, 1}, 1.0},
    {"periodic 3 + 2 cells", {3, 2, 2}, {P_, P_, P_, P_, D_, D_}, {2, 1, 1}, 0.0},
    {"mixed (periodic, N, N-D)", {3, 2, 2}, {P_, P_, N_, N_, D_, N_}, {1, 8, 2}, 3.0},
};

/* local, residual and the sweeps on one case */
static void check_case(int dim, int k, const box_case *C) {
  box B;
  if (box_make(dim, k, C->cells, C->bc, C->stretch, C->lambda, &B)) {
    check_failures++;
    return;
  }
  const hpmg_grid *g = &B.g;
  const int64_t N = B.N;
  const int nl = dim == 3 ? (2 * k - 1) * (2 * k - 1) * (2 * k - 1) : (2 * k - 1) * (2 * k - 1);
  double *b = rand_vec(N), *x0 = rand_vec(N), *r = malloc(8 * N), *y = malloc(8 * N), *yr = malloc(8 * N);
  double *x = malloc(8 * N), *ref = malloc(8 * N), *rl = malloc(8 * nl);
  int64_t *map = malloc(sizeof(int64_t) * nl);
  double worst_local = 0, worst_res = 0, worst_sweep = 0, worst_float = 0;
  int npatch = 0;
  residual_dense(&B, b, x0, r);
  const double rscale = fmax(1, max_abs(N, r));
  for (int local = 0; local < 2; local++) {
    hpmg_patch_options o = {.mode = HPMG_PATCH_MULTIPLICATIVE, .local = local ? HPMG_LOCAL_DENSE : HPMG_LOCAL_FDM,
                            .batch = -1};
    hpmg_smoother *s = NULL;
    if (hpmg_smoother_patch(&B.op, HPMG_REAL_DOUBLE, &o, &s)) {
      CHECK(0, "%s dim %d k %d: setup failed: %s", C->name, dim, k, hpmg_last_error());
      hpmg_smoother_destroy(&s);
      break;
    }
    int64_t v[3];
    FOR_PATCHES(g, v) {
      /* local correction */
      CHECK(hpmg_patch_local_correction(s, v, r, y) == HPMG_SUCCESS, "local correction: %s", hpmg_last_error());
      memset(yr, 0, 8 * N);
      CHECK(dense_correction(&B, v, r, yr, 1.0) == 0, "%s: patch block not SPD", C->name);
      double ys = fmax(1e-300, max_abs(N, yr)), d = 0;
      for (int64_t i = 0; i < N; i++) d = fmax(d, fabs(y[i] - yr[i]));
      worst_local = fmax(worst_local, d / ys);
      CHECK(d <= 1e-12 * ys, "%s dim %d k %d %s: patch (%lld,%lld,%lld) local solve differs from the dense block by "
            "%.3e (|y| %.3e)", C->name, dim, k, local ? "dense" : "fdm", (long long)v[0], (long long)v[1],
            (long long)v[2], d, ys);
      if (local) continue;
      npatch++;
      /* localized residual */
      CHECK(hpmg_patch_local_residual(s, v, b, x0, rl) == HPMG_SUCCESS, "local residual: %s", hpmg_last_error());
      patch_map(g, v, map);
      for (int i = 0; i < nl; i++) {
        const double e = map[i] >= 0 ? fabs(rl[i] - r[map[i]]) : fabs(rl[i]);
        worst_res = fmax(worst_res, e / rscale);
      }
    }
    hpmg_smoother_destroy(&s);
  }
  CHECK(worst_res <= 1e-12, "%s dim %d k %d: localized residual differs from b - Ax by %.3e", C->name, dim, k,
        worst_res);
  /* sweeps: multiplicative pre (colors forward) and post (backward), additive */
  int ncol = 1;
  for (int d = 0; d < dim; d++) ncol *= ncolors(g, d);
  for (int mode = 0; mode < 2; mode++)
    for (int post = 0; post < 2; post++) {
      const double omega = mode == HPMG_PATCH_ADDITIVE ? 1.0 / (1 << dim) : 1.0;
      memcpy(ref, x0, 8 * N);
      residual_dense(&B, b, x0, r);
      for (int cc = 0; cc < ncol; cc++) {
        const int c = post ? ncol - 1 - cc : cc;
        int64_t v[3];
        FOR_PATCHES(g, v) {
          if (color_of(g, v) != c) continue;
          if (mode == HPMG_PATCH_MULTIPLICATIVE) residual_dense(&B, b, ref, r);
          dense_correction(&B, v, r, ref, omega);
        }
      }
      const double scale = fmax(1, max_abs(N, ref));
      for (int ri = 0; ri < 2; ri++) {
        const hpmg_real real = ri ? HPMG_REAL_FLOAT : HPMG_REAL_DOUBLE;
        hpmg_patch_options o = {.mode = mode, .local = HPMG_LOCAL_FDM, .batch = mode ? 0 : -1};
        hpmg_smoother *s = NULL;
        if (hpmg_smoother_patch(&B.op, real, &o, &s)) {
          CHECK(0, "setup failed: %s", hpmg_last_error());
          hpmg_smoother_destroy(&s);
          continue;
        }
        /* additive: the smoother's own residual needs the operator, which
         * this test does not have: start from x = 0 with b - A x0 */
        const double *rhs = b;
        if (mode == HPMG_PATCH_ADDITIVE) {
          residual_dense(&B, b, x0, r);
          rhs = r;
        }
        if (real == HPMG_REAL_DOUBLE) {
          if (mode == HPMG_PATCH_ADDITIVE) memset(x, 0, 8 * N);
          else memcpy(x, x0, 8 * N);
          s->apply(s, rhs, x, mode == HPMG_PATCH_ADDITIVE, post, 1);
        } else {
          float *bf = malloc(4 * N), *xf = malloc(4 * N);
          hpmg_vec_convert(N, HPMG_REAL_DOUBLE, rhs, HPMG_REAL_FLOAT, bf);
          hpmg_vec_convert(N, HPMG_REAL_DOUBLE, x0, HPMG_REAL_FLOAT, xf);
          s->apply(s, bf, xf, mode == HPMG_PATCH_ADDITIVE, post, 1);
          hpmg_vec_convert(N, HPMG_REAL_FLOAT, xf, HPMG_REAL_DOUBLE, x);
          free(bf);
          free(xf);
        }
        if (mode == HPMG_PATCH_ADDITIVE)
          for (int64_t i = 0; i < N; i++) x[i] += x0[i];
        double d = 0;
        for (int64_t i = 0; i < N; i++) d = fmax(d, fabs(x[i] - ref[i]));
        if (ri) worst_float = fmax(worst_float, d / scale);
        else worst_sweep = fmax(worst_sweep, d / scale);
        CHECK(d <= (ri ? 1e-4 : 1e-12) * scale, "%s dim %d k %d %s %s %s: step differs from the dense formula by %.3e",
              C->name, dim, k, mode ? "additive" : "multiplicative", post ? "post" : "pre", ri ? "float" : "double", d);
        hpmg_smoother_destroy(&s);
      }
    }
  printf("%dD k %d %-26s %3d patches %2d colors: local %.1e residual %.1e sweeps %.1e float %.1e\n", dim, k, C->name,
         npatch, ncol, worst_local, worst_res, worst_sweep, worst_float);
  free(b); free(x0); free(r); free(y); free(yr); free(x); free(ref); free(rl); free(map);
  box_free(&B);
}

static void cases(void) {
  for (int dim = 2; dim <= 3; dim++) {
    const box_case *cs = dim == 2 ? cases2 : cases3;
    const int nc = dim == 2 ? (int)(sizeof cases2 / sizeof *cases2) : (int)(sizeof cases3 / sizeof *cases3);
    for (int k = 1; k <= test_max_degree(4); k++)
      for (int c = 0; c < nc; c++) check_case(dim, k, &cs[c]);
  }
}

/* The general-box path on a plain grid is the plain path, bitwise. */
static void plain(void) {
  for (int dim = 2; dim <= 3; dim++)
    for (int k = 1; k <= test_max_degree(4); k++) {
      const int64_t cells[3] = {5, 4, dim == 3 ? 3 : 1};
      const double len[3] = {1, 2.5, 0.4};
      hpmg_grid g;
      hpmg_laplace op;
      if (hpmg_grid_init(dim, k, cells, len, &g) || hpmg_laplace_create(&g, 3.0, &op)) {
        CHECK(0, "level: %s", hpmg_last_error());
        return;
      }
      const int64_t N = g.N;
      double *b = rand_vec(N), *x0 = rand_vec(N), *x1 = malloc(8 * N), *x2 = malloc(8 * N);
      double worst = 0;
      for (int mode = 0; mode < 2; mode++)
        for (int post = 0; post < 2; post++) {
          hpmg_patch_options o = {.mode = mode, .local = HPMG_LOCAL_FDM};
          hpmg_smoother *s1 = NULL, *s2 = NULL;
          if (hpmg_smoother_patch(&op, HPMG_REAL_DOUBLE, &o, &s1) ||
              hpmg_smoother_patch_general(&op, HPMG_REAL_DOUBLE, &o, &s2)) {
            CHECK(0, "setup: %s", hpmg_last_error());
            hpmg_smoother_destroy(&s1);
            hpmg_smoother_destroy(&s2);
            continue;
          }
          for (int simd = 0; simd < 2; simd++) {
            hpmg_patch_set_simd(s1, simd);
            hpmg_patch_set_simd(s2, simd);
            memcpy(x1, x0, 8 * N);
            memcpy(x2, x0, 8 * N);
            s1->apply(s1, b, x1, 0, post, 2);
            s2->apply(s2, b, x2, 0, post, 2);
            for (int64_t i = 0; i < N; i++) worst = fmax(worst, fabs(x1[i] - x2[i]));
          }
          hpmg_smoother_destroy(&s1);
          hpmg_smoother_destroy(&s2);
        }
      CHECK(worst == 0, "dim %d k %d: the general-box path differs from the plain path by %.3e", dim, k, worst);
      free(b); free(x0); free(x1); free(x2);
      hpmg_laplace_destroy(&op);
    }
  printf("plain: general-box path == plain path bitwise, 2D/3D k = 1..%d, both modes, pre and post, SIMD on and off\n",
         test_max_degree(4));
}

/* The general sweep gives bitwise the same x on 1, 2 and 3 threads (colors
 * race-free, including the third color of an odd periodic count), for several
 * batch sizes, both modes. */
static void threads(void) {
  const int64_t cells[3] = {7, 9, 5};
  const hpmg_bc_kind bc[6] = {P_, P_, N_, D_, N_, N_};
  const double st[3] = {3, 20, 1};
  for (int dim = 2; dim <= 3; dim++) {
    hpmg_grid g;
    hpmg_laplace op = {.lambda = 1.0};
    const double len[3] = {1, 1, 1};
    double *xn[3];
    if (grid_make(dim, 2, cells, bc, st, len, &g, xn)) return;
    op.g = g;
    const int64_t N = g.N, batches[3] = {-1, 0, 5};
    double *b = rand_vec(N), *x0 = rand_vec(N), *x1 = malloc(8 * N), *x2 = malloc(8 * N), worst = 0;
    for (int mode = 0; mode < 2; mode++)
      for (int ib = 0; ib < (mode ? 1 : 3); ib++) {
        hpmg_patch_options o = {.mode = mode, .local = HPMG_LOCAL_FDM, .batch = mode ? 0 : batches[ib]};
        hpmg_smoother *s = NULL;
        omp_set_num_threads(3);
        if (hpmg_smoother_patch(&op, HPMG_REAL_DOUBLE, &o, &s)) {
          CHECK(0, "setup: %s", hpmg_last_error());
          hpmg_smoother_destroy(&s);
          continue;
        }
        /* additive from x = 0, one step: its own residual needs the operator */
        for (int post = 0; post < 2; post++)
          for (int nt = 1; nt <= 3; nt++) {
            omp_set_num_threads(nt);
            double *x = nt == 1 ? x1 : x2;
            if (mode) memset(x, 0, 8 * N);
            else memcpy(x, x0, 8 * N);
            s->apply(s, b, x, mode, post, mode ? 1 : 2);
            if (nt > 1)
              for (int64_t i = 0; i < N; i++) worst = fmax(worst, fabs(x1[i] - x2[i]));
          }
        hpmg_smoother_destroy(&s);
      }
    omp_set_num_threads(2);
    CHECK(worst == 0, "dim %d: the general sweep depends on the thread count (%.3e)", dim, worst);
    printf("threads: dim %d (periodic 7 cells, Neumann, stretched): 1..3 threads bitwise equal\n", dim);
    free(b); free(x0); free(x1); free(x2);
    for (int d = 0; d < 3; d++) free(xn[d]);
  }
}

/* Lane groups (one patch per SIMD lane) equal the one-patch-at-a-time sweep,
 * on channel grids (x, z periodic and uniform, y stretched with Dirichlet and
 * Neumann walls: groups share their factors) and on grids stretched in every
 * direction (Neumann, periodic and Dirichlet ends: factors per lane): every
 * degree, both modes, pre and post, double (1e-12) and float (1e-5). */
static void simd(void) {
  for (int grid = 0; grid < 2; grid++)
  for (int dim = 2; dim <= 3; dim++)
    for (int k = 1; k <= test_max_degree(4); k++) {
      const int64_t cells[3] = {dim == 2 ? 20 : 10, grid ? 6 : 5, 8};
      const hpmg_bc_kind bc0[6] = {P_, P_, D_, N_, P_, P_}, bc1[6] = {N_, D_, P_, P_, D_, N_};
      const hpmg_bc_kind *bc = grid ? bc1 : bc0;
      const double st[3] = {grid ? 5 : 1, 30, grid ? 3 : 1};
      hpmg_grid g;
      hpmg_laplace op = {.lambda = k % 2 ? 0.0 : 2.0};
      const double len[3] = {1, 1, 1};
      double *xn[3];
      if (grid_make(dim, k, cells, bc, st, len, &g, xn)) return;
      op.g = g;
      const int64_t N = g.N;
      double *b = rand_vec(N), *x0 = rand_vec(N), *x1 = malloc(8 * N), *x2 = malloc(8 * N), worst[2] = {0, 0};
      float *bf = malloc(4 * N), *xf = malloc(4 * N);
      for (int ri = 0; ri < 2; ri++)
        for (int mode = 0; mode < 2; mode++) {
          const hpmg_real real = ri ? HPMG_REAL_FLOAT : HPMG_REAL_DOUBLE;
          hpmg_patch_options o = {.mode = mode, .local = HPMG_LOCAL_FDM, .batch = mode ? 0 : -1};
          hpmg_smoother *s = NULL;
          if (hpmg_smoother_patch(&op, real, &o, &s)) {
            CHECK(0, "setup: %s", hpmg_last_error());
            hpmg_smoother_destroy(&s);
            continue;
          }
          for (int post = 0; post < 2; post++) {
            for (int simd = 0; simd < 2; simd++) {
              double *x = simd ? x2 : x1;
              hpmg_patch_set_simd(s, simd);
              if (mode) memset(x, 0, 8 * N);
              else memcpy(x, x0, 8 * N);
              if (ri) {
                hpmg_vec_convert(N, HPMG_REAL_DOUBLE, b, HPMG_REAL_FLOAT, bf);
                hpmg_vec_convert(N, HPMG_REAL_DOUBLE, x, HPMG_REAL_FLOAT, xf);
                s->apply(s, bf, xf, mode, post, 1);
                hpmg_vec_convert(N, HPMG_REAL_FLOAT, xf, HPMG_REAL_DOUBLE, x);
              } else {
                s->apply(s, b, x, mode, post, 1);
              }
            }
            double d = 0, sc = 1e-300;
            for (int64_t i = 0; i < N; i++) {
              d = fmax(d, fabs(x1[i] - x2[i]));
              sc = fmax(sc, fabs(x1[i]));
            }
            worst[ri] = fmax(worst[ri], d / sc);
          }
          hpmg_smoother_destroy(&s);
        }
      CHECK(worst[0] <= 1e-12 && worst[1] <= 1e-5, "%s dim %d k %d: lane groups differ from one patch at a time by "
            "%.3e (double), %.3e (float)", grid ? "stretched everywhere" : "channel", dim, k, worst[0], worst[1]);
      free(b); free(x0); free(x1); free(x2); free(bf); free(xf);
      for (int d = 0; d < 3; d++) free(xn[d]);
    }
  printf("simd: lane groups == one patch at a time on channel grids (shared factors) and on grids stretched in "
         "every direction (factors per lane), every k, double and float\n");
}

/* Energy-norm contraction per step of x += S (b - A x), b = 0: the geometric
 * mean over steps 101..200 from a fixed random start (the additive rate
 * approaches its limit slowly: many smooth modes sit near the top). */
static double contraction(const box *B, hpmg_patch_mode mode) {
  const int64_t N = B->N;
  hpmg_patch_options o = {.mode = mode, .local = HPMG_LOCAL_FDM, .batch = mode ? 0 : -1};
  hpmg_smoother *s = NULL;
  if (hpmg_smoother_patch(&B->op, HPMG_REAL_DOUBLE, &o, &s)) {
    CHECK(0, "setup: %s", hpmg_last_error());
    hpmg_smoother_destroy(&s);
    return 1;
  }
  check_rng = 4242; /* the same start on either grid, whichever tests ran before */
  double *x = rand_vec(N), *r = malloc(8 * N), *z = calloc(N, 8), *y = malloc(8 * N);
  double e10 = 0, e20 = 0;
  for (int it = 1; it <= 200; it++) {
    residual_dense(B, z, x, r);
    s->apply(s, r, y, 1, 0, 1);
    for (int64_t i = 0; i < N; i++) x[i] += y[i];
    if (it == 100 || it == 200) {
      residual_dense(B, z, x, r);
      double e = 0;
      for (int64_t i = 0; i < N; i++) e -= x[i] * r[i];
      if (it == 100) e10 = sqrt(e);
      else e20 = sqrt(e);
    }
  }
  free(x); free(r); free(z); free(y);
  hpmg_smoother_destroy(&s);
  return pow(e20 / e10, 1.0 / 100);
}

static void robust(void) {
  typedef struct {
    const char *name;
    int dim, k;
    int64_t cells[3];
    hpmg_bc_kind bc[6];
    int sdir; /* stretched direction */
  } rcase;
  const rcase rc[] = {
      {"2D Dirichlet", 2, 2, {8, 8, 1}, {D_, D_, D_, D_}, 1},
      {"2D channel (x periodic, y walls N-D)", 2, 2, {8, 8, 1}, {P_, P_, D_, N_}, 1},
      {"2D channel (x periodic, y walls N-D)", 2, 4, {6, 6, 1}, {P_, P_, D_, N_}, 1},
      {"3D channel (x, z periodic, y D-N)", 3, 2, {4, 6, 4}, {P_, P_, D_, N_, P_, P_}, 1},
  };
  for (size_t c = 0; c < sizeof rc / sizeof *rc; c++) {
    for (int mode = 0; mode < 2; mode++) {
      double rho[2];
      double aspect = 0;
      for (int st = 0; st < 2; st++) {
        double stretch[3] = {1, 1, 1};
        box B;
        /* aspect ratio 50 of the flattest cell: widest y cell / narrowest = s,
         * narrowest y cell = x width / 50 */
        if (st) {
          const double hx = 1.0 / (double)rc[c].cells[0], ly = 0.7, target = hx / 50;
          double lo = 1, hi = 1e6;
          for (int it = 0; it < 200; it++) { /* bisection on s: narrowest cell = target */
            const double sm = sqrt(lo * hi);
            double *xn = nodes(rc[c].cells[1], ly, sm);
            const double w = xn[1] - xn[0];
            free(xn);
            if (w > target) lo = sm;
            else hi = sm;
          }
          stretch[rc[c].sdir] = sqrt(lo * hi);
        }
        if (box_make(rc[c].dim, rc[c].k, rc[c].cells, rc[c].bc, stretch, 0.0, &B)) {
          check_failures++;
          return;
        }
        if (st) aspect = hpmg_grid_cell_width(&B.g, 0, 0) / hpmg_grid_cell_width(&B.g, 1, 0);
        rho[st] = contraction(&B, mode);
        box_free(&B);
      }
      printf("robust: %-38s k %d %-14s uniform %.3f, stretched (aspect %.0f) %.3f per step\n", rc[c].name, rc[c].k,
             mode ? "additive" : "multiplicative", rho[0], aspect, rho[1]);
      CHECK(rho[1] <= rho[0] + 0.02 && rho[1] < 1, "%s k %d mode %d: contraction %.3f on the stretched grid against %.3f "
            "uniform", rc[c].name, rc[c].k, mode, rho[1], rho[0]);
    }
  }
}

static void errors(void) {
  box B;
  const int64_t cells[3] = {1, 3, 1};
  const hpmg_bc_kind bc1[6] = {P_, P_, D_, D_};
  const double st[3] = {1, 1, 1};
  hpmg_patch_options o = {.mode = HPMG_PATCH_MULTIPLICATIVE, .local = HPMG_LOCAL_FDM};
  hpmg_smoother *s = NULL;
  if (box_make(2, 2, cells, bc1, st, 1.0, &B)) return;
  CHECK(hpmg_smoother_patch(&B.op, HPMG_REAL_DOUBLE, &o, &s) == HPMG_ERR_ARG && s == NULL,
        "a periodic direction of 1 cell is refused");
  CHECK(strstr(hpmg_last_error(), "periodic") != NULL, "message: %s", hpmg_last_error());
  box_free(&B);
  B.g.bc[1] = D_; /* periodic on one end only (no matrix needed) */
  B.g.cells[0] = 3;
  B.op.g = B.g;
  B.A = NULL;
  for (int d = 0; d < 3; d++) B.xn[d] = NULL;
  CHECK(hpmg_smoother_patch(&B.op, HPMG_REAL_DOUBLE, &o, &s) == HPMG_ERR_ARG && s == NULL,
        "periodic on one end only is refused");
  CHECK(strstr(hpmg_last_error(), "one end") != NULL, "message: %s", hpmg_last_error());
}

int main(int argc, char **argv) {
  const char *what = argc > 1 ? argv[1] : "all";
  const int all = !strcmp(what, "all");
  if (all || !strcmp(what, "cases")) cases();
  if (all || !strcmp(what, "plain")) plain();
  if (all || !strcmp(what, "threads")) threads();
  if (all || !strcmp(what, "simd")) simd();
  if (all || !strcmp(what, "robust")) robust();
  if (all || !strcmp(what, "errors")) errors();
  return check_report();
}
