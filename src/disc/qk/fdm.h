/* Local solvers of the vertex-patch smoother: fast diagonalization (FDM) of the
 * separable patch matrix, and the localized residual on the closed patch.
 *
 * A vertex patch is the 2^d cells around an interior vertex. Per direction it
 * spans 2 cells of length h[d]: the closed patch has n = 2k+1 nodes (closed
 * indices 0..2k), its interior m = 2k-1 nodes (closed indices 1..2k-1).
 * Local arrays are lexicographic with x fastest: interior index
 * i0 + m*(i1 + m*i2), closed index j0 + n*(j1 + n*j2).
 *
 * With 1D patch matrices M_d, K_d (assembled over the 2 cells from the element
 * matrices of src/fem, direction d with cell size h[d]) the interior patch
 * matrix of -Laplace + lambda is (3D; 2D drops the third factor)
 *   A_j = K2(x)M1(x)M0 + M2(x)K1(x)M0 + M2(x)M1(x)K0 + lambda M2(x)M1(x)M0.
 * The 1D generalized eigenproblems K_d S_d = M_d S_d Lambda_d with
 * S_d^T M_d S_d = I give S^T A_j S = D, S = S2(x)S1(x)S0,
 * D = Lambda2(x)I(x)I + I(x)Lambda1(x)I + I(x)I(x)Lambda0 + lambda I, hence
 *   A_j^{-1} = S D^{-1} S^T,
 * applied by sum factorization. On a uniform mesh with constant coefficients
 * every patch of a level has the same A_j: one hpmg_fdm serves them all.
 *
 * On a general box (grid.h: cell widths per direction, Neumann and periodic
 * ends) a patch's 1D matrices in direction d depend only on the widths hl, hr
 * of the two cells around its vertex; the patch of a vertex on a Neumann end
 * is a half patch (one cell, width 0 on the missing side) whose local space
 * includes the end node. Each direction's factors are set up once per
 * distinct (hl, hr) (hpmg_fdm_1d_setup), a patch's hpmg_fdm is a view onto
 * its directions' factors (hpmg_fdm_view), and D^{-1} is formed per patch from
 * the directions' eigenvalues (hpmg_fdm_view_dinv_*). A half patch keeps the
 * (2k-1)^d local layout: its k-1 positions in the missing cell are decoupled
 * placeholders (identity in M, K, S; zero rows in Mb, Kb), so the kernels run
 * unchanged and keep exact zeros there for a zero right-hand side.
 *
 * The rectangular operator Abar (rows: interior nodes, columns: closed patch)
 * is the same Kronecker sum built from the m x n rows of the 1D patch
 * matrices. For x_closed holding the global values on the closed patch
 * (0 on Dirichlet boundary nodes), Abar x_closed equals the global A x
 * restricted to the patch interior, because every interior basis function of
 * the patch is supported inside it. */
#ifndef HPMG_SMOOTHERS_FDM_H
#define HPMG_SMOOTHERS_FDM_H

#include <stddef.h>
#include "core/core.h"

#define HPMG_FDM_MAX_DEGREE 10

/* Factors in one precision. All matrices row-major, one per direction d < dim. */
#define HPMG_FDM_DATA_FIELDS(REAL)                                                   \
  REAL *M[3], *K[3];     /* m x m interior 1D patch mass / stiffness */              \
  REAL *Mb[3], *Kb[3];   /* m x n: interior rows, closed-patch columns */            \
  REAL *MbT[3], *KbT[3]; /* n x m transposes of Mb, Kb */                            \
  REAL *S[3], *ST[3];    /* m x m: S[i*m+j] = component i of eigenvector j; S^T */   \
  REAL *eig[3];          /* m generalized eigenvalues, ascending */                  \
  REAL *dinv;            /* m^dim: 1/(sum_d eig_d[i_d] + lambda), x fastest */

/* Point the direction-d factors of D (an HPMG_FDM_DATA_FIELDS struct of
 * any entry type) at the one-direction block at base (hpmg_fdm_1d_len
 * entries): M, K, Mb, Kb, MbT, KbT, S, ST, eig. */
#define HPMG_FDM_LAYOUT_1D(D, d_, base, m, n)                                        \
  do {                                                                               \
    size_t off_ = 0;                                                                 \
    (D).M[d_] = (base) + off_; off_ += (size_t)(m) * (m);                            \
    (D).K[d_] = (base) + off_; off_ += (size_t)(m) * (m);                            \
    (D).Mb[d_] = (base) + off_; off_ += (size_t)(m) * (n);                           \
    (D).Kb[d_] = (base) + off_; off_ += (size_t)(m) * (n);                           \
    (D).MbT[d_] = (base) + off_; off_ += (size_t)(m) * (n);                          \
    (D).KbT[d_] = (base) + off_; off_ += (size_t)(m) * (n);                          \
    (D).S[d_] = (base) + off_; off_ += (size_t)(m) * (m);                            \
    (D).ST[d_] = (base) + off_; off_ += (size_t)(m) * (m);                           \
    (D).eig[d_] = (base) + off_;                                                     \
  } while (0)

typedef struct { HPMG_FDM_DATA_FIELDS(double) } hpmg_fdm_data_d;
typedef struct { HPMG_FDM_DATA_FIELDS(float) } hpmg_fdm_data_f;

typedef struct {
  int dim, k;
  int m, n;          /* 2k-1 interior and 2k+1 closed nodes per direction */
  int nloc, nclosed; /* m^dim and n^dim */
  double h[3], lambda;
  hpmg_fdm_data_d dbl; /* all pointers into one block each, so a backend can */
  hpmg_fdm_data_f flt; /* copy the factors with one transfer per precision   */
  double *block_d;
  float *block_f;
  size_t block_len;    /* entries of block_d (= entries of block_f) */
} hpmg_fdm;

/* Set up the factors for Q_k, k = 1..HPMG_FDM_MAX_DEGREE, dim = 2 or 3, cell
 * sizes h[0..dim-1] > 0, lambda >= 0. Arguments are checked before anything
 * is allocated; on failure f is left zeroed. */
hpmg_error hpmg_fdm_setup(int dim, int k, const double h[3], double lambda, hpmg_fdm *f);
void hpmg_fdm_free(hpmg_fdm *f);

/* Entries of one direction's factors (M, K, Mb, Kb, MbT, KbT, S, ST, eig as
 * laid out in one block; hpmg_fdm_setup stores dim such blocks, then dinv). */
size_t hpmg_fdm_1d_len(int k);
/* The factors of one direction of a patch whose vertex has a cell of width hl
 * on its left and hr on its right (0: no cell there, the half patch of a
 * Neumann end; not both 0), in double (blk_d) and float (blk_f), each
 * hpmg_fdm_1d_len(k) entries. hl = hr = h gives bitwise hpmg_fdm_setup's. */
hpmg_error hpmg_fdm_1d_setup(int k, double hl, double hr, double *blk_d, float *blk_f);
/* A factorization viewing per-direction blocks of hpmg_fdm_1d_setup (blk_d
 * and/or blk_f may be NULL: that precision is not set): sizes and lambda from
 * shape, nothing owned (never hpmg_fdm_free a view). dinv is set by: */
void hpmg_fdm_view(const hpmg_fdm *shape, const double *const blk_d[3], const float *const blk_f[3], hpmg_fdm *v);
/* D^{-1} of the view into dinv (nloc entries, caller's), summing the
 * eigenvalues in hpmg_fdm_setup's order; float: from the double blocks. */
void hpmg_fdm_view_dinv_d(hpmg_fdm *v, double *dinv);
void hpmg_fdm_view_dinv_f(hpmg_fdm *v, const double *const blk_d[3], float *dinv);

/* Scratch entries (of the kernel's precision) that apply, residual and
 * local_update need; one buffer per thread. */
size_t hpmg_fdm_work_size(const hpmg_fdm *f);

/* y = A_j^{-1} r on the interior (nloc values). y may equal r. */
void hpmg_fdm_apply_d(const hpmg_fdm *f, const double *r, double *y, double *work);
void hpmg_fdm_apply_f(const hpmg_fdm *f, const float *r, float *y, float *work);

/* Localized residual r = b - Abar x: x on the closed patch (nclosed values),
 * b and r on the interior (nloc). r may equal b. b == NULL gives r = -Abar x. */
void hpmg_fdm_residual_d(const hpmg_fdm *f, const double *b, const double *x, double *r,
                         double *work);
void hpmg_fdm_residual_f(const hpmg_fdm *f, const float *b, const float *x, float *r,
                         float *work);
/* y = Abar x (x closed, y interior). */
void hpmg_fdm_abar_apply_d(const hpmg_fdm *f, const double *x, double *y, double *work);
void hpmg_fdm_abar_apply_f(const hpmg_fdm *f, const float *x, float *y, float *work);

/* One fused local update of the multiplicative smoother:
 * dx = A_j^{-1} (b - Abar x), with b, dx interior and x closed. dx may equal b. */
void hpmg_fdm_local_update_d(const hpmg_fdm *f, const double *b, const double *x, double *dx,
                             double *work);
void hpmg_fdm_local_update_f(const hpmg_fdm *f, const float *b, const float *x, float *dx,
                             float *work);

/* Dense references (`--local-solver dense`), nloc x nloc row-major:
 * the assembled interior patch matrix A_j, and its explicit inverse computed
 * by Cholesky (LAPACKE dpotrf/dpotri). HPMG_ERR_NUMERIC if not positive definite. */
void hpmg_fdm_dense_matrix(const hpmg_fdm *f, double *A);
hpmg_error hpmg_fdm_dense_inverse(const hpmg_fdm *f, double *Ainv);

#endif
