#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "fem.h"

void hpmg_sp1d_free(hpmg_sp1d *A) {
  hpmg_free(&A->rowptr);
  hpmg_free(&A->col);
  hpmg_free(&A->val);
  hpmg_free(&A->valf);
  hpmg_free(&A->dia);
  hpmg_free(&A->diaf);
  memset(A, 0, sizeof *A);
}

static hpmg_error sp1d_alloc(int nrows, int ncols, int nnz, hpmg_sp1d *A) {
  memset(A, 0, sizeof *A);
  A->nrows = nrows;
  A->ncols = ncols;
  A->bw = -1;
  HPMG_CALL(hpmg_calloc(sizeof(int) * (size_t)(nrows + 1), &A->rowptr));
  HPMG_CALL(hpmg_calloc(sizeof(int) * (size_t)nnz, &A->col));
  HPMG_CALL(hpmg_calloc(sizeof(double) * (size_t)nnz, &A->val));
  HPMG_CALL(hpmg_calloc(sizeof(float) * (size_t)nnz, &A->valf));
  return HPMG_SUCCESS;
}

hpmg_error hpmg_sp1d_from_dense(int nrows, int ncols, const double *D, hpmg_sp1d *A) {
  int nnz = 0;
  for (int64_t i = 0; i < (int64_t)nrows * ncols; i++) nnz += D[i] != 0.0;
  HPMG_CALL(sp1d_alloc(nrows, ncols, nnz, A));
  int p = 0;
  for (int i = 0; i < nrows; i++) {
    A->rowptr[i] = p;
    for (int j = 0; j < ncols; j++) {
      double v = D[(int64_t)i * ncols + j];
      if (v != 0.0) {
        A->col[p] = j;
        A->val[p] = v;
        A->valf[p] = (float)v;
        p++;
      }
    }
  }
  A->rowptr[nrows] = p;
  return HPMG_SUCCESS;
}

hpmg_error hpmg_sp1d_make_banded(hpmg_sp1d *A) {
  int n = A->nrows, bw = 0;
  for (int i = 0; i < n; i++)
    for (int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) bw = abs(A->col[p] - i) > bw ? abs(A->col[p] - i) : bw;
  A->bw = bw;
  size_t len = (size_t)(2 * bw + 1) * (size_t)n;
  HPMG_CALL(hpmg_calloc(len * sizeof(double), &A->dia));
  HPMG_CALL(hpmg_calloc(len * sizeof(float), &A->diaf));
  for (int i = 0; i < n; i++)
    for (int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
      int o = A->col[p] - i;
      A->dia[(size_t)(o + bw) * n + i] = A->val[p];
      A->diaf[(size_t)(o + bw) * n + i] = (float)A->val[p];
    }
  return HPMG_SUCCESS;
}

void hpmg_sp1d_to_dense(const hpmg_sp1d *A, double *D) {
  memset(D, 0, sizeof(double) * (size_t)A->nrows * A->ncols);
  for (int i = 0; i < A->nrows; i++)
    for (int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) D[(int64_t)i * A->ncols + A->col[p]] = A->val[p];
}

double hpmg_sp1d_entry(const hpmg_sp1d *A, int i, int j) {
  for (int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
    if (A->col[p] == j) return A->val[p];
  return 0.0;
}

hpmg_error hpmg_sp1d_transpose(const hpmg_sp1d *A, hpmg_sp1d *T) {
  int nnz = A->rowptr[A->nrows];
  HPMG_CALL(sp1d_alloc(A->ncols, A->nrows, nnz, T));
  for (int p = 0; p < nnz; p++) T->rowptr[A->col[p] + 1]++;
  for (int j = 0; j < A->ncols; j++) T->rowptr[j + 1] += T->rowptr[j];
  int *fill;
  HPMG_CALL(hpmg_calloc(sizeof(int) * (size_t)A->ncols, &fill));
  for (int i = 0; i < A->nrows; i++) /* rows ascending: columns of T come out sorted */
    for (int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
      int j = A->col[p], q = T->rowptr[j] + fill[j]++;
      T->col[q] = i;
      T->val[q] = A->val[p];
      T->valf[q] = (float)A->val[p];
    }
  hpmg_free(&fill);
  return HPMG_SUCCESS;
}

static double rowmax(const double *w, int n) {
  double m = 0.0;
  for (int a = 0; a < n; a++) m = fabs(w[a]) > m ? fabs(w[a]) : m;
  return m;
}

/* Rows given as dense windows: row i holds W[i*width + a] at column c0[i] + a.
 * Entries outside [0,ncols) and (near-)zeros are dropped. */
static hpmg_error from_windows(int nrows, int ncols, int width, const int *c0, const double *W,
                               hpmg_sp1d *A) {
  /* drop entries below 1e-14 of the row's largest: round-off of exact zeros */
#define KEEP(i, a, j) ((j) >= 0 && (j) < ncols && fabs(W[(size_t)(i) * width + (a)]) > 1e-14 * rowmax(W + (size_t)(i) * width, width))
  int nnz = 0;
  for (int i = 0; i < nrows; i++)
    for (int a = 0; a < width; a++) nnz += KEEP(i, a, c0[i] + a);
  HPMG_CALL(sp1d_alloc(nrows, ncols, nnz, A));
  int p = 0;
  for (int i = 0; i < nrows; i++) {
    A->rowptr[i] = p;
    for (int a = 0; a < width; a++) {
      int j = c0[i] + a;
      double v = W[(size_t)i * width + a];
      if (KEEP(i, a, j)) {
        A->col[p] = j;
        A->val[p] = v;
        A->valf[p] = (float)v;
        p++;
      }
    }
  }
  A->rowptr[nrows] = p;
#undef KEEP
  return HPMG_SUCCESS;
}

static hpmg_error windows_alloc(int nrows, int width, int **c0, double **W) {
  HPMG_CALL(hpmg_calloc(sizeof(int) * (size_t)(nrows > 0 ? nrows : 1), c0));
  return hpmg_calloc(sizeof(double) * (size_t)(nrows > 0 ? nrows : 1) * width, W);
}

/* Assemble the element matrix over `cells` cells; keep interior nodes 1..k*cells-1. */
static hpmg_error assemble_interior(int k, int cells, const double *Ae, hpmg_sp1d *A) {
  int n = k * cells - 1, m = k + 1, width = 2 * k + 1;
  int *c0;
  double *W;
  HPMG_CALL(windows_alloc(n, width, &c0, &W));
  for (int i = 0; i < n; i++) c0[i] = i - k;
  for (int c = 0; c < cells; c++)
    for (int a = 0; a < m; a++)
      for (int b = 0; b < m; b++) {
        int i = c * k + a - 1, j = c * k + b - 1;
        if (i >= 0 && i < n && j >= 0 && j < n) W[(size_t)i * width + (j - c0[i])] += Ae[a * m + b];
      }
  hpmg_error e = from_windows(n, n, width, c0, W, A);
  hpmg_free(&c0);
  hpmg_free(&W);
  HPMG_CALL(e);
  return hpmg_sp1d_make_banded(A);
}

hpmg_error hpmg_assemble_mass_1d(int k, int cells, double h, hpmg_sp1d *M) {
  double Me[16 * 16];
  hpmg_element_mass(k, h, Me);
  return assemble_interior(k, cells, Me, M);
}

hpmg_error hpmg_assemble_stiffness_1d(int k, int cells, double h, hpmg_sp1d *K) {
  double Ke[16 * 16];
  hpmg_element_stiffness(k, h, Ke);
  return assemble_interior(k, cells, Ke, K);
}

void hpmg_node_positions_1d(int k, int cells, double h, double *x) {
  double gll[16], w[16];
  hpmg_gauss_lobatto(k + 1, gll, w);
  for (int i = 1; i < k * cells; i++) x[i - 1] = ((i / k) + gll[i % k]) * h;
}

/* Interpolate the interior basis of (kc, cells_c) at the nodes (kf, cells_f)
 * where each fine cell lies inside one coarse cell (cells_f = r * cells_c). */
static hpmg_error interpolation(int kc, int cells_c, int kf, int cells_f, hpmg_sp1d *P) {
  int nc = kc * cells_c - 1, nf = kf * cells_f - 1, r = cells_f / cells_c;
  double gc[16], gf[16], w[16];
  hpmg_gauss_lobatto(kc + 1, gc, w);
  hpmg_gauss_lobatto(kf + 1, gf, w);
  int *c0;
  double *W;
  HPMG_CALL(windows_alloc(nf, kc + 1, &c0, &W));
  for (int i = 1; i <= nf; i++) {
    int fc = i / kf; /* fine cell holding node i (its left end for vertices) */
    double t = (fc + gf[i % kf]) / r; /* position in coarse-cell units */
    int cc = fc / r;
    if (cc >= cells_c) cc = cells_c - 1;
    c0[i - 1] = cc * kc - 1; /* interior index of coarse local node 0 */
    hpmg_lagrange_eval(kc + 1, gc, t - cc, &W[(size_t)(i - 1) * (kc + 1)], NULL);
  }
  hpmg_error e = from_windows(nf, nc, kc + 1, c0, W, P);
  hpmg_free(&c0);
  hpmg_free(&W);
  return e;
}

hpmg_error hpmg_prolongation_1d(int k, int cells, hpmg_sp1d *P) {
  return interpolation(k, cells, k, 2 * cells, P);
}

hpmg_error hpmg_degree_interpolation_1d(int kc, int kf, int cells, hpmg_sp1d *P) {
  return interpolation(kc, cells, kf, cells, P);
}

hpmg_error hpmg_quadrature_interpolation_1d(int k, int cells, double h, int nq, hpmg_sp1d *B,
                                            double *xq, double *wq) {
  int n = k * cells - 1, m = k + 1;
  double gll[16], w[16], tq[32], tw[32];
  hpmg_gauss_lobatto(m, gll, w);
  hpmg_gauss(nq, tq, tw);
  int *c0;
  double *W;
  HPMG_CALL(windows_alloc(cells * nq, m, &c0, &W));
  for (int c = 0; c < cells; c++)
    for (int q = 0; q < nq; q++) {
      int row = c * nq + q;
      c0[row] = c * k - 1;
      hpmg_lagrange_eval(m, gll, tq[q], &W[(size_t)row * m], NULL);
      if (xq) xq[row] = (c + tq[q]) * h;
      if (wq) wq[row] = tw[q] * h;
    }
  hpmg_error e = from_windows(cells * nq, n, m, c0, W, B);
  hpmg_free(&c0);
  hpmg_free(&W);
  return e;
}
