/* Vertex-patch smoother against independent references (src/disc/qk/patch.h).
 *   fdm_dense   one smoothing step with --local-solver fdm equals --local-solver
 *               dense to 1e-12, k = 1..10 (2D) and 1..8 (3D), isotropic and
 *               anisotropic cells, lambda = 0 and > 0, both modes, pre and post
 *   residual    the localized residual of every patch equals the global
 *               residual b - Ax (hpmg_laplace_residual) restricted to the patch
 *               interior, k = 1..10 (2D) / 1..8 (3D), anisotropic, lambda > 0
 *   naive       one multiplicative step equals the textbook sequential
 *               subspace correction (global residual, dense inverse, patches
 *               in color order; reverse order for post-smoothing); one
 *               additive step equals x + omega sum_j R_j^T A_j^{-1} R_j (b - Ax);
 *               float kernels agree with double to float accuracy
 *   threads     the colored sweep gives the same x on 1 and 2 threads
 *   errors      invalid combinations are refused with a message */
#include <omp.h>
#include <string.h>
#include "check.h"
#include "la/vec.h"
#include "disc/qk/patch.h"
#include "test_env.h"

/* CHECK_OK for functions without a result */
#define REQUIRE_OK(expr)                                                       \
  do {                                                                         \
    hpmg_error e_ = (expr);                                                    \
    CHECK(e_ == HPMG_SUCCESS, "%s failed: %s", #expr, hpmg_last_error());     \
    if (e_) return;                                                            \
  } while (0)

typedef struct {
  hpmg_grid g;
  hpmg_laplace op;
} level;

static int make_level(int dim, int k, const int64_t cells[3], const double box[3], double lambda, level *L) {
  if (hpmg_grid_init(dim, k, cells, box, &L->g) || hpmg_laplace_create(&L->g, lambda, &L->op)) {
    printf("level setup failed: %s\n", hpmg_last_error());
    return 1;
  }
  return 0;
}

static double *rand_vec(int64_t n) {
  double *v = malloc(sizeof(double) * (size_t)n);
  for (int64_t i = 0; i < n; i++) v[i] = check_rand();
  return v;
}

/* Free-node indices of the interior of the patch of vertex v (lexicographic, x fastest). */
static int patch_interior(const hpmg_grid *g, const int64_t v[3], int64_t *idx) {
  const int k = g->k, m = 2 * k - 1, mz = g->dim == 3 ? m : 1;
  int c = 0;
  for (int j2 = 0; j2 < mz; j2++)
    for (int j1 = 0; j1 < m; j1++)
      for (int j0 = 0; j0 < m; j0++) {
        int64_t i0 = (v[0] - 1) * k + j0, i1 = (v[1] - 1) * k + j1, i2 = g->dim == 3 ? (v[2] - 1) * k + j2 : 0;
        idx[c++] = hpmg_grid_index(g, i0, i1, i2);
      }
  return c;
}

static double max_diff(int64_t n, const double *a, const double *b, double *scale) {
  double d = 0, s = 0;
  for (int64_t i = 0; i < n; i++) {
    d = fmax(d, fabs(a[i] - b[i]));
    s = fmax(s, fabs(b[i]));
  }
  if (scale) *scale = s;
  return d;
}

/* One step of smoother s (created here from o if NULL) from x0; result in x. */
static int smooth_with(hpmg_smoother *given, const level *L, hpmg_patch_options o, hpmg_real real, const double *b,
                       const double *x0, double *x, int post) {
  hpmg_smoother *s = given;
  if (!s && hpmg_smoother_patch(&L->op, real, &o, &s)) {
    printf("smoother setup failed: %s\n", hpmg_last_error());
    check_failures++;
    return 1;
  }
  const int64_t n = L->g.N;
  if (real == HPMG_REAL_DOUBLE) {
    memcpy(x, x0, sizeof(double) * (size_t)n);
    s->apply(s, b, x, 0, post, 1);
  } else {
    float *bf = malloc(4 * (size_t)n), *xf = malloc(4 * (size_t)n);
    hpmg_vec_convert(n, HPMG_REAL_DOUBLE, b, HPMG_REAL_FLOAT, bf);
    hpmg_vec_convert(n, HPMG_REAL_DOUBLE, x0, HPMG_REAL_FLOAT, xf);
    s->apply(s, bf, xf, 0, post, 1);
    hpmg_vec_convert(n, HPMG_REAL_FLOAT, xf, HPMG_REAL_DOUBLE, x);
    free(bf);
    free(xf);
  }
  if (!given) hpmg_smoother_destroy(&s);
  return 0;
}

static int smooth_once(const level *L, hpmg_patch_options o, hpmg_real real, const double *b, const double *x0, double *x,
                       int post) {
  return smooth_with(NULL, L, o, real, b, x0, x, post);
}

static const double boxes[2][3] = {{1, 1, 1}, {1, 2.5, 0.4}};

static void fdm_dense(void) {
  for (int dim = 2; dim <= 3; dim++)
    for (int k = 1; k <= test_max_degree(dim == 2 ? 10 : 8); k++)
      for (int variant = 0; variant < 3; variant++) { /* isotropic; anisotropic; anisotropic + lambda */
        /* 3D Q7-Q8: the most general variant only (the three took 19 of the test's 31 s under
         * the sanitizers; they run the same code as at lower degrees) */
        if (dim == 3 && k >= 7 && variant < 2) continue;
        const int64_t c = dim == 2 ? 4 : 3, cells[3] = {c, c + 1, dim == 3 ? c : 1};
        const double lambda = variant == 2 ? 37.0 : 0.0;
        level L;
        if (make_level(dim, k, cells, boxes[variant > 0], lambda, &L)) return;
        const int64_t n = L.g.N;
        double *b = rand_vec(n), *x0 = rand_vec(n), *xf = malloc(8 * n), *xd = malloc(8 * n);
        double worst = 0;
        /* the dense inverse of 3D Q7-Q8 (2197-3375 unknowns) takes seconds: one mode there */
        for (int mode = 0; mode < (dim == 3 && k >= 7 ? 1 : 2); mode++) {
          hpmg_patch_options of = {.mode = mode, .local = HPMG_LOCAL_FDM}, od = {.mode = mode, .local = HPMG_LOCAL_DENSE};
          hpmg_smoother *sf, *sd;
          REQUIRE_OK(hpmg_smoother_patch(&L.op, HPMG_REAL_DOUBLE, &of, &sf));
          REQUIRE_OK(hpmg_smoother_patch(&L.op, HPMG_REAL_DOUBLE, &od, &sd));
          for (int post = 0; post < 2; post++) {
            if (smooth_with(sf, &L, of, HPMG_REAL_DOUBLE, b, x0, xf, post)) return;
            if (smooth_with(sd, &L, od, HPMG_REAL_DOUBLE, b, x0, xd, post)) return;
            double scale, d = max_diff(n, xf, xd, &scale);
            worst = fmax(worst, d / fmax(1, scale));
            CHECK(d <= 1e-12 * fmax(1, scale), "dim %d k %d variant %d mode %d post %d: fdm vs dense step differ by %.3e",
                  dim, k, variant, mode, post, d);
          }
          hpmg_smoother_destroy(&sf);
          hpmg_smoother_destroy(&sd);
        }
        printf("fdm == dense: dim %d k %2d %s: max rel. difference %.2e\n", dim, k,
               variant == 0 ? "isotropic          " : variant == 1 ? "anisotropic        " : "anisotropic lambda ", worst);
        free(b); free(x0); free(xf); free(xd);
        hpmg_laplace_destroy(&L.op);
      }
}

static void residual(void) {
  for (int dim = 2; dim <= 3; dim++)
    for (int k = 1; k <= test_max_degree(dim == 2 ? 10 : 8); k++) {
      const int64_t cells[3] = {4, 3, dim == 3 ? 4 : 1};
      level L;
      if (make_level(dim, k, cells, boxes[1], 5.0, &L)) return;
      const int64_t n = L.g.N;
      double *b = rand_vec(n), *x = rand_vec(n), *r = malloc(8 * n);
      hpmg_laplace_residual(&L.op, HPMG_REAL_DOUBLE, b, x, r);
      hpmg_patch_options o = {.mode = HPMG_PATCH_MULTIPLICATIVE, .local = HPMG_LOCAL_FDM};
      hpmg_smoother *s;
      if (hpmg_smoother_patch(&L.op, HPMG_REAL_DOUBLE, &o, &s)) {
        printf("setup failed: %s\n", hpmg_last_error());
        check_failures++;
        return;
      }
      const int nloc = dim == 2 ? (2 * k - 1) * (2 * k - 1) : (2 * k - 1) * (2 * k - 1) * (2 * k - 1);
      int64_t *idx = malloc(sizeof(int64_t) * nloc);
      double *rl = malloc(8 * nloc), worst = 0, scale = 0;
      int patches = 0;
      for (int64_t v2 = 1; v2 <= (dim == 3 ? cells[2] - 1 : 1); v2++)
        for (int64_t v1 = 1; v1 < cells[1]; v1++)
          for (int64_t v0 = 1; v0 < cells[0]; v0++) {
            const int64_t v[3] = {v0, v1, v2};
            REQUIRE_OK(hpmg_patch_local_residual(s, v, b, x, rl));
            patch_interior(&L.g, v, idx);
            for (int i = 0; i < nloc; i++) {
              worst = fmax(worst, fabs(rl[i] - r[idx[i]]));
              scale = fmax(scale, fabs(r[idx[i]]));
            }
            patches++;
          }
      printf("localized residual: dim %d k %2d, %d patches (all, incl. Dirichlet-adjacent): max |r_j - R_j r| = %.2e "
             "(|r| up to %.2e)\n", dim, k, patches, worst, scale);
      CHECK(worst <= 1e-12 * fmax(1, scale), "dim %d k %d: localized residual differs by %.3e", dim, k, worst);
      free(b); free(x); free(r); free(idx); free(rl);
      hpmg_smoother_destroy(&s);
      hpmg_laplace_destroy(&L.op);
    }
}

/* Textbook references built from the global residual and the dense inverse. */
static void naive(void) {
  for (int dim = 2; dim <= 3; dim++)
    for (int k = 1; k <= test_max_degree(dim == 2 ? 5 : 3); k++) {
      const int64_t cells[3] = {5, 4, dim == 3 ? 4 : 1};
      level L;
      if (make_level(dim, k, cells, boxes[1], 3.0, &L)) return;
      const int64_t n = L.g.N;
      hpmg_fdm f;
      REQUIRE_OK(hpmg_fdm_setup(dim, k, L.g.h, 3.0, &f));
      double *Ainv = malloc(sizeof(double) * f.nloc * f.nloc);
      REQUIRE_OK(hpmg_fdm_dense_inverse(&f, Ainv));
      int64_t *idx = malloc(sizeof(int64_t) * f.nloc);
      double *b = rand_vec(n), *x0 = rand_vec(n), *x = malloc(8 * n), *y = malloc(8 * n), *r = malloc(8 * n),
             *dx = malloc(8 * f.nloc);
      const int ncol = 1 << dim;
      for (int mode = 0; mode < 2; mode++)
        for (int post = 0; post < 2; post++) {
          memcpy(x, x0, 8 * n);
          const double omega = mode == HPMG_PATCH_ADDITIVE ? 1.0 / ncol : 1.0;
          hpmg_laplace_residual(&L.op, HPMG_REAL_DOUBLE, b, x, r);
          for (int cc = 0; cc < ncol; cc++) {
            const int c = post ? ncol - 1 - cc : cc;
            for (int64_t v2 = 1; v2 <= (dim == 3 ? cells[2] - 1 : 1); v2++)
              for (int64_t v1 = 1; v1 < cells[1]; v1++)
                for (int64_t v0 = 1; v0 < cells[0]; v0++) {
                  if (((v0 - 1) & 1) != (c & 1) || ((v1 - 1) & 1) != ((c >> 1) & 1) ||
                      (dim == 3 && ((v2 - 1) & 1) != ((c >> 2) & 1)))
                    continue;
                  const int64_t v[3] = {v0, v1, v2};
                  if (mode == HPMG_PATCH_MULTIPLICATIVE) hpmg_laplace_residual(&L.op, HPMG_REAL_DOUBLE, b, x, r);
                  patch_interior(&L.g, v, idx);
                  for (int i = 0; i < f.nloc; i++) {
                    dx[i] = 0;
                    for (int j = 0; j < f.nloc; j++) dx[i] += Ainv[(size_t)i * f.nloc + j] * r[idx[j]];
                  }
                  for (int i = 0; i < f.nloc; i++) x[idx[i]] += omega * dx[i];
                }
          }
          hpmg_patch_options o = {.mode = mode, .local = HPMG_LOCAL_FDM};
          if (smooth_once(&L, o, HPMG_REAL_DOUBLE, b, x0, y, post)) return;
          double scale, d = max_diff(n, y, x, &scale);
          printf("naive reference: dim %d k %d %s %s: max difference %.2e\n", dim, k, mode ? "additive      " : "multiplicative",
                 post ? "post" : "pre ", d);
          CHECK(d <= 1e-12 * fmax(1, scale), "dim %d k %d mode %d post %d: smoother differs from the naive reference by %.3e",
                dim, k, mode, post, d);
          if (smooth_once(&L, o, HPMG_REAL_FLOAT, b, x0, y, post)) return;
          d = max_diff(n, y, x, &scale);
          CHECK(d <= 2e-4 * fmax(1, scale), "dim %d k %d mode %d post %d: float step differs from double by %.3e", dim, k,
                mode, post, d);
        }
      free(Ainv); free(idx); free(b); free(x0); free(x); free(y); free(r); free(dx);
      hpmg_fdm_free(&f);
      hpmg_laplace_destroy(&L.op);
    }
}

/* One multiplicative step gives bitwise the same result with 1, 2 and 3
 * threads for every order and batch size (one smoother, created for 3
 * threads); batch orders differ from each other, but each is a convergent
 * multiplicative Schwarz sweep: one V-cycle-free smoothing step reduces the
 * error of A x = 0 from a random start in the energy norm for every order. */
static void threads(void) {
  const int64_t batches[] = {-1, 0, 3, 16};
  int most = 1; /* the most threads the runtime gave (OMP_THREAD_LIMIT may cap them) */
  for (int dim = 2; dim <= 3; dim++) {
    const int64_t c = dim == 2 ? 17 : 7, cells[3] = {c, c + 1, dim == 3 ? c : 1};
    level L;
    if (make_level(dim, 3, cells, boxes[0], 0.0, &L)) return;
    const int64_t n = L.g.N;
    double *b = rand_vec(n), *x0 = rand_vec(n), *x1 = malloc(8 * n), *x2 = malloc(8 * n), *z = calloc(n, 8);
    double *ax = malloc(8 * n);
    for (int ord = 0; ord < 3; ord++)
      for (int ib = 0; ib < 4; ib++) {
        hpmg_patch_options o = {.mode = HPMG_PATCH_MULTIPLICATIVE, .local = HPMG_LOCAL_FDM, .order = ord,
                                .batch = batches[ib]};
        hpmg_smoother *s;
        omp_set_num_threads(3);
        REQUIRE_OK(hpmg_smoother_patch(&L.op, HPMG_REAL_DOUBLE, &o, &s));
        for (int post = 0; post < 2; post++) {
          double worst = 0;
          omp_set_num_threads(1);
          if (smooth_with(s, &L, o, HPMG_REAL_DOUBLE, b, x0, x1, post)) return;
          for (int nt = 2; nt <= 3; nt++) {
            omp_set_num_threads(nt);
            if (omp_get_max_threads() > most) most = omp_get_max_threads();
            if (smooth_with(s, &L, o, HPMG_REAL_DOUBLE, b, x0, x2, post)) return;
            worst = fmax(worst, max_diff(n, x1, x2, NULL));
          }
          CHECK(worst == 0.0, "dim %d order %d batch %lld post %d: result depends on the thread count (%.3e)", dim,
                ord, (long long)batches[ib], post, worst);
        }
        /* energy of the error before and after one step on A x = 0 */
        if (smooth_with(s, &L, o, HPMG_REAL_DOUBLE, z, x0, x1, 0)) return;
        hpmg_laplace_apply(&L.op, HPMG_REAL_DOUBLE, x0, ax);
        double e0 = 0, e1 = 0;
        for (int64_t i = 0; i < n; i++) e0 += x0[i] * ax[i];
        hpmg_laplace_apply(&L.op, HPMG_REAL_DOUBLE, x1, ax);
        for (int64_t i = 0; i < n; i++) e1 += x1[i] * ax[i];
        CHECK(e1 < 0.5 * e0, "dim %d order %d batch %lld: energy %.3e -> %.3e, not reduced", dim, ord,
              (long long)batches[ib], e0, e1);
        hpmg_smoother_destroy(&s);
      }
    omp_set_num_threads(2);
    printf("threads: dim %d, 3 orders x 4 batch sizes, 1..%d threads bitwise equal%s\n", dim, most,
           most < 3 ? " (the runtime's thread limit allowed no more)" : "");
    free(b); free(x0); free(x1); free(x2); free(z); free(ax);
    hpmg_laplace_destroy(&L.op);
  }
}

/* SIMD over patches (lanes = patches of one color) equals the one-patch-at-
 * a-time sweep for every degree, pre and post, from x = 0 and from random x,
 * on meshes with enough patches per color for full lane groups and a rest. */
static void simd(void) {
  for (int dim = 2; dim <= 3; dim++)
    for (int k = 1; k <= test_max_degree(dim == 2 ? 10 : 8); k++) {
      const int64_t c = dim == 2 ? 13 : (k <= 4 ? 7 : 6), cells[3] = {c, c + 1, dim == 3 ? c : 1};
      level L;
      if (make_level(dim, k, cells, boxes[1], k % 2 ? 3.0 : 0.0, &L)) return;
      const int64_t n = L.g.N;
      double *b = rand_vec(n), *x0 = rand_vec(n), *x1 = malloc(8 * n), *x2 = malloc(8 * n);
      double worst[2] = {0, 0};
      for (int ri = 0; ri < 2; ri++) {
        const hpmg_real real = ri ? HPMG_REAL_FLOAT : HPMG_REAL_DOUBLE;
        hpmg_patch_options o = {.mode = HPMG_PATCH_MULTIPLICATIVE, .local = HPMG_LOCAL_FDM, .batch = -1};
        hpmg_smoother *s;
        REQUIRE_OK(hpmg_smoother_patch(&L.op, real, &o, &s));
        for (int post = 0; post < 2; post++) {
          double scale = 0;
          REQUIRE_OK(hpmg_patch_set_simd(s, 0));
          if (smooth_with(s, &L, o, real, b, x0, x1, post)) return;
          REQUIRE_OK(hpmg_patch_set_simd(s, 1));
          if (smooth_with(s, &L, o, real, b, x0, x2, post)) return;
          worst[ri] = fmax(worst[ri], max_diff(n, x1, x2, &scale) / fmax(scale, 1e-300));
        }
        hpmg_smoother_destroy(&s);
      }
      CHECK(worst[0] <= 1e-12, "dim %d k %d: SIMD sweep differs from the scalar sweep by %.3e (double)", dim, k,
            worst[0]);
      CHECK(worst[1] <= 1e-5, "dim %d k %d: SIMD sweep differs from the scalar sweep by %.3e (float)", dim, k,
            worst[1]);
      free(b); free(x0); free(x1); free(x2);
      hpmg_laplace_destroy(&L.op);
    }
  printf("simd: SIMD-over-patches sweep equals the scalar sweep, every k, double and float\n");
}

static void errors(void) {
  hpmg_patch_options o = {.mode = HPMG_PATCH_MULTIPLICATIVE, .local = HPMG_LOCAL_DENSE};
  CHECK(hpmg_patch_check(3, 9, &o) == HPMG_ERR_ARG, "dense local solver refused for 3D k = 9");
  CHECK(strstr(hpmg_last_error(), "fdm") != NULL, "message suggests fdm: %s", hpmg_last_error());
  CHECK(hpmg_patch_check(3, 8, &o) == HPMG_SUCCESS, "dense allowed for 3D k = 8");
  o.damping = 0.5;
  CHECK(hpmg_patch_check(2, 3, &o) == HPMG_ERR_ARG, "damping refused in multiplicative mode");
  o.mode = HPMG_PATCH_ADDITIVE;
  o.damping = 1.5;
  CHECK(hpmg_patch_check(2, 3, &o) == HPMG_ERR_ARG, "damping > 1 refused");
  o.damping = 0.3;
  CHECK(hpmg_patch_check(2, 3, &o) == HPMG_SUCCESS, "damping 0.3 accepted in additive mode");
  o.batch = 5;
  CHECK(hpmg_patch_check(2, 3, &o) == HPMG_ERR_ARG, "batch refused in additive mode");
  o.mode = HPMG_PATCH_MULTIPLICATIVE;
  o.damping = 0;
  CHECK(hpmg_patch_check(2, 3, &o) == HPMG_SUCCESS, "batch 5 accepted");
  o.batch = -2;
  CHECK(hpmg_patch_check(2, 3, &o) == HPMG_ERR_ARG, "batch -2 refused");
  o.batch = 0;
  o.order = 7;
  CHECK(hpmg_patch_check(2, 3, &o) == HPMG_ERR_ARG, "unknown order refused");
}

int main(int argc, char **argv) {
  const char *what = argc > 1 ? argv[1] : "all";
  int all = !strcmp(what, "all");
  if (all || !strcmp(what, "fdm_dense")) fdm_dense();
  if (all || !strcmp(what, "residual")) residual();
  if (all || !strcmp(what, "naive")) naive();
  if (all || !strcmp(what, "threads")) threads();
  if (all || !strcmp(what, "simd")) simd();
  if (all || !strcmp(what, "errors")) errors();
  return check_report();
}
