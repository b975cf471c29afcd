/* FD stencil kernels: transfers are (scaled) transposes and Galerkin-exact,
 * the fused multicolor GS equals the strict color-by-color sweep bitwise,
 * red-black GS and Jacobi equal their definitions, float matches double. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "disc/fd/fd_stencil.h"

/* the kernels through the CPU backend's table (the variant in use) */
#define OPS(r) fd_ops_cpu(sizeof(*(r)) == sizeof(double) ? FD_DOUBLE : FD_FLOAT)
static void fd_restrict_d(int dim, int64_t nf, const double *rf, double *fc) { OPS(rf)->restrict_rhs(dim, nf, rf, fc); }
static void fd_prolong_d(int dim, int64_t nf, const double *uc, double *uf, int add) {
  OPS(uc)->prolong(dim, nf, uc, uf, add);
}
static void fd_prolong_cubic_d(int dim, int64_t nf, const double *uc, double *uf) {
  OPS(uc)->prolong_cubic(dim, nf, uc, uf);
}
static void fd_prolong_cubic_f(int dim, int64_t nf, const float *uc, float *uf) {
  OPS(uc)->prolong_cubic(dim, nf, uc, uf);
}
static void fd_apply_d(int dim, int64_t n, const double *u, double *y) { OPS(u)->apply(dim, n, u, y); }
static void fd_residual_d(int dim, int64_t n, const double *u, const double *f, double *r) {
  OPS(u)->residual(dim, n, u, f, r);
}
static void fd_residual_f(int dim, int64_t n, const float *u, const float *f, float *r) {
  OPS(u)->residual(dim, n, u, f, r);
}
static double fd_residual_norm_d(int dim, int64_t n, const double *u, const double *f) {
  double r;
  OPS(u)->residual_norm(dim, n, u, f, &r);
  return r;
}
static void fd_mcgs_d(int dim, int64_t n, double omega, int backward, double *u, const double *f) {
  void *p = u;
  OPS(u)->smooth(dim, n, FD_SMOOTH_MCGS, omega, 1, backward, &p, f, NULL);
}
static void fd_rbgs_d(int dim, int64_t n, double omega, int backward, double *u, const double *f) {
  void *p = u;
  OPS(u)->smooth(dim, n, FD_SMOOTH_RBGS, omega, 1, backward, &p, f, NULL);
}
static void fd_mcgs_f(int dim, int64_t n, double omega, int backward, float *u, const float *f) {
  void *p = u;
  OPS(u)->smooth(dim, n, FD_SMOOTH_MCGS, omega, 1, backward, &p, f, NULL);
}
/* out = one Jacobi sweep from u (the backend swaps its two pointers) */
static void fd_jacobi_d(int dim, int64_t n, double omega, const double *u, const double *f, double *out) {
  void *p = (void *)u, *t = out;
  OPS(u)->smooth(dim, n, FD_SMOOTH_JACOBI, omega, 1, 0, &p, f, &t);
}

static int fails = 0;
#define CHECK(cond, ...)                                                        \
  do {                                                                          \
    if (!(cond)) { printf("FAIL: " __VA_ARGS__); printf("\n"); fails++; }       \
  } while (0)

static uint64_t rng = 88172645463325252ull;
static double urand(void) {
  rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
  return (double)(rng >> 11) / 9007199254740992.0 - 0.5;
}
static int interior(int dim, int64_t n, int64_t i, int64_t j, int64_t k) {
  return i > 0 && i < n && j > 0 && j < n && (dim == 2 || (k > 0 && k < n));
}
static double *rand_grid(int dim, int64_t n) {
  const int64_t N = fd_points(dim, n), s1 = n + 1;
  double *v = calloc((size_t)N, sizeof(double));
  for (int64_t c = 0; c < N; c++) {
    int64_t i = c % s1, j = (c / s1) % s1, k = dim == 3 ? c / (s1 * s1) : 1;
    v[c] = interior(dim, n, i, j, k) ? urand() : 0.0;
  }
  return v;
}
static double dot(int64_t N, const double *a, const double *b) {
  double s = 0;
  for (int64_t i = 0; i < N; i++) s += a[i] * b[i];
  return s;
}
static double maxdiff(int64_t N, const double *a, const double *b) {
  double m = 0;
  for (int64_t i = 0; i < N; i++) m = fmax(m, fabs(a[i] - b[i]));
  return m;
}

/* reference: strict color-by-color sweep, colors c = i%2 + 2(j%2) [+ 4(k%2)] */
static void mcgs_reference(int dim, int64_t n, double om, int backward, double *u, const double *f) {
  const int64_t s1 = n + 1, s2 = s1 * s1, nz = dim == 3 ? n : 2;
  const int C = dim == 2 ? 4 : 8;
  for (int cc = 0; cc < C; cc++) {
    const int col = backward ? C - 1 - cc : cc;
    for (int64_t k = 1; k < nz; k++)
      for (int64_t j = 1; j < n; j++)
        for (int64_t i = 1; i < n; i++) {
          const int c = (int)(i % 2 + 2 * (j % 2) + (dim == 3 ? 4 * (k % 2) : 0));
          if (c != col) continue;
          const int64_t p = (dim == 3 ? k * s2 : 0) + j * s1 + i;
          double s = f[p] + u[p - 1] + u[p + 1] + u[p - s1] + u[p + s1];
          if (dim == 3) { s += u[p - s2]; s += u[p + s2]; }
          u[p] = (1 - om) * u[p] + om / (2 * dim) * s; /* SOR; plain GS at om = 1 */
        }
  }
}
static void rbgs_reference(int dim, int64_t n, double om, int backward, double *u, const double *f) {
  const int64_t s1 = n + 1, s2 = s1 * s1, nz = dim == 3 ? n : 2;
  for (int cc = 0; cc < 2; cc++) {
    const int col = backward ? 1 - cc : cc;
    for (int64_t k = 1; k < nz; k++)
      for (int64_t j = 1; j < n; j++)
        for (int64_t i = 1; i < n; i++) {
          if ((int)((i + j + (dim == 3 ? k : 0)) % 2) != col) continue;
          const int64_t p = (dim == 3 ? k * s2 : 0) + j * s1 + i;
          double s = f[p] + u[p - 1] + u[p + 1] + u[p - s1] + u[p + s1];
          if (dim == 3) { s += u[p - s2]; s += u[p + s2]; }
          u[p] = (1 - om) * u[p] + om / (2 * dim) * s; /* SOR; plain GS at om = 1 */
        }
  }
}

static void test_dim(int dim, int64_t nf) {
  const int64_t nc = nf / 2, Nf = fd_points(dim, nf), Nc = fd_points(dim, nc);
  double *rf = rand_grid(dim, nf), *ec = rand_grid(dim, nc);
  double *fc = calloc((size_t)Nc, sizeof(double)), *pe = calloc((size_t)Nf, sizeof(double));
  double *ape = calloc((size_t)Nf, sizeof(double)), *rap = calloc((size_t)Nc, sizeof(double));
  double *ac = calloc((size_t)Nc, sizeof(double));
  /* 4R = P^T (2D), P^T/2 (3D) */
  fd_restrict_d(dim, nf, rf, fc);
  fd_prolong_d(dim, nf, ec, pe, 0);
  const double scale = dim == 2 ? 1.0 : 0.5;
  const double lhs = dot(Nc, fc, ec), rhs = scale * dot(Nf, rf, pe);
  CHECK(fabs(lhs - rhs) <= 1e-12 * fabs(rhs), "%dD n=%lld: <4Rr,e> = %.15e, c<r,Pe> = %.15e", dim, (long long)nf,
        lhs, rhs);
  /* Galerkin: 4R A_h P = A_2h */
  fd_apply_d(dim, nf, pe, ape);
  fd_restrict_d(dim, nf, ape, rap);
  fd_apply_d(dim, nc, ec, ac);
  const double gd = maxdiff(Nc, rap, ac);
  CHECK(gd <= 1e-12, "%dD n=%lld: 4R A_h P != A_2h (max diff %.3e)", dim, (long long)nf, gd);
  /* prolong add = set + previous */
  double *pe2 = calloc((size_t)Nf, sizeof(double));
  memcpy(pe2, pe, sizeof(double) * (size_t)Nf);
  fd_prolong_d(dim, nf, ec, pe2, 1);
  double m = 0;
  for (int64_t i = 0; i < Nf; i++) m = fmax(m, fabs(pe2[i] - 2 * pe[i]));
  CHECK(m <= 1e-15, "%dD prolong add", dim);
  /* residual = f - apply */
  double *u = rand_grid(dim, nf), *f = rand_grid(dim, nf);
  double *r = calloc((size_t)Nf, sizeof(double)), *au = calloc((size_t)Nf, sizeof(double));
  fd_residual_d(dim, nf, u, f, r);
  fd_apply_d(dim, nf, u, au);
  m = 0;
  for (int64_t i = 0; i < Nf; i++) m = fmax(m, fabs(r[i] - (f[i] - au[i])));
  CHECK(m <= 1e-14, "%dD residual != f - A u (%.3e)", dim, m);
  const double rn = fd_residual_norm_d(dim, nf, u, f);
  CHECK(fabs(rn - sqrt(dot(Nf, r, r))) <= 1e-12 * rn, "%dD residual_norm", dim);
  /* smoothers against their definitions, bitwise for GS */
  double *a = malloc(sizeof(double) * (size_t)Nf), *b = malloc(sizeof(double) * (size_t)Nf);
  /* plain GS (omega = 1) bitwise; SOR (omega = 1.3) to rounding (the
   * compiler may contract either product of the update into an FMA) */
  typedef void (*gs_fn)(int, int64_t, double, int, double *, const double *);
  const struct { const char *name; gs_fn fused, ref; } gs[2] = {{"mcgs", fd_mcgs_d, mcgs_reference},
                                                                 {"rbgs", fd_rbgs_d, rbgs_reference}};
  for (int k = 0; k < 2; k++)
    for (int bw = 0; bw < 4; bw++) {
      const double om = bw < 2 ? 1.0 : 1.3, tol = bw < 2 ? 0 : 1e-14;
      memcpy(a, u, sizeof(double) * (size_t)Nf);
      memcpy(b, u, sizeof(double) * (size_t)Nf);
      gs[k].fused(dim, nf, om, bw & 1, a, f);
      gs[k].ref(dim, nf, om, bw & 1, b, f);
      CHECK(maxdiff(Nf, a, b) <= tol, "%dD %s (%s, SOR %g) differs from the color-by-color sweep by %.3e", dim,
            gs[k].name, bw & 1 ? "backward" : "forward", om, maxdiff(Nf, a, b));
    }
  /* and the weight is applied: SOR 1.3 differs from plain GS */
  memcpy(a, u, sizeof(double) * (size_t)Nf);
  memcpy(b, u, sizeof(double) * (size_t)Nf);
  fd_mcgs_d(dim, nf, 1.3, 0, a, f);
  fd_mcgs_d(dim, nf, 1, 0, b, f);
  CHECK(maxdiff(Nf, a, b) > 1e-3, "%dD mcgs: SOR 1.3 gives the plain GS result", dim);
  fd_jacobi_d(dim, nf, 0.8, u, f, a);
  m = 0;
  for (int64_t i = 0; i < Nf; i++) m = fmax(m, fabs(a[i] - (u[i] + 0.8 / (2 * dim) * r[i])));
  CHECK(m <= 1e-14, "%dD jacobi (%.3e)", dim, m);
  /* float instantiation agrees with double */
  float *uf = malloc(sizeof(float) * (size_t)Nf), *ff = malloc(sizeof(float) * (size_t)Nf);
  float *rff = calloc((size_t)Nf, sizeof(float));
  for (int64_t i = 0; i < Nf; i++) { uf[i] = (float)u[i]; ff[i] = (float)f[i]; }
  fd_residual_f(dim, nf, uf, ff, rff);
  m = 0;
  for (int64_t i = 0; i < Nf; i++) m = fmax(m, fabs(rff[i] - r[i]));
  CHECK(m <= 1e-5, "%dD float residual (%.3e)", dim, m);
  fd_mcgs_f(dim, nf, 1, 0, uf, ff);
  memcpy(a, u, sizeof(double) * (size_t)Nf);
  fd_mcgs_d(dim, nf, 1, 0, a, f);
  m = 0;
  for (int64_t i = 0; i < Nf; i++) m = fmax(m, fabs(uf[i] - a[i]));
  CHECK(m <= 1e-5, "%dD float mcgs (%.3e)", dim, m);
  printf("%dD n=%lld: transpose %.2e, Galerkin %.2e, GS bitwise ok, float %.1e\n", dim, (long long)nf,
         fabs(lhs - rhs) / fabs(rhs), gd, m);
  free(rf); free(ec); free(fc); free(pe); free(ape); free(rap); free(ac); free(pe2);
  free(u); free(f); free(r); free(au); free(a); free(b); free(uf); free(ff); free(rff);
}

/* FMG's cubic interpolation Pc (fd_prolong_cubic): exact for tensor cubics
 * at the fine points whose taps stay inside the box, fourth order for the
 * sine mode (the boundary taps use its odd reflection), float = double. */
static double cubic_p(double x) { return 0.3 + x * (1.1 + x * (-2.0 + 0.7 * x)); }
static void test_cubic(int dim) {
  const double pi = 3.14159265358979323846;
  double prev = 0;
  for (int64_t nc = 8; nc <= (dim == 2 ? 256 : 64); nc *= 2) {
    const int64_t nf = 2 * nc, Nc = fd_points(dim, nc), Nf = fd_points(dim, nf), c1 = nc + 1, f1 = nf + 1;
    double *uc = calloc((size_t)Nc, sizeof(double)), *vc = calloc((size_t)Nc, sizeof(double));
    double *uf = calloc((size_t)Nf, sizeof(double)), *vf = calloc((size_t)Nf, sizeof(double));
    float *wc = calloc((size_t)Nc, sizeof(float)), *wf = calloc((size_t)Nf, sizeof(float));
    const int64_t kz = dim == 3 ? nc : 0;
    for (int64_t K = 0; K <= kz; K++)
      for (int64_t J = 0; J <= nc; J++)
        for (int64_t I = 0; I <= nc; I++) {
          const double x = (double)I / nc, y = (double)J / nc, z = (double)K / nc;
          const int64_t c = I + J * c1 + K * c1 * c1;
          uc[c] = cubic_p(x) * cubic_p(1 - y) * (dim == 3 ? cubic_p(0.5 * z + 0.2) : 1.0);
          if (interior(dim, nc, I, J, K)) vc[c] = sin(pi * x) * sin(pi * y) * (dim == 3 ? sin(pi * z) : 1.0);
          wc[c] = (float)vc[c];
        }
    fd_prolong_cubic_d(dim, nf, uc, uf);
    fd_prolong_cubic_d(dim, nf, vc, vf);
    fd_prolong_cubic_f(dim, nf, wc, wf);
    double ecub = 0, esin = 0, eflt = 0;
    for (int64_t k = dim == 3 ? 1 : 0; k < (dim == 3 ? nf : 1); k++)
      for (int64_t j = 1; j < nf; j++)
        for (int64_t i = 1; i < nf; i++) {
          const double x = (double)i / nf, y = (double)j / nf, z = (double)k / nf;
          const int64_t p = i + j * f1 + k * f1 * f1;
          const int inside = i >= 3 && i <= nf - 3 && j >= 3 && j <= nf - 3 && (dim == 2 || (k >= 3 && k <= nf - 3));
          if (inside)
            ecub = fmax(ecub, fabs(uf[p] - cubic_p(x) * cubic_p(1 - y) * (dim == 3 ? cubic_p(0.5 * z + 0.2) : 1.0)));
          esin = fmax(esin, fabs(vf[p] - sin(pi * x) * sin(pi * y) * (dim == 3 ? sin(pi * z) : 1.0)));
          eflt = fmax(eflt, fabs((double)wf[p] - vf[p]));
        }
    CHECK(ecub <= 1e-13, "%dD nc=%lld: cubic interpolation not exact for cubics (%.2e)", dim, (long long)nc, ecub);
    CHECK(eflt <= 1e-6, "%dD nc=%lld: float cubic interpolation (%.2e)", dim, (long long)nc, eflt);
    if (prev > 0) {
      const double order = log2(prev / esin);
      CHECK(order > 3.8 && order < 4.3, "%dD nc=%lld: cubic interpolation order %.2f (expected 4)", dim, (long long)nc, order);
      printf("%dD cubic FMG interpolation nc=%lld: cubics exact (%.1e), sine error %.3e, order %.2f\n", dim,
             (long long)nc, ecub, esin, order);
    }
    prev = esin;
    free(uc); free(vc); free(uf); free(vf); free(wc); free(wf);
  }
}

int main(void) {
  test_cubic(2);
  test_cubic(3);
  test_dim(2, 8);
  test_dim(2, 64);
  test_dim(2, 512); /* above the OpenMP threshold */
  test_dim(3, 8);
  test_dim(3, 64);
  if (fails) printf("%d failure(s)\n", fails);
  else printf("all FD kernel checks passed\n");
  return fails ? 1 : 0;
}
