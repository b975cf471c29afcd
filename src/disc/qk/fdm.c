/* Fast-diagonalization local solver of the vertex-patch smoother: setup of the
 * 1D patch factors, dense references, and the kernels of fdm_kernels.inc
 * instantiated in double and float. */
#include <lapacke.h>
#include <math.h>
#include <string.h>
#include "core/par.h"
#include "fem/fem.h"
#include "core/simd.h"
#include "disc/qk/fdm.h"

#define FDM_CAT(a, b) FDM_CAT_(a, b)
#define FDM_CAT_(a, b) a##_##b

#define REAL double
#define FDM_SFX d
#define FDM_DATA dbl
#define FDM_DATA_T hpmg_fdm_data_d
#include "fdm_kernels.inc"
#undef REAL
#undef FDM_SFX
#undef FDM_DATA
#undef FDM_DATA_T

#define REAL float
#define FDM_SFX f
#define FDM_DATA flt
#define FDM_DATA_T hpmg_fdm_data_f
#include "fdm_kernels.inc"
#undef REAL
#undef FDM_SFX
#undef FDM_DATA
#undef FDM_DATA_T

size_t hpmg_fdm_1d_len(int k) {
  const size_t m = (size_t)(2 * k - 1), n = (size_t)(2 * k + 1);
  return 4 * m * m + 4 * m * n + m;
}

/* Lay out the factors in one block: the dim one-direction blocks, then dinv. */
static void fdm_layout(hpmg_fdm *f) {
  const size_t l1 = hpmg_fdm_1d_len(f->k);
  for (int d = 0; d < f->dim; d++) {
    HPMG_FDM_LAYOUT_1D(f->dbl, d, f->block_d + d * l1, f->m, f->n);
    HPMG_FDM_LAYOUT_1D(f->flt, d, f->block_f + d * l1, f->m, f->n);
  }
  f->dbl.dinv = f->block_d + f->dim * l1;
  f->flt.dinv = f->block_f + f->dim * l1;
}

void hpmg_fdm_free(hpmg_fdm *f) {
  if (!f) return;
  hpmg_free(&f->block_d);
  hpmg_free(&f->block_f);
  memset(f, 0, sizeof *f);
}

/* 1D matrices of one direction: closed-patch assembly over the cells present
 * (width hl left of the vertex, hr right of it; 0: absent), then the interior
 * block, the interior rows, and the M-orthonormal eigenvectors. Local
 * unknowns that lie in an absent cell (the half patch of a Neumann end) are
 * decoupled placeholders: identity rows in M, K and S, eigenvalue 1, zero rows
 * in Mb, Kb, so every product keeps exact zeros between them and the real
 * unknowns. D holds direction d's factors in double. */
static hpmg_error setup_direction(int k, double hl, double hr, const hpmg_fdm_data_d *D, int d, double *work) {
  const int m = 2 * k - 1, n = 2 * k + 1, ne = k + 1;
  double Me[(HPMG_FDM_MAX_DEGREE + 1) * (HPMG_FDM_MAX_DEGREE + 1)];
  double Ke[(HPMG_FDM_MAX_DEGREE + 1) * (HPMG_FDM_MAX_DEGREE + 1)];
  double *Mc = work, *Kc = work + n * n, *B = work + 2 * n * n;
  memset(Mc, 0, sizeof(double) * 2 * n * n);
  for (int c = 0; c < 2; c++) {
    const double h = c ? hr : hl;
    if (h == 0) continue;
    if (c == 0 || hr != hl) { /* one pair of element matrices when both widths agree */
      hpmg_element_mass(k, h, Me);
      hpmg_element_stiffness(k, h, Ke);
    }
    for (int a = 0; a < ne; a++)
      for (int b = 0; b < ne; b++) {
        Mc[(c * k + a) * n + c * k + b] += Me[a * ne + b];
        Kc[(c * k + a) * n + c * k + b] += Ke[a * ne + b];
      }
  }
  /* the real unknowns: interior indices lo..hi-1 */
  const int lo = hl == 0 ? k - 1 : 0, hi = hr == 0 ? k : m, ma = hi - lo;
  memset(D->M[d], 0, sizeof(double) * m * m);
  memset(D->K[d], 0, sizeof(double) * m * m);
  memset(D->S[d], 0, sizeof(double) * m * m);
  for (int i = 0; i < m; i++) {
    const int real = i >= lo && i < hi;
    for (int j = 0; j < m; j++) {
      if (!real || j < lo || j >= hi) continue;
      D->M[d][i * m + j] = Mc[(i + 1) * n + j + 1];
      D->K[d][i * m + j] = Kc[(i + 1) * n + j + 1];
    }
    if (!real) D->M[d][i * m + i] = D->K[d][i * m + i] = D->S[d][i * m + i] = 1;
    for (int j = 0; j < n; j++) {
      D->Mb[d][i * n + j] = D->MbT[d][j * m + i] = real ? Mc[(i + 1) * n + j] : 0;
      D->Kb[d][i * n + j] = D->KbT[d][j * m + i] = real ? Kc[(i + 1) * n + j] : 0;
    }
    if (!real) D->eig[d][i] = 1;
  }
  /* K S = M S Lambda on the real block; dsygv returns S with S^T M S = I,
   * eigenvalues ascending */
  double *Sa = B + m * m, *ea = Sa + m * m;
  for (int i = 0; i < ma; i++)
    for (int j = 0; j < ma; j++) {
      Sa[i * ma + j] = D->K[d][(lo + i) * m + lo + j];
      B[i * ma + j] = D->M[d][(lo + i) * m + lo + j];
    }
  const int bt = hpmg_blas_serial_begin();
  lapack_int info = LAPACKE_dsygv(LAPACK_ROW_MAJOR, 1, 'V', 'U', ma, Sa, ma, B, ma, ea);
  hpmg_blas_serial_end(bt);
  if (info != 0)
    return hpmg_error_set(HPMG_ERR_NUMERIC,
                          "fdm: generalized eigenproblem of the 1D patch matrices failed "
                          "(k=%d, cell widths %g and %g, LAPACKE_dsygv info=%d)", k, hl, hr, (int)info);
  for (int i = 0; i < ma; i++) {
    D->eig[d][lo + i] = ea[i];
    for (int j = 0; j < ma; j++) D->S[d][(lo + i) * m + lo + j] = Sa[i * ma + j];
  }
  for (int i = 0; i < m; i++)
    for (int j = 0; j < m; j++) D->ST[d][j * m + i] = D->S[d][i * m + j];
  return HPMG_SUCCESS;
}

hpmg_error hpmg_fdm_1d_setup(int k, double hl, double hr, double *blk_d, float *blk_f) {
  HPMG_CHECK_ARG(blk_d != NULL && blk_f != NULL, "fdm: NULL argument");
  HPMG_CHECK_ARG(k >= 1 && k <= HPMG_FDM_MAX_DEGREE, "fdm: degree %d not supported (1..%d)", k,
                 HPMG_FDM_MAX_DEGREE);
  HPMG_CHECK_ARG(isfinite(hl) && isfinite(hr) && hl >= 0 && hr >= 0 && hl + hr > 0,
                 "fdm: cell widths %g and %g around a patch vertex must be positive (0: no cell)", hl, hr);
  const int m = 2 * k - 1, n = 2 * k + 1;
  hpmg_fdm_data_d D;
  HPMG_FDM_LAYOUT_1D(D, 0, blk_d, m, n);
  double work[5 * (2 * HPMG_FDM_MAX_DEGREE + 1) * (2 * HPMG_FDM_MAX_DEGREE + 1)];
  HPMG_CALL(setup_direction(k, hl, hr, &D, 0, work));
  const size_t len = hpmg_fdm_1d_len(k);
  for (size_t i = 0; i < len; i++) blk_f[i] = (float)blk_d[i];
  return HPMG_SUCCESS;
}

void hpmg_fdm_view(const hpmg_fdm *shape, const double *const blk_d[3], const float *const blk_f[3], hpmg_fdm *v) {
  v->dim = shape->dim;
  v->k = shape->k;
  v->m = shape->m;
  v->n = shape->n;
  v->nloc = shape->nloc;
  v->nclosed = shape->nclosed;
  v->lambda = shape->lambda;
  for (int d = 0; d < v->dim; d++) {
    if (blk_d) HPMG_FDM_LAYOUT_1D(v->dbl, d, (double *)blk_d[d], v->m, v->n);
    if (blk_f) HPMG_FDM_LAYOUT_1D(v->flt, d, (float *)blk_f[d], v->m, v->n);
  }
}

/* D^{-1} from the directions' eigenvalues, in the order hpmg_fdm_setup adds them */
static inline double fdm_dinv_entry(const hpmg_fdm_data_d *D, int dim, double lambda, int i0, int i1, int i2) {
  double s = lambda + D->eig[0][i0] + D->eig[1][i1];
  if (dim == 3) s += D->eig[2][i2];
  return 1.0 / s;
}

void hpmg_fdm_view_dinv_d(hpmg_fdm *v, double *dinv) {
  const int m = v->m, mz = v->dim == 3 ? m : 1;
  int i = 0;
  for (int i2 = 0; i2 < mz; i2++)
    for (int i1 = 0; i1 < m; i1++)
      for (int i0 = 0; i0 < m; i0++) dinv[i++] = fdm_dinv_entry(&v->dbl, v->dim, v->lambda, i0, i1, i2);
  v->dbl.dinv = dinv;
}

void hpmg_fdm_view_dinv_f(hpmg_fdm *v, const double *const blk_d[3], float *dinv) {
  hpmg_fdm_data_d D;
  memset(&D, 0, sizeof D); /* dim >= 2 fills what is read; GCC 13 cannot tell */
  for (int d = 0; d < v->dim; d++) HPMG_FDM_LAYOUT_1D(D, d, (double *)blk_d[d], v->m, v->n);
  const int m = v->m, mz = v->dim == 3 ? m : 1;
  int i = 0;
  for (int i2 = 0; i2 < mz; i2++)
    for (int i1 = 0; i1 < m; i1++)
      for (int i0 = 0; i0 < m; i0++) dinv[i++] = (float)fdm_dinv_entry(&D, v->dim, v->lambda, i0, i1, i2);
  v->flt.dinv = dinv;
}

hpmg_error hpmg_fdm_setup(int dim, int k, const double h[3], double lambda, hpmg_fdm *f) {
  HPMG_CHECK_ARG(f != NULL && h != NULL, "fdm: NULL argument");
  memset(f, 0, sizeof *f);
  HPMG_CHECK_ARG(dim == 2 || dim == 3, "fdm: dimension %d not supported (2 or 3)", dim);
  HPMG_CHECK_ARG(k >= 1 && k <= HPMG_FDM_MAX_DEGREE, "fdm: degree %d not supported (1..%d)", k,
                 HPMG_FDM_MAX_DEGREE);
  for (int d = 0; d < dim; d++)
    HPMG_CHECK_ARG(isfinite(h[d]) && h[d] > 0, "fdm: cell size h[%d] = %g must be positive", d,
                   h[d]);
  HPMG_CHECK_ARG(isfinite(lambda) && lambda >= 0, "fdm: lambda = %g must be >= 0", lambda);

  f->dim = dim;
  f->k = k;
  f->m = 2 * k - 1;
  f->n = 2 * k + 1;
  f->nloc = dim == 2 ? f->m * f->m : f->m * f->m * f->m;
  f->nclosed = dim == 2 ? f->n * f->n : f->n * f->n * f->n;
  f->lambda = lambda;
  for (int d = 0; d < 3; d++) f->h[d] = d < dim ? h[d] : 0.0;

  const size_t len = dim * hpmg_fdm_1d_len(k) + (size_t)f->nloc;
  f->block_len = len;
  hpmg_error err = hpmg_calloc(len * sizeof(double), &f->block_d);
  if (!err) err = hpmg_calloc(len * sizeof(float), &f->block_f);
  if (err) {
    hpmg_fdm_free(f);
    return err;
  }
  fdm_layout(f);

  double work[5 * (2 * HPMG_FDM_MAX_DEGREE + 1) * (2 * HPMG_FDM_MAX_DEGREE + 1)];
  for (int d = 0; d < dim; d++) {
    err = setup_direction(k, h[d], h[d], &f->dbl, d, work);
    if (err) {
      hpmg_fdm_free(f);
      return err;
    }
  }
  /* S^T A_j S = sum_d Lambda_d (Kronecker-summed) + lambda I: invert the diagonal */
  const int m = f->m;
  for (int i = 0; i < f->nloc; i++) {
    int i0 = i % m, i1 = (i / m) % m, i2 = i / (m * m);
    double s = lambda + f->dbl.eig[0][i0] + f->dbl.eig[1][i1];
    if (dim == 3) s += f->dbl.eig[2][i2];
    if (!(s > 0)) {
      hpmg_fdm_free(f);
      return hpmg_error_set(HPMG_ERR_NUMERIC, "fdm: patch matrix not positive definite (k=%d)", k);
    }
    f->dbl.dinv[i] = 1.0 / s;
  }
  for (size_t i = 0; i < len; i++) f->block_f[i] = (float)f->block_d[i];
  return HPMG_SUCCESS;
}

size_t hpmg_fdm_work_size(const hpmg_fdm *f) {
  size_t m = (size_t)f->m, n = (size_t)f->n;
  size_t apply = 2 * (size_t)f->nloc;
  size_t abar = f->dim == 2 ? 2 * n * m : 2 * n * n * m + 2 * n * m * m;
  return apply > abar ? apply : abar;
}

void hpmg_fdm_dense_matrix(const hpmg_fdm *f, double *A) {
  const int m = f->m, N = f->nloc, dim = f->dim;
  const hpmg_fdm_data_d *D = &f->dbl;
  for (int row = 0; row < N; row++) {
    int ii[3] = {row % m, (row / m) % m, row / (m * m)};
    for (int col = 0; col < N; col++) {
      int jj[3] = {col % m, (col / m) % m, col / (m * m)};
      double mass[3], stiff[3];
      for (int d = 0; d < dim; d++) {
        mass[d] = D->M[d][ii[d] * m + jj[d]];
        stiff[d] = D->K[d][ii[d] * m + jj[d]];
      }
      double v;
      if (dim == 2)
        v = stiff[1] * mass[0] + mass[1] * stiff[0] + f->lambda * mass[1] * mass[0];
      else
        v = stiff[2] * mass[1] * mass[0] + mass[2] * stiff[1] * mass[0] +
            mass[2] * mass[1] * stiff[0] + f->lambda * mass[2] * mass[1] * mass[0];
      A[(size_t)row * N + col] = v;
    }
  }
}

hpmg_error hpmg_fdm_dense_inverse(const hpmg_fdm *f, double *Ainv) {
  HPMG_CHECK_ARG(f != NULL && Ainv != NULL && f->dbl.M[0] != NULL, "fdm: dense inverse of an "
                 "unset factorization");
  const int N = f->nloc;
  hpmg_fdm_dense_matrix(f, Ainv);
  /* A is symmetric, so its row-major lower triangle is the column-major upper
   * one: calling the column-major routines avoids LAPACKE's transposed copy. */
  const int bt = hpmg_blas_serial_begin();
  lapack_int info = LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'U', N, Ainv, N);
  if (info == 0) info = LAPACKE_dpotri(LAPACK_COL_MAJOR, 'U', N, Ainv, N);
  hpmg_blas_serial_end(bt);
  if (info != 0)
    return hpmg_error_set(HPMG_ERR_NUMERIC,
                          "fdm: Cholesky inverse of the %dx%d patch matrix failed (info=%d)", N, N,
                          (int)info);
  for (int i = 0; i < N; i++) /* dpotri fills that triangle only */
    for (int j = i + 1; j < N; j++) Ainv[(size_t)i * N + j] = Ainv[(size_t)j * N + i];
  return HPMG_SUCCESS;
}
