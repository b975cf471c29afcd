/* Fast-diagonalization patch solver against independent references built
 * here: the 1D patch matrices assembled from the element matrices, the
 * Kronecker patch matrices evaluated entry by entry, and the explicit
 * Cholesky inverse. Every k (2D 1..10, 3D 1..8), isotropic and anisotropic
 * cells, lambda = 0 and 10; double to 1e-12, float to 1e-5 (float products
 * with cancellation measured against |Abar| |x|). `test_fdm --full` forms the
 * explicit inverse in every case (about 4 s more per 3D k = 8 case). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fem/fem.h"
#include "disc/qk/fdm.h"
#include "disc/qk/cuda/qk_coef.h" /* the GPU float kernel's compile-time factors (plain C) */
#include "test_env.h"

static int failures = 0;

#define CHECK(cond, ...)                                                                 \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      failures++;                                                                        \
      printf("FAIL %s:%d: ", __FILE__, __LINE__);                                        \
      printf(__VA_ARGS__);                                                               \
      printf("\n");                                                                      \
    }                                                                                    \
  } while (0)

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static double urand(void) { /* xorshift64*, uniform in [-1, 1) */
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return (double)((rng * 2685821657736338717ull) >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

static void *xmalloc(size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p) {
    printf("out of memory\n");
    exit(2);
  }
  return p;
}

static double norm(int n, const double *x) {
  double s = 0;
  for (int i = 0; i < n; i++) s += x[i] * x[i];
  return sqrt(s);
}
static double diffnorm(int n, const double *x, const double *y) {
  double s = 0;
  for (int i = 0; i < n; i++) s += (x[i] - y[i]) * (x[i] - y[i]);
  return sqrt(s);
}
static double diffnorm_f(int n, const float *x, const double *y) {
  double s = 0;
  for (int i = 0; i < n; i++) s += ((double)x[i] - y[i]) * ((double)x[i] - y[i]);
  return sqrt(s);
}

/* Closed 1D patch matrices (n x n) of one direction, assembled here. */
typedef struct { double M[21 * 21], K[21 * 21]; } closed1d;

static void assemble_closed(int k, double h, closed1d *c) {
  int n = 2 * k + 1, ne = k + 1;
  double Me[11 * 11], Ke[11 * 11];
  hpmg_element_mass(k, h, Me);
  hpmg_element_stiffness(k, h, Ke);
  memset(c, 0, sizeof *c);
  for (int cell = 0; cell < 2; cell++)
    for (int a = 0; a < ne; a++)
      for (int b = 0; b < ne; b++) {
        c->M[(cell * k + a) * n + cell * k + b] += Me[a * ne + b];
        c->K[(cell * k + a) * n + cell * k + b] += Ke[a * ne + b];
      }
}

/* y = A x with the interior (closed_cols = 0) or rectangular (closed_cols = 1)
 * Kronecker matrix, evaluated entry by entry: row (i0,i1,i2), column
 * (j0,j1,j2) holds K2 M1 M0 + M2 K1 M0 + M2 M1 K0 + lambda M2 M1 M0 of the 1D
 * entries (2D: K1 M0 + M1 K0 + lambda M1 M0). Exactly zero 1D entries are
 * skipped, which leaves every sum unchanged. With absval, every 1D entry and
 * x are replaced by their absolute values: the scale of the rounding errors
 * of a product with cancellation (stiffness rows sum to zero). */
static void kron_apply(int dim, int k, const closed1d *c, double lambda, int closed_cols,
                       int absval, const double *x, double *y) {
#define V(e) (absval ? fabs(e) : (e))
  int n = 2 * k + 1, m = 2 * k - 1, nc = closed_cols ? n : m, off = closed_cols ? 0 : 1;
  int N = dim == 2 ? m * m : m * m * m;
  for (int row = 0; row < N; row++) {
    int i0 = row % m + 1, i1 = (row / m) % m + 1, i2 = row / (m * m) + 1;
    const double *M0 = c[0].M + i0 * n + off, *K0 = c[0].K + i0 * n + off;
    const double *M1 = c[1].M + i1 * n + off, *K1 = c[1].K + i1 * n + off;
    double s = 0;
    if (dim == 2) {
      for (int j1 = 0; j1 < nc; j1++) {
        if (M1[j1] == 0 && K1[j1] == 0) continue;
        double a = V(K1[j1]) + lambda * V(M1[j1]), b = V(M1[j1]);
        for (int j0 = 0; j0 < nc; j0++)
          s += (a * V(M0[j0]) + b * V(K0[j0])) * V(x[j1 * nc + j0]);
      }
    } else {
      const double *M2 = c[2].M + i2 * n + off, *K2 = c[2].K + i2 * n + off;
      for (int j2 = 0; j2 < nc; j2++) {
        if (M2[j2] == 0 && K2[j2] == 0) continue;
        for (int j1 = 0; j1 < nc; j1++) {
          if (M1[j1] == 0 && K1[j1] == 0) continue;
          double a = V(K2[j2]) * V(M1[j1]) + V(M2[j2]) * V(K1[j1]) +
                     lambda * V(M2[j2]) * V(M1[j1]);
          double b = V(M2[j2]) * V(M1[j1]);
          const double *xr = x + (j2 * nc + j1) * nc;
          for (int j0 = 0; j0 < nc; j0++) s += (a * V(M0[j0]) + b * V(K0[j0])) * V(xr[j0]);
        }
      }
    }
    y[row] = s;
  }
#undef V
}

/* max |S^T M S - I| (*eo) and max |S^T K S - diag(eig)| / eig[m-1] (*ed): S
 * (S[i*m+j] = component i of eigenvector j) M-orthonormal and diagonalizing K */
static void eig_errors(int m, const double *S, const double *M, const double *K, const double *eig, double *eo,
                       double *ed) {
  *eo = *ed = 0;
  for (int a = 0; a < m; a++)
    for (int b = 0; b < m; b++) {
      double sm = 0, sk = 0;
      for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++) {
          sm += S[i * m + a] * M[i * m + j] * S[j * m + b];
          sk += S[i * m + a] * K[i * m + j] * S[j * m + b];
        }
      *eo = fmax(*eo, fabs(sm - (a == b)));
      *ed = fmax(*ed, fabs(sk - (a == b ? eig[a] : 0.0)) / eig[m - 1]);
    }
}

static void check_1d_factors(const hpmg_fdm *f, const closed1d *c, int d, const char *tag) {
  int m = f->m, n = f->n;
  const hpmg_fdm_data_d *D = &f->dbl;
  double err = 0, scale = 0;
  for (int i = 0; i < m; i++) {
    for (int j = 0; j < n; j++) {
      err = fmax(err, fabs(D->Mb[d][i * n + j] - c[d].M[(i + 1) * n + j]));
      err = fmax(err, fabs(D->Kb[d][i * n + j] - c[d].K[(i + 1) * n + j]));
      err = fmax(err, fabs(D->MbT[d][j * m + i] - D->Mb[d][i * n + j]));
      err = fmax(err, fabs(D->KbT[d][j * m + i] - D->Kb[d][i * n + j]));
      scale = fmax(scale, fabs(c[d].K[(i + 1) * n + j]));
    }
    for (int j = 0; j < m; j++) {
      err = fmax(err, fabs(D->M[d][i * m + j] - c[d].M[(i + 1) * n + j + 1]));
      err = fmax(err, fabs(D->K[d][i * m + j] - c[d].K[(i + 1) * n + j + 1]));
    }
  }
  CHECK(err <= 1e-14 * scale, "%s dir %d: 1D patch matrices differ by %.3e", tag, d, err);
  /* S^T M S = I and S^T K S = Lambda */
  double eo, ed;
  eig_errors(m, D->S[d], D->M[d], D->K[d], D->eig[d], &eo, &ed);
  for (int a = 0; a < m; a++)
    for (int b = 0; b < m; b++)
      if (D->ST[d][a * m + b] != D->S[d][b * m + a]) eo = INFINITY;
  CHECK(eo < 1e-12 && ed < 1e-12, "%s dir %d: S^T M S - I = %.3e, S^T K S - Lambda = %.3e", tag,
        d, eo, ed);
}

/* src/disc/qk/cuda/qk_coef.h (generated by scripts/gen_qk_coef.c) against the
 * factors hpmg_fdm_setup computes now: Mr, Kr equal; the table's Sr
 * M-orthonormal and diagonalizing K with the eigenvalues hpmg_fdm_setup computes, in its
 * order (a column's sign is free: the kernel applies S D^{-1} S^T), so the
 * GPU float kernel's eigenvectors match the level's D^{-1} built at run time. */
static void check_gpu_table(void) {
  static const double tab[] = QK_COEF_TABLE;
  CHECK(QK_COEF_MAX_K == HPMG_FDM_MAX_DEGREE && (int)(sizeof tab / sizeof tab[0]) == QK_COEF_LEN,
        "qk_coef.h: %d degrees, %d entries; regenerate it (scripts/gen_qk_coef.c)", QK_COEF_MAX_K, QK_COEF_LEN);
  const double one[3] = {1.0, 1.0, 1.0};
  int off = 0;
  double wmk = 0, wo = 0, wd = 0;
  for (int k = 1; k <= QK_COEF_MAX_K && off < QK_COEF_LEN; k++) {
    hpmg_fdm f;
    if (hpmg_fdm_setup(2, k, one, 0.0, &f) != HPMG_SUCCESS) {
      CHECK(0, "hpmg_fdm_setup k=%d", k);
      return;
    }
    const int m = f.m, n = f.n;
    const double *Mr = tab + off, *Kr = tab + off + m * n, *Sr = tab + off + 2 * m * n;
    double emk = 0, scale = 0;
    for (int i = 0; i < m * n; i++) {
      emk = fmax(emk, fmax(fabs(Mr[i] - f.dbl.Mb[0][i]), fabs(Kr[i] - f.dbl.Kb[0][i])));
      scale = fmax(scale, fabs(f.dbl.Kb[0][i]));
    }
    double eo, ed;
    eig_errors(m, Sr, f.dbl.M[0], f.dbl.K[0], f.dbl.eig[0], &eo, &ed);
    CHECK(emk <= 1e-14 * scale && eo < 1e-12 && ed < 1e-12,
          "qk_coef.h k=%d: Mr, Kr differ by %.3e; table S^T M S - I = %.3e, S^T K S - Lambda = %.3e", k, emk, eo, ed);
    wmk = fmax(wmk, emk / scale);
    wo = fmax(wo, eo);
    wd = fmax(wd, ed);
    off += 2 * m * n + m * m;
    hpmg_fdm_free(&f);
  }
  CHECK(off == QK_COEF_LEN, "qk_coef.h: %d entries used of %d", off, QK_COEF_LEN);
  printf("test_fdm: GPU coefficient table (qk_coef.h, k = 1..%d): Mr, Kr relative difference %.1e, "
         "S^T M S - I %.1e, S^T K S - Lambda %.1e\n", QK_COEF_MAX_K, wmk, wo, wd);
}

static int n_dense = 0;
static double worst_inv = 0, worst_res = 0, worst_abar = 0, worst_f = 0, worst_fabar = 0;

/* The explicit inverse costs O(N^3), N = (2k-1)^dim: about 4 s for 3D k = 8
 * here. By default it is formed once for 3D k = 8 (anisotropic, lambda = 10)
 * and the other 3D k = 8 cases are checked by A (FDM r) = r against the
 * independently assembled A; --full forms it in every case. */
static int full = 0;

static void run_case(int dim, int k, const double h[3], double lambda, int dense_ref) {
  char tag[96];
  snprintf(tag, sizeof tag, "dim=%d k=%d h=(%g,%g,%g) lambda=%g", dim, k, h[0], h[1],
           dim == 3 ? h[2] : 0.0, lambda);
  hpmg_fdm f;
  hpmg_error err = hpmg_fdm_setup(dim, k, h, lambda, &f);
  CHECK(err == HPMG_SUCCESS, "%s: setup failed: %s", tag, hpmg_last_error());
  if (err) return;
  int m = 2 * k - 1, n = 2 * k + 1;
  int N = dim == 2 ? m * m : m * m * m, Nc = dim == 2 ? n * n : n * n * n;
  CHECK(f.m == m && f.n == n && f.nloc == N && f.nclosed == Nc, "%s: sizes", tag);

  closed1d c[3];
  for (int d = 0; d < dim; d++) {
    assemble_closed(k, h[d], &c[d]);
    check_1d_factors(&f, c, d, tag);
  }

  size_t ws = hpmg_fdm_work_size(&f);
  double *Ainv = xmalloc(sizeof(double) * (dense_ref ? (size_t)N * N : 1));
  double *r = xmalloc(sizeof(double) * N), *y = xmalloc(sizeof(double) * N);
  double *yd = xmalloc(sizeof(double) * N), *t = xmalloc(sizeof(double) * N);
  double *x = xmalloc(sizeof(double) * Nc), *b = xmalloc(sizeof(double) * N);
  double *work = xmalloc(sizeof(double) * ws);
  float *rf = xmalloc(sizeof(float) * N), *yf = xmalloc(sizeof(float) * N);
  float *xf = xmalloc(sizeof(float) * Nc), *workf = xmalloc(sizeof(float) * ws);

  if (dense_ref) {
    err = hpmg_fdm_dense_inverse(&f, Ainv);
    CHECK(err == HPMG_SUCCESS, "%s: dense inverse failed: %s", tag, hpmg_last_error());
  }

  for (int trial = 0; trial < 2; trial++) {
    for (int i = 0; i < N; i++) r[i] = urand();
    /* FDM against the explicit inverse */
    hpmg_fdm_apply_d(&f, r, y, work);
    if (dense_ref) {
      for (int i = 0; i < N; i++) {
        double s = 0;
        for (int j = 0; j < N; j++) s += Ainv[(size_t)i * N + j] * r[j];
        yd[i] = s;
      }
      double e_inv = diffnorm(N, y, yd) / norm(N, yd);
      CHECK(e_inv <= 1e-12, "%s: |FDM r - Ainv r| / |Ainv r| = %.3e", tag, e_inv);
      worst_inv = fmax(worst_inv, e_inv);
      n_dense++;
    }
    /* A (FDM r) = r with A from the independent 1D assembly */
    kron_apply(dim, k, c, lambda, 0, 0, y, t);
    double e_res = diffnorm(N, t, r) / norm(N, r);
    CHECK(e_res <= 1e-12, "%s: |A FDM r - r| / |r| = %.3e", tag, e_res);
    worst_res = fmax(worst_res, e_res);
    /* in place */
    memcpy(t, r, sizeof(double) * N);
    hpmg_fdm_apply_d(&f, t, t, work);
    CHECK(diffnorm(N, t, y) == 0.0, "%s: in-place apply differs", tag);
    /* float */
    for (int i = 0; i < N; i++) rf[i] = (float)r[i];
    hpmg_fdm_apply_f(&f, rf, yf, workf);
    double e_f = diffnorm_f(N, yf, y) / norm(N, y);
    CHECK(e_f <= 1e-5, "%s: float FDM relative error %.3e", tag, e_f);
    worst_f = fmax(worst_f, e_f);

    /* Abar by sum factorization against the entry-wise Kronecker product */
    for (int i = 0; i < Nc; i++) x[i] = urand();
    for (int i = 0; i < N; i++) b[i] = urand();
    kron_apply(dim, k, c, lambda, 1, 0, x, yd);
    double nab = norm(N, yd);
    kron_apply(dim, k, c, lambda, 1, 1, x, t);
    double nabs = norm(N, t); /* || |Abar| |x| ||: scale of the float rounding */
    hpmg_fdm_abar_apply_d(&f, x, y, work);
    double e_ab = diffnorm(N, y, yd) / nab;
    CHECK(e_ab <= 1e-12, "%s: |Abar x - dense| / |dense| = %.3e", tag, e_ab);
    worst_abar = fmax(worst_abar, e_ab);
    /* residual r = b - Abar x, in place on b's copy, and with b == NULL */
    for (int i = 0; i < N; i++) t[i] = b[i] - yd[i];
    memcpy(y, b, sizeof(double) * N);
    hpmg_fdm_residual_d(&f, y, x, y, work);
    double e_r = diffnorm(N, y, t) / nab;
    CHECK(e_r <= 1e-12, "%s: residual b - Abar x error %.3e", tag, e_r);
    hpmg_fdm_residual_d(&f, NULL, x, y, work);
    for (int i = 0; i < N; i++) y[i] = -y[i];
    CHECK(diffnorm(N, y, yd) / nab <= 1e-12, "%s: residual with b = NULL", tag);
    /* fused local update dx = A^{-1} (b - Abar x): check A dx = b - Abar x, and
     * keep the double result as the reference of the float one */
    hpmg_fdm_local_update_d(&f, b, x, yd, work);
    kron_apply(dim, k, c, lambda, 0, 0, yd, y);
    double e_lu = diffnorm(N, y, t) / norm(N, t);
    CHECK(e_lu <= 1e-12, "%s: local update: |A dx - (b - Abar x)| relative %.3e", tag, e_lu);
    if (dense_ref) {
      for (int i = 0; i < N; i++) {
        double s = 0;
        for (int j = 0; j < N; j++) s += Ainv[(size_t)i * N + j] * t[j];
        y[i] = s;
      }
      e_lu = diffnorm(N, y, yd) / norm(N, yd);
      CHECK(e_lu <= 1e-12, "%s: local update vs dense inverse: %.3e", tag, e_lu);
    }
    /* float Abar and local update */
    for (int i = 0; i < Nc; i++) xf[i] = (float)x[i];
    for (int i = 0; i < N; i++) rf[i] = (float)b[i];
    hpmg_fdm_residual_f(&f, rf, xf, yf, workf);
    double e_fab = diffnorm_f(N, yf, t) / nabs;
    CHECK(e_fab <= 1e-5, "%s: float residual error %.3e", tag, e_fab);
    worst_fabar = fmax(worst_fabar, e_fab);
    hpmg_fdm_abar_apply_f(&f, xf, yf, workf);
    kron_apply(dim, k, c, lambda, 1, 0, x, t);
    CHECK(diffnorm_f(N, yf, t) / nabs <= 1e-5, "%s: float Abar error", tag);
    hpmg_fdm_local_update_f(&f, rf, xf, rf, workf);
    double e_flu = diffnorm_f(N, rf, yd) / norm(N, yd);
    CHECK(e_flu <= 1e-5, "%s: float local update error %.3e", tag, e_flu);
  }

  free(Ainv); free(r); free(y); free(yd); free(t); free(x); free(b); free(work);
  free(rf); free(yf); free(xf); free(workf);
  hpmg_fdm_free(&f);
}

static void check_arguments(void) {
  hpmg_fdm f;
  double h[3] = {1, 1, 1}, hbad[3] = {1, 0, 1}, hnan[3] = {1, NAN, 1};
  CHECK(hpmg_fdm_setup(1, 2, h, 0, &f) == HPMG_ERR_ARG, "dim 1 accepted");
  CHECK(hpmg_fdm_setup(4, 2, h, 0, &f) == HPMG_ERR_ARG, "dim 4 accepted");
  CHECK(hpmg_fdm_setup(2, 0, h, 0, &f) == HPMG_ERR_ARG, "k = 0 accepted");
  CHECK(hpmg_fdm_setup(3, HPMG_FDM_MAX_DEGREE + 1, h, 0, &f) == HPMG_ERR_ARG, "k too large");
  CHECK(hpmg_fdm_setup(2, 2, hbad, 0, &f) == HPMG_ERR_ARG, "h = 0 accepted");
  CHECK(hpmg_fdm_setup(3, 2, hnan, 0, &f) == HPMG_ERR_ARG, "h = NaN accepted");
  CHECK(hpmg_fdm_setup(3, 2, h, -1, &f) == HPMG_ERR_ARG, "lambda < 0 accepted");
  CHECK(f.block_d == NULL && f.block_f == NULL, "allocation after a refused argument");
  CHECK(strstr(hpmg_last_error(), "lambda") != NULL, "message does not name lambda: %s",
        hpmg_last_error());
  /* 2D ignores h[2] */
  double h0[3] = {0, 1, 1};
  CHECK(hpmg_fdm_setup(2, 2, h0, 0, &f) == HPMG_ERR_ARG, "2D h[0] = 0 accepted");
  double h2[3] = {1, 1, -1};
  CHECK(hpmg_fdm_setup(2, 2, h2, 0, &f) == HPMG_SUCCESS, "2D must ignore h[2]");
  hpmg_fdm_free(&f);
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--full")) full = 1;
    else {
      printf("usage: test_fdm [--full]\n");
      return 2;
    }
  }
  check_arguments();
  check_gpu_table();
  const double base = 1.0 / 8.0;
  const double hiso[3] = {base, base, base}, haniso[3] = {base, 0.5 * base, 2.0 * base};
  const double lambdas[2] = {0.0, 10.0};
  int cases = 0;
  for (int dim = 2; dim <= 3; dim++) {
    int kmax = test_max_degree(dim == 2 ? 10 : 8);
    for (int k = 1; k <= kmax; k++)
      for (int a = 0; a < 2; a++)
        for (int l = 0; l < 2; l++) {
          run_case(dim, k, a ? haniso : hiso, lambdas[l],
                   full || dim == 2 || k < 8 || (a == 1 && l == 1));
          cases++;
        }
  }
  printf("test_fdm: %d cases (%d FDM applications compared with the explicit inverse); worst relative errors: FDM vs dense inverse %.2e, "
         "|A FDM r - r|/|r| %.2e, Abar %.2e, float FDM %.2e, float residual %.2e\n",
         cases, n_dense, worst_inv, worst_res, worst_abar, worst_f, worst_fabar);
  if (failures) {
    printf("test_fdm: %d FAILED checks\n", failures);
    return 1;
  }
  printf("test_fdm: all checks passed\n");
  return 0;
}
