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

hpmg_error hpmg_sp1d_identity(int n, hpmg_sp1d *A) {
  HPMG_CALL(sp1d_alloc(n, n, n, A));
  for (int i = 0; i < n; i++) {
    A->rowptr[i] = A->col[i] = i;
    A->val[i] = 1.0;
    A->valf[i] = 1.0f;
  }
  A->rowptr[n] = n;
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
 * Entries outside [0,ncols) and (near-)zeros are dropped; with wrap (a
 * periodic direction) a column >= ncols is taken modulo ncols instead and
 * each row's columns are sorted. */
static hpmg_error from_windows(int nrows, int ncols, int width, const int *c0, const double *W, int wrap,
                               hpmg_sp1d *A) {
  /* drop entries below 1e-14 of the row's largest: round-off of exact zeros */
#define COL(i, a) (wrap && c0[i] + (a) >= ncols ? c0[i] + (a) - ncols : c0[i] + (a))
#define KEEP(i, a, j) ((j) >= 0 && (j) < ncols && fabs(W[(size_t)(i) * width + (a)]) > 1e-14 * rowmax(W + (size_t)(i) * width, width))
  int nnz = 0;
  for (int i = 0; i < nrows; i++)
    for (int a = 0; a < width; a++) nnz += KEEP(i, a, COL(i, a));
  HPMG_CALL(sp1d_alloc(nrows, ncols, nnz, A));
  int p = 0;
  for (int i = 0; i < nrows; i++) {
    A->rowptr[i] = p;
    for (int a = 0; a < width; a++) {
      int j = COL(i, a);
      double v = W[(size_t)i * width + a];
      if (KEEP(i, a, j)) {
        int q = p++; /* insertion: columns ascending within the row */
        while (wrap && q > A->rowptr[i] && A->col[q - 1] > j) {
          A->col[q] = A->col[q - 1];
          A->val[q] = A->val[q - 1];
          A->valf[q] = A->valf[q - 1];
          q--;
        }
        A->col[q] = j;
        A->val[q] = v;
        A->valf[q] = (float)v;
      }
    }
  }
  A->rowptr[nrows] = p;
#undef KEEP
#undef COL
  return HPMG_SUCCESS;
}

static hpmg_error windows_alloc(int nrows, int width, int **c0, double **W) {
  HPMG_CALL(hpmg_calloc(sizeof(int) * (size_t)(nrows > 0 ? nrows : 1), c0));
  return hpmg_calloc(sizeof(double) * (size_t)(nrows > 0 ? nrows : 1) * width, W);
}

static void element(int k, double h, int stiffness, double *Ae) {
  if (stiffness) hpmg_element_stiffness(k, h, Ae);
  else hpmg_element_mass(k, h, Ae);
}

hpmg_error hpmg_assemble_1d(const hpmg_dir1d *L, int stiffness, hpmg_sp1d *A, hpmg_sp1d *W) {
  const int k = L->k, cells = L->cells, n = hpmg_dir1d_n(L), m = k + 1, width = 2 * k + 1, last = k * cells;
  const int per = hpmg_dir1d_periodic(L);
  memset(W, 0, sizeof *W);
  W->bw = -1;
  HPMG_CHECK_ARG(!per || cells >= 2, "a periodic direction needs at least 2 cells (got %d)", cells);
  int *c0, *cw = NULL;
  double *Wb, *Ww = NULL;
  HPMG_CALL(windows_alloc(n, width, &c0, &Wb));
  hpmg_error e = per ? windows_alloc(n, k, &cw, &Ww) : HPMG_SUCCESS;
  for (int i = 0; i < n; i++) c0[i] = i - k;
  if (per) cw[0] = n - k; /* row 0: columns n-k..n-1; rows n-k..n-1: column 0 */
  double Ae[16 * 16];
  for (int c = 0; c < cells && !e; c++) {
    if (c == 0 || L->xn) element(k, hpmg_dir1d_width(L, c), stiffness, Ae);
    for (int a = 0; a < m; a++)
      for (int b = 0; b < m; b++) {
        const int I = c * k + a, J = c * k + b, i = hpmg_dir1d_free(L, I), j = hpmg_dir1d_free(L, J);
        if (i < 0 || j < 0) continue;
        const int wi = per && I == last, wj = per && J == last;
        if (wi == wj) Wb[(size_t)i * width + (j - c0[i])] += Ae[a * m + b];
        else if (wi) Ww[j - cw[0]] += Ae[a * m + b];
        else Ww[(size_t)i * k] += Ae[a * m + b];
      }
  }
  if (!e) e = from_windows(n, n, width, c0, Wb, 0, A);
  if (!e && per) e = from_windows(n, n, k, cw, Ww, 0, W);
  hpmg_free(&c0);
  hpmg_free(&Wb);
  hpmg_free(&cw);
  hpmg_free(&Ww);
  HPMG_CALL(e);
  return hpmg_sp1d_make_banded(A);
}

void hpmg_stiffness_row_sums_1d(const hpmg_dir1d *L, double *s) {
  const int k = L->k, m = k + 1, cells = L->cells, last = k * cells;
  double Ke[16 * 16];
  for (int i = 0; i < hpmg_dir1d_n(L); i++) s[i] = 0.0;
  if (L->lo == HPMG_BC_DIRICHLET) {
    hpmg_element_stiffness(k, hpmg_dir1d_width(L, 0), Ke);
    for (int I = 1; I <= k; I++) /* free nodes of cell 0 couple to node 0 */
      if (hpmg_dir1d_free(L, I) >= 0) s[hpmg_dir1d_free(L, I)] -= Ke[I * m + 0];
  }
  if (L->hi == HPMG_BC_DIRICHLET) {
    hpmg_element_stiffness(k, hpmg_dir1d_width(L, cells - 1), Ke);
    for (int I = last - k; I < last; I++) /* free nodes of the last cell couple to the last node */
      if (hpmg_dir1d_free(L, I) >= 0) s[hpmg_dir1d_free(L, I)] -= Ke[(I - (cells - 1) * k) * m + k];
  }
}

static hpmg_dir1d plain(int k, int cells, double h) {
  hpmg_dir1d L = {k, cells, NULL, h, HPMG_BC_DIRICHLET, HPMG_BC_DIRICHLET};
  return L;
}

hpmg_error hpmg_assemble_mass_1d(int k, int cells, double h, hpmg_sp1d *M) {
  const hpmg_dir1d L = plain(k, cells, h);
  hpmg_sp1d W;
  return hpmg_assemble_1d(&L, 0, M, &W);
}

hpmg_error hpmg_assemble_stiffness_1d(int k, int cells, double h, hpmg_sp1d *K) {
  const hpmg_dir1d L = plain(k, cells, h);
  hpmg_sp1d W;
  return hpmg_assemble_1d(&L, 1, K, &W);
}

void hpmg_node_positions_1d_dir(const hpmg_dir1d *L, double *x) {
  double gll[16], w[16];
  const int k = L->k, last = k * L->cells;
  hpmg_gauss_lobatto(k + 1, gll, w);
  for (int I = 0; I <= last; I++) {
    const int i = hpmg_dir1d_free(L, I);
    if (i < 0 || (hpmg_dir1d_periodic(L) && I == last)) continue;
    const int c = I / k < L->cells ? I / k : L->cells - 1, a = I - c * k;
    x[i] = L->xn ? L->xn[c] + gll[a] * (L->xn[c + 1] - L->xn[c]) : ((I / k) + gll[I % k]) * L->h;
  }
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
  hpmg_error e = from_windows(nf, nc, kc + 1, c0, W, 0, P);
  hpmg_free(&c0);
  hpmg_free(&W);
  return e;
}

hpmg_error hpmg_prolongation_1d(int k, int cells, hpmg_sp1d *P) {
  const hpmg_dir1d C = plain(k, cells, 1.0), F = plain(k, 2 * cells, 0.5);
  return hpmg_prolongation_1d_dir(&C, &F, P);
}

hpmg_error hpmg_degree_interpolation_1d(int kc, int kf, int cells, hpmg_sp1d *P) {
  return interpolation(kc, cells, kf, cells, P);
}

hpmg_error hpmg_quadrature_interpolation_1d(int k, int cells, double h, int nq, hpmg_sp1d *B,
                                            double *xq, double *wq) {
  const hpmg_dir1d L = plain(k, cells, h);
  return hpmg_quadrature_interpolation_1d_dir(&L, nq, B, xq, wq);
}

hpmg_error hpmg_prolongation_1d_dir(const hpmg_dir1d *C, const hpmg_dir1d *F, hpmg_sp1d *P) {
  HPMG_CHECK_ARG(C->k == F->k && C->lo == F->lo && C->hi == F->hi && C->cells >= 1 && C->cells <= F->cells,
                 "1D prolongation: the coarse direction must have the fine one's degree, ends and at most its cells");
  HPMG_CHECK_ARG(C->xn || F->cells == 2 * C->cells,
                 "1D prolongation: uniform coarse cells must be halved (coarse node coordinates otherwise)");
  const int k = C->k, nf = hpmg_dir1d_n(F), nc = hpmg_dir1d_n(C), lastf = k * F->cells;
  const int per = hpmg_dir1d_periodic(C), offc = hpmg_dir1d_off(C);
  /* the coarse cell of each fine cell: fc / 2 where halved (every other fine
   * node a coarse one), else by the nodes (increasing; every coarse node a
   * fine node: nested cells of any size) */
  int *cof;
  HPMG_CALL(hpmg_malloc(sizeof(int) * (size_t)F->cells, &cof));
  const double tol = 1e-12 * (hpmg_dir1d_x(F, F->cells - 1) + hpmg_dir1d_width(F, F->cells - 1));
  int nested = 1;
  const int halved = F->cells == 2 * C->cells;
  for (int fc = 0, cc = 0; fc < F->cells; fc++) {
    if (halved) {
      cof[fc] = fc / 2;
      continue;
    }
    const double x0 = hpmg_dir1d_x(F, fc);
    if (cc + 1 < C->cells && fabs(C->xn[cc + 1] - x0) <= tol) cc++;
    if (fabs(C->xn[cc] - x0) > tol && !(x0 > C->xn[cc] && x0 < C->xn[cc + 1])) nested = 0;
    cof[fc] = cc;
  }
  if (!halved && (fabs(C->xn[C->cells] - hpmg_dir1d_x(F, F->cells)) > tol || cof[F->cells - 1] != C->cells - 1)) nested = 0;
  if (!nested) {
    hpmg_free(&cof);
    return hpmg_error_set(HPMG_ERR_ARG, "1D prolongation: the coarse nodes are not fine nodes (cells not nested)");
  }
  double gll[16], w[16];
  hpmg_gauss_lobatto(k + 1, gll, w);
  int *c0;
  double *W;
  hpmg_error e = windows_alloc(nf, k + 1, &c0, &W);
  if (e) {
    hpmg_free(&cof);
    return e;
  }
  for (int I = 0; I <= lastf; I++) {
    const int i = hpmg_dir1d_free(F, I);
    if (i < 0 || (per && I == lastf)) continue;
    const int fc = I / k < F->cells ? I / k : F->cells - 1, a = I - fc * k, cc = cof[fc];
    const double t = F->xn || C->xn
                         ? (hpmg_dir1d_x(F, fc) + gll[a] * hpmg_dir1d_width(F, fc) - hpmg_dir1d_x(C, cc)) /
                               hpmg_dir1d_width(C, cc)
                         : (fc + gll[a]) / 2 - cc;
    c0[i] = cc * k - offc; /* free index of the coarse cell's local node 0 */
    hpmg_lagrange_eval(k + 1, gll, t, &W[(size_t)i * (k + 1)], NULL);
  }
  e = from_windows(nf, nc, k + 1, c0, W, per, P);
  hpmg_free(&cof);
  hpmg_free(&c0);
  hpmg_free(&W);
  return e;
}

hpmg_error hpmg_quadrature_interpolation_1d_dir(const hpmg_dir1d *L, int nq, hpmg_sp1d *B, double *xq,
                                                double *wq) {
  const int k = L->k, cells = L->cells, m = k + 1, per = hpmg_dir1d_periodic(L);
  const int n = hpmg_dir1d_n(L), off = hpmg_dir1d_off(L);
  double gll[16], w[16], tq[32], tw[32];
  hpmg_gauss_lobatto(m, gll, w);
  hpmg_gauss(nq, tq, tw);
  int *c0;
  double *W;
  HPMG_CALL(windows_alloc(cells * nq, m, &c0, &W));
  for (int c = 0; c < cells; c++)
    for (int q = 0; q < nq; q++) {
      const int row = c * nq + q;
      const double h = hpmg_dir1d_width(L, c);
      c0[row] = c * k - off;
      hpmg_lagrange_eval(m, gll, tq[q], &W[(size_t)row * m], NULL);
      if (xq) xq[row] = L->xn ? L->xn[c] + tq[q] * h : (c + tq[q]) * h;
      if (wq) wq[row] = tw[q] * h;
    }
  hpmg_error e = from_windows(cells * nq, n, m, c0, W, per, B);
  hpmg_free(&c0);
  hpmg_free(&W);
  return e;
}
