#include <stdlib.h>
#include <string.h>
#include "laplace.h"

static hpmg_error diagonal_of(const hpmg_sp1d *A, double **dd, float **df) {
  HPMG_CALL(hpmg_malloc(sizeof(double) * (size_t)A->nrows, dd));
  HPMG_CALL(hpmg_malloc(sizeof(float) * (size_t)A->nrows, df));
  for (int i = 0; i < A->nrows; i++) {
    (*dd)[i] = hpmg_sp1d_entry(A, i, i);
    (*df)[i] = (float)(*dd)[i];
  }
  return HPMG_SUCCESS;
}

/* Row sums of the restricted stiffness matrix of direction d: the element
 * rows sum to zero, so only the couplings to the two eliminated boundary
 * nodes remain (taken from single element entries, no cancellation). */
static hpmg_error stiffness_row_sums(const hpmg_grid *g, int d, hpmg_laplace *op) {
  const int64_t n = g->n[d];
  HPMG_CALL(hpmg_calloc(sizeof(double) * (size_t)n, &op->sK[d]));
  HPMG_CALL(hpmg_calloc(sizeof(float) * (size_t)n, &op->sKf[d]));
  if (d >= g->dim) return HPMG_SUCCESS; /* 2D: K_z = [0] */
  const int k = g->k, m = k + 1;
  const int64_t cells = g->cells[d], last = k * cells; /* global index of the right boundary node */
  double Ke[16 * 16];
  hpmg_element_stiffness(k, g->h[d], Ke);
  for (int64_t gi = 1; gi < last; gi++) {
    double s = 0.0;
    if (gi <= k) s -= Ke[gi * m + 0];                              /* couples to node 0 in cell 0 */
    if (gi >= last - k) s -= Ke[(gi - (cells - 1) * k) * m + k];   /* couples to the last node */
    op->sK[d][gi - 1] = s;
    op->sKf[d][gi - 1] = (float)s;
  }
  return HPMG_SUCCESS;
}

hpmg_error hpmg_laplace_create(const hpmg_grid *g, double lambda, hpmg_laplace *op) {
  memset(op, 0, sizeof *op);
  HPMG_CHECK_ARG(lambda >= 0, "lambda must be >= 0 (got %g)", lambda);
  op->g = *g;
  op->lambda = lambda;
  for (int d = 0; d < 3; d++) {
    if (d < g->dim) {
      HPMG_CALL(hpmg_assemble_mass_1d(g->k, (int)g->cells[d], g->h[d], &op->M[d]));
      HPMG_CALL(hpmg_assemble_stiffness_1d(g->k, (int)g->cells[d], g->h[d], &op->K[d]));
    } else { /* 2D: z factor is the 1x1 identity (mass) and zero (stiffness) */
      double one = 1.0, zero = 0.0;
      HPMG_CALL(hpmg_sp1d_from_dense(1, 1, &one, &op->M[d]));
      HPMG_CALL(hpmg_sp1d_from_dense(1, 1, &zero, &op->K[d]));
      HPMG_CALL(hpmg_sp1d_make_banded(&op->M[d]));
      HPMG_CALL(hpmg_sp1d_make_banded(&op->K[d]));
    }
    /* the kernels read M and K through one band width */
    if (op->M[d].bw != op->K[d].bw)
      return hpmg_error_set(HPMG_ERR_NUMERIC, "1D mass and stiffness band widths differ (%d vs %d)",
                            op->M[d].bw, op->K[d].bw);
    HPMG_CALL(diagonal_of(&op->M[d], &op->dM[d], &op->dMf[d]));
    HPMG_CALL(diagonal_of(&op->K[d], &op->dK[d], &op->dKf[d]));
    HPMG_CALL(stiffness_row_sums(g, d, op));
  }
  /* y-tile: keep the z window of 2k+1 input tiles near 1 MiB per thread */
  int64_t nx = g->n[0], ny = g->n[1], bwy = op->M[1].bw;
  int64_t ty = g->dim == 3 ? (int64_t)(1 << 20) / (8 * (2 * g->k + 1) * nx) - 2 * bwy : 16;
  const char *env = getenv("HPMG_TILE"); /* tuning knob for benchmarks */
  if (env && atoi(env) > 0) ty = atoi(env);
  if (ty < 8 && !(env && atoi(env) > 0)) ty = 8;
  if (ty > ny) ty = ny;
  if (ty < 1) ty = 1;
  /* tiles of equal height: the threads split (tile, plane) items in static
   * blocks, so a short last tile would leave a thread idle (2 threads on
   * 127 lines in tiles of 106 + 21: one thread did 5/6 of the work) */
  const int64_t ntiles = (ny + ty - 1) / ty;
  ty = (ny + ntiles - 1) / ntiles;
  op->tile = (int)ty;
  return HPMG_SUCCESS;
}

void hpmg_laplace_destroy(hpmg_laplace *op) {
  for (int d = 0; d < 3; d++) {
    hpmg_sp1d_free(&op->M[d]);
    hpmg_sp1d_free(&op->K[d]);
    hpmg_free(&op->dM[d]);
    hpmg_free(&op->dK[d]);
    hpmg_free(&op->dMf[d]);
    hpmg_free(&op->dKf[d]);
    hpmg_free(&op->sK[d]);
    hpmg_free(&op->sKf[d]);
  }
}

void hpmg_laplace_kernel(const hpmg_laplace *op, hpmg_real r, const hpmg_kernel_args *a) {
  if (op->g.N == 0) return;
  hpmg_laplace_kernels_select()->kernel[r](op, a);
}

void hpmg_laplace_apply(const hpmg_laplace *op, hpmg_real r, const void *x, void *y) {
  hpmg_kernel_args a = {.mode = HPMG_KERNEL_APPLY, .x = x, .y = y};
  hpmg_laplace_kernel(op, r, &a);
}

void hpmg_laplace_residual(const hpmg_laplace *op, hpmg_real r, const void *b, const void *x, void *y) {
  hpmg_kernel_args a = {.mode = HPMG_KERNEL_RESIDUAL, .x = x, .y = y, .b = b};
  hpmg_laplace_kernel(op, r, &a);
}

void hpmg_laplace_inverse_diagonal(const hpmg_laplace *op, hpmg_real r, double c, const void *in,
                                   void *out, void *out2) {
  if (op->g.N == 0) return;
  hpmg_laplace_kernels_select()->inverse_diagonal[r](op, c, in, out, out2);
}

double hpmg_laplace_diagonal(const hpmg_laplace *op, int64_t i0, int64_t i1, int64_t i2) {
  double mx = op->dM[0][i0], my = op->dM[1][i1], mz = op->dM[2][i2];
  return op->dK[0][i0] * my * mz + mx * op->dK[1][i1] * mz + mx * my * op->dK[2][i2] +
         op->lambda * mx * my * mz;
}

void hpmg_laplace_gauss_seidel(const hpmg_laplace *op, hpmg_real r, const void *b, void *x, const int64_t *ord,
                               int reverse) {
  hpmg_laplace_kernels_select()->gauss_seidel[r](op, b, x, ord, reverse);
}

hpmg_error hpmg_laplace_dense(const hpmg_laplace *op, double *A) {
  const hpmg_grid *g = &op->g;
  const int64_t N = g->N, n0 = g->n[0], n1 = g->n[1], n2 = g->n[2];
  double *D[6];
  for (int d = 0; d < 3; d++) {
    HPMG_CALL(hpmg_malloc(sizeof(double) * (size_t)(g->n[d] * g->n[d]), &D[2 * d]));
    HPMG_CALL(hpmg_malloc(sizeof(double) * (size_t)(g->n[d] * g->n[d]), &D[2 * d + 1]));
    hpmg_sp1d_to_dense(&op->M[d], D[2 * d]);
    hpmg_sp1d_to_dense(&op->K[d], D[2 * d + 1]);
  }
  const double *Mx = D[0], *Kx = D[1], *My = D[2], *Ky = D[3], *Mz = D[4], *Kz = D[5];
#pragma omp parallel for
  for (int64_t i = 0; i < N; i++) {
    const int64_t i0 = i % n0, i1 = (i / n0) % n1, i2 = i / (n0 * n1);
    for (int64_t j = 0; j < N; j++) {
      const int64_t j0 = j % n0, j1 = (j / n0) % n1, j2 = j / (n0 * n1);
      const double mx = Mx[i0 * n0 + j0], kx = Kx[i0 * n0 + j0], my = My[i1 * n1 + j1],
                   ky = Ky[i1 * n1 + j1], mz = Mz[i2 * n2 + j2], kz = Kz[i2 * n2 + j2];
      A[i * N + j] = kx * my * mz + mx * ky * mz + mx * my * kz + op->lambda * mx * my * mz;
    }
  }
  for (int d = 0; d < 6; d++) hpmg_free(&D[d]);
  return HPMG_SUCCESS;
}

void hpmg_laplace_xband(const hpmg_laplace *op, int64_t i, int *j0, int *n) {
  int lo = (int)i, hi = (int)i;
  for (int m = 0; m < 2; m++) {
    const hpmg_sp1d *A = m ? &op->K[0] : &op->M[0];
    for (int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
      lo = A->col[p] < lo ? A->col[p] : lo;
      hi = A->col[p] > hi ? A->col[p] : hi;
    }
  }
  *j0 = lo;
  *n = hi - lo + 1;
}

static double flops(const hpmg_laplace *op, int xband) {
  const hpmg_grid *g = &op->g;
  double f = 0.0; /* multiply-adds per unknown, averaged over rows of each 1D matrix */
  for (int d = 0; d < 3; d++) {
    double nnzM = op->M[d].rowptr[op->M[d].nrows] / (double)g->n[d];
    double nnzK = op->K[d].rowptr[op->K[d].nrows] / (double)g->n[d];
    if (d == 0 && !xband) f += 2.0 * (2 * op->M[0].bw + 1);
    else if (d == 0) {
      double nb = 0.0;
      for (int64_t i = 0; i < g->n[0]; i++) {
        int j0, n;
        hpmg_laplace_xband(op, i, &j0, &n);
        nb += n;
      }
      f += 2.0 * nb / (double)g->n[0];
    }
    else if (d == 1) f += (g->dim == 3 ? 2 * nnzM : nnzM) + nnzK + (op->lambda != 0);
    else if (g->dim == 3) f += nnzM + nnzK;
  }
  return 2.0 * f * (double)g->N;
}

double hpmg_laplace_flops(const hpmg_laplace *op) { return flops(op, 0); }
double hpmg_laplace_flops_cpu(const hpmg_laplace *op) { return flops(op, 1); }
