/* The matrix-free operator equals the operator assembled from element
 * matrices, for every degree (2D k = 1..10, 3D k = 1..8), on anisotropic
 * meshes with and without the mass term. The element matrices here come from
 * d-dimensional Gauss quadrature of grad(phi_a).grad(phi_b) + lambda phi_a phi_b
 * -- no tensor-product shortcut -- so the Kronecker-sum evaluation is checked
 * against an independent computation. Also: symmetry, float vs double, the
 * fused residual/smoothing modes, Gauss-Seidel against a dense sweep, and the
 * cellwise (deal.II level) Gauss-Seidel order: exact small cases, a
 * permutation on every level shape, the ordered sweep against a dense one. */
#include <string.h>
#include "check.h"
#include "fem/fem.h"
#include "la/vec.h"
#include "disc/qk/laplace.h"
#include "test_env.h"

typedef struct {
  int dim, k, nloc;
  int64_t cells[3], nfull[3];
  double *Ae; /* nloc x nloc element matrix */
} ref_op;

static void element_matrix(ref_op *R, const double h[3], double lambda) {
  const int k = R->k, m = k + 1, dim = R->dim;
  const int nq1 = k + 1, nq = dim == 3 ? nq1 * nq1 * nq1 : nq1 * nq1, nloc = R->nloc;
  double g[16], w[16], xq[16], wq[16], v[16 * 16], dv[16 * 16];
  hpmg_gauss_lobatto(m, g, w);
  hpmg_gauss(nq1, xq, wq);
  for (int q = 0; q < nq1; q++) hpmg_lagrange_eval(m, g, xq[q], v + q * m, dv + q * m);
  /* G[q][a] = (phi, dphi/dx, dphi/dy, dphi/dz) at quadrature point q, weights folded in */
  double *G = calloc((size_t)nq * nloc * 4, sizeof(double));
  for (int q = 0; q < nq; q++) {
    int q0 = q % nq1, q1 = (q / nq1) % nq1, q2 = q / (nq1 * nq1);
    double wt = wq[q0] * wq[q1] * (dim == 3 ? wq[q2] : 1.0) * h[0] * h[1] * (dim == 3 ? h[2] : 1.0);
    for (int a = 0; a < nloc; a++) {
      int a0 = a % m, a1 = (a / m) % m, a2 = a / (m * m);
      double f0 = v[q0 * m + a0], f1 = v[q1 * m + a1], f2 = dim == 3 ? v[q2 * m + a2] : 1.0;
      double d0 = dv[q0 * m + a0] / h[0], d1 = dv[q1 * m + a1] / h[1], d2 = dim == 3 ? dv[q2 * m + a2] / h[2] : 0.0;
      double *gq = G + ((size_t)q * nloc + a) * 4, sw = sqrt(wt);
      gq[0] = sw * f0 * f1 * f2;
      gq[1] = sw * d0 * f1 * f2;
      gq[2] = sw * f0 * d1 * f2;
      gq[3] = sw * f0 * f1 * d2;
    }
  }
#pragma omp parallel for
  for (int a = 0; a < nloc; a++)
    for (int b = 0; b < nloc; b++) {
      double s = 0;
      for (int q = 0; q < nq; q++) {
        const double *ga = G + ((size_t)q * nloc + a) * 4, *gb = G + ((size_t)q * nloc + b) * 4;
        s += ga[1] * gb[1] + ga[2] * gb[2] + ga[3] * gb[3] + lambda * ga[0] * gb[0];
      }
      R->Ae[(size_t)a * nloc + b] = s;
    }
  free(G);
}

/* interior index of full-grid node (g0,g1,g2), or -1 on the boundary */
static int64_t interior(const ref_op *R, const hpmg_grid *gr, int64_t g0, int64_t g1, int64_t g2) {
  int64_t gg[3] = {g0, g1, g2};
  for (int d = 0; d < R->dim; d++)
    if (gg[d] == 0 || gg[d] == R->nfull[d] - 1) return -1;
  return (g0 - 1) + gr->n[0] * ((g1 - 1) + gr->n[1] * (R->dim == 3 ? g2 - 1 : 0));
}

/* y = sum over cells of R_e^T A_e R_e x (Dirichlet nodes eliminated) */
static void ref_apply(const ref_op *R, const hpmg_grid *gr, const double *x, double *y) {
  const int m = R->k + 1, nloc = R->nloc;
  memset(y, 0, sizeof(double) * (size_t)gr->N);
  int64_t *idx = malloc(sizeof(int64_t) * nloc);
  double *xl = malloc(sizeof(double) * nloc);
  for (int64_t c2 = 0; c2 < (R->dim == 3 ? R->cells[2] : 1); c2++)
    for (int64_t c1 = 0; c1 < R->cells[1]; c1++)
      for (int64_t c0 = 0; c0 < R->cells[0]; c0++) {
        for (int a = 0; a < nloc; a++) {
          int a0 = a % m, a1 = (a / m) % m, a2 = a / (m * m);
          idx[a] = interior(R, gr, c0 * R->k + a0, c1 * R->k + a1, c2 * R->k + a2);
          xl[a] = idx[a] >= 0 ? x[idx[a]] : 0.0;
        }
        for (int a = 0; a < nloc; a++) {
          if (idx[a] < 0) continue;
          double s = 0;
          for (int b = 0; b < nloc; b++) s += R->Ae[(size_t)a * nloc + b] * xl[b];
          y[idx[a]] += s;
        }
      }
  free(idx);
  free(xl);
}

static double maxabs(int64_t n, const double *x) {
  double m = 0;
  for (int64_t i = 0; i < n; i++) m = fmax(m, fabs(x[i]));
  return m;
}

static int run_cells(int dim, int k, double lambda, int64_t c0, int64_t c1, int64_t c2);
static int run(int dim, int k, double lambda) { return run_cells(dim, k, lambda, 3, 2, 2); }

static int run_cells(int dim, int k, double lambda, int64_t c0, int64_t c1, int64_t c2) {
  const double box[3] = {1.0, 0.7, 1.3};
  int64_t cells[3] = {c0, c1, c2};
  hpmg_grid g;
  hpmg_laplace op;
  CHECK_OK(hpmg_grid_init(dim, k, cells, box, &g));
  CHECK_OK(hpmg_laplace_create(&g, lambda, &op));
  ref_op R = {.dim = dim, .k = k};
  R.nloc = dim == 3 ? (k + 1) * (k + 1) * (k + 1) : (k + 1) * (k + 1);
  for (int d = 0; d < 3; d++) {
    R.cells[d] = g.cells[d];
    R.nfull[d] = k * g.cells[d] + 1;
  }
  R.Ae = malloc(sizeof(double) * (size_t)R.nloc * R.nloc);
  element_matrix(&R, g.h, lambda);
  const int64_t N = g.N;
  double *x = malloc(8 * N), *y = malloc(8 * N), *yr = malloc(8 * N), *b = malloc(8 * N), *t = malloc(8 * N);
  float *xf = malloc(4 * N), *yf = malloc(4 * N);
  for (int64_t i = 0; i < N; i++) { x[i] = check_rand(); b[i] = check_rand(); }
  hpmg_laplace_apply(&op, HPMG_REAL_DOUBLE, x, y);
  ref_apply(&R, &g, x, yr);
  double scale = maxabs(N, yr), err = 0;
  for (int64_t i = 0; i < N; i++) err = fmax(err, fabs(y[i] - yr[i]));
  CHECK(err <= 1e-12 * scale, "dim %d k %d lambda %g: matrix-free vs assembled: max diff %.3e (scale %.3e)", dim, k,
        lambda, err, scale);
  /* symmetry: x.A b = b.A x */
  hpmg_laplace_apply(&op, HPMG_REAL_DOUBLE, b, t);
  double xab = hpmg_vec_dot(HPMG_REAL_DOUBLE, N, x, t), bax = hpmg_vec_dot(HPMG_REAL_DOUBLE, N, b, y);
  CHECK(fabs(xab - bax) <= 1e-13 * hpmg_vec_norm(HPMG_REAL_DOUBLE, N, x) * hpmg_vec_norm(HPMG_REAL_DOUBLE, N, t),
        "dim %d k %d: not symmetric: %.17g vs %.17g", dim, k, xab, bax);
  /* float kernel */
  hpmg_vec_convert(N, HPMG_REAL_DOUBLE, x, HPMG_REAL_FLOAT, xf);
  hpmg_laplace_apply(&op, HPMG_REAL_FLOAT, xf, yf);
  double ef = 0;
  for (int64_t i = 0; i < N; i++) ef = fmax(ef, fabs(yf[i] - yr[i]));
  CHECK(ef <= 1e-5 * scale, "dim %d k %d: float apply differs by %.3e (scale %.3e)", dim, k, ef, scale);
  /* the kernel's scratch kept in op (core.h, hpmg_scratch): the double apply
   * after the float one (which left its values there) the same bit for bit,
   * and so from two threads of a caller's parallel region at once (each then
   * allocates its own) */
  {
    double *y2 = malloc(8 * N), *y3 = malloc(8 * N);
    hpmg_laplace_apply(&op, HPMG_REAL_DOUBLE, x, y2);
    CHECK(memcmp(y, y2, 8 * (size_t)N) == 0, "dim %d k %d: double apply after the float one differs", dim, k);
    memset(y2, 0, 8 * (size_t)N);
    memset(y3, 0, 8 * (size_t)N);
    /* both outputs written also where the team has one thread (OMP_THREAD_LIMIT=1) */
#pragma omp parallel for num_threads(2) schedule(static, 1)
    for (int i = 0; i < 2; i++) hpmg_laplace_apply(&op, HPMG_REAL_DOUBLE, x, i ? y3 : y2);
    CHECK(memcmp(y, y2, 8 * (size_t)N) == 0 && memcmp(y, y3, 8 * (size_t)N) == 0,
          "dim %d k %d: apply from two threads of a caller's parallel region differs", dim, k);
    free(y2);
    free(y3);
  }
  /* residual mode */
  hpmg_laplace_residual(&op, HPMG_REAL_DOUBLE, b, x, t);
  err = 0;
  for (int64_t i = 0; i < N; i++) err = fmax(err, fabs(t[i] - (b[i] - yr[i])));
  CHECK(err <= 1e-12 * scale, "dim %d k %d: residual mode differs by %.3e", dim, k, err);
  /* smoothing mode: d = c1 d + c2 D^{-1}(b - Ax), y = x + d; diagonal from the reference */
  double *d = malloc(8 * N), *d0 = malloc(8 * N), *e = calloc(N, 8), *ae = malloc(8 * N);
  for (int64_t i = 0; i < N; i++) d[i] = d0[i] = check_rand();
  hpmg_kernel_args a = {.mode = HPMG_KERNEL_SMOOTH, .x = x, .y = t, .b = b, .d = d, .c1 = 0.3, .c2 = 0.7};
  hpmg_laplace_kernel(&op, HPMG_REAL_DOUBLE, &a);
  err = 0;
  double derr = 0;
  for (int64_t i = 0; i < N; i += 1 + N / 97) { /* diagonal entries by unit vectors */
    e[i] = 1.0;
    ref_apply(&R, &g, e, ae);
    e[i] = 0.0;
    const double diag = ae[i];
    derr = fmax(derr, fabs(diag - hpmg_laplace_diagonal(&op, i % g.n[0], (i / g.n[0]) % g.n[1], i / (g.n[0] * g.n[1]))));
    const double dd = 0.3 * d0[i] + 0.7 * (b[i] - yr[i]) / diag;
    err = fmax(err, fabs(d[i] - dd) + fabs(t[i] - (x[i] + dd)));
  }
  CHECK(derr <= 1e-12 * scale, "dim %d k %d: diagonal differs by %.3e", dim, k, derr);
  CHECK(err <= 1e-10, "dim %d k %d: smoothing mode differs by %.3e", dim, k, err);
  free(d); free(d0); free(e); free(ae);
  /* dense assembled matrix (coarse solver) equals the reference, small cases */
  if (N <= 1200) {
    double *A = malloc(sizeof(double) * N * N), *col = calloc(N, 8), *acol = malloc(8 * N);
    CHECK_OK(hpmg_laplace_dense(&op, A));
    double de = 0;
    for (int64_t j = 0; j < N; j++) {
      col[j] = 1.0;
      ref_apply(&R, &g, col, acol);
      col[j] = 0.0;
      for (int64_t i = 0; i < N; i++) de = fmax(de, fabs(A[i * N + j] - acol[i]));
    }
    CHECK(de <= 1e-12 * scale, "dim %d k %d: dense matrix differs by %.3e", dim, k, de);
    /* one forward Gauss-Seidel sweep against a dense lexicographic sweep */
    double *xs = malloc(8 * N), *xg = malloc(8 * N);
    memcpy(xs, x, 8 * N);
    memcpy(xg, x, 8 * N);
    for (int64_t i = 0; i < N; i++) {
      double s = b[i];
      for (int64_t j = 0; j < N; j++) s -= A[i * N + j] * xs[j];
      xs[i] += s / A[i * N + i];
    }
    hpmg_laplace_gauss_seidel(&op, HPMG_REAL_DOUBLE, b, xg, NULL, 0);
    de = 0;
    for (int64_t i = 0; i < N; i++) de = fmax(de, fabs(xs[i] - xg[i]));
    CHECK(de <= 1e-10 * fmax(1.0, maxabs(N, xs)), "dim %d k %d: Gauss-Seidel differs by %.3e", dim, k, de);
    free(A); free(col); free(acol); free(xs); free(xg);
  }
  free(x); free(y); free(yr); free(b); free(t); free(xf); free(yf); free(R.Ae);
  hpmg_laplace_destroy(&op);
  return 0;
}

/* hpmg_grid_cellwise_order: hand-derived small cases (deal.II FE_Q, one coarse
 * cell refined once), a permutation for many shapes, the ordered sweep equal to
 * a dense Gauss-Seidel sweep in that order, bad shapes refused. */
static int cellwise(void) {
  const double box[3] = {1.0, 1.0, 1.0};
  hpmg_grid g;
  int64_t cells[3] = {2, 2, 2}, ord[64];
  /* 2D Q2, 2x2 cells, 3x3 free nodes (index x + 3y): cell (0,0) numbers its
   * vertex (2,2), line x=2 node (2,1), line y=2 node (1,2), interior (1,1); cell
   * (1,0): (3,2), (3,1); cell (0,1): (2,3), (1,3); cell (1,1): (3,3). */
  const int64_t want2[9] = {4, 1, 3, 0, 5, 2, 7, 6, 8};
  CHECK_OK(hpmg_grid_init(2, 2, cells, box, &g));
  CHECK_OK(hpmg_grid_cellwise_order(&g, 1, ord));
  for (int i = 0; i < 9; i++) CHECK(ord[i] == want2[i], "2D Q2 cellwise order [%d] = %lld, want %lld", i, (long long)ord[i], (long long)want2[i]);
  /* 3D Q2, 2^3 cells, 27 free nodes (x + 3y + 9z): cell 0 numbers vertex 7
   * (2,2,2), lines 5, 7, 11 ((2,1,2), (1,2,2), (2,2,1)), faces 1, 3, 5 ((2,1,1),
   * (1,2,1), (1,1,2)), interior (1,1,1); cell 1 then line 7 (3,2,2), face 3
   * (3,2,1), face 5 (3,1,2), interior (3,1,1). */
  const int64_t want3[12] = {13, 10, 12, 4, 1, 3, 9, 0, 14, 5, 11, 2};
  CHECK_OK(hpmg_grid_init(3, 2, cells, box, &g));
  CHECK_OK(hpmg_grid_cellwise_order(&g, 1, ord));
  for (int i = 0; i < 12; i++) CHECK(ord[i] == want3[i], "3D Q2 cellwise order [%d] = %lld, want %lld", i, (long long)ord[i], (long long)want3[i]);
  /* 3D Q3, 2^3 cells, 125 free nodes (x + 5y + 25z), cell 0 (27 nodes): vertex 7;
   * lines 5, 7, 11 from their first vertex to their second; faces 1 (u = y,
   * v = z), 3 (u = z, v = x), 5 (u = x, v = y), u fastest; interior x fastest. */
  const int64_t want33[27] = {62, 52, 57, 60, 61, 12, 37, 2,  7,  27, 32, 10, 35, 11,
                              36, 50, 51, 55, 56, 0,  1,  5,  6,  25, 26, 30, 31};
  CHECK_OK(hpmg_grid_init(3, 3, cells, box, &g));
  int64_t *o3 = malloc(sizeof(int64_t) * (size_t)g.N);
  CHECK_OK(hpmg_grid_cellwise_order(&g, 1, o3));
  for (int i = 0; i < 27; i++) CHECK(o3[i] == want33[i], "3D Q3 cellwise order [%d] = %lld, want %lld", i, (long long)o3[i], (long long)want33[i]);
  free(o3);
  /* a permutation of the free nodes for every shape */
  for (int dim = 2; dim <= 3; dim++)
    for (int k = 1; k <= 4; k++)
      for (int64_t c = 1; c <= 3; c++)
        for (int L = 0; L <= (dim == 2 ? 3 : 2); L++) {
          int64_t n = c << L, cc[3] = {n, n, n};
          CHECK_OK(hpmg_grid_init(dim, k, cc, box, &g));
          if (g.N == 0) continue;
          int64_t *o = malloc(sizeof(int64_t) * (size_t)g.N);
          char *hit = calloc((size_t)g.N, 1);
          CHECK_OK(hpmg_grid_cellwise_order(&g, c, o));
          int bad = 0;
          for (int64_t i = 0; i < g.N; i++) {
            if (o[i] < 0 || o[i] >= g.N || hit[o[i]]) bad++;
            else hit[o[i]] = 1;
          }
          CHECK(bad == 0, "dim %d k %d coarse %lld L %d: cellwise order is not a permutation (%d bad)", dim, k, (long long)c, L, bad);
          free(o);
          free(hit);
        }
  /* the ordered sweep against a dense Gauss-Seidel sweep in the same order */
  const int shapes[2][4] = {{2, 3, 1, 2}, {3, 2, 2, 1}}; /* dim, k, coarse, L */
  for (int t = 0; t < 2; t++) {
    const int dim = shapes[t][0], k = shapes[t][1];
    const int64_t n = (int64_t)shapes[t][2] << shapes[t][3], cc[3] = {n, n, n};
    hpmg_laplace op;
    CHECK_OK(hpmg_grid_init(dim, k, cc, box, &g));
    CHECK_OK(hpmg_laplace_create(&g, 0.5, &op));
    const int64_t N = g.N;
    double *A = malloc(8 * N * N), *b = malloc(8 * N), *xs = malloc(8 * N), *xg = malloc(8 * N);
    int64_t *o = malloc(8 * N);
    CHECK_OK(hpmg_laplace_dense(&op, A));
    CHECK_OK(hpmg_grid_cellwise_order(&g, shapes[t][2], o));
    for (int64_t i = 0; i < N; i++) { b[i] = check_rand(); xs[i] = xg[i] = check_rand(); }
    for (int rev = 0; rev <= 1; rev++) {
      for (int64_t s = 0; s < N; s++) {
        const int64_t i = o[rev ? N - 1 - s : s];
        double r = b[i];
        for (int64_t j = 0; j < N; j++) r -= A[i * N + j] * xs[j];
        xs[i] += r / A[i * N + i];
      }
      hpmg_laplace_gauss_seidel(&op, HPMG_REAL_DOUBLE, b, xg, o, rev);
      double de = 0;
      for (int64_t i = 0; i < N; i++) de = fmax(de, fabs(xs[i] - xg[i]));
      CHECK(de <= 1e-10 * fmax(1.0, maxabs(N, xs)), "dim %d k %d: ordered Gauss-Seidel (reverse %d) differs by %.3e", dim, k, rev, de);
    }
    /* and it is not the lexicographic sweep */
    hpmg_laplace_gauss_seidel(&op, HPMG_REAL_DOUBLE, b, xs, NULL, 0);
    hpmg_laplace_gauss_seidel(&op, HPMG_REAL_DOUBLE, b, xg, o, 0);
    double dd = 0;
    for (int64_t i = 0; i < N; i++) dd = fmax(dd, fabs(xs[i] - xg[i]));
    CHECK(dd > 1e-8, "dim %d k %d: the cellwise sweep equals the lexicographic one", dim, k);
    free(A); free(b); free(xs); free(xg); free(o);
    hpmg_laplace_destroy(&op);
  }
  /* shapes that are not coarse * 2^l in every direction are refused */
  int64_t c32[3] = {3, 2, 2};
  CHECK_OK(hpmg_grid_init(2, 2, c32, box, &g));
  CHECK(hpmg_grid_cellwise_order(&g, 1, ord) == HPMG_ERR_ARG, "3x2 cells from one coarse cell accepted");
  CHECK(hpmg_grid_cellwise_order(&g, 0, ord) == HPMG_ERR_ARG, "coarse 0 accepted");
  return 0;
}

int main(void) {
  cellwise();
  for (int k = 1; k <= test_max_degree(10); k++) {
    run(2, k, 0.0);
    run(2, k, 2.5);
  }
  for (int k = 1; k <= test_max_degree(8); k++) {
    run(3, k, 0.0);
    run(3, k, 2.5);
  }
  /* long x-lines: the vectorized full-chunk paths (32 doubles / 64 floats per
   * chunk) and their tails, next to the boundary rows of the stiffness */
  run_cells(2, 3, 0.0, 40, 3, 1);
  run_cells(2, 1, 1.5, 150, 2, 1);
  run_cells(3, 3, 0.0, 24, 2, 2);
  run_cells(3, 2, 4.0, 37, 3, 2);
  /* 2D lines whose band of 2k + 1 lines takes more than 24 KiB: the y stage
   * in column chunks (laplace_kernels.inc, LAP_YL1), the last one partial
   * (nx = 359: double; 383: both precisions; 641: double in six chunks, the
   * last a single vector with 64-byte vectors, float in three) */
  run_cells(2, 4, 1.5, 90, 3, 1);
  run_cells(2, 8, 0.0, 48, 3, 1);
  run_cells(2, 6, 0.0, 107, 2, 1);
  /* lines shorter than a chunk: one vector at a time, the last overlapping
   * (nx = 20: both precisions; 39: float only; 19: 3D), and nx < one vector */
  run_cells(2, 3, 0.0, 7, 4, 1);
  run_cells(2, 2, 1.5, 20, 3, 1);
  run_cells(3, 4, 0.0, 5, 3, 2);
  run_cells(2, 1, 0.0, 5, 6, 1);
  return check_report();
}
