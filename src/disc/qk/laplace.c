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

/* y-tile of the plane kernel: keep the z window of 2k+1 input tiles near
 * 1 MiB per thread */
static void set_tile(hpmg_laplace *op) {
  const hpmg_grid *g = &op->g;
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

static void rows_free(hpmg_laplace_rows *R) {
  hpmg_free(&R->j0);
  hpmg_free(&R->n);
  hpmg_free(&R->off);
  hpmg_free(&R->c);
  hpmg_free(&R->cf);
}

/* x's blocks (laplace.h: hpmg_laplace_xblocks) of op's x band (n free
 * nodes, row sums op->sK[0]): ne blocks of k+1 rows, free row i the padded
 * row i + off */
static hpmg_error xblocks_of(const hpmg_laplace *op, int k, int ne, int off, hpmg_laplace_xblocks *X) {
  const hpmg_sp1d *M = &op->M[0], *K = &op->K[0];
  const double *s = op->sK[0];
  const int64_t n = M->nrows;
  const int m = k + 1, bw = M->bw, len = 2 * m * m;
  X->ne = ne, X->k = k, X->off = off, X->np = (int64_t)ne * k + 1;
  if (X->np - off < n || bw > k)
    return hpmg_error_set(HPMG_ERR_NUMERIC, "x blocks: %d blocks of %d nodes cannot hold %lld rows of band %d", ne,
                          m, (long long)n, bw);
  HPMG_CALL(hpmg_malloc(sizeof(int64_t) * (size_t)ne, &X->eo));
  HPMG_CALL(hpmg_malloc(sizeof(double) * (size_t)ne * (size_t)len, &X->c));
  double *Kt, *Mt;
  char *sdone;
  HPMG_CALL(hpmg_malloc(sizeof(double) * (size_t)(2 * m * m), &Kt));
  Mt = Kt + m * m;
  hpmg_error err = hpmg_calloc((size_t)n, &sdone);
  int64_t used = 0;
#define XB_FREE(r) ((r) - off >= 0 && (r) - off < n) /* padded row r holds a free row */
  for (int e = 0; e < ne && !err; e++) {
    memset(Kt, 0, sizeof(double) * (size_t)(2 * m * m));
    const int64_t r0 = (int64_t)e * k;
    for (int a = 0; a < m; a++) {
      if (!XB_FREE(r0 + a)) continue;
      const int64_t i = r0 + a - off;
      for (int b = 0; b < m; b++) {
        const int64_t j = r0 + b - off, o = j - i;
        if (!XB_FREE(r0 + b)) continue;
        if (a != b) {
          Kt[a * m + b] = K->dia[(o + bw) * n + i];
          Mt[a * m + b] = M->dia[(o + bw) * n + i];
        } else if (a < k || e == ne - 1) { /* a shared row's diagonal: in the block it starts */
          Mt[a * m + a] = M->dia[bw * n + i];
        }
      }
      if (s[i] != 0.0 && !sdone[i]) { /* -s_i to a zero row of the block (an eliminated node) */
        const int z = !XB_FREE(r0) ? 0 : !XB_FREE(r0 + k) ? k : -1;
        if (z >= 0) Kt[a * m + z] -= s[i], sdone[i] = 1;
      }
    }
    for (int a = 0; a < m; a++) { /* K'_aa = -sum_{b != a} K'_ab: the block's rows in difference form */
      double t = 0.0;
      for (int b = 0; b < m; b++)
        if (b != a) t += Kt[a * m + b];
      Kt[a * m + a] = XB_FREE(r0 + a) ? -t : 0.0;
    }
    double *c = X->c + used;
    for (int b = 0; b < m; b++)
      for (int a = 0; a < m; a++) c[2 * m * b + a] = Kt[a * m + b], c[2 * m * b + m + a] = Mt[a * m + b];
    if (e > 0 && memcmp(c, X->c + X->eo[e - 1], sizeof(double) * (size_t)len) == 0) X->eo[e] = X->eo[e - 1];
    else X->eo[e] = used, used += len;
  }
#undef XB_FREE
  for (int64_t i = 0; i < n && !err; i++)
    if (s[i] != 0.0 && !sdone[i])
      err = hpmg_error_set(HPMG_ERR_NUMERIC, "x blocks: row %lld has a row sum but no eliminated node", (long long)i);
  hpmg_free(&Kt);
  hpmg_free(&sdone);
  HPMG_CALL(err);
  double *c; /* the distinct blocks only (one on a uniform grid) */
  HPMG_CALL(hpmg_malloc(sizeof(double) * (size_t)used, &c));
  memcpy(c, X->c, sizeof(double) * (size_t)used);
  hpmg_free(&X->c);
  X->c = c;
  HPMG_CALL(hpmg_malloc(sizeof(float) * (size_t)used, &X->cf));
  for (int64_t q = 0; q < used; q++) X->cf[q] = (float)X->c[q];
  return HPMG_SUCCESS;
}

static void xblocks_free(hpmg_laplace_xblocks *X) {
  hpmg_free(&X->eo);
  hpmg_free(&X->c);
  hpmg_free(&X->cf);
}

/* the rows' structural bands the kernel reads (y and z) and x's blocks for
 * the transposed x stage (laplace.h) */
static hpmg_error set_rows(hpmg_laplace *op) {
  for (int d = 1; d < op->g.dim; d++) HPMG_CALL(rows_of(op, d, &op->rows[d]));
  if (op->M[0].bw >= HPMG_LAPLACE_XT_MIN_BW)
    HPMG_CALL(xblocks_of(op, op->g.k, (int)op->g.cells[0], op->g.bc[0] == HPMG_BC_DIRICHLET, &op->xb));
  return HPMG_SUCCESS;
}

static hpmg_error wrap_create(hpmg_laplace *op);
static void wrap_destroy(hpmg_laplace *op);

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
  set_tile(op);
  HPMG_CALL(set_rows(op));
  if (op->wrap) HPMG_CALL(wrap_create(op));
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
  wrap_destroy(op);
  for (int d = 0; d < 3; d++) rows_free(&op->rows[d]);
  xblocks_free(&op->xb);
  hpmg_scratch_free(&op->scratch);
}

/* ------------------------------------------- the periodic wrap (laplace.h) */

/* Row i of direction d's full 1D matrices (the band and, periodic, the wrap
 * part): its columns and (M, K) entries, at most 3k+1 of them. */
enum { ROW_MAX = 64 };
static int full_row(const hpmg_laplace *op, int d, int64_t i, int64_t *col, double *m, double *kk) {
  const hpmg_sp1d *M = &op->M[d], *K = &op->K[d], *Mw = &op->Mw[d], *Kw = &op->Kw[d];
  const int bw = M->bw;
  const int64_t n = M->nrows;
  int c = 0;
  for (int o = -bw; o <= bw; o++) {
    const int64_t j = i + o;
    if (j < 0 || j >= n) continue;
    const double mv = M->dia[(o + bw) * n + i], kv = K->dia[(o + bw) * n + i];
    if (mv == 0 && kv == 0) continue;
    col[c] = j, m[c] = mv, kk[c++] = kv;
  }
  if (Mw->nrows > 0) { /* the wrap part: the union of its M and K columns */
    for (int q = Mw->rowptr[i]; q < Mw->rowptr[i + 1] && c < ROW_MAX; q++)
      col[c] = Mw->col[q], m[c] = Mw->val[q], kk[c++] = hpmg_sp1d_entry(Kw, (int)i, Mw->col[q]);
    for (int q = Kw->rowptr[i]; q < Kw->rowptr[i + 1] && c < ROW_MAX; q++)
      if (hpmg_sp1d_entry(Mw, (int)i, Kw->col[q]) == 0.0) col[c] = Kw->col[q], m[c] = 0.0, kk[c++] = Kw->val[q];
  }
  return c;
}

/* sum over the row's (z, y) couplings of the x-line sums (plain form) */
#define ROW_SUM(T)                                                                                        \
  do {                                                                                                    \
    const T *xv = (const T *)x;                                                                           \
    for (int a2 = 0; a2 < n2; a2++)                                                                       \
      for (int a1 = 0; a1 < n1; a1++) {                                                                   \
        const T *xl = xv + (c2[a2] * g->n[1] + c1[a1]) * g->n[0];                                         \
        double sk = 0.0, sm = 0.0;                                                                        \
        for (int a0 = 0; a0 < n0; a0++) {                                                                 \
          sk += k0[a0] * (double)xl[c0[a0]];                                                              \
          sm += m0[a0] * (double)xl[c0[a0]];                                                              \
        }                                                                                                 \
        s += m2[a2] * (m1[a1] * sk + k1[a1] * sm) + k2[a2] * m1[a1] * sm + op->lambda * m2[a2] * m1[a1] * sm; \
      }                                                                                                   \
  } while (0)

double hpmg_laplace_row(const hpmg_laplace *op, hpmg_real r, const void *x, int64_t i0, int64_t i1, int64_t i2) {
  const hpmg_grid *g = &op->g;
  int64_t c0[ROW_MAX], c1[ROW_MAX], c2[ROW_MAX];
  double m0[ROW_MAX], k0[ROW_MAX], m1[ROW_MAX], k1[ROW_MAX], m2[ROW_MAX], k2[ROW_MAX], s = 0.0;
  const int n0 = full_row(op, 0, i0, c0, m0, k0), n1 = full_row(op, 1, i1, c1, m1, k1),
            n2 = full_row(op, 2, i2, c2, m2, k2);
  if (r == HPMG_REAL_DOUBLE) ROW_SUM(double);
  else ROW_SUM(float);
  return s;
}
#undef ROW_SUM

/* One term of the wrap pass (laplace.h): A with (Mw_d, Kw_d) in the
 * directions of `set` and the band (M_d, K_d) elsewhere, applied by the
 * kernel to the gathered layers. Direction e of op is direction perm[e] of
 * the grid: the directions not in set first (their n nodes and band; the
 * arrays shared with the grid's operator, not owned), then those in set (k+1
 * local nodes: local 0 is node 0, local w node n-k-1+w; the wrap parts
 * restricted to them, owned), then in 2D the grid's 1x1 z. */
struct hpmg_laplace_wrap {
  hpmg_laplace op;
  int set, perm[3];
  int64_t *off[3];       /* off[e][j]: offset in the grid's arrays of index j along e */
  int ord[3];            /* the directions e by decreasing stride in the grid: the gather's loops */
  int64_t ss[3];         /* strides of op's arrays */
  double *dm[3], *dk[3]; /* the grid's 1D diagonals at those indices (the smoothing step's D) */
  void *xs, *ys;         /* gathered x and the term (doubles; float uses their first half) */
};

static int64_t wrap_node(int64_t n, int k, int64_t w) { return w == 0 ? 0 : n - k - 1 + w; }

/* the wrap part W of a periodic direction with n nodes restricted to its
 * k+1 layers, banded (bandwidth k: row 0 couples to the layers 1..k, layer w
 * to 0) */
static hpmg_error wrap_local(const hpmg_sp1d *W, int64_t n, int k, hpmg_sp1d *A) {
  const int m = k + 1;
  double *D;
  HPMG_CALL(hpmg_calloc(sizeof(double) * (size_t)(m * m), &D));
  for (int w = 0; w < m; w++)
    for (int v = 0; v < m; v++) D[w * m + v] = hpmg_sp1d_entry(W, (int)wrap_node(n, k, w), (int)wrap_node(n, k, v));
  hpmg_error e = hpmg_sp1d_from_dense(m, m, D, A);
  hpmg_free(&D);
  if (e == HPMG_SUCCESS) e = hpmg_sp1d_make_banded(A);
  return e;
}

static hpmg_error wrap_term(const hpmg_laplace *op, int set, struct hpmg_laplace_wrap *t) {
  const hpmg_grid *g = &op->g;
  const int k = g->k;
  int ne = 0;
  t->set = set;
  for (int d = 0; d < g->dim; d++)
    if (!(set >> d & 1)) t->perm[ne++] = d;
  for (int d = 0; d < g->dim; d++)
    if (set >> d & 1) t->perm[ne++] = d;
  if (g->dim == 2) t->perm[2] = 2;
  hpmg_laplace *s = &t->op;
  s->g = *g;
  s->lambda = op->lambda;
  const int64_t stride[3] = {1, g->n[0], g->n[0] * g->n[1]};
  for (int e = 0; e < 3; e++) {
    const int d = t->perm[e], in = set >> d & 1;
    const int64_t m = in ? k + 1 : g->n[d];
    s->g.n[e] = m;
    s->g.cells[e] = g->cells[d];
    s->g.h[e] = g->h[d];
    s->g.xn[e] = g->xn[d];
    s->g.bc[2 * e] = g->bc[2 * d], s->g.bc[2 * e + 1] = g->bc[2 * d + 1];
    HPMG_CALL(hpmg_malloc(sizeof(int64_t) * (size_t)m, &t->off[e]));
    HPMG_CALL(hpmg_malloc(sizeof(double) * (size_t)m, &t->dm[e]));
    HPMG_CALL(hpmg_malloc(sizeof(double) * (size_t)m, &t->dk[e]));
    for (int64_t j = 0; j < m; j++) {
      const int64_t i = in ? wrap_node(g->n[d], k, j) : j;
      t->off[e][j] = i * stride[d];
      t->dm[e][j] = op->dM[d][i];
      t->dk[e][j] = op->dK[d][i];
    }
    if (!in) { /* shared with op */
      s->M[e] = op->M[d], s->K[e] = op->K[d];
      s->dM[e] = op->dM[d], s->dK[e] = op->dK[d], s->dMf[e] = op->dMf[d], s->dKf[e] = op->dKf[d];
      s->sK[e] = op->sK[d], s->sKf[e] = op->sKf[d];
      continue;
    }
    /* K in difference form with row sums 0: (Kw' a)_i = sum_j Kw_ij (a_j - a_i) */
    HPMG_CALL(wrap_local(&op->Mw[d], g->n[d], k, &s->M[e]));
    HPMG_CALL(wrap_local(&op->Kw[d], g->n[d], k, &s->K[e]));
    if (s->M[e].bw != s->K[e].bw)
      return hpmg_error_set(HPMG_ERR_NUMERIC, "wrap mass and stiffness band widths differ (%d vs %d)", s->M[e].bw,
                            s->K[e].bw);
    HPMG_CALL(diagonal_of(&s->M[e], &s->dM[e], &s->dMf[e]));
    HPMG_CALL(diagonal_of(&s->K[e], &s->dK[e], &s->dKf[e]));
    HPMG_CALL(hpmg_calloc(sizeof(double) * (size_t)m, &s->sK[e]));
    HPMG_CALL(hpmg_calloc(sizeof(float) * (size_t)m, &s->sKf[e]));
  }
  s->g.N = s->g.n[0] * s->g.n[1] * s->g.n[2];
  t->ss[0] = 1, t->ss[1] = s->g.n[0], t->ss[2] = s->g.n[0] * s->g.n[1];
  for (int e = 0; e < 3; e++) t->ord[e] = e;
  for (int i = 0; i < 3; i++) /* sort by the grid's stride, largest first */
    for (int j = i + 1; j < 3; j++)
      if (stride[t->perm[t->ord[j]]] > stride[t->perm[t->ord[i]]]) {
        const int tmp = t->ord[i];
        t->ord[i] = t->ord[j], t->ord[j] = tmp;
      }
  set_tile(s);
  for (int e = 0; e < g->dim; e++) { /* the rows and x blocks: shared with op for a direction not in set */
    const int d = t->perm[e];
    if (e > 0 && !(set >> d & 1)) s->rows[e] = op->rows[d];
    else if (e > 0) HPMG_CALL(rows_of(s, e, &s->rows[e]));
    else if (d == 0 && !(set & 1)) s->xb = op->xb; /* the grid's x */
    else if (s->M[0].bw < HPMG_LAPLACE_XT_MIN_BW) continue;
    else if (set >> d & 1) HPMG_CALL(xblocks_of(s, k, 1, 0, &s->xb)); /* one block: the k+1 layers */
    else HPMG_CALL(xblocks_of(s, k, (int)s->g.cells[0], s->g.bc[0] == HPMG_BC_DIRICHLET, &s->xb));
  }
  HPMG_CALL(hpmg_malloc(sizeof(double) * (size_t)s->g.N, &t->xs));
  HPMG_CALL(hpmg_malloc(sizeof(double) * (size_t)s->g.N, &t->ys));
  return HPMG_SUCCESS;
}

static hpmg_error wrap_create(hpmg_laplace *op) {
  int per = 0, nt = 0;
  for (int d = 0; d < op->g.dim; d++) per |= (op->Mw[d].nrows > 0) << d;
  for (int set = 1; set < 8; set++) nt += (set & per) == set;
  HPMG_CALL(hpmg_calloc(sizeof(struct hpmg_laplace_wrap) * (size_t)nt, &op->wt));
  op->nwt = nt;
  for (int set = 1, t = 0; set < 8; set++)
    if ((set & per) == set) HPMG_CALL(wrap_term(op, set, &op->wt[t++]));
  return HPMG_SUCCESS;
}

static void wrap_destroy(hpmg_laplace *op) {
  for (int i = 0; i < op->nwt; i++) {
    struct hpmg_laplace_wrap *t = &op->wt[i];
    hpmg_laplace *s = &t->op;
    for (int e = 0; e < 3; e++) {
      hpmg_free(&t->off[e]);
      hpmg_free(&t->dm[e]);
      hpmg_free(&t->dk[e]);
      if (t->perm[e] >= op->g.dim || !(t->set >> t->perm[e] & 1)) continue; /* shared */
      hpmg_sp1d_free(&s->M[e]);
      hpmg_sp1d_free(&s->K[e]);
      hpmg_free(&s->dM[e]);
      hpmg_free(&s->dK[e]);
      hpmg_free(&s->dMf[e]);
      hpmg_free(&s->dKf[e]);
      hpmg_free(&s->sK[e]);
      hpmg_free(&s->sKf[e]);
    }
    for (int e = 1; e < op->g.dim; e++)
      if (t->set >> t->perm[e] & 1) rows_free(&s->rows[e]);
    if (s->xb.eo != op->xb.eo) xblocks_free(&s->xb); /* owned unless the grid's x */
    hpmg_scratch_free(&s->scratch);
    hpmg_free(&t->xs);
    hpmg_free(&t->ys);
  }
  hpmg_free(&op->wt);
  op->nwt = 0;
}

const hpmg_laplace *hpmg_laplace_wrap_term(const hpmg_laplace *op, int t, const int64_t *off[3], const double *dm[3],
                                           const double *dk[3]) {
  const struct hpmg_laplace_wrap *w = &op->wt[t];
  for (int e = 0; e < 3; e++) off[e] = w->off[e], dm[e] = w->dm[e], dk[e] = w->dk[e];
  return &w->op;
}

/* The gather and the update loop over the term's layers in the grid's
 * memory order (t->ord: outer u, middle v, inner w), so each grid line is
 * read or updated in one visit (the layers of x: the k+1 values of each
 * x-line, written to k+1 streams of xs). */
#define WRAP_AHEAD 16 /* lines ahead whose layer values the strided gather and update prefetch */
#define WRAP_LOOPS                                                                     \
  const int e0 = t->ord[0], e1 = t->ord[1], e2 = t->ord[2];                            \
  const int64_t mu = t->op.g.n[e0], mv = t->op.g.n[e1], mw = t->op.g.n[e2];            \
  const int64_t *ou = t->off[e0], *ov = t->off[e1], *ow = t->off[e2];                  \
  const int64_t su = t->ss[e0], sv = t->ss[e1], sw = t->ss[e2];                        \
  const int contiguous = e2 == 0 && !(t->set & 1) /* the whole x-line */

/* xs = x on the term's layers (inside a parallel region) */
#define WRAP_GATHER(T)                                                                   \
  do {                                                                                   \
    const T *src = (const T *)x;                                                         \
    T *dst = (T *)t->xs;                                                                 \
    _Pragma("omp for collapse(2) schedule(static) nowait")                               \
    for (int64_t u = 0; u < mu; u++)                                                     \
      for (int64_t v = 0; v < mv; v++) {                                                 \
        const T *sl = src + ou[u] + ov[v];                                               \
        T *dl = dst + u * su + v * sv;                                                   \
        if (contiguous) memcpy(dl, sl, sizeof(T) * (size_t)mw);                          \
        else {                                                                           \
          if (v + WRAP_AHEAD < mv) { /* the layers of a later line: latency, not bandwidth */ \
            __builtin_prefetch(src + ou[u] + ov[v + WRAP_AHEAD] + ow[0]);                \
            __builtin_prefetch(src + ou[u] + ov[v + WRAP_AHEAD] + ow[mw - 1]);           \
          }                                                                              \
          for (int64_t w = 0; w < mw; w++) dl[w * sw] = sl[ow[w]];                       \
        }                                                                                \
      }                                                                                  \
  } while (0)

static void wrap_gather(const struct hpmg_laplace_wrap *t, hpmg_real r, const void *x) {
  WRAP_LOOPS;
  if (r == HPMG_REAL_DOUBLE) WRAP_GATHER(double);
  else WRAP_GATHER(float);
}
#undef WRAP_GATHER

/* the term ys added to the kernel's output as its mode says (inside a
 * parallel region; the worksharing loop ends with a barrier, as the next
 * term may update the same rows); SMOOTH: D from the grid's 1D diagonals */
#define WRAP_SCATTER(T)                                                                                  \
  do {                                                                                                   \
    const T *c = (const T *)t->ys;                                                                       \
    T *y = (T *)a->y, *dv = (T *)a->d;                                                                   \
    _Pragma("omp for collapse(2) schedule(static)")                                                      \
    for (int64_t u = 0; u < mu; u++)                                                                     \
      for (int64_t v = 0; v < mv; v++) {                                                                 \
        const T *cl = c + u * su + v * sv;                                                               \
        T *yl = y + ou[u] + ov[v];                                                                       \
        if (!contiguous && v + WRAP_AHEAD < mv) {                                                        \
          __builtin_prefetch(y + ou[u] + ov[v + WRAP_AHEAD] + ow[0], 1);                                 \
          __builtin_prefetch(y + ou[u] + ov[v + WRAP_AHEAD] + ow[mw - 1], 1);                            \
          if (dv) __builtin_prefetch(dv + ou[u] + ov[v + WRAP_AHEAD] + ow[0], 1);                        \
          if (dv) __builtin_prefetch(dv + ou[u] + ov[v + WRAP_AHEAD] + ow[mw - 1], 1);                   \
        }                                                                                                \
        if (a->mode == HPMG_KERNEL_APPLY) {                                                              \
          _Pragma("omp simd") for (int64_t w = 0; w < mw; w++) yl[ow[w]] += cl[w * sw];                  \
        } else if (a->mode == HPMG_KERNEL_RESIDUAL) {                                                    \
          _Pragma("omp simd") for (int64_t w = 0; w < mw; w++) yl[ow[w]] -= cl[w * sw];                  \
        } else {                                                                                         \
          T *dl = dv ? dv + ou[u] + ov[v] : NULL;                                                        \
          const double pm = t->dm[e0][u] * t->dm[e1][v];                                                 \
          const double pk = t->dk[e0][u] * t->dm[e1][v] + t->dm[e0][u] * t->dk[e1][v] + lambda * pm;     \
          for (int64_t w = 0; w < mw; w++) {                                                             \
            const T dc = (T)(c2 * (double)cl[w * sw] / (t->dk[e2][w] * pm + t->dm[e2][w] * pk));         \
            yl[ow[w]] -= dc;                                                                             \
            if (dl) dl[ow[w]] -= dc;                                                                     \
          }                                                                                              \
        }                                                                                                \
      }                                                                                                  \
  } while (0)

static void wrap_scatter(const struct hpmg_laplace_wrap *t, hpmg_real r, const hpmg_kernel_args *a) {
  WRAP_LOOPS;
  const double c2 = a->c2, lambda = t->op.lambda;
  if (r == HPMG_REAL_DOUBLE) WRAP_SCATTER(double);
  else WRAP_SCATTER(float);
}
#undef WRAP_SCATTER
#undef WRAP_LOOPS

/* the wrap terms of every periodic direction set, added to the kernel's
 * output: one parallel gather, the kernel on each term's layers, one
 * parallel update */
#define WRAP_PAR_MIN (1 << 15) /* layer values below which gather and update run on one thread */
static void laplace_wrap(const hpmg_laplace *op, hpmg_real r, const hpmg_kernel_args *a) {
  int64_t len = 0; /* small layers (coarse levels): one thread, no wake-up */
  for (int i = 0; i < op->nwt; i++) len += op->wt[i].op.g.N;
#pragma omp parallel if (len >= WRAP_PAR_MIN)
  for (int i = 0; i < op->nwt; i++) wrap_gather(&op->wt[i], r, a->x);
  const hpmg_laplace_kernels *kt = hpmg_laplace_kernels_select();
  for (int i = 0; i < op->nwt; i++) {
    const hpmg_kernel_args s = {.mode = HPMG_KERNEL_APPLY, .x = op->wt[i].xs, .y = op->wt[i].ys};
    kt->kernel[r](&op->wt[i].op, &s);
  }
#pragma omp parallel if (len >= WRAP_PAR_MIN)
  for (int i = 0; i < op->nwt; i++) wrap_scatter(&op->wt[i], r, a);
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
    else if (d == 0) /* the x blocks */
      f += (double)op->xb.ne * (op->xb.k + 1) * (2 * op->xb.k + 1) / (double)g->n[0];
    else if (d == 1) f += (g->dim == 3 ? 2 * nnzM : nnzM) + nnzK + (op->lambda != 0);
    else if (g->dim == 3) f += nnzM + nnzK;
  }
  return 2.0 * f * (double)g->N;
}

double hpmg_laplace_flops(const hpmg_laplace *op) { return flops(op, 0); }
double hpmg_laplace_flops_cpu(const hpmg_laplace *op) { return flops(op, 1); }
