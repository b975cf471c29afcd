/* The condensed element operator vectorized over elements (sem_kernels.h),
 * compiled once per instruction set (core/isa.h). Each function below is
 * its single-element counterpart in sem_element.c (boundary_block,
 * face_to_eigen, eigen_to_face, divide_eigen, condensed_apply) with every
 * scalar of an element replaced by a vector of `lanes` elements: the same
 * operations in the same order. */
#include <string.h>
#include "core/isa.h"
#include "core/simd.h"
#include "disc/sem/sem_kernels.h"

#define W (HPMG_VBYTES / 8)
/* unaligned-tolerant: callers may pass malloc memory (the kernels index whole vectors only) */
typedef double vd __attribute__((vector_size(HPMG_VBYTES), aligned(8), may_alias));

/* Y = H_BB U on the boundary nodes of the element-local arrays (3D) */
static inline __attribute__((always_inline)) void boundary_block_v(const hpmg_sem_element *el, const int m,
                                                                   const vd *dv, const vd *restrict U,
                                                                   vd *restrict Y) {
  const int n = m + 2, p = m + 1, n2 = n * n;
  const double *M = el->M, *L = el->L;
  const double L00 = L[0], L0p = L[p], Lp0 = L[p * n], Lpp = L[p * n + p];
  const int *bmap = el->bmap;
  for (int k = 0; k < el->nb; k++) Y[bmap[k]] = dv[0] * el->mb[k] * U[bmap[k]];
#define END(i) ((i) == 0 || (i) == p)
  for (int i3 = 0; i3 < n; i3++) {
    const vd *up = U + i3 * n2;
    vd *yp = Y + i3 * n2;
    for (int i2 = 0; i2 < n; i2++) { /* lines along x1 */
      const vd c = dv[1] * M[i3] * M[i2];
      const vd *ur = up + i2 * n;
      vd *yr = yp + i2 * n;
      if (END(i3) || END(i2)) {
        for (int j = 0; j < n; j++) {
          const vd a = c * ur[j];
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
          const vd c = dv[2] * M[i3] * L[i2 * n + j];
          const vd *uj = up + j * n;
          vd *yr = yp + i2 * n;
          for (int i1 = 0; i1 < n; i1++) yr[i1] += c * M[i1] * uj[i1];
        }
    } else {
      for (int e = 0; e < 2; e++) { /* the two boundary lines i1 = 0, p */
        const int i1 = e ? p : 0;
        const vd c = dv[2] * M[i3] * M[i1];
        for (int i2 = 0; i2 < n; i2++) {
          vd s = {0};
          for (int j = 0; j < n; j++) s += L[i2 * n + j] * up[j * n + i1];
          yp[i2 * n + i1] += c * s;
        }
      }
      for (int i1 = 1; i1 < p; i1++) { /* interior lines: ends only */
        const vd c = dv[2] * M[i3] * M[i1];
        const vd u0 = up[i1], uq = up[p * n + i1];
        yp[i1] += c * (L00 * u0 + L0p * uq);
        yp[p * n + i1] += c * (Lp0 * u0 + Lpp * uq);
      }
    }
    /* lines along x3 whose (i2, i1) is not interior: full products */
    for (int j = 0; j < n; j++) {
      const vd c = dv[3] * L[i3 * n + j];
      const vd *uj = U + j * n2;
      for (int i2 = 0; i2 < n; i2++) {
        const vd cm = c * M[i2];
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
      const vd c = dv[3] * M[i2] * M[i1];
      const int q = i2 * n + i1;
      const vd u0 = U[q], uq = U[p * n2 + q];
      Y[q] += c * (L00 * u0 + L0p * uq);
      Y[p * n2 + q] += c * (Lp0 * u0 + Lpp * uq);
    }
#undef END
}

/* G = c (Sinv (x) Sinv) g for an m x m face block */
static inline __attribute__((always_inline)) void face_to_eigen_v(const hpmg_sem_element *el, const int m, vd c,
                                                                  const vd *restrict g, vd *restrict G,
                                                                  vd *restrict tmp) {
  const double *A = el->Sinv, *AT = el->SinvT;
  for (int r = 0; r < m; r++) { /* tmp = g Sinv^T */
    vd *tr = tmp + r * m;
    for (int k = 0; k < m; k++) tr[k] = (vd){0};
    for (int i = 0; i < m; i++) {
      const vd gi = g[r * m + i];
      for (int k = 0; k < m; k++) tr[k] += gi * AT[i * m + k];
    }
  }
  for (int k = 0; k < m; k++) { /* G = c Sinv tmp */
    vd *Gr = G + k * m;
    for (int t = 0; t < m; t++) Gr[t] = (vd){0};
    for (int r = 0; r < m; r++) {
      const vd a = c * A[k * m + r];
      for (int t = 0; t < m; t++) Gr[t] += a * tmp[r * m + t];
    }
  }
}

/* y -= c (Sinv^T (x) Sinv^T) C for an m x m face block */
static inline __attribute__((always_inline)) void eigen_to_face_v(const hpmg_sem_element *el, const int m, vd c,
                                                                  const vd *restrict C, vd *restrict y,
                                                                  vd *restrict tmp) {
  const double *A = el->Sinv;
  for (int i = 0; i < m; i++) { /* tmp = Sinv^T C */
    vd *tr = tmp + i * m;
    for (int t = 0; t < m; t++) tr[t] = (vd){0};
    for (int k = 0; k < m; k++) {
      const double a = A[k * m + i];
      for (int t = 0; t < m; t++) tr[t] += a * C[k * m + t];
    }
  }
  for (int i = 0; i < m; i++) /* y -= c tmp Sinv */
    for (int l = 0; l < m; l++) {
      const vd a = c * tmp[i * m + l];
      const double *Al = A + l * m;
      vd *yr = y + i * m;
      for (int j = 0; j < m; j++) yr[j] -= a * Al[j];
    }
}

static inline __attribute__((always_inline)) void condensed_apply_v(const hpmg_sem_element *el, const int m,
                                                                    const double *d, const double *uBd,
                                                                    double *yBd, double *work) {
  const int mf = m * m, ni = m * m * m, nloc = (m + 2) * (m + 2) * (m + 2);
  const vd *uB = (const vd *)uBd;
  vd *yB = (vd *)yBd;
  vd *U = (vd *)work, *Y = U + nloc, *E = Y + nloc;
  vd *G0 = E + ni, *G1 = G0 + mf, *tmp = G1 + mf;
  const double *a0 = el->a[0], *a1 = el->a[1], *lam = el->lam;
  const vd dv[4] = {((const vd *)d)[0], ((const vd *)d)[1], ((const vd *)d)[2], ((const vd *)d)[3]};
  const int *bmap = el->bmap;

  /* difference form: Hhat (uB - l) + Hhat l, l the multilinear interpolant
   * of the vertex values around their mean cs (sem_element.c) */
  const int nb = el->nb;
  const vd cs = 0.125 * (((uB[0] + uB[1]) + (uB[2] + uB[3])) + ((uB[4] + uB[5]) + (uB[6] + uB[7])));
  vd uv[8], dl[8];
  for (int v = 0; v < 8; v++) {
    uv[v] = uB[v];
    dl[v] = uB[v] - cs;
  }

  /* H_BB (uB - l) + d0 w_B l + the fluxes of l */
  for (int k = 0; k < nb; k++) {
    const double *ph = el->phi + k * 8;
    vd l = {0};
    for (int v = 0; v < 8; v++) l += dl[v] * ph[v];
    U[bmap[k]] = (uB[k] - cs) - l;
    yB[k] = cs + l;
  }
  boundary_block_v(el, m, dv, U, Y);
  for (int k = 0; k < nb; k++) {
    vd y = Y[bmap[k]] + dv[0] * el->mb[k] * yB[k];
    for (int dd = 0; dd < 3; dd++) {
      const double *q = el->dphi + ((size_t)dd * nb + k) * 8;
      vd f = {0};
      for (int v = 0; v < 8; v++) f += q[v] * dl[v];
      y += dv[dd + 1] * f;
    }
    yB[k] = y;
  }
  vd *ub = Y; /* uB - l in boundary order (faces only) */
  for (int k = el->face_offset; k < nb; k++) ub[k] = U[bmap[k]];

  /* - H_BI H_II^{-1} (H_IB (uB - l) + d0 w_I l) */
  for (int q = 0; q < ni; q++) E[q] = (vd){0};
  for (int dir = 0; dir < 3; dir++) {
    const int inner = dir == 0 ? 1 : dir == 1 ? m : m * m, outer = mf / inner;
    const vd *g = ub + el->face_offset + 2 * dir * mf;
    face_to_eigen_v(el, m, dv[dir + 1], g, G0, tmp);
    face_to_eigen_v(el, m, dv[dir + 1], g + mf, G1, tmp);
    for (int o = 0; o < outer; o++)
      for (int k = 0; k < m; k++) {
        vd *e = E + ((size_t)o * m + k) * inner;
        const vd *g0 = G0 + o * inner, *g1 = G1 + o * inner;
        const double b0 = a0[k], b1 = a1[k];
        for (int t = 0; t < inner; t++) e[t] += b0 * g0[t] + b1 * g1[t];
      }
  }
  int mass = 0;
  for (int l = 0; l < W; l++) mass |= dv[0][l] != 0.0;
  if (mass) { /* E += d0 sum_v u_v sv[v_3] (x) sv[v_2] (x) sv[v_1] */
    for (int k3 = 0; k3 < m; k3++)
      for (int k2 = 0; k2 < m; k2++) {
        vd *e = E + (k3 * m + k2) * m;
        for (int k1 = 0; k1 < m; k1++) {
          vd t = {0};
          for (int v = 0; v < 8; v++) {
            const double f = el->sv[(v >> 2) & 1][k3] * el->sv[(v >> 1) & 1][k2];
            t += uv[v] * f * el->sv[v & 1][k1];
          }
          e[k1] += dv[0] * t;
        }
      }
  }
  for (int k3 = 0; k3 < m; k3++) /* divide_eigen */
    for (int k2 = 0; k2 < m; k2++) {
      const vd c = dv[0] + dv[2] * lam[k2] + dv[3] * lam[k3];
      vd *e = E + (k3 * m + k2) * m;
      for (int k1 = 0; k1 < m; k1++) e[k1] /= c + dv[1] * lam[k1];
    }
  for (int dir = 0; dir < 3; dir++) {
    const int inner = dir == 0 ? 1 : dir == 1 ? m : m * m, outer = mf / inner;
    for (int q = 0; q < 2 * mf; q++) G0[q] = (vd){0};
    for (int o = 0; o < outer; o++)
      for (int k = 0; k < m; k++) {
        const vd *e = E + ((size_t)o * m + k) * inner;
        vd *g0 = G0 + o * inner, *g1 = G1 + o * inner;
        const double b0 = a0[k], b1 = a1[k];
        for (int t = 0; t < inner; t++) {
          g0[t] += b0 * e[t];
          g1[t] += b1 * e[t];
        }
      }
    vd *y = yB + el->face_offset + 2 * dir * mf;
    eigen_to_face_v(el, m, dv[dir + 1], G0, y, tmp);
    eigen_to_face_v(el, m, dv[dir + 1], G1, y + mf, tmp);
  }
}

#define CASE(M)                                       \
  case M:                                             \
    condensed_apply_v(el, M, d, uB, yB, work);        \
    return;

static void condensed_apply_batch(const hpmg_sem_element *el, const double *d, const double *uB, double *yB,
                                  double *work) {
  switch (el->m) { /* p = 2, 4, 6, 8, 12, 16, 24, 32 */
    CASE(1)
    CASE(3)
    CASE(5)
    CASE(7)
    CASE(11)
    CASE(15)
    CASE(23)
    CASE(31)
  default:
    condensed_apply_v(el, el->m, d, uB, yB, work);
    return;
  }
}
#undef CASE

/* face_apply of sem_pmg.c (a 2D transform of one face), lanes interleaved */
static inline __attribute__((always_inline)) void face_apply_v(const double *B, const int rows, const int cols,
                                                               const vd *restrict in, vd *restrict out,
                                                               vd *restrict tmp) {
  for (int r = 0; r < cols; r++) /* tmp[r][b] = sum_a in[r][a] B[b][a] */
    for (int b = 0; b < rows; b++) {
      vd s = {0};
      for (int a = 0; a < cols; a++) s += B[b * cols + a] * in[r * cols + a];
      tmp[r * rows + b] = s;
    }
  for (int b2 = 0; b2 < rows; b2++) { /* out[b2][b] = sum_r B[b2][r] tmp[r][b] */
    vd *o = out + b2 * rows;
    for (int b = 0; b < rows; b++) o[b] = (vd){0};
    for (int r = 0; r < cols; r++) {
      const double w = B[b2 * cols + r];
      const vd *t = tmp + r * rows;
      for (int b = 0; b < rows; b++) o[b] += w * t[b];
    }
  }
}

#define FCASE(R, C)                                                                \
  if (rows == R && cols == C) {                                                    \
    face_apply_v(B, R, C, (const vd *)in, (vd *)out, (vd *)tmp);                   \
    return;                                                                        \
  }

static void face_apply_batch(const double *B, int rows, int cols, const double *in, double *out, double *tmp) {
  /* prolongation and restriction between p = 2, 4, 8 (n = 3, 5, 9) */
  FCASE(5, 3)
  FCASE(3, 5)
  FCASE(9, 5)
  FCASE(5, 9)
  face_apply_v(B, rows, cols, (const vd *)in, (vd *)out, (vd *)tmp);
}
#undef FCASE

const hpmg_sem_kernels HPMG_ISA_DEFINE(hpmg_sem_kernels) = {
    .lanes = W, .condensed_apply = condensed_apply_batch, .face_apply = face_apply_batch};
