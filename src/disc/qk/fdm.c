/* Fast-diagonalization local solver of the vertex-patch smoother: setup of the
 * 1D patch factors, dense references, and the kernels of fdm_kernels.inc
 * instantiated in double and float. */
#include <lapacke.h>
#include <math.h>
#include <string.h>
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

/* Lay out the factors in one block (same offsets in both precisions). Returns
 * the number of entries; with base == NULL only counts. */
#define FDM_LAYOUT(D, base, dim, m, n, nloc, len)                                    \
  do {                                                                               \
    size_t off_ = 0;                                                                 \
    for (int d_ = 0; d_ < (dim); d_++) {                                             \
      (D).M[d_] = (base) ? (base) + off_ : NULL; off_ += (size_t)(m) * (m);          \
      (D).K[d_] = (base) ? (base) + off_ : NULL; off_ += (size_t)(m) * (m);          \
      (D).Mb[d_] = (base) ? (base) + off_ : NULL; off_ += (size_t)(m) * (n);         \
      (D).Kb[d_] = (base) ? (base) + off_ : NULL; off_ += (size_t)(m) * (n);         \
      (D).MbT[d_] = (base) ? (base) + off_ : NULL; off_ += (size_t)(m) * (n);        \
      (D).KbT[d_] = (base) ? (base) + off_ : NULL; off_ += (size_t)(m) * (n);        \
      (D).S[d_] = (base) ? (base) + off_ : NULL; off_ += (size_t)(m) * (m);          \
      (D).ST[d_] = (base) ? (base) + off_ : NULL; off_ += (size_t)(m) * (m);         \
      (D).eig[d_] = (base) ? (base) + off_ : NULL; off_ += (size_t)(m);              \
    }                                                                                \
    (D).dinv = (base) ? (base) + off_ : NULL; off_ += (size_t)(nloc);                \
    (len) = off_;                                                                    \
  } while (0)

void hpmg_fdm_free(hpmg_fdm *f) {
  if (!f) return;
  hpmg_free(&f->block_d);
  hpmg_free(&f->block_f);
  memset(f, 0, sizeof *f);
}

/* 1D matrices of one direction: closed-patch assembly over 2 cells, then the
 * interior block, the interior rows, and the M-orthonormal eigenvectors. */
static hpmg_error setup_direction(int k, double h, const hpmg_fdm *f, int d, double *work) {
  const int m = 2 * k - 1, n = 2 * k + 1, ne = k + 1;
  const hpmg_fdm_data_d *D = &f->dbl;
  double Me[(HPMG_FDM_MAX_DEGREE + 1) * (HPMG_FDM_MAX_DEGREE + 1)];
  double Ke[(HPMG_FDM_MAX_DEGREE + 1) * (HPMG_FDM_MAX_DEGREE + 1)];
  hpmg_element_mass(k, h, Me);
  hpmg_element_stiffness(k, h, Ke);
  double *Mc = work, *Kc = work + n * n, *B = work + 2 * n * n;
  memset(Mc, 0, sizeof(double) * 2 * n * n);
  for (int c = 0; c < 2; c++)
    for (int a = 0; a < ne; a++)
      for (int b = 0; b < ne; b++) {
        Mc[(c * k + a) * n + c * k + b] += Me[a * ne + b];
        Kc[(c * k + a) * n + c * k + b] += Ke[a * ne + b];
      }
  for (int i = 0; i < m; i++) {
    for (int j = 0; j < m; j++) {
      D->M[d][i * m + j] = Mc[(i + 1) * n + j + 1];
      D->K[d][i * m + j] = Kc[(i + 1) * n + j + 1];
    }
    for (int j = 0; j < n; j++) {
      D->Mb[d][i * n + j] = D->MbT[d][j * m + i] = Mc[(i + 1) * n + j];
      D->Kb[d][i * n + j] = D->KbT[d][j * m + i] = Kc[(i + 1) * n + j];
    }
  }
  /* K S = M S Lambda; dsygv returns S with S^T M S = I, eigenvalues ascending */
  memcpy(D->S[d], D->K[d], sizeof(double) * m * m);
  memcpy(B, D->M[d], sizeof(double) * m * m);
  lapack_int info = LAPACKE_dsygv(LAPACK_ROW_MAJOR, 1, 'V', 'U', m, D->S[d], m, B, m, D->eig[d]);
  if (info != 0)
    return hpmg_error_set(HPMG_ERR_NUMERIC,
                          "fdm: generalized eigenproblem of the 1D patch matrices failed "
                          "(k=%d, h=%g, LAPACKE_dsygv info=%d)", k, h, (int)info);
  for (int i = 0; i < m; i++)
    for (int j = 0; j < m; j++) D->ST[d][j * m + i] = D->S[d][i * m + j];
  return HPMG_SUCCESS;
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

  size_t len;
  double *nul = NULL;
  FDM_LAYOUT(f->dbl, nul, dim, f->m, f->n, f->nloc, len);
  f->block_len = len;
  hpmg_error err = hpmg_calloc(len * sizeof(double), &f->block_d);
  if (!err) err = hpmg_calloc(len * sizeof(float), &f->block_f);
  if (err) {
    hpmg_fdm_free(f);
    return err;
  }
  FDM_LAYOUT(f->dbl, f->block_d, dim, f->m, f->n, f->nloc, len);
  FDM_LAYOUT(f->flt, f->block_f, dim, f->m, f->n, f->nloc, len);

  double work[3 * (2 * HPMG_FDM_MAX_DEGREE + 1) * (2 * HPMG_FDM_MAX_DEGREE + 1)];
  for (int d = 0; d < dim; d++) {
    err = setup_direction(k, h[d], f, d, work);
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
  HPMG_CHECK_ARG(f != NULL && Ainv != NULL && f->block_d != NULL, "fdm: dense inverse of an "
                 "unset factorization");
  const int N = f->nloc;
  hpmg_fdm_dense_matrix(f, Ainv);
  /* A is symmetric, so its row-major lower triangle is the column-major upper
   * one: calling the column-major routines avoids LAPACKE's transposed copy. */
  lapack_int info = LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'U', N, Ainv, N);
  if (info == 0) info = LAPACKE_dpotri(LAPACK_COL_MAJOR, 'U', N, Ainv, N);
  if (info != 0)
    return hpmg_error_set(HPMG_ERR_NUMERIC,
                          "fdm: Cholesky inverse of the %dx%d patch matrix failed (info=%d)", N, N,
                          (int)info);
  for (int i = 0; i < N; i++) /* dpotri fills that triangle only */
    for (int j = i + 1; j < N; j++) Ainv[(size_t)i * N + j] = Ainv[(size_t)j * N + i];
  return HPMG_SUCCESS;
}
