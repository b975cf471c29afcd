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

/* Row sums of the stiffness matrix of direction d (hpmg_stiffness_row_sums_1d) */
static hpmg_error stiffness_row_sums(const hpmg_grid *g, int d, hpmg_laplace *op) {
  const int64_t n = g->n[d];
  HPMG_CALL(hpmg_calloc(sizeof(double) * (size_t)n, &op->sK[d]));
  HPMG_CALL(hpmg_calloc(sizeof(float) * (size_t)n, &op->sKf[d]));
  if (d >= g->dim) return HPMG_SUCCESS; /* 2D: K_z = [0] */
  const hpmg_dir1d L = hpmg_grid_dir(g, d);
  hpmg_stiffness_row_sums_1d(&L, op->sK[d]);
  for (int64_t i = 0; i < n; i++) op->sKf[d][i] = (float)op->sK[d][i];
  return HPMG_SUCCESS;
}

/* direction d's rows for the kernel (laplace.h: hpmg_laplace_rows) */
static hpmg_error rows_of(const hpmg_laplace *op, int d, hpmg_laplace_rows *R) {
  const int64_t n = op->g.n[d];
  const int bw = op->M[d].bw;
  HPMG_CALL(hpmg_malloc(sizeof(int) * (size_t)n, &R->j0));
  HPMG_CALL(hpmg_malloc(sizeof(int) * (size_t)n, &R->n));
  HPMG_CALL(hpmg_malloc(sizeof(int64_t) * (size_t)(n + 1), &R->off));
  R->off[0] = 0;
  for (int64_t i = 0; i < n; i++) {
    hpmg_laplace_band(op, d, i, &R->j0[i], &R->n[i]);
    R->off[i + 1] = R->off[i] + R->n[i];
  }
  HPMG_CALL(hpmg_malloc(sizeof(double) * (size_t)(2 * R->off[n]), &R->c));
  HPMG_CALL(hpmg_malloc(sizeof(float) * (size_t)(2 * R->off[n]), &R->cf));
  for (int64_t i = 0; i < n; i++)
    for (int e = 0; e < R->n[i]; e++) {
      const int64_t o = R->j0[i] + e - i, q = 2 * (R->off[i] + e);
      R->c[q] = op->K[d].dia[(o + bw) * n + i];
      R->c[q + 1] = op->M[d].dia[(o + bw) * n + i];
      R->cf[q] = op->K[d].diaf[(o + bw) * n + i];
      R->cf[q + 1] = op->M[d].diaf[(o + bw) * n + i];
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
      const hpmg_dir1d L = hpmg_grid_dir(g, d);
      HPMG_CALL(hpmg_assemble_1d(&L, 0, &op->M[d], &op->Mw[d]));
      HPMG_CALL(hpmg_assemble_1d(&L, 1, &op->K[d], &op->Kw[d]));
      op->wrap |= op->Mw[d].nrows > 0;
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
  if (op->wrap) { /* the wrap pass's five slab arrays (the largest slab) */
    int64_t mx = 0;
    for (int d = 0; d < g->dim; d++)
      if (op->Mw[d].nrows > 0) mx = g->N / g->n[d] * (g->k + 1) > mx ? g->N / g->n[d] * (g->k + 1) : mx;
    HPMG_CALL(hpmg_malloc(sizeof(double) * (size_t)(5 * mx), &op->wbuf));
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
  const int64_t ntiles = ny > 0 ? (ny + ty - 1) / ty : 1;
  ty = ny > 0 ? (ny + ntiles - 1) / ntiles : 1;
  op->tile = (int)ty;
  for (int d = 0; d < g->dim; d++) /* the rows' structural bands; x: only for the transposed x stage */
    if (d > 0 || op->M[0].bw >= HPMG_LAPLACE_XT_MIN_BW) HPMG_CALL(rows_of(op, d, &op->rows[d]));
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
    hpmg_sp1d_free(&op->Mw[d]);
    hpmg_sp1d_free(&op->Kw[d]);
  }
  hpmg_free(&op->wbuf);
  for (int d = 0; d < 3; d++) {
    hpmg_free(&op->rows[d].j0);
    hpmg_free(&op->rows[d].n);
    hpmg_free(&op->rows[d].off);
    hpmg_free(&op->rows[d].c);
    hpmg_free(&op->rows[d].cf);
  }
}

/* ------------------------------------------- the periodic wrap (laplace.h) */

/* One direction's (M, K) for a row formula: the sum of up to two CSR parts,
 * K in difference form around the row with row sums s (NULL: 0). */
typedef struct {
  const hpmg_sp1d *M[2], *K[2];
  int parts;
  const double *s;
} pair1d;

static inline double ld(hpmg_real r, const void *x, int64_t i) {
  return r == HPMG_REAL_DOUBLE ? ((const double *)x)[i] : (double)((const float *)x)[i];
}

/* x-direction sums of line `base`: sm = (M x)_i0, sk = (K x)_i0 (difference form) */
static void row_x(const pair1d *S, hpmg_real r, const void *x, int64_t base, int64_t i0, double *sm, double *sk) {
  const double xc = ld(r, x, base + i0);
  double m = 0, kk = 0;
  for (int p = 0; p < S->parts; p++) {
    const hpmg_sp1d *M = S->M[p], *K = S->K[p];
    for (int q = M->rowptr[i0]; q < M->rowptr[i0 + 1]; q++) m += M->val[q] * ld(r, x, base + M->col[q]);
    for (int q = K->rowptr[i0]; q < K->rowptr[i0 + 1]; q++) kk += K->val[q] * (ld(r, x, base + K->col[q]) - xc);
  }
  *sm = m;
  *sk = kk + (S->s ? S->s[i0] * xc : 0.0);
}

/* plane j2: ym = (My Mx x), ykm = (My Kx x), yky = (Ky Mx x) at (i0, i1) */
static void row_y(const hpmg_laplace *op, const pair1d S[3], hpmg_real r, const void *x, int64_t i0, int64_t i1,
                  int64_t j2, double *ym, double *ykm, double *yky) {
  const int64_t nx = op->g.n[0], ny = op->g.n[1];
  double smc, skc, sm, sk, a = 0, b = 0, c = 0;
  row_x(&S[0], r, x, (j2 * ny + i1) * nx, i0, &smc, &skc);
  for (int p = 0; p < S[1].parts; p++) {
    const hpmg_sp1d *M = S[1].M[p], *K = S[1].K[p];
    for (int q = M->rowptr[i1]; q < M->rowptr[i1 + 1]; q++) {
      row_x(&S[0], r, x, (j2 * ny + M->col[q]) * nx, i0, &sm, &sk);
      a += M->val[q] * sm;
      b += M->val[q] * sk;
    }
    for (int q = K->rowptr[i1]; q < K->rowptr[i1 + 1]; q++) {
      row_x(&S[0], r, x, (j2 * ny + K->col[q]) * nx, i0, &sm, &sk);
      c += K->val[q] * (sm - smc);
    }
  }
  *ym = a;
  *ykm = b;
  *yky = c + (S[1].s ? S[1].s[i1] * smc : 0.0);
}

/* (A(S0,S1,S2) x)_i of one row, sum-factorized */
static double kron_row(const hpmg_laplace *op, const pair1d S[3], hpmg_real r, const void *x, int64_t i0, int64_t i1,
                       int64_t i2) {
  double ymc, t1, t2, ym, ykm, yky, out = 0;
  row_y(op, S, r, x, i0, i1, i2, &ymc, &t1, &t2);
  for (int p = 0; p < S[2].parts; p++) {
    const hpmg_sp1d *M = S[2].M[p], *K = S[2].K[p];
    for (int q = M->rowptr[i2]; q < M->rowptr[i2 + 1]; q++) {
      row_y(op, S, r, x, i0, i1, M->col[q], &ym, &ykm, &yky);
      out += M->val[q] * (ykm + yky + op->lambda * ym);
    }
    for (int q = K->rowptr[i2]; q < K->rowptr[i2 + 1]; q++) {
      row_y(op, S, r, x, i0, i1, K->col[q], &ym, &ykm, &yky);
      out += K->val[q] * (ym - ymc);
    }
  }
  return out + (S[2].s ? S[2].s[i2] * ymc : 0.0);
}

enum { PAIR_BAND, PAIR_WRAP, PAIR_FULL };
static pair1d pair_of(const hpmg_laplace *op, int d, int kind) {
  pair1d S = {{&op->M[d], &op->Mw[d]}, {&op->K[d], &op->Kw[d]}, 1, op->sK[d]};
  if (kind == PAIR_WRAP) S.M[0] = &op->Mw[d], S.K[0] = &op->Kw[d], S.s = NULL;
  if (kind == PAIR_FULL && op->Mw[d].nrows > 0) S.parts = 2;
  return S;
}

double hpmg_laplace_row(const hpmg_laplace *op, hpmg_real r, const void *x, int64_t i0, int64_t i1, int64_t i2) {
  const pair1d S[3] = {pair_of(op, 0, PAIR_FULL), pair_of(op, 1, PAIR_FULL), pair_of(op, 2, PAIR_FULL)};
  return kron_row(op, S, r, x, i0, i1, i2);
}

static inline void st_add(hpmg_real r, void *y, int64_t i, double v) {
  if (r == HPMG_REAL_DOUBLE) ((double *)y)[i] += v;
  else ((float *)y)[i] += (float)v;
}

#define APPLY_DIR_BODY(T)                                                                                     \
  do {                                                                                                        \
    const T *src = (const T *)in;                                                                             \
    _Pragma("omp parallel for collapse(2) schedule(static)")                                                  \
    for (int64_t iv = 0; iv < dout[v]; iv++)                                                                  \
      for (int64_t iu = 0; iu < dout[u]; iu++) {                                                              \
        const T *line = src + iu * sin_[u] + iv * sin_[v];                                                    \
        double *o = out + iu * sout[u] + iv * sout[v];                                                        \
        for (int64_t q = 0; q < nrows; q++) {                                                                 \
          const int64_t i = rows ? rows[q] : q;                                                               \
          const double xc = (double)line[i * sd];                                                             \
          double acc = 0;                                                                                     \
          for (int p = 0; p < S->parts; p++) {                                                                \
            const hpmg_sp1d *A = stiff ? S->K[p] : S->M[p];                                                   \
            for (int e = A->rowptr[i]; e < A->rowptr[i + 1]; e++)                                             \
              acc += A->val[e] * ((double)line[A->col[e] * sd] - (stiff ? xc : 0.0));                         \
          }                                                                                                   \
          o[q * sout[d]] = acc + (stiff && S->s ? S->s[i] * xc : 0.0);                                        \
        }                                                                                                     \
      }                                                                                                       \
  } while (0)

/* out = S in along direction d (M part, or K in difference form with row sums
 * s): in has dims din (x fastest), out the same except din[d] -> the rows
 * `rows` (NULL: all rows, nrows = din[d]); in is of type r */
static void apply_dir(const pair1d *S, int stiff, int d, const int64_t din[3], hpmg_real r, const void *in,
                      const int64_t *rows, int64_t nrows, double *out) {
  int64_t dout[3] = {din[0], din[1], din[2]};
  dout[d] = nrows;
  const int64_t sin_[3] = {1, din[0], din[0] * din[1]}, sout[3] = {1, dout[0], dout[0] * dout[1]}, sd = sin_[d];
  const int u = d == 0 ? 1 : 0, v = d == 2 ? 1 : 2; /* the two other directions */
  if (r == HPMG_REAL_DOUBLE) APPLY_DIR_BODY(double);
  else APPLY_DIR_BODY(float);
}
#undef APPLY_DIR_BODY

/* the wrap rows of every periodic direction, added to the kernel's output:
 * term p = A(P..P, Q_p, F..F) on the rows 0, n-k..n-1 of direction p, sum-
 * factorized: XM = Qm x, XK = Qk x along p, then with the other directions
 * a < b: M_a M_b XK + (K_a M_b + M_a K_b + lambda M_a M_b) XM */
static void laplace_wrap(const hpmg_laplace *op, hpmg_real r, const hpmg_kernel_args *a) {
  const hpmg_grid *g = &op->g;
  const int k = g->k;
  for (int p = 0; p < g->dim; p++) {
    if (op->Mw[p].nrows == 0) continue;
    pair1d S[3];
    for (int d = 0; d < 3; d++) S[d] = pair_of(op, d, d < p ? PAIR_BAND : d == p ? PAIR_WRAP : PAIR_FULL);
    const int da = p == 0 ? 1 : 0, db = p == 2 ? 1 : 2;
    const int64_t np = g->n[p];
    int64_t rows[17], dims[3] = {g->n[0], g->n[1], g->n[2]};
    rows[0] = 0;
    for (int w = 1; w <= k; w++) rows[w] = np - k + (w - 1);
    int64_t ds[3] = {dims[0], dims[1], dims[2]};
    ds[p] = k + 1;
    const int64_t ns = ds[0] * ds[1] * ds[2];
    double *buf = op->wbuf, *XM = buf, *XK = buf + ns, *T1 = buf + 2 * ns, *T2 = buf + 3 * ns, *T3 = buf + 4 * ns;
    apply_dir(&S[p], 0, p, dims, r, a->x, rows, k + 1, XM);
    apply_dir(&S[p], 1, p, dims, r, a->x, rows, k + 1, XK);
    apply_dir(&S[db], 0, db, ds, HPMG_REAL_DOUBLE, XM, NULL, ds[db], T1);
    apply_dir(&S[db], 1, db, ds, HPMG_REAL_DOUBLE, XM, NULL, ds[db], T2);
    apply_dir(&S[db], 0, db, ds, HPMG_REAL_DOUBLE, XK, NULL, ds[db], T3);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < ns; i++) T3[i] += T2[i] + op->lambda * T1[i];
    apply_dir(&S[da], 0, da, ds, HPMG_REAL_DOUBLE, T3, NULL, ds[da], XM); /* XM, XK reused for the result */
    apply_dir(&S[da], 1, da, ds, HPMG_REAL_DOUBLE, T1, NULL, ds[da], XK);
    const int64_t ss[3] = {1, ds[0], ds[0] * ds[1]};
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t i2 = 0; i2 < ds[2]; i2++)
      for (int64_t i1 = 0; i1 < ds[1]; i1++)
        for (int64_t i0 = 0; i0 < ds[0]; i0++) {
          int64_t idx[3] = {i0, i1, i2};
          const int64_t j = i0 * ss[0] + i1 * ss[1] + i2 * ss[2];
          idx[p] = rows[idx[p]];
          const double c = XM[j] + XK[j];
          const int64_t i = hpmg_grid_index(g, idx[0], idx[1], idx[2]);
          if (a->mode == HPMG_KERNEL_APPLY) st_add(r, a->y, i, c);
          else if (a->mode == HPMG_KERNEL_RESIDUAL) st_add(r, a->y, i, -c);
          else {
            const double dc = a->c2 * c / hpmg_laplace_diagonal(op, idx[0], idx[1], idx[2]);
            st_add(r, a->y, i, -dc);
            if (a->d) st_add(r, a->d, i, -dc);
          }
        }
  }
}

void hpmg_laplace_kernel(const hpmg_laplace *op, hpmg_real r, const hpmg_kernel_args *a) {
  if (op->g.N == 0) return;
  hpmg_laplace_kernels_select()->kernel[r](op, a);
  if (op->wrap) laplace_wrap(op, r, a);
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
    const hpmg_sp1d *W[2] = {&op->Mw[d], &op->Kw[d]}; /* periodic: the wrap couplings */
    for (int t = 0; t < 2; t++)
      for (int i = 0; i < W[t]->nrows; i++)
        for (int q = W[t]->rowptr[i]; q < W[t]->rowptr[i + 1]; q++) D[2 * d + t][i * g->n[d] + W[t]->col[q]] += W[t]->val[q];
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

void hpmg_laplace_band(const hpmg_laplace *op, int d, int64_t i, int *j0, int *n) {
  int lo = (int)i, hi = (int)i;
  for (int m = 0; m < 2; m++) {
    const hpmg_sp1d *A = m ? &op->K[d] : &op->M[d];
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
    if (d == 0 && (!xband || op->M[0].bw < HPMG_LAPLACE_XT_MIN_BW)) f += 2.0 * (2 * op->M[0].bw + 1); /* k <= 2: the full band per line */
    else if (d == 0) {
      double nb = 0.0;
      for (int64_t i = 0; i < g->n[0]; i++) {
        int j0, n;
        hpmg_laplace_band(op, 0, i, &j0, &n);
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
