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

/* the condensed operator and its helpers (boundary_shift, divide_eigen,
 * boundary_block, face_to_eigen, eigen_to_face, condensed_apply) for one
 * element; sem_kernels.c includes the same source for a batch of elements */
static inline int sem_dim(const hpmg_sem_element *el) { return el->dim; }
#define SEM_T double
#define SEM_FN(name) name
#define SEM_DIM(el) sem_dim(el)
#define SEM_ZERO 0.0
#define SEM_NONZERO(x) ((x) != 0.0)
#include "sem_condensed.inc"

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
  divide_eigen(el, m, d, B[k ^ 1]);
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
  /* difference form (condensed_apply, sem_condensed.inc): u_I = c + H_II^{-1} (F_I -
   * H_IB (u_B - c) - d0 w_I c), c the mean of the vertex values; the
   * stiffness annihilates constants, so H_IB 1 = -H_II 1 + d0 w_I */
  const double c = boundary_shift(el->dim, uB);
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
