#include <lapacke.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include "core/par.h"
#include "la/vec.h"
#include "disc/qk/transfer.h"
#include "qk_host.h"

#define HPMG_DENSE_COARSE_MAX 3000 /* coarse unknowns factorized densely (72 MB) */

typedef struct {
  hpmg_grid g;
  hpmg_laplace op;
  hpmg_smoother *smoother;
  hpmg_kron3 P, R;  /* transfers between this level and the next coarser one */
  int symmetric;
  double *chol;     /* coarsest: dense Cholesky factor of the operator, or NULL (CG) */
  double *cwork[6]; /* coarsest: double scratch of the coarse solve (b, x, and CG's r z p q) */
  double *xn[3];    /* general box: this level's cell boundaries where coarsened (owned) */
  int singular;     /* coarsest of a singular problem: the constants removed from b */
} qk_level;

static int smoother_work_vectors(hpmg_smoother_kind s) {
  return s == HPMG_SMOOTHER_CHEBYSHEV ? 2 : s == HPMG_SMOOTHER_JACOBI ? 1 : 0;
}

double hpmg_qk_host_memory(int dim, int k, int coarse, int refine, hpmg_real real, const hpmg_qk_smoother_options *so,
                           int fine_aliases) {
  const double rs = (double)hpmg_real_size(real);
  const int l0 = hpmg_qk_first_level(k, coarse);
  double bytes = 0.0, n0 = 0.0;
  for (int l = l0; l <= refine; l++) {
    double n = 1.0, cells = (double)coarse * ldexp(1.0, l);
    for (int d = 0; d < dim; d++) n *= k * cells - 1;
    bytes += hpmg_mg_level_bytes(real, n, !(l == refine && fine_aliases), 1) + smoother_work_vectors(so->smoother) * n * rs;
    if (so->smoother == HPMG_SMOOTHER_PATCH && l > l0) /* coarsest: no smoother */
      bytes += hpmg_patch_memory(dim, k, real, &so->patch, n, omp_get_max_threads());
    if ((so->smoother == HPMG_SMOOTHER_GS || so->smoother == HPMG_SMOOTHER_SGS) &&
        so->gs_order == HPMG_GS_ORDER_CELLWISE && l > l0)
      bytes += 9.0 * n; /* the order, and its setup's seen-flags */
    if (n0 == 0.0) n0 = n;
  }
  bytes += n0 <= HPMG_DENSE_COARSE_MAX ? n0 * n0 * 8.0 + 6 * n0 * 8.0 : 6 * n0 * 8.0;
  return bytes;
}

/* ------------------------------------------------------------------ slots */

static qk_level *Q(const hpmg_level *L) { return L->ctx; }

static hpmg_error smooth(hpmg_level *L, int x_is_zero, int post, int sweeps) {
  qk_level *q = Q(L);
  const int64_t m0 = q->smoother->matvecs;
  hpmg_error e = q->smoother->apply(q->smoother, L->b.data, L->x.data, x_is_zero, post && q->symmetric, sweeps);
  L->matvecs += q->smoother->matvecs - m0;
  return e;
}

static hpmg_error residual(hpmg_level *L) {
  hpmg_laplace_residual(&Q(L)->op, L->r.real, L->b.data, L->x.data, L->r.data);
  return HPMG_SUCCESS;
}

static hpmg_error restrict_to(hpmg_level *L, const hpmg_vec *fine, hpmg_vec *coarse) {
  hpmg_kron3_apply(&Q(L)->R, fine->real, fine->data, coarse->data, 0);
  return HPMG_SUCCESS;
}

static hpmg_error prolong(hpmg_level *L, const hpmg_vec *xc, int add) {
  hpmg_kron3_apply(&Q(L)->P, xc->real, xc->data, L->x.data, add);
  return HPMG_SUCCESS;
}

static hpmg_error coarse_setup(qk_level *q) {
  const int64_t n = q->op.g.N;
  for (int i = 0; i < 6; i++) HPMG_CALL(hpmg_malloc(sizeof(double) * (size_t)(n > 0 ? n : 1), &q->cwork[i]));
  if (n > HPMG_DENSE_COARSE_MAX) return HPMG_SUCCESS;
  HPMG_CALL(hpmg_malloc(sizeof(double) * (size_t)(n * n), &q->chol));
  HPMG_CALL(hpmg_laplace_dense(&q->op, q->chol));
  if (q->singular) { /* A + a 1 1^T (a = mean diagonal / n): regular, the same on 1-perp */
    double a = 0;
    for (int64_t i = 0; i < n; i++) a += q->chol[i * n + i] / (double)n;
    for (int64_t i = 0; i < n * n; i++) q->chol[i] += a / (double)n;
  }
  /* the matrix is symmetric and stored whole, so its row-major and column-major
   * layouts are the same: the column-major routines compute what LAPACKE's
   * row-major ones do (bit for bit) without transposing the n x n factor into a
   * fresh buffer on every call */
  const int bt = hpmg_blas_serial_begin();
  int info = LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', (lapack_int)n, q->chol, (lapack_int)n);
  hpmg_blas_serial_end(bt);
  if (info != 0)
    return hpmg_error_set(HPMG_ERR_NUMERIC, "coarse Cholesky factorization failed (info %d)", info);
  return HPMG_SUCCESS;
}

/* the coarse operator and its Jacobi preconditioner, in double, for CG */
static hpmg_error coarse_apply(void *ctx, const hpmg_vec *x, hpmg_vec *y) {
  hpmg_laplace_apply(ctx, HPMG_REAL_DOUBLE, x->data, y->data);
  return HPMG_SUCCESS;
}
static hpmg_error coarse_jacobi(void *ctx, const hpmg_vec *r, hpmg_vec *z) {
  hpmg_laplace_inverse_diagonal(ctx, HPMG_REAL_DOUBLE, 1.0, r->data, z->data, NULL);
  return HPMG_SUCCESS;
}

/* in double whatever the cycle precision: the Cholesky factor, or
 * Jacobi-preconditioned CG to 1e-14 (hpmg_mg_coarse_cg) */
static hpmg_error coarse_solve(hpmg_level *L) {
  qk_level *q = Q(L);
  const int64_t n = q->op.g.N;
  const hpmg_backend *H = hpmg_backend_host();
  hpmg_vec cb = hpmg_vec_wrap(H, HPMG_REAL_DOUBLE, n, q->cwork[0]), cx = hpmg_vec_wrap(H, HPMG_REAL_DOUBLE, n, q->cwork[1]);
  HPMG_CALL(hpmg_v_convert(&L->b, &cb));
  if (q->singular) { /* the compatible part of b (1 spans the null space) */
    double m = 0, *v = cb.data;
    for (int64_t i = 0; i < n; i++) m += v[i];
    for (int64_t i = 0; i < n; i++) v[i] -= m / (double)n;
  }
  if (q->chol) {
    memcpy(cx.data, cb.data, sizeof(double) * (size_t)n);
    const int bt = hpmg_blas_serial_begin();
    LAPACKE_dpotrs(LAPACK_COL_MAJOR, 'L', (lapack_int)n, 1, q->chol, (lapack_int)n, cx.data, (lapack_int)n);
    hpmg_blas_serial_end(bt);
  } else {
    hpmg_linop A = {&q->op, coarse_apply, NULL, NULL}, M = {&q->op, coarse_jacobi, NULL, NULL};
    hpmg_vec w[4];
    for (int i = 0; i < 4; i++) w[i] = hpmg_vec_wrap(H, HPMG_REAL_DOUBLE, n, q->cwork[2 + i]);
    HPMG_CALL(hpmg_mg_coarse_cg(&A, &M, &cb, &cx, w));
  }
  return hpmg_v_convert(&cx, &L->x);
}

static void destroy(hpmg_level *L) {
  qk_level *q = Q(L);
  if (!q) return;
  hpmg_smoother_destroy(&q->smoother);
  hpmg_laplace_destroy(&q->op);
  hpmg_kron3_destroy(&q->P);
  hpmg_kron3_destroy(&q->R);
  hpmg_free(&q->chol);
  for (int i = 0; i < 6; i++) hpmg_free(&q->cwork[i]);
  for (int d = 0; d < 3; d++) hpmg_free(&q->xn[d]);
  free(q);
  L->ctx = NULL;
}

static const hpmg_level_ops qk_ops = {
    .smooth = smooth,
    .residual = residual,
    .restrict_to = restrict_to,
    .prolong = prolong,
    .coarse_solve = coarse_solve,
    .destroy = destroy,
};

/* ------------------------------------------------------------- creation */

static hpmg_error level_smoother(qk_level *q, hpmg_real real, const hpmg_qk_smoother_options *so, int64_t coarse) {
  switch (so->smoother) {
  case HPMG_SMOOTHER_CHEBYSHEV:
    HPMG_CALL(hpmg_smoother_chebyshev(&q->op, real, so->cheby_degree, so->cheby_range, so->cheby_eig_iters,
                                        &q->smoother));
    break;
  case HPMG_SMOOTHER_JACOBI:
    HPMG_CALL(hpmg_smoother_jacobi(&q->op, real, so->jacobi_omega, &q->smoother));
    break;
  case HPMG_SMOOTHER_GS:
  case HPMG_SMOOTHER_SGS:
    HPMG_CALL(hpmg_smoother_gauss_seidel(&q->op, real, so->smoother == HPMG_SMOOTHER_SGS, so->gs_order, coarse,
                                           &q->smoother));
    break;
  case HPMG_SMOOTHER_PATCH:
    HPMG_CALL(hpmg_smoother_patch(&q->op, real, &so->patch, &q->smoother));
    break;
  default:
    return hpmg_error_set(HPMG_ERR_ARG, "unknown smoother %d", (int)so->smoother);
  }
  return HPMG_SUCCESS;
}

/* level L's context on the host, empty (the caller fills its grid and operators) */
static hpmg_error level_new(hpmg_level *L, const hpmg_qk_smoother_options *so, qk_level **out) {
  qk_level *q = calloc(1, sizeof *q);
  if (!q) return hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate a level");
  L->ops = &qk_ops;
  L->ctx = q;
  L->be = hpmg_backend_host();
  q->symmetric = so->symmetric;
  *out = q;
  return HPMG_SUCCESS;
}

hpmg_error hpmg_qk_host_create(int dim, int k, int coarse, int refine, const double box[3], double lambda,
                               hpmg_real real, const hpmg_qk_smoother_options *so, const hpmg_cycle_options *co,
                               int fine_aliases, hpmg_mg *mg) {
  const int l0 = hpmg_qk_first_level(k, coarse);
  HPMG_CHECK_ARG(refine >= l0, "degree 1 on a single coarse cell needs at least one refinement");
  HPMG_CALL(hpmg_mg_init(mg, refine - l0 + 1, real, co, fine_aliases));
  for (int i = 0; i < mg->nlevels; i++) {
    qk_level *q = NULL;
    HPMG_CALL(level_new(&mg->lv[i], so, &q));
    int64_t c = (int64_t)coarse << (l0 + i), cells[3] = {c, c, c};
    HPMG_CALL(hpmg_grid_init(dim, k, cells, box, &q->g));
    HPMG_CALL(hpmg_laplace_create(&q->g, lambda, &q->op));
    mg->lv[i].n = q->g.N;
    if (i > 0) {
      HPMG_CALL(hpmg_transfer_create(&Q(&mg->lv[i - 1])->g, &q->P, &q->R));
      hpmg_kron3_reserve(&q->P);
      hpmg_kron3_reserve(&q->R);
    }
    if (i == 0) { /* the coarsest level is solved exactly */
      HPMG_CALL(coarse_setup(q));
      continue;
    }
    HPMG_CALL(level_smoother(q, real, so, coarse));
  }
  return hpmg_mg_setup(mg, NULL);
}


/* a level keeping more of its finer level's unknowns than this fraction
 * halves its uniform directions against each other instead
 * (hpmg_qk_box_levels_build) */
#define HPMG_QK_MIN_SHRINK 0.9

static double min_width(const hpmg_grid *g, int d) {
  double m = INFINITY;
  for (int64_t c = 0; c < g->cells[d]; c++) m = fmin(m, hpmg_grid_cell_width(g, d, c));
  return m;
}

/* 1 when direction d coarsens as uniform cells do, by pairs: its cells are uniform, or
 * within HPMG_QK_QUASI_UNIFORM of each other (the nodes pair_cells makes of an odd count) */
static int quasi_uniform(const hpmg_grid *g, int d) {
  if (!g->xn[d]) return 1;
  double hi = 0;
  for (int64_t c = 0; c < g->cells[d]; c++) hi = fmax(hi, hpmg_grid_cell_width(g, d, c));
  return hi <= HPMG_QK_QUASI_UNIFORM * min_width(g, d);
}

/* The partial merges of a direction with nodes x: in each half (from its
 * ends towards the middle) two neighbouring cells merge where their merged
 * width is at most thr; an odd count's middle cell then joins the narrower
 * of its coarse neighbours where that merged width is at most thr (left
 * alone, it would stay the direction's thinnest cell on every coarser level
 * once its neighbours have merged past it). The kept nodes go to xc (2 cells
 * + 2 places: the second half is scratch); returns the coarse cell count. */
static int64_t merge_cells(const double *x, int64_t cells, double thr, double *xc) {
  const int64_t half = cells / 2;
  int64_t nc = 0;
  xc[0] = x[0];
  for (int64_t c = 0; c < half;) /* the lower half, cells 0 .. half-1 */
    if (c + 1 < half && x[c + 2] - x[c] <= thr) xc[++nc] = x[c + 2], c += 2;
    else xc[++nc] = x[c + 1], c += 1;
  const int64_t mid = cells % 2 ? nc : -1; /* the middle cell's coarse index */
  if (cells % 2) xc[++nc] = x[half + 1];
  /* the upper half, mirrored: cells cells-1 down to cells-half */
  const int64_t lo = cells - half;
  int64_t m = 0;
  double *tmp = xc + cells + 1; /* the upper half's nodes from the top (xc has 2 cells + 2 places) */
  for (int64_t c = cells - 1; c >= lo;)
    if (c - 1 >= lo && x[c + 1] - x[c - 1] <= thr) tmp[m++] = x[c - 1], c -= 2;
    else tmp[m++] = x[c], c -= 1;
  /* tmp holds the nodes below each kept upper cell, top first; the last is
   * x[lo], the node already written; then the top node x[cells] */
  for (int64_t i = m - 2; i >= 0; i--) xc[++nc] = tmp[i];
  xc[++nc] = x[cells];
  if (mid >= 0 && nc >= 2) { /* the middle cell xc[mid] .. xc[mid + 1] and a neighbour */
    const double wl = mid > 0 ? xc[mid] - xc[mid - 1] : INFINITY, wr = mid + 1 < nc ? xc[mid + 2] - xc[mid + 1] : INFINITY;
    const int64_t drop = wl <= wr ? mid : mid + 1; /* the node between the middle cell and its narrower neighbour */
    if (xc[mid + 1] - xc[mid] + fmin(wl, wr) <= thr) {
      for (int64_t i = drop; i < nc; i++) xc[i] = xc[i + 1];
      nc--;
    }
  }
  return nc;
}

/* A quasi-uniform direction coarsened by pairs of cells (nodes x, cells >= 2), an odd count's
 * three narrowest neighbours at an even offset (the middle's where the widths are equal)
 * merged into one: cells/2 coarse cells, whose widths keep within the fine ones' ratio or
 * 3/2 (a cell left alone would be half as wide as its neighbours, and stay so on every
 * coarser level). The kept nodes go to xc. */
static int64_t pair_cells(const double *x, int64_t cells, double *xc) {
  int64_t t = cells; /* the first cell of the triple; none for an even count */
  if (cells % 2) {
    double best = INFINITY;
    for (int64_t j = 0; 2 * j + 3 <= cells; j++) {
      const double w = x[2 * j + 3] - x[2 * j];
      const int64_t dm = llabs(4 * j + 3 - cells), db = llabs(2 * t + 3 - cells); /* twice the distances to the middle */
      if (w < best * (1 - 1e-12) || (w <= best * (1 + 1e-12) && dm < db)) best = w, t = 2 * j;
    }
  }
  int64_t nc = 0;
  xc[0] = x[0];
  for (int64_t c = 0; c < cells;) {
    c += c == t ? 3 : 2;
    xc[++nc] = x[c];
  }
  return nc;
}

/* Direction d of c: g's cells merged by pairs where the merged width is at most thr
 * (merge_cells), or every pair when quasi-uniform (pair_cells; thr unused), the nodes in
 * *xs (allocated where NULL; freed where nothing merges, c then keeping g's nodes; a
 * periodic direction keeps at least 2 cells). */
static hpmg_error merge_direction(const hpmg_grid *g, int d, int quasi, double thr, double **xs, hpmg_grid *c) {
  const int64_t n = g->cells[d];
  if (!*xs) HPMG_CALL(hpmg_malloc(sizeof(double) * (size_t)(2 * n + 2), xs));
  int64_t nc;
  if (quasi) {
    double *x = *xs + n + 1; /* the fine nodes in the second half: x_c = c h for uniform cells */
    for (int64_t i = 0; i <= n; i++) x[i] = g->xn[d] ? g->xn[d][i] : (double)i * g->h[d];
    nc = pair_cells(x, n, *xs);
  } else {
    nc = merge_cells(g->xn[d], n, thr, *xs);
  }
  const int per = g->bc[2 * d] == HPMG_BC_PERIODIC;
  if (nc < n && (!per || nc >= 2)) return hpmg_grid_with_nodes(c, d, nc, *xs, c);
  hpmg_free(xs);
  return HPMG_SUCCESS;
}

/* The quasi-uniform directions d with halve[d] coarsened by pairs into c (a copy of g): uniform
 * cells at an even count halved (hpmg_grid_coarsen: c stays uniform there), the others by
 * pair_cells into node arrays xs[d] */
static hpmg_error halve_directions(const hpmg_grid *g, const int halve[3], double *xs[3], hpmg_grid *c) {
  int even[3] = {0, 0, 0};
  for (int d = 0; d < g->dim; d++) even[d] = halve[d] && !g->xn[d] && hpmg_grid_coarsenable(g, d);
  if (even[0] || even[1] || even[2]) HPMG_CALL(hpmg_grid_coarsen(g, even, c));
  for (int d = 0; d < g->dim; d++)
    if (halve[d] && !even[d]) HPMG_CALL(merge_direction(g, d, 1, 0, &xs[d], c));
  return HPMG_SUCCESS;
}

hpmg_error hpmg_qk_box_levels_build(const hpmg_grid *fine, hpmg_qk_box_levels *L) {
  memset(L, 0, sizeof *L);
  L->g[0] = *fine;
  L->nl = 1;
  hpmg_error e = HPMG_SUCCESS;
  while (L->nl < QK_BOX_MAX_LEVELS && !e) {
    const hpmg_grid *g = &L->g[L->nl - 1];
    /* w: a quasi-uniform direction's mean width, a stretched one's thinnest cell */
    double w[3] = {INFINITY, INFINITY, INFINITY}, wmin = INFINITY, wuni = INFINITY;
    int can[3] = {0, 0, 0}, q[3] = {0, 0, 0};
    for (int d = 0; d < g->dim; d++) {
      const int per = g->bc[2 * d] == HPMG_BC_PERIODIC;
      q[d] = quasi_uniform(g, d);
      can[d] = g->cells[d] >= (per ? (q[d] ? 4 : 3) : 2);
      w[d] = q[d] ? g->h[d] : min_width(g, d);
      if (can[d]) wmin = fmin(wmin, w[d]);
      if (can[d] && q[d]) wuni = fmin(wuni, w[d]);
    }
    hpmg_grid c = *g;
    double *xs[3] = {NULL, NULL, NULL};
    int halve[3] = {0, 0, 0};
    for (int d = 0; d < g->dim; d++) halve[d] = can[d] && q[d] && w[d] <= HPMG_QK_SEMI_RATIO * wmin;
    e = halve_directions(g, halve, xs, &c);
    for (int d = 0; d < g->dim && !e; d++) { /* the stretched directions' merges */
      if (q[d] || !can[d]) continue;
      /* the narrowest other direction after this level's halving; a stretched one by its mean
       * width (by its thinnest cell, two stretched directions would each merge only the cells
       * thinner than the other's wall cell: one level, then a coarse solve of the whole grid) */
      double ho = INFINITY;
      for (int o = 0; o < g->dim; o++)
        if (o != d) ho = fmin(ho, g->h[o] * (halve[o] ? 2 : 1));
      if (ho < INFINITY) e = merge_direction(g, d, 0, HPMG_QK_SEMI_RATIO * ho, &xs[d], &c);
    }
    /* a level that would keep more than HPMG_QK_MIN_SHRINK of the unknowns
     * (a few merges only, or none: wall cells that cannot merge with a much
     * taller neighbour) halves the quasi-uniform directions judged against each
     * other alone instead, where that coarsens anything */
    if (!e && (double)c.N > HPMG_QK_MIN_SHRINK * (double)g->N) {
      int more[3] = {0, 0, 0};
      for (int d = 0; d < g->dim; d++) more[d] = can[d] && q[d] && w[d] <= HPMG_QK_SEMI_RATIO * wuni;
      if (more[0] || more[1] || more[2]) {
        for (int d = 0; d < 3; d++) hpmg_free(&xs[d]);
        c = *g;
        e = halve_directions(g, more, xs, &c);
      } else { /* no quasi-uniform direction to halve: the stretched ones merge every pair of
                * cells where their mean widths are within the ratio of each other's */
        double mmin = INFINITY;
        for (int d = 0; d < g->dim; d++)
          if (can[d] && !q[d]) mmin = fmin(mmin, g->h[d]);
        int pair[3] = {0, 0, 0};
        for (int d = 0; d < g->dim; d++) pair[d] = can[d] && !q[d] && g->h[d] <= HPMG_QK_SEMI_RATIO * mmin;
        if (pair[0] || pair[1] || pair[2]) {
          c = *g;
          for (int d = 0; d < g->dim && !e; d++)
            if (pair[d]) e = merge_direction(g, d, 0, INFINITY, &xs[d], &c);
            else hpmg_free(&xs[d]);
        }
      }
    }
    const int changed = c.N < g->N;
    if (e || !changed || c.N == 0) {
      for (int d = 0; d < 3; d++) hpmg_free(&xs[d]);
      break;
    }
    L->g[L->nl] = c;
    for (int d = 0; d < 3; d++) L->xn[L->nl][d] = xs[d];
    L->nl++;
  }
  if (e) hpmg_qk_box_levels_free(L);
  return e;
}

void hpmg_qk_box_levels_take(hpmg_qk_box_levels *L, int j, hpmg_grid *g, double *xn[3]) {
  *g = L->g[j];
  for (int d = 0; d < 3; d++) {
    xn[d] = L->xn[j][d];
    L->xn[j][d] = NULL;
  }
}

void hpmg_qk_box_levels_free(hpmg_qk_box_levels *L) {
  for (int j = 0; j < QK_BOX_MAX_LEVELS; j++)
    for (int d = 0; d < 3; d++) hpmg_free(&L->xn[j][d]);
  L->nl = 0;
}

hpmg_error hpmg_qk_host_create_box(const hpmg_grid *fine, double lambda, int singular, hpmg_real real,
                                   const hpmg_qk_smoother_options *so, const hpmg_cycle_options *co, int fine_aliases,
                                   hpmg_mg *mg) {
  HPMG_CHECK_ARG(fine->N > 0, "the grid has no unknowns");
  hpmg_qk_box_levels *B;
  HPMG_CALL(hpmg_malloc(sizeof *B, &B));
  hpmg_error e = hpmg_qk_box_levels_build(fine, B);
  if (e) {
    hpmg_free(&B);
    return e;
  }
  const int nl = B->nl;
  e = hpmg_mg_init(mg, nl, real, co, fine_aliases);
  for (int i = nl - 1; i >= 0 && !e; i--) { /* level i = B's level nl-1-i (B: finest first) */
    qk_level *q = NULL;
    e = level_new(&mg->lv[i], so, &q);
    if (e) break;
    hpmg_qk_box_levels_take(B, nl - 1 - i, &q->g, q->xn);
  }
  hpmg_qk_box_levels_free(B);
  hpmg_free(&B);
  HPMG_CALL(e);
  for (int i = 0; i < nl; i++) {
    hpmg_level *L = &mg->lv[i];
    qk_level *q = Q(L);
    HPMG_CALL(hpmg_laplace_create(&q->g, lambda, &q->op));
    L->n = q->g.N;
    if (i > 0) {
      HPMG_CALL(hpmg_transfer_create_grids(&Q(&mg->lv[i - 1])->g, &q->g, &q->P, &q->R));
      hpmg_kron3_reserve(&q->P);
      hpmg_kron3_reserve(&q->R);
    }
    if (i == 0) { /* the coarsest level is solved exactly */
      q->singular = singular;
      HPMG_CALL(coarse_setup(q));
      continue;
    }
    HPMG_CALL(level_smoother(q, real, so, 1));
  }
  return hpmg_mg_setup(mg, NULL);
}

const hpmg_laplace *hpmg_qk_host_operator(const hpmg_mg *mg, int l) { return &Q(&mg->lv[l])->op; }

static hpmg_error op_apply(void *ctx, const hpmg_vec *x, hpmg_vec *y) {
  hpmg_laplace_apply(ctx, x->real, x->data, y->data);
  return HPMG_SUCCESS;
}
static hpmg_error op_residual(void *ctx, const hpmg_vec *b, const hpmg_vec *x, hpmg_vec *r) {
  hpmg_laplace_residual(ctx, x->real, b->data, x->data, r->data);
  return HPMG_SUCCESS;
}

hpmg_linop hpmg_qk_host_linop(const hpmg_mg *mg) {
  hpmg_linop A = {0};
  A.ctx = (void *)hpmg_qk_host_operator(mg, mg->nlevels - 1);
  A.apply = op_apply;
  A.residual = op_residual;
  return A;
}
