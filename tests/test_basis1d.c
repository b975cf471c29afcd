/* 1D building blocks: quadrature rules against known values and exactness,
 * Lagrange bases, element and assembled matrices against exact integrals,
 * interpolation matrices. */
#include "check.h"
#include "fem/fem.h"

/* exact integral of x^p over [0,1] */
static double mono(int p) { return 1.0 / (p + 1); }

int main(void) {
  double x[32], w[32];
  /* known values */
  hpmg_gauss(2, x, w);
  CHECK_CLOSE(x[0], 0.5 - 0.5 / sqrt(3.0), 1e-15, 1, "gauss2 x0");
  CHECK_CLOSE(w[0], 0.5, 1e-15, 1, "gauss2 w0");
  hpmg_gauss(3, x, w);
  CHECK_CLOSE(x[0], 0.5 - 0.5 * sqrt(0.6), 1e-15, 1, "gauss3 x0");
  CHECK_CLOSE(w[1], 4.0 / 9.0, 1e-15, 1, "gauss3 w1");
  hpmg_gauss_lobatto(3, x, w);
  CHECK(x[0] == 0 && x[1] == 0.5 && x[2] == 1, "gll3 nodes");
  CHECK_CLOSE(w[0], 1.0 / 6.0, 1e-15, 1, "gll3 w0");
  CHECK_CLOSE(w[1], 2.0 / 3.0, 1e-15, 1, "gll3 w1");
  hpmg_gauss_lobatto(4, x, w);
  CHECK_CLOSE(x[1], 0.5 - 0.5 / sqrt(5.0), 1e-15, 1, "gll4 x1");
  CHECK_CLOSE(w[0], 1.0 / 12.0, 1e-15, 1, "gll4 w0");
  CHECK_CLOSE(w[1], 5.0 / 12.0, 1e-15, 1, "gll4 w1");
  hpmg_gauss_lobatto(5, x, w);
  CHECK_CLOSE(x[1], 0.5 - 0.5 * sqrt(3.0 / 7.0), 1e-15, 1, "gll5 x1");
  CHECK_CLOSE(w[2], 32.0 / 90.0, 1e-15, 1, "gll5 w2");
  /* exactness: Gauss n exact to degree 2n-1, Gauss-Lobatto n to 2n-3, and not beyond */
  for (int n = 1; n <= 17; n++) {
    hpmg_gauss(n, x, w);
    for (int p = 0; p <= 2 * n; p++) {
      double s = 0;
      for (int q = 0; q < n; q++) s += w[q] * pow(x[q], p);
      if (p <= 2 * n - 1) CHECK_CLOSE(s, mono(p), 2e-15, 1, "gauss exactness");
      else if (n <= 8) CHECK(fabs(s - mono(p)) > 1e-12, "gauss %d must not integrate degree %d exactly", n, p);
    }
    if (n < 2) continue;
    hpmg_gauss_lobatto(n, x, w);
    for (int p = 0; p <= 2 * n - 2; p++) {
      double s = 0;
      for (int q = 0; q < n; q++) s += w[q] * pow(x[q], p);
      if (p <= 2 * n - 3) CHECK_CLOSE(s, mono(p), 2e-15, 1, "gll exactness");
      else if (n <= 8) CHECK(fabs(s - mono(p)) > 1e-12, "gll %d must not integrate degree %d exactly", n, p);
    }
    for (int q = 1; q < n; q++) CHECK(x[q] > x[q - 1], "gll ascending");
  }
  /* Lagrange basis: cardinal property, partition of unity, derivatives sum to zero */
  for (int k = 1; k <= 12; k++) {
    double g[16], v[16], dv[16];
    hpmg_gauss_lobatto(k + 1, g, w);
    for (int i = 0; i <= k; i++) {
      hpmg_lagrange_eval(k + 1, g, g[i], v, NULL);
      for (int j = 0; j <= k; j++) CHECK_CLOSE(v[j], i == j, 1e-13, 1, "cardinal");
    }
    hpmg_lagrange_eval(k + 1, g, 0.3141, v, dv);
    double s = 0, ds = 0;
    for (int j = 0; j <= k; j++) { s += v[j]; ds += dv[j]; }
    CHECK_CLOSE(s, 1.0, 1e-12, 1, "partition of unity");
    CHECK_CLOSE(ds, 0.0, 1e-9, 1, "derivative sum");
    /* interpolation of x^k is exact: sum g_j^k l_j(t) = t^k */
    double t = 0.77, e = 0;
    hpmg_lagrange_eval(k + 1, g, t, v, dv);
    for (int j = 0; j <= k; j++) e += pow(g[j], k) * v[j];
    CHECK_CLOSE(e, pow(t, k), 1e-12, 1, "polynomial reproduction");
  }
  /* element matrices equal exact integrals (computed with a 20-point rule) */
  for (int k = 1; k <= 12; k++) {
    double h = 0.37, M[256], K[256], g[16], xq[32], wq[32], v[16], dv[16];
    hpmg_element_mass(k, h, M);
    hpmg_element_stiffness(k, h, K);
    hpmg_gauss_lobatto(k + 1, g, w);
    hpmg_gauss(20, xq, wq);
    double Mx[256] = {0}, Kx[256] = {0}, sumM = 0;
    for (int q = 0; q < 20; q++) {
      hpmg_lagrange_eval(k + 1, g, xq[q], v, dv);
      for (int i = 0; i <= k; i++)
        for (int j = 0; j <= k; j++) {
          Mx[i * (k + 1) + j] += wq[q] * v[i] * v[j] * h;
          Kx[i * (k + 1) + j] += wq[q] * dv[i] * dv[j] / h;
        }
    }
    double errM = 0, errK = 0, rowK = 0;
    for (int i = 0; i < (k + 1) * (k + 1); i++) {
      errM = fmax(errM, fabs(M[i] - Mx[i]));
      errK = fmax(errK, fabs(K[i] - Kx[i]) / fabs(Kx[0]));
      sumM += M[i];
    }
    for (int i = 0; i <= k; i++) {
      double r = 0;
      for (int j = 0; j <= k; j++) r += K[i * (k + 1) + j];
      rowK = fmax(rowK, fabs(r));
    }
    CHECK(errM < 1e-14, "k=%d element mass differs from exact integral by %g", k, errM);
    CHECK(errK < 1e-12, "k=%d element stiffness differs by %g (relative)", k, errK);
    CHECK_CLOSE(sumM, h, 1e-14, 1, "mass sums to cell length");
    CHECK(rowK < 1e-10 * fabs(K[0]), "k=%d stiffness rows must sum to zero (%g)", k, rowK);
  }
  /* assembled 1D interior matrices: u^T M u for interpolated sin, symmetric, banded */
  for (int k = 1; k <= 8; k++) {
    hpmg_sp1d M, K;
    int cells = 5;
    double h = 1.0 / cells;
    CHECK_OK(hpmg_assemble_mass_1d(k, cells, h, &M));
    CHECK_OK(hpmg_assemble_stiffness_1d(k, cells, h, &K));
    int n = k * cells - 1;
    CHECK(M.nrows == n && K.nrows == n, "size");
    CHECK(M.bw == k && K.bw == k, "k=%d band width %d/%d", k, M.bw, K.bw);
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) {
        CHECK(hpmg_sp1d_entry(&M, i, j) == hpmg_sp1d_entry(&M, j, i), "mass symmetric");
        CHECK(hpmg_sp1d_entry(&K, i, j) == hpmg_sp1d_entry(&K, j, i), "stiffness symmetric");
      }
    /* linear function x(1-x) in Q_k for k >= 2: u^T K u = int u'^2 = 1/3, u^T M u = int u^2 = 1/30 */
    if (k >= 2) {
      double pos[64], u[64], uK = 0, uM = 0;
      hpmg_node_positions_1d(k, cells, h, pos);
      for (int i = 0; i < n; i++) u[i] = pos[i] * (1 - pos[i]);
      for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
          uK += u[i] * hpmg_sp1d_entry(&K, i, j) * u[j];
          uM += u[i] * hpmg_sp1d_entry(&M, i, j) * u[j];
        }
      CHECK_CLOSE(uK, 1.0 / 3.0, 1e-13, 1, "energy of x(1-x)");
      CHECK_CLOSE(uM, 1.0 / 30.0, 1e-14, 1, "mass of x(1-x)");
    }
    /* degree interpolation k -> k+1 reproduces the function at the new nodes */
    hpmg_sp1d P;
    CHECK_OK(hpmg_degree_interpolation_1d(k, k + 1, cells, &P));
    CHECK(P.nrows == (k + 1) * cells - 1 && P.ncols == n, "degree interpolation size");
    double pc[64], pf[64];
    hpmg_node_positions_1d(k, cells, h, pc);
    hpmg_node_positions_1d(k + 1, cells, h, pf);
    for (int i = 0; i < P.nrows; i++) {
      double s = 0;
      for (int p = P.rowptr[i]; p < P.rowptr[i + 1]; p++) s += P.val[p] * (k >= 2 ? pc[P.col[p]] * (1 - pc[P.col[p]]) : 0);
      double ex = k >= 2 ? pf[i] * (1 - pf[i]) : 0;
      CHECK_CLOSE(s, ex, 1e-14, 1, "degree interpolation exact");
    }
    hpmg_sp1d_free(&P);
    hpmg_sp1d_free(&M);
    hpmg_sp1d_free(&K);
  }
  return check_report();
}
