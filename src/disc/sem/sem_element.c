/* Element operators of spectral elements with static condensation: the full
 * element Helmholtz operator by sum factorization, the interior solve by fast
 * diagonalization, condensation of the load, interior recovery, and the
 * condensed operator in O(p^dim) (derivation: docs/sem.md). */
#include <omp.h>
#include <string.h>
#include "disc/sem/sem_element.h"

static inline int ipow(int b, int e) {
  int r = 1;
  while (e-- > 0) r *= b;
  return r;
}

size_t hpmg_sem_work_size(const hpmg_sem_element *el) {
  int mf = ipow(el->m, el->dim - 1);
  return (size_t)(2 * el->nloc + 4 * el->ni + 4 * mf + 2 * el->n * el->n + 64);
}

/* ---------------------------------------------------------------- full H_e */

void hpmg_sem_apply_full(const hpmg_sem_element *el, const double *d, const double *u, double *y,
                         double *work) {
  const int n = el->n;
  const double *M = el->M, *L = el->L;
  double *W2 = work; /* W2[i2*n+i1] = M[i2] M[i1] */
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) W2[i * n + j] = M[i] * M[j];
  if (el->dim == 2) {
    for (int i2 = 0; i2 < n; i2++) {
      const double *ur = u + i2 * n;
      double *yr = y + i2 * n;
      for (int i1 = 0; i1 < n; i1++) { /* d0 M(x)M + d1 M(x)L */
        double s = 0.0;
        for (int j = 0; j < n; j++) s += L[i1 * n + j] * ur[j];
        yr[i1] = M[i2] * (d[0] * M[i1] * ur[i1] + d[1] * s);
      }
      for (int j = 0; j < n; j++) { /* d2 L(x)M */
        const double c = d[2] * L[i2 * n + j];
        const double *uj = u + j * n;
        for (int i1 = 0; i1 < n; i1++) yr[i1] += c * M[i1] * uj[i1];
      }
    }
    return;
  }
  const int n2 = n * n;
  for (int i3 = 0; i3 < n; i3++) {
    for (int i2 = 0; i2 < n; i2++) {
      const double *ur = u + (i3 * n + i2) * n;
      double *yr = y + (i3 * n + i2) * n;
      const double c = M[i3] * M[i2];
      for (int i1 = 0; i1 < n; i1++) yr[i1] = c * d[0] * M[i1] * ur[i1]; /* d0 M(x)M(x)M */
      for (int j = 0; j < n; j++) { /* d1 M(x)M(x)L; L_S symmetric, axpy form */
        const double a = c * d[1] * ur[j];
        for (int i1 = 0; i1 < n; i1++) yr[i1] += a * L[j * n + i1];
      }
      for (int j = 0; j < n; j++) { /* d2 M(x)L(x)M */
        const double cj = d[2] * M[i3] * L[i2 * n + j];
        const double *uj = u + (i3 * n + j) * n;
        for (int i1 = 0; i1 < n; i1++) yr[i1] += cj * M[i1] * uj[i1];
      }
    }
    double *yp = y + i3 * n2;
    for (int j = 0; j < n; j++) { /* d3 L(x)M(x)M */
      const double cj = d[3] * L[i3 * n + j];
      const double *uj = u + j * n2;
      for (int t = 0; t < n2; t++) yp[t] += cj * W2[t] * uj[t];
    }
  }
}

/* ------------------------------------------------------- interior H_II^{-1} */

/* out[o][i][t] = sum_j A(i,j) in[o][j][t] along direction dir of an m^dim
 * array; A(i,j) = A[i*m+j], or A[j*m+i] if trans. */
static void tensor_dir(int dim, int m, const double *A, int trans, int dir, const double *in, double *out) {
  const int inner = ipow(m, dir), outer = ipow(m, dim - 1 - dir);
  for (int o = 0; o < outer; o++)
    for (int i = 0; i < m; i++) {
      double *orow = out + ((size_t)o * m + i) * inner;
      for (int t = 0; t < inner; t++) orow[t] = 0.0;
      for (int j = 0; j < m; j++) {
        const double a = trans ? A[j * m + i] : A[i * m + j];
        const double *irow = in + ((size_t)o * m + j) * inner;
        for (int t = 0; t < inner; t++) orow[t] += a * irow[t];
      }
    }
}

/* E /= D, D = d0 + sum_k d_k lambda_{i_k} (eigenspace of H_II) */
static void divide_eigen(const hpmg_sem_element *el, const double *d, double *E) {
  const int m = el->m;
  const double *lam = el->lam;
  if (el->dim == 2) {
    for (int k2 = 0; k2 < m; k2++)
      for (int k1 = 0; k1 < m; k1++) E[k2 * m + k1] /= d[0] + d[1] * lam[k1] + d[2] * lam[k2];
    return;
  }
  for (int k3 = 0; k3 < m; k3++)
    for (int k2 = 0; k2 < m; k2++) {
      const double c = d[0] + d[2] * lam[k2] + d[3] * lam[k3];
      double *e = E + (k3 * m + k2) * m;
      for (int k1 = 0; k1 < m; k1++) e[k1] /= c + d[1] * lam[k1];
    }
}

/* 3D fast diagonalization u = (S (x) S (x) S) D^{-1} (S^T (x) S^T (x) S^T) f
 * of an m^3 interior array as six 1D contractions, each in axpy form
 * (vectorized over the innermost index: rows of S or S^T along x1, lines
 * of m or m^2 values along x2 and x3). FD3_CASE instantiates it for the m of
 * common degrees (compile-time bounds: unrolled, full SIMD rows), the
 * generic instance takes the rest; all give the same operation order. */
static inline __attribute__((always_inline)) void fd3(const int m, const double *restrict S,
                                                      const double *restrict ST, const double *restrict lam,
                                                      const double *d, const double *f,
                                                      double *u, double *restrict A,
                                                      double *restrict B) {
  const int m2 = m * m;
  /* x1: A[r][i] = sum_j f[r][j] S[j][i] */
  for (int r = 0; r < m2; r++) {
    double *restrict o = A + r * m;
    const double *restrict x = f + r * m;
    for (int i = 0; i < m; i++) o[i] = 0.0;
    for (int j = 0; j < m; j++) {
      const double a = x[j];
      const double *restrict sr = S + j * m;
      for (int i = 0; i < m; i++) o[i] += a * sr[i];
    }
  }
  /* x2: B[k3][i][t] = sum_j S[j][i] A[k3][j][t] */
  for (int k3 = 0; k3 < m; k3++)
    for (int i = 0; i < m; i++) {
      double *restrict o = B + (k3 * m + i) * m;
      for (int t = 0; t < m; t++) o[t] = 0.0;
      for (int j = 0; j < m; j++) {
        const double a = S[j * m + i];
        const double *restrict x = A + (k3 * m + j) * m;
        for (int t = 0; t < m; t++) o[t] += a * x[t];
      }
    }
  /* x3: A[i][t] = sum_j S[j][i] B[j][t], then / D */
  for (int i = 0; i < m; i++) {
    double *restrict o = A + i * m2;
    for (int t = 0; t < m2; t++) o[t] = 0.0;
    for (int j = 0; j < m; j++) {
      const double a = S[j * m + i];
      const double *restrict x = B + j * m2;
      for (int t = 0; t < m2; t++) o[t] += a * x[t];
    }
  }
  for (int k3 = 0; k3 < m; k3++)
    for (int k2 = 0; k2 < m; k2++) {
      const double c = d[0] + d[2] * lam[k2] + d[3] * lam[k3];
      double *restrict e = A + (k3 * m + k2) * m;
      for (int k1 = 0; k1 < m; k1++) e[k1] /= c + d[1] * lam[k1];
    }
  /* back: x3 with S, x2 with S, x1 with S (rows of S^T) */
  for (int i = 0; i < m; i++) {
    double *restrict o = B + i * m2;
    for (int t = 0; t < m2; t++) o[t] = 0.0;
    for (int j = 0; j < m; j++) {
      const double a = S[i * m + j];
      const double *restrict x = A + j * m2;
      for (int t = 0; t < m2; t++) o[t] += a * x[t];
    }
  }
  for (int k3 = 0; k3 < m; k3++)
    for (int i = 0; i < m; i++) {
      double *restrict o = A + (k3 * m + i) * m;
      for (int t = 0; t < m; t++) o[t] = 0.0;
      for (int j = 0; j < m; j++) {
        const double a = S[i * m + j];
        const double *restrict x = B + (k3 * m + j) * m;
        for (int t = 0; t < m; t++) o[t] += a * x[t];
      }
    }
  for (int r = 0; r < m2; r++) {
    double *restrict o = u + r * m;
    const double *restrict x = A + r * m;
    for (int i = 0; i < m; i++) o[i] = 0.0;
    for (int j = 0; j < m; j++) {
      const double a = x[j];
      const double *restrict sr = ST + j * m;
      for (int i = 0; i < m; i++) o[i] += a * sr[i];
    }
  }
}

#define FD3_CASE(M)                                                 \
  case M:                                                           \
    fd3(M, el->S, el->ST, el->lam, d, fI, uI, work, work + el->ni); \
    return;

void hpmg_sem_interior_solve(const hpmg_sem_element *el, const double *d, const double *fI, double *uI,
                             double *work) {
  const int dim = el->dim, m = el->m;
  if (dim == 3) {
    switch (m) { /* p = 4, 6, 8, 12, 16, 24, 32 */
      FD3_CASE(3)
      FD3_CASE(5)
      FD3_CASE(7)
      FD3_CASE(11)
      FD3_CASE(15)
      FD3_CASE(23)
      FD3_CASE(31)
    default:
      fd3(m, el->S, el->ST, el->lam, d, fI, uI, work, work + el->ni);
      return;
    }
  }
  double *B[2] = {work, work + el->ni};
  const double *in = fI;
  int k = 0;
  for (int dir = 0; dir < dim; dir++, k ^= 1) { /* (S^T (x) S^T) */
    tensor_dir(dim, m, el->S, 1, dir, in, B[k]);
    in = B[k];
  }
  divide_eigen(el, d, B[k ^ 1]);
  for (int dir = 0; dir < dim; dir++, k ^= 1) { /* (S (x) S) */
    double *out = dir == dim - 1 ? uI : B[k];
    tensor_dir(dim, m, el->S, 0, dir, in, out);
    in = out;
  }
}
#undef FD3_CASE

/* ------------------------------------------------- face coupling H_IB, H_BI */

/* The interior couples to the boundary only through the face interiors
 * (M_S is diagonal, so M_IB = 0 and every term of H_IB has exactly one
 * L_{I,s} factor, in the face normal direction). Face f = 2*dir + s of the
 * boundary vector is the m^{dim-1} block [o][t] of the interior array
 * [o][k][t] with k along dir. */

static inline double tangential_mass(const hpmg_sem_element *el, int f, int q) {
  /* mass product of the face node without its normal factor M[0] = M[p] */
  return el->mb[el->face_offset + f * ipow(el->m, el->dim - 1) + q] / el->M[0];
}

/* q += d_{dir+1} (M_I (x) ... l_s ... (x) M_I) (g - c) */
static void face_expand(const hpmg_sem_element *el, const double *d, int f, const double *g, double c, double *q) {
  const int m = el->m, dir = f / 2, s = f % 2;
  const int inner = ipow(m, dir), outer = ipow(m, el->dim - 1 - dir);
  const double *l = el->lI[s];
  for (int o = 0; o < outer; o++)
    for (int t = 0; t < inner; t++) {
      const int fq = o * inner + t;
      const double v = d[dir + 1] * tangential_mass(el, f, fq) * (g[fq] - c);
      for (int k = 0; k < m; k++) q[((size_t)o * m + k) * inner + t] += l[k] * v;
    }
}

/* r = d_{dir+1} (M_I (x) ... l_s^T ... (x) M_I) w */
static void face_contract(const hpmg_sem_element *el, const double *d, int f, const double *w, double *r) {
  const int m = el->m, dir = f / 2, s = f % 2;
  const int inner = ipow(m, dir), outer = ipow(m, el->dim - 1 - dir);
  const double *l = el->lI[s];
  for (int o = 0; o < outer; o++)
    for (int t = 0; t < inner; t++) {
      const int fq = o * inner + t;
      double acc = 0.0;
      for (int k = 0; k < m; k++) acc += l[k] * w[((size_t)o * m + k) * inner + t];
      r[fq] = d[dir + 1] * tangential_mass(el, f, fq) * acc;
    }
}

/* the shift of the difference form: the mean of the element's vertex
 * values (boundary positions 0 .. 2^dim - 1), summed pairwise as the batch
 * kernel (sem_kernels.c) does */
static inline double boundary_shift(const hpmg_sem_element *el, const double *uB) {
  if (el->dim == 2) return 0.25 * ((uB[0] + uB[1]) + (uB[2] + uB[3]));
  return 0.125 * (((uB[0] + uB[1]) + (uB[2] + uB[3])) + ((uB[4] + uB[5]) + (uB[6] + uB[7])));
}

void hpmg_sem_condense_rhs(const hpmg_sem_element *el, const double *d, const double *F, double *Fhat,
                           double *work) {
  const int mf = ipow(el->m, el->dim - 1);
  double *fI = work, *w = work + el->ni, *r = w + el->ni, *scratch = r + mf;
  for (int k = 0; k < el->ni; k++) fI[k] = F[el->imap[k]];
  hpmg_sem_interior_solve(el, d, fI, w, scratch);
  for (int k = 0; k < el->nb; k++) Fhat[k] = F[el->bmap[k]];
  for (int f = 0; f < 2 * el->dim; f++) {
    face_contract(el, d, f, w, r);
    double *Ff = Fhat + el->face_offset + f * mf;
    for (int q = 0; q < mf; q++) Ff[q] -= r[q];
  }
}

void hpmg_sem_recover(const hpmg_sem_element *el, const double *d, const double *F, const double *uB,
                      double *u, double *work) {
  const int mf = ipow(el->m, el->dim - 1);
  double *rI = work, *uI = work + el->ni, *scratch = uI + el->ni;
  /* difference form (condensed_apply below): u_I = c + H_II^{-1} (F_I -
   * H_IB (u_B - c) - d0 w_I c), c the mean of the vertex values; the
   * stiffness annihilates constants, so H_IB 1 = -H_II 1 + d0 w_I */
  const double c = boundary_shift(el, uB);
  memset(rI, 0, sizeof(double) * (size_t)el->ni);
  for (int f = 0; f < 2 * el->dim; f++) face_expand(el, d, f, uB + el->face_offset + f * mf, c, rI);
  for (int k = 0; k < el->ni; k++) {
    double w = 1.0;
    for (int r = el->imap[k], dd = 0; dd < el->dim; dd++, r /= el->n) w *= el->M[r % el->n];
    rI[k] = F[el->imap[k]] - rI[k] - d[0] * w * c;
  }
  hpmg_sem_interior_solve(el, d, rI, uI, scratch);
  for (int k = 0; k < el->ni; k++) u[el->imap[k]] = uI[k] + c;
  for (int k = 0; k < el->nb; k++) u[el->bmap[k]] = uB[k];
}

/* ----------------------------------------------------------- condensed Hhat */

/* Y = H_BB U on the boundary nodes of the element-local arrays U, Y. Only
 * boundary entries of U are read and of Y written: a line along x_k whose
 * other indices are not all interior lies in the boundary entirely (full 1D
 * product with L_S); an interior line meets the boundary at its two ends
 * only (2x2 block of L_S). O(p^dim) in all. */
static inline __attribute__((always_inline)) void boundary_block(const hpmg_sem_element *el, const int m, const double *d, const double *U,
                                                    double *Y) {
  const int n = m + 2, p = m + 1;
  const double *M = el->M, *L = el->L;
  const double L00 = L[0], L0p = L[p], Lp0 = L[p * n], Lpp = L[p * n + p];
  for (int k = 0; k < el->nb; k++) Y[el->bmap[k]] = d[0] * el->mb[k] * U[el->bmap[k]];
#define END(i) ((i) == 0 || (i) == p)
  if (el->dim == 2) {
    for (int i2 = 0; i2 < n; i2++) { /* lines along x1 */
      const double c = d[1] * M[i2];
      const double *ur = U + i2 * n;
      double *yr = Y + i2 * n;
      if (END(i2)) {
        for (int j = 0; j < n; j++) { /* L_S symmetric: row j = column j */
          const double a = c * ur[j];
          for (int i1 = 0; i1 < n; i1++) yr[i1] += a * L[j * n + i1];
        }
      } else {
        yr[0] += c * (L00 * ur[0] + L0p * ur[p]);
        yr[p] += c * (Lp0 * ur[0] + Lpp * ur[p]);
      }
    }
    for (int i1 = 0; i1 < n; i1++) { /* lines along x2 */
      const double c = d[2] * M[i1];
      if (END(i1)) {
        for (int i2 = 0; i2 < n; i2++) {
          double s = 0.0;
          for (int j = 0; j < n; j++) s += L[i2 * n + j] * U[j * n + i1];
          Y[i2 * n + i1] += c * s;
        }
      } else {
        Y[i1] += c * (L00 * U[i1] + L0p * U[p * n + i1]);
        Y[p * n + i1] += c * (Lp0 * U[i1] + Lpp * U[p * n + i1]);
      }
    }
    return;
  }
  const int n2 = n * n;
  for (int i3 = 0; i3 < n; i3++) {
    const double *up = U + i3 * n2;
    double *yp = Y + i3 * n2;
    for (int i2 = 0; i2 < n; i2++) { /* lines along x1 */
      const double c = d[1] * M[i3] * M[i2];
      const double *ur = up + i2 * n;
      double *yr = yp + i2 * n;
      if (END(i3) || END(i2)) {
        for (int j = 0; j < n; j++) { /* L_S symmetric: row j = column j */
          const double a = c * ur[j];
          for (int i1 = 0; i1 < n; i1++) yr[i1] += a * L[j * n + i1];
        }
      } else {
        yr[0] += c * (L00 * ur[0] + L0p * ur[p]);
        yr[p] += c * (Lp0 * ur[0] + Lpp * ur[p]);
      }
    }
    if (END(i3)) { /* lines along x2, all in this face */
      for (int i2 = 0; i2 < n; i2++)
        for (int j = 0; j < n; j++) {
          const double c = d[2] * M[i3] * L[i2 * n + j];
          const double *uj = up + j * n;
          double *yr = yp + i2 * n;
          for (int i1 = 0; i1 < n; i1++) yr[i1] += c * M[i1] * uj[i1];
        }
    } else {
      for (int e = 0; e < 2; e++) { /* the two boundary lines i1 = 0, p */
        const int i1 = e ? p : 0;
        const double c = d[2] * M[i3] * M[i1];
        for (int i2 = 0; i2 < n; i2++) {
          double s = 0.0;
          for (int j = 0; j < n; j++) s += L[i2 * n + j] * up[j * n + i1];
          yp[i2 * n + i1] += c * s;
        }
      }
      for (int i1 = 1; i1 < p; i1++) { /* interior lines: ends only */
        const double c = d[2] * M[i3] * M[i1];
        const double u0 = up[i1], uq = up[p * n + i1];
        yp[i1] += c * (L00 * u0 + L0p * uq);
        yp[p * n + i1] += c * (Lp0 * u0 + Lpp * uq);
      }
    }
    /* lines along x3 whose (i2, i1) is not interior: full products */
    for (int j = 0; j < n; j++) {
      const double c = d[3] * L[i3 * n + j];
      const double *uj = U + j * n2;
      for (int i2 = 0; i2 < n; i2++) {
        const double cm = c * M[i2];
        if (END(i2)) {
          for (int i1 = 0; i1 < n; i1++) yp[i2 * n + i1] += cm * M[i1] * uj[i2 * n + i1];
        } else {
          yp[i2 * n] += cm * M[0] * uj[i2 * n];
          yp[i2 * n + p] += cm * M[p] * uj[i2 * n + p];
        }
      }
    }
  }
  for (int i2 = 1; i2 < p; i2++) /* interior lines along x3: ends only */
    for (int i1 = 1; i1 < p; i1++) {
      const double c = d[3] * M[i2] * M[i1];
      const int q = i2 * n + i1;
      const double u0 = U[q], uq = U[p * n2 + q];
      Y[q] += c * (L00 * u0 + L0p * uq);
      Y[p * n2 + q] += c * (Lp0 * u0 + Lpp * uq);
    }
#undef END
}

/* G = c (Sinv (x) Sinv) g for an m x m face block (3D) or c Sinv g (2D). */
static inline __attribute__((always_inline)) void face_to_eigen(const hpmg_sem_element *el, const int m, double c, const double *g,
                                                   double *G, double *tmp) {
  const double *A = el->Sinv;
  if (el->dim == 2) {
    for (int k = 0; k < m; k++) {
      double s = 0.0;
      for (int i = 0; i < m; i++) s += A[k * m + i] * g[i];
      G[k] = c * s;
    }
    return;
  }
  /* loops in axpy form (vectorized over the innermost index): the compiler
   * leaves floating-point dot-product reductions scalar without -ffast-math */
  const double *AT = el->SinvT;
  for (int r = 0; r < m; r++) { /* tmp = g Sinv^T */
    double *tr = tmp + r * m;
    for (int k = 0; k < m; k++) tr[k] = 0.0;
    for (int i = 0; i < m; i++) {
      const double gi = g[r * m + i];
      for (int k = 0; k < m; k++) tr[k] += gi * AT[i * m + k];
    }
  }
  for (int k = 0; k < m; k++) { /* G = c Sinv tmp */
    double *Gr = G + k * m;
    for (int t = 0; t < m; t++) Gr[t] = 0.0;
    for (int r = 0; r < m; r++) {
      const double a = c * A[k * m + r];
      for (int t = 0; t < m; t++) Gr[t] += a * tmp[r * m + t];
    }
  }
}

/* y -= c (Sinv^T (x) Sinv^T) C for an m x m face block (3D) or c Sinv^T C (2D). */
static inline __attribute__((always_inline)) void eigen_to_face(const hpmg_sem_element *el, const int m, double c, const double *C,
                                                   double *y, double *tmp) {
  const double *A = el->Sinv;
  if (el->dim == 2) {
    for (int i = 0; i < m; i++) {
      double s = 0.0;
      for (int k = 0; k < m; k++) s += A[k * m + i] * C[k];
      y[i] -= c * s;
    }
    return;
  }
  for (int i = 0; i < m; i++) { /* tmp = Sinv^T C */
    double *tr = tmp + i * m;
    for (int t = 0; t < m; t++) tr[t] = 0.0;
    for (int k = 0; k < m; k++) {
      const double a = A[k * m + i];
      for (int t = 0; t < m; t++) tr[t] += a * C[k * m + t];
    }
  }
  for (int i = 0; i < m; i++) /* y -= c tmp Sinv */
    for (int l = 0; l < m; l++) {
      const double a = c * tmp[i * m + l];
      const double *Al = A + l * m;
      double *yr = y + i * m;
      for (int j = 0; j < m; j++) yr[j] -= a * Al[j];
    }
}

/* The condensed apply for m interior points per direction; instantiated
 * with compile-time m for common degrees (CONDENSED_CASE below). */
static inline __attribute__((always_inline)) void condensed_apply(const hpmg_sem_element *el, const int m, const double *d,
                                                     const double *uB, double *yB, double *work) {
  const int dim = el->dim, mf = dim == 2 ? m : m * m, ni = dim == 2 ? m * m : m * m * m;
  const int nloc = dim == 2 ? (m + 2) * (m + 2) : (m + 2) * (m + 2) * (m + 2);
  double *U = work, *Y = U + nloc, *E = Y + nloc;
  double *G0 = E + ni, *G1 = G0 + mf, *tmp = G1 + mf;
  const double *a0 = el->a[0], *a1 = el->a[1];

  /* Difference form (docs/sem.md, "Error floor"): Hhat uB = Hhat (uB - l) +
   * Hhat l with l = c + sum_v (u_v - c) phi_v the multilinear interpolant of
   * the vertex values u_v (c their mean: a constant is removed exactly), and
   * Hhat l = (H l)_B - H_BI H_II^{-1} (H l)_I exact: the stiffness part of
   * H l is the flux dphi on the faces (0 at interior nodes), the mass part
   * d0 w l. Applied to uB itself, the stiffness parts (O(d1)) of H_BB uB and
   * H_BI H_II^{-1} H_IB uB cancel to O(h^2) of that only up to rounding,
   * ~eps d1 |u|: a spurious zeroth-order term that bounds the solution error
   * at ~eps/h^2; uB - l is O(h^2). */
  const int nv = 1 << dim, nb = el->nb;
  const double c = boundary_shift(el, uB);
  double uv[8], dl[8]; /* the vertex values, and less c */
  for (int v = 0; v < nv; v++) {
    uv[v] = uB[v];
    dl[v] = uB[v] - c;
  }

  /* H_BB (uB - l) + d0 w_B l + the fluxes of l */
  for (int k = 0; k < nb; k++) {
    const double *ph = el->phi + k * nv;
    double l = 0.0;
    for (int v = 0; v < nv; v++) l += dl[v] * ph[v];
    U[el->bmap[k]] = (uB[k] - c) - l; /* uB - c exact where uB is close to c */
    yB[k] = c + l;
  }
  boundary_block(el, m, d, U, Y);
  for (int k = 0; k < nb; k++) {
    double y = Y[el->bmap[k]] + d[0] * el->mb[k] * yB[k];
    for (int dd = 0; dd < dim; dd++) {
      const double *q = el->dphi + ((size_t)dd * nb + k) * nv;
      double f = 0.0;
      for (int v = 0; v < nv; v++) f += q[v] * dl[v];
      y += d[dd + 1] * f;
    }
    yB[k] = y;
  }
  double *ub = Y; /* uB - l in boundary order (faces only) */
  for (int k = el->face_offset; k < nb; k++) ub[k] = U[el->bmap[k]];

  /* - H_BI H_II^{-1} (H_IB (uB - l) + d0 w_I l): into the eigenspace of H_II
   * face pair by face pair (a 2D transform of each face, then a rank-1
   * expansion in the normal direction), divide by the eigenvalues, and back
   * (contraction in the normal direction, then the 2D transform) */
  memset(E, 0, sizeof(double) * (size_t)ni);
  for (int dir = 0; dir < dim; dir++) {
    const int inner = dir == 0 ? 1 : dir == 1 ? m : m * m, outer = mf / inner;
    const double *g = ub + el->face_offset + 2 * dir * mf;
    face_to_eigen(el, m, d[dir + 1], g, G0, tmp);
    face_to_eigen(el, m, d[dir + 1], g + mf, G1, tmp);
    for (int o = 0; o < outer; o++)
      for (int k = 0; k < m; k++) {
        double *e = E + ((size_t)o * m + k) * inner;
        const double *g0 = G0 + o * inner, *g1 = G1 + o * inner;
        const double b0 = a0[k], b1 = a1[k];
        for (int t = 0; t < inner; t++) e[t] += b0 * g0[t] + b1 * g1[t];
      }
  }
  if (d[0] != 0.0) { /* E += d0 (S^T (x) S^T (x) S^T) w_I l = d0 sum_v u_v (x)_dd sv[v_dd] */
    const int n3 = dim == 2 ? 1 : m;
    for (int k3 = 0; k3 < n3; k3++)
      for (int k2 = 0; k2 < m; k2++) {
        double *e = E + (k3 * m + k2) * m;
        for (int k1 = 0; k1 < m; k1++) {
          double t = 0.0;
          for (int v = 0; v < nv; v++) {
            const double f = dim == 2 ? el->sv[(v >> 1) & 1][k2] : el->sv[(v >> 2) & 1][k3] * el->sv[(v >> 1) & 1][k2];
            t += uv[v] * f * el->sv[v & 1][k1];
          }
          e[k1] += d[0] * t;
        }
      }
  }
  divide_eigen(el, d, E);
  for (int dir = 0; dir < dim; dir++) {
    const int inner = dir == 0 ? 1 : dir == 1 ? m : m * m, outer = mf / inner;
    memset(G0, 0, sizeof(double) * (size_t)(2 * mf));
    for (int o = 0; o < outer; o++)
      for (int k = 0; k < m; k++) {
        const double *e = E + ((size_t)o * m + k) * inner;
        double *g0 = G0 + o * inner, *g1 = G1 + o * inner;
        const double b0 = a0[k], b1 = a1[k];
        for (int t = 0; t < inner; t++) {
          g0[t] += b0 * e[t];
          g1[t] += b1 * e[t];
        }
      }
    double *y = yB + el->face_offset + 2 * dir * mf;
    eigen_to_face(el, m, d[dir + 1], G0, y, tmp);
    eigen_to_face(el, m, d[dir + 1], G1, y + mf, tmp);
  }
}

#define CONDENSED_CASE(M)                          \
  case M:                                          \
    condensed_apply(el, M, d, uB, yB, work); \
    return;

void hpmg_sem_condensed_apply(const hpmg_sem_element *el, const double *d, const double *uB, double *yB,
                              double *work) {
  if (el->dim == 3) {
    switch (el->m) { /* p = 4, 6, 8, 12, 16, 24, 32 */
      CONDENSED_CASE(3)
      CONDENSED_CASE(5)
      CONDENSED_CASE(7)
      CONDENSED_CASE(11)
      CONDENSED_CASE(15)
      CONDENSED_CASE(23)
      CONDENSED_CASE(31)
    default:
      break;
    }
  }
  condensed_apply(el, el->m, d, uB, yB, work);
}
#undef CONDENSED_CASE

/* ------------------------------------------------------------------ batches */

static hpmg_error batch_check(const hpmg_sem_element *el, int64_t ne, const double *d, const void *u,
                              const void *y) {
  HPMG_CHECK_ARG(el != NULL && el->L != NULL, "sem: element not created");
  HPMG_CHECK_ARG(ne >= 0, "sem: element count %lld must be >= 0", (long long)ne);
  HPMG_CHECK_ARG(ne == 0 || (d != NULL && u != NULL && y != NULL), "sem: NULL argument");
  return HPMG_SUCCESS;
}

typedef void (*element_fn)(const hpmg_sem_element *, const double *, const double *, double *, double *);

static hpmg_error batch(const hpmg_sem_element *el, int64_t ne, const double *d, const double *u, double *y,
                        int len, element_fn fn) {
  HPMG_CALL(batch_check(el, ne, d, u, y));
  const size_t ws = hpmg_sem_work_size(el);
  const int nt = omp_get_max_threads();
  double *work = NULL;
  HPMG_CALL(hpmg_malloc(sizeof(double) * ws * (size_t)nt, &work));
  const int dc = el->dim + 1;
#pragma omp parallel
  {
    double *wk = work + ws * (size_t)omp_get_thread_num();
#pragma omp for schedule(static)
    for (int64_t e = 0; e < ne; e++) fn(el, d + e * dc, u + e * len, y + e * len, wk);
  }
  hpmg_free(&work);
  return HPMG_SUCCESS;
}

hpmg_error hpmg_sem_apply_full_batch(const hpmg_sem_element *el, int64_t ne, const double *d,
                                     const double *u, double *y) {
  return batch(el, ne, d, u, y, el ? el->nloc : 0, hpmg_sem_apply_full);
}

hpmg_error hpmg_sem_condensed_apply_batch(const hpmg_sem_element *el, int64_t ne, const double *d,
                                          const double *uB, double *yB) {
  return batch(el, ne, d, uB, yB, el ? el->nb : 0, hpmg_sem_condensed_apply);
}

/* ------------------------------------------------------------- flop counts */

double hpmg_sem_full_flops(const hpmg_sem_element *el) {
  const double n = el->n, N = el->nloc;
  /* per node: 2n per direction (1D product), mass and coefficient products */
  return el->dim * 2.0 * n * N + (el->dim == 2 ? 8.0 : 12.0) * N;
}

double hpmg_sem_condensed_flops(const hpmg_sem_element *el) {
  const double n = el->n, m = el->m, dim = el->dim;
  const double mf = dim == 2 ? m : m * m, ni = el->ni;
  const double lines_b = dim == 2 ? n - m : n * n - m * m; /* boundary lines per direction */
  const double lines_i = dim == 2 ? m : m * m;
  double hbb = 2.0 * el->nb + dim * (lines_b * (2.0 * n * n + 2.0 * n) + lines_i * 8.0);
  /* per direction: 2 faces in (2D transform 2*2 m^{dim}), expansion 4 m^dim,
   * contraction 4 m^dim, 2 faces out (2*2 m^dim) */
  double face = dim == 2 ? 2.0 * (2.0 * m * m) : 2.0 * (4.0 * m * mf);
  double schur = dim * (2.0 * face + 8.0 * ni) + 4.0 * ni;
  return hbb + schur;
}
