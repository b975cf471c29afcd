#include <math.h>
#include <string.h>
#include "fem.h"

/* Legendre polynomial P_n(x) on [-1,1] and its derivative, by recurrence. */
static void legendre(int n, double x, double *p, double *dp) {
  double p0 = 1.0, p1 = x;
  if (n == 0) { *p = 1.0; *dp = 0.0; return; }
  for (int m = 2; m <= n; m++) {
    double p2 = ((2.0 * m - 1.0) * x * p1 - (m - 1.0) * p0) / m;
    p0 = p1;
    p1 = p2;
  }
  *p = p1;
  *dp = n * (x * p1 - p0) / (x * x - 1.0);
}

void hpmg_gauss(int n, double *x, double *w) {
  for (int i = 0; i < n; i++) {
    /* Newton from the Chebyshev-like initial guess; roots ascending */
    double t = -cos(M_PI * (i + 0.75) / (n + 0.5));
    double p, dp;
    for (int it = 0; it < 100; it++) {
      legendre(n, t, &p, &dp);
      double dt = p / dp;
      t -= dt;
      if (fabs(dt) < 1e-16) break;
    }
    legendre(n, t, &p, &dp);
    x[i] = 0.5 * (t + 1.0);
    w[i] = 1.0 / ((1.0 - t * t) * dp * dp); /* 2/((1-t^2)P'^2) scaled by 1/2 */
  }
}

void hpmg_gauss_lobatto(int n, double *x, double *w) {
  /* interior nodes are roots of P'_{n-1}; weights 2/(n(n-1) P_{n-1}^2) on [-1,1] */
  int m = n - 1;
  for (int i = 0; i < n; i++) {
    double t;
    if (i == 0) t = -1.0;
    else if (i == m) t = 1.0;
    else {
      t = -cos(M_PI * i / m);
      for (int it = 0; it < 100; it++) {
        /* Newton on q(t) = (1-t^2) P'_m(t); q' = -m(m+1) P_m */
        double p, dp;
        legendre(m, t, &p, &dp);
        double q = (1.0 - t * t) * dp, dq = -m * (m + 1.0) * p;
        double dt = q / dq;
        t -= dt;
        if (fabs(dt) < 1e-16) break;
      }
    }
    double p, dp;
    if (fabs(t) == 1.0) p = (t > 0 || m % 2 == 0) ? 1.0 : -1.0;
    else legendre(m, t, &p, &dp);
    x[i] = 0.5 * (t + 1.0);
    w[i] = 1.0 / (m * (m + 1.0) * p * p);
  }
  x[0] = 0.0;
  x[m] = 1.0;
  for (int i = 1; i < m; i++) /* symmetrize against round-off */
    if (i < m - i) {
      double a = 0.5 * (x[i] + 1.0 - x[m - i]);
      x[i] = a;
      x[m - i] = 1.0 - a;
    }
  if (n % 2 == 1) x[m / 2] = 0.5;
}

void hpmg_lagrange_eval(int n, const double *nodes, double t, double *v, double *dv) {
  for (int j = 0; j < n; j++) {
    double l = 1.0, dl = 0.0;
    for (int m = 0; m < n; m++) {
      if (m == j) continue;
      double f = (t - nodes[m]) / (nodes[j] - nodes[m]);
      double df = 1.0 / (nodes[j] - nodes[m]);
      dl = dl * f + l * df;
      l *= f;
    }
    v[j] = l;
    if (dv) dv[j] = dl;
  }
}

static void element_matrix(int k, double h, int deriv, double *A) {
  int n = k + 1;
  double gll[16], wl[16], xq[16], wq[16], v[16], dv[16];
  double B[16 * 16]; /* B[q*n+j] = basis (or derivative) j at quadrature point q */
  hpmg_gauss_lobatto(n, gll, wl);
  hpmg_gauss(n, xq, wq);
  for (int q = 0; q < n; q++) {
    hpmg_lagrange_eval(n, gll, xq[q], v, dv);
    for (int j = 0; j < n; j++) B[q * n + j] = deriv ? dv[j] : v[j];
  }
  double scale = deriv ? 1.0 / h : h;
  for (int i = 0; i < n; i++) /* upper triangle, mirrored: exactly symmetric */
    for (int j = i; j < n; j++) {
      double s = 0.0;
      for (int q = 0; q < n; q++) s += wq[q] * B[q * n + i] * B[q * n + j];
      A[i * n + j] = A[j * n + i] = s * scale;
    }
}

void hpmg_element_mass(int k, double h, double *M) { element_matrix(k, h, 0, M); }
void hpmg_element_stiffness(int k, double h, double *K) { element_matrix(k, h, 1, K); }
