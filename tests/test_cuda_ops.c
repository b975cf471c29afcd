/* CUDA kernels against the CPU reference on random inputs: the operator in
 * every fused mode, the inverse diagonal, transfers, BLAS-1, the random
 * vector and lambda_max, for every degree (2D k = 1..10, 3D k = 1..8), in
 * double (relative 2-norm error <= 1e-12) and float (<= 1e-5). Outputs are
 * poisoned with NaN before each kernel so that an unwritten entry fails.
 * Exits 77 (skipped) without a CUDA build or without a GPU. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cuda_check.h"
#ifndef HPMG_HAVE_CUDA
int main(void) {
  printf("test_cuda_ops: this build has no CUDA backend: skipped\n");
  return 77;
}
#else
#include "disc/qk/cuda/hpmg_cuda.h"
#include "la/vec.h"
#include "disc/qk/smoother.h"

static int failures = 0, checks = 0;
static double worst[2] = {0, 0};
static void check(const char *what, int dim, int k, hpmg_real r, double err) {
  const double tol = r == HPMG_REAL_DOUBLE ? 1e-12 : 1e-5;
  checks++;
  if (err > worst[r]) worst[r] = err;
  if (!(err <= tol)) {
    failures++;
    printf("FAIL %-22s dim %d k %2d %s: relative error %.3e > %.0e\n", what, dim, k,
           r == HPMG_REAL_DOUBLE ? "double" : "float ", err, tol);
  }
}



/* cuda_check_operator's report: ctx = {dim, k} */
static void report(const char *what, hpmg_real r, double err, void *ctx) {
  const int *dk = ctx;
  check(what, dk[0], dk[1], r, err);
}

static void test_level(int dim, int k, const int64_t cells[3], const double box[3], double lambda) {
  hpmg_grid g;
  hpmg_laplace op;
  hpmg_cuda_op dop;
  CK(hpmg_grid_init(dim, k, cells, box, &g));
  CK(hpmg_laplace_create(&g, lambda, &op));
  CK(hpmg_cuda_op_create(&op, &dop));
  const int64_t n = g.N;
  for (int ri = 0; ri < 2; ri++) {
    const hpmg_real r = ri ? HPMG_REAL_FLOAT : HPMG_REAL_DOUBLE;
    const size_t bytes = (size_t)n * hpmg_real_size(r);
    cuda_op_bufs B;
    cuda_op_bufs_create(r, n, &B);
    const int dk[2] = {dim, k};
    cuda_check_operator(&op, dop, r, n, &B, report, (void *)dk);
    void *hx = B.hx, *hb = B.hb, *hy = B.hy, *gy = B.gy, *dx = B.dx, *db = B.db, *dy = B.dy;
    /* BLAS-1 */
    double dc = hpmg_vec_dot(r, n, hx, hb), dg;
    CK(hpmg_cuda_dot(r, n, dx, db, &dg));
    check("dot", dim, k, r, fabs(dg - dc) / (sqrt(hpmg_vec_dot(r, n, hx, hx) * hpmg_vec_dot(r, n, hb, hb))));
    CK(hpmg_cuda_norm(r, n, dx, &dg));
    check("norm", dim, k, r, fabs(dg - hpmg_vec_norm(r, n, hx)) / hpmg_vec_norm(r, n, hx));
    memcpy(hy, hb, bytes);
    hpmg_vec_axpy(r, n, -0.37, hx, hy);
    CK(hpmg_cuda_upload(dy, hb, bytes));
    CK(hpmg_cuda_axpy(r, n, -0.37, dx, dy));
    CK(hpmg_cuda_download(gy, dy, bytes));
    check("axpy", dim, k, r, relerr(r, n, gy, hy));
    memcpy(hy, hb, bytes);
    hpmg_vec_xpby(r, n, hx, 0.61, hy);
    CK(hpmg_cuda_upload(dy, hb, bytes));
    CK(hpmg_cuda_xpby(r, n, dx, 0.61, dy));
    CK(hpmg_cuda_download(gy, dy, bytes));
    check("xpby", dim, k, r, relerr(r, n, gy, hy));
    cuda_op_bufs_destroy(&B);
  }
  /* lambda_max: the same random start vector and CG steps as the CPU, both in float
   * (the reductions' order differs) */
  if (n >= 1) {
    void *w[6];
    double lg, lc;
    for (int i = 0; i < 6; i++) CK(hpmg_cuda_malloc(sizeof(float) * (size_t)n, &w[i]));
    CK(hpmg_cuda_estimate_lambda_max(dop, 12, w, &lg));
    CK(hpmg_estimate_lambda_max(&op, HPMG_REAL_FLOAT, 12, &lc));
    check("lambda_max", dim, k, HPMG_REAL_FLOAT, fabs(lg - lc) / lc * 10.0); /* 1e-6 relative */
    for (int i = 0; i < 6; i++) hpmg_cuda_free(w[i]);
  }
  /* transfers: prolongation from this level to the next finer, restriction back */
  hpmg_kron3 P, R;
  hpmg_cuda_kron3 dP, dR;
  CK(hpmg_transfer_create(&g, &P, &R));
  CK(hpmg_cuda_kron3_create(&P, &dP));
  CK(hpmg_cuda_kron3_create(&R, &dR));
  const int64_t nf = (int64_t)P.A[0].nrows * P.A[1].nrows * P.A[2].nrows;
  for (int ri = 0; ri < 2; ri++) {
    const hpmg_real r = ri ? HPMG_REAL_FLOAT : HPMG_REAL_DOUBLE;
    const size_t rs = hpmg_real_size(r);
    void *hc = malloc((size_t)n * rs), *hf = malloc((size_t)nf * rs), *hf2 = malloc((size_t)nf * rs),
         *hc2 = malloc((size_t)n * rs), *gf = malloc((size_t)nf * rs), *gc = malloc((size_t)n * rs);
    void *dc, *df;
    CK(hpmg_cuda_malloc((size_t)n * rs, &dc));
    CK(hpmg_cuda_malloc((size_t)nf * rs, &df));
    fill(r, n, hc);
    fill(r, nf, hf);
    CK(hpmg_cuda_upload(dc, hc, (size_t)n * rs));
    /* P, overwrite */
    hpmg_kron3_apply(&P, r, hc, hf2, 0);
    poison(df, (size_t)nf * rs);
    CK(hpmg_cuda_kron3_apply(dP, r, dc, df, 0, NULL));
    CK(hpmg_cuda_download(gf, df, (size_t)nf * rs));
    check("prolongation", dim, k, r, relerr(r, nf, gf, hf2));
    /* P, add */
    memcpy(hf2, hf, (size_t)nf * rs);
    hpmg_kron3_apply(&P, r, hc, hf2, 1);
    CK(hpmg_cuda_upload(df, hf, (size_t)nf * rs));
    CK(hpmg_cuda_kron3_apply(dP, r, dc, df, 1, NULL));
    CK(hpmg_cuda_download(gf, df, (size_t)nf * rs));
    check("prolongation (add)", dim, k, r, relerr(r, nf, gf, hf2));
    /* R */
    hpmg_kron3_apply(&R, r, hf, hc2, 0);
    CK(hpmg_cuda_upload(df, hf, (size_t)nf * rs));
    poison(dc, (size_t)n * rs);
    CK(hpmg_cuda_kron3_apply(dR, r, df, dc, 0, NULL));
    CK(hpmg_cuda_download(gc, dc, (size_t)n * rs));
    check("restriction", dim, k, r, relerr(r, n, gc, hc2));
    /* conversions */
    if (r == HPMG_REAL_DOUBLE) {
      float *hcf = malloc((size_t)n * 4), *gcf = malloc((size_t)n * 4);
      void *dcf;
      CK(hpmg_cuda_malloc((size_t)n * 4, &dcf));
      CK(hpmg_cuda_upload(dc, hc, (size_t)n * rs));
      hpmg_vec_convert(n, HPMG_REAL_DOUBLE, hc, HPMG_REAL_FLOAT, hcf);
      CK(hpmg_cuda_convert(n, HPMG_REAL_DOUBLE, dc, HPMG_REAL_FLOAT, dcf));
      CK(hpmg_cuda_download(gcf, dcf, (size_t)n * 4));
      check("convert double->float", dim, k, HPMG_REAL_FLOAT, relerr(HPMG_REAL_FLOAT, n, gcf, hcf));
      poison(dc, (size_t)n * 8);
      CK(hpmg_cuda_convert(n, HPMG_REAL_FLOAT, dcf, HPMG_REAL_DOUBLE, dc));
      CK(hpmg_cuda_download(gc, dc, (size_t)n * 8));
      hpmg_vec_convert(n, HPMG_REAL_FLOAT, hcf, HPMG_REAL_DOUBLE, hc2);
      check("convert float->double", dim, k, HPMG_REAL_DOUBLE, relerr(HPMG_REAL_DOUBLE, n, gc, hc2));
      free(hcf); free(gcf);
      hpmg_cuda_free(dcf);
    }
    free(hc); free(hf); free(hf2); free(hc2); free(gf); free(gc);
    hpmg_cuda_free(dc); hpmg_cuda_free(df);
  }
  hpmg_cuda_kron3_destroy(&dP);
  hpmg_cuda_kron3_destroy(&dR);
  hpmg_kron3_destroy(&P);
  hpmg_kron3_destroy(&R);
  hpmg_cuda_op_destroy(&dop);
  hpmg_laplace_destroy(&op);
}

/* Difference form (laplace.h): the stiffness is applied so that its row
 * sums are the exact ones (0 away from the boundary) whatever the rounding
 * of the entries; a kernel that sums rounded entries times values (even with
 * a row-sum correction) is off by ~eps |K| in every row, the systematic term
 * behind the ~eps/h^2 solution floor. On the constant field the GPU kernel
 * (x, y: differences to the center; z: summation by parts over plane
 * differences) must give exactly 0 in every row whose 1D rows all have a zero
 * row sum (k <= i_d < n_d - k in each direction), as the CPU does, and match
 * the CPU elsewhere (double 1e-12, float 1e-5 relative). */
static void test_constant(int dim, int k, const int64_t cells[3], const double box[3]) {
  hpmg_grid g;
  hpmg_laplace op;
  hpmg_cuda_op dop;
  CK(hpmg_grid_init(dim, k, cells, box, &g));
  CK(hpmg_laplace_create(&g, 0.0, &op));
  CK(hpmg_cuda_op_create(&op, &dop));
  const int64_t n = g.N;
  for (int ri = 0; ri < 2; ri++) {
    const hpmg_real r = ri ? HPMG_REAL_FLOAT : HPMG_REAL_DOUBLE;
    const size_t bytes = (size_t)n * hpmg_real_size(r);
    void *hx = malloc(bytes), *hy = malloc(bytes), *gy = malloc(bytes), *dx, *dy;
    for (int64_t i = 0; i < n; i++) {
      if (r == HPMG_REAL_DOUBLE) ((double *)hx)[i] = 1.0;
      else ((float *)hx)[i] = 1.0f;
    }
    CK(hpmg_cuda_malloc(bytes, &dx));
    CK(hpmg_cuda_malloc(bytes, &dy));
    CK(hpmg_cuda_upload(dx, hx, bytes));
    poison(dy, bytes);
    hpmg_laplace_apply(&op, r, hx, hy);
    hpmg_kernel_args a = {.mode = HPMG_KERNEL_APPLY, .x = dx, .y = dy};
    CK(hpmg_cuda_op_kernel(dop, r, &a));
    CK(hpmg_cuda_download(gy, dy, bytes));
    int64_t nonzero_gpu = 0, nonzero_cpu = 0, interior = 0;
    double worst = 0;
    for (int64_t i2 = 0; i2 < g.n[2]; i2++)
      for (int64_t i1 = 0; i1 < g.n[1]; i1++)
        for (int64_t i0 = 0; i0 < g.n[0]; i0++) {
          const int64_t id[3] = {i0, i1, i2};
          int in = 1;
          for (int d = 0; d < dim; d++) in &= id[d] >= k && id[d] < g.n[d] - k;
          if (!in) continue;
          const int64_t i = hpmg_grid_index(&g, i0, i1, i2);
          interior++;
          nonzero_gpu += get(r, gy, i) != 0.0;
          nonzero_cpu += get(r, hy, i) != 0.0;
          if (fabs(get(r, gy, i)) > worst) worst = fabs(get(r, gy, i));
        }
    checks++;
    const double err = relerr(r, n, gy, hy);
    const int ok = nonzero_gpu == 0 && err <= (r == HPMG_REAL_DOUBLE ? 1e-12 : 1e-5);
    failures += !ok;
    if (!ok || (dim == 3 && k == 3))
      printf("%s apply (constant field)  dim %d k %2d %s: %lld interior rows, nonzero gpu %lld (max %.1e) cpu %lld; "
             "all rows vs CPU %.2e\n", ok ? "ok  " : "FAIL", dim, k, r == HPMG_REAL_DOUBLE ? "double" : "float ",
             (long long)interior, (long long)nonzero_gpu, worst, (long long)nonzero_cpu, err);
    free(hx); free(hy); free(gy);
    hpmg_cuda_free(dx); hpmg_cuda_free(dy);
  }
  hpmg_cuda_op_destroy(&dop);
  hpmg_laplace_destroy(&op);
}

/* the random vector of smoother.c: x_i = 0.5 + u_{i+1} */
static void test_random(void) {
  const int64_t n = 100003;
  double *h = malloc(sizeof(double) * n), *g = malloc(sizeof(double) * n);
  uint64_t st = 0x9E3779B97F4A7C15ull;
  for (int64_t i = 0; i < n; i++) {
    st = st * 6364136223846793005ull + 1442695040888963407ull;
    h[i] = 0.5 + (double)(st >> 11) / 9007199254740992.0;
  }
  void *d;
  CK(hpmg_cuda_malloc(sizeof(double) * n, &d));
  CK(hpmg_cuda_fill_random(HPMG_REAL_DOUBLE, n, d));
  CK(hpmg_cuda_download(g, d, sizeof(double) * n));
  check("random vector", 0, 0, HPMG_REAL_DOUBLE, relerr(HPMG_REAL_DOUBLE, n, g, h) * 1e6); /* bitwise */
  hpmg_cuda_free(d);
  free(h); free(g);
}

int main(int argc, char **argv) {
  if (hpmg_cuda_check()) {
    printf("test_cuda_ops: %s: skipped\n", hpmg_last_error());
    return 77;
  }
  /* optional: highest degree in 3D and in 2D (smaller runs under compute-sanitizer) */
  const int kmax3 = argc > 1 ? atoi(argv[1]) : 8, kmax2 = argc > 2 ? atoi(argv[2]) : 10;
  test_random();
  for (int k = 1; k <= kmax2; k++) { /* 2D: nx across several x-tiles, anisotropic */
    const int64_t cells[3] = {2 + 70 / k, 1 + 40 / k, 1};
    const double box[3] = {1.0, 0.7, 1.0};
    test_level(2, k, cells, box, k % 2 ? 0.0 : 3.5);
    test_constant(2, k, cells, box);
  }
  for (int k = 1; k <= kmax3; k++) { /* 3D: several tiles in x and y, several z-chunks */
    const int64_t cells[3] = {2 + 40 / k, 1 + 24 / k, 2 + 30 / k};
    const double box[3] = {1.0, 0.8, 1.3};
    test_level(3, k, cells, box, k % 2 ? 2.0 : 0.0);
    test_constant(3, k, cells, box);
    printf("3D k=%d done\n", k);
    fflush(stdout);
  }
  printf("test_cuda_ops: %d checks, %d failures; worst relative error double %.2e, float %.2e\n", checks, failures,
         worst[0], worst[1]);
  return failures ? 1 : 0;
}
#endif
