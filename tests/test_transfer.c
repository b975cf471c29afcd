/* Prolongation reproduces every function of the coarse Q_k space exactly (the
 * coarse finite-element function, evaluated directly in its cells, equals the
 * prolongated vector at every fine node), and restriction is its transpose. */
#include <string.h>
#include "check.h"
#include "fem/fem.h"
#include "la/vec.h"
#include "disc/qk/transfer.h"
#include "test_env.h"

/* coarse FE function with interior coefficients u at physical point x */
static double eval_coarse(const hpmg_grid *g, const double *u, const double x[3]) {
  const int k = g->k, m = k + 1;
  double gll[16], w[16], v[3][16];
  int64_t c[3];
  hpmg_gauss_lobatto(m, gll, w);
  for (int d = 0; d < 3; d++) {
    if (d >= g->dim) { c[d] = 0; v[d][0] = 1; continue; }
    c[d] = (int64_t)floor(x[d] / g->h[d]);
    if (c[d] >= g->cells[d]) c[d] = g->cells[d] - 1;
    hpmg_lagrange_eval(m, gll, x[d] / g->h[d] - c[d], v[d], NULL);
  }
  double s = 0;
  int m2 = g->dim == 3 ? m : 1;
  for (int a2 = 0; a2 < m2; a2++)
    for (int a1 = 0; a1 < m; a1++)
      for (int a0 = 0; a0 < m; a0++) {
        int64_t gi[3] = {c[0] * k + a0, c[1] * k + a1, g->dim == 3 ? c[2] * k + a2 : 1};
        int inside = 1;
        for (int d = 0; d < g->dim; d++) inside &= gi[d] >= 1 && gi[d] <= g->n[d];
        if (!inside) continue;
        s += v[0][a0] * v[1][a1] * (g->dim == 3 ? v[2][a2] : 1.0) *
             u[hpmg_grid_index(g, gi[0] - 1, gi[1] - 1, g->dim == 3 ? gi[2] - 1 : 0)];
      }
  return s;
}

static int run(int dim, int k, const int64_t cc[3]) {
  const double box[3] = {1.0, 0.6, 1.4};
  const int64_t cf[3] = {2 * cc[0], 2 * cc[1], 2 * cc[2]};
  hpmg_grid gc, gf;
  hpmg_kron3 P, R;
  CHECK_OK(hpmg_grid_init(dim, k, cc, box, &gc));
  CHECK_OK(hpmg_grid_init(dim, k, cf, box, &gf));
  CHECK_OK(hpmg_transfer_create(&gc, &P, &R));
  double *uc = malloc(8 * gc.N), *uf = malloc(8 * gf.N), *vf = malloc(8 * gf.N), *vc = malloc(8 * gc.N);
  float *ucf = malloc(4 * gc.N), *uff = malloc(4 * gf.N);
  for (int64_t i = 0; i < gc.N; i++) uc[i] = check_rand();
  for (int64_t i = 0; i < gf.N; i++) vf[i] = check_rand();
  hpmg_kron3_apply(&P, HPMG_REAL_DOUBLE, uc, uf, 0);
  double pos[3][512], err = 0;
  for (int d = 0; d < 3; d++)
    if (d < dim) hpmg_node_positions_1d(k, (int)gf.cells[d], gf.h[d], pos[d]);
    else pos[d][0] = 0;
  for (int64_t i = 0; i < gf.N; i++) {
    int64_t i0 = i % gf.n[0], i1 = (i / gf.n[0]) % gf.n[1], i2 = i / (gf.n[0] * gf.n[1]);
    double x[3] = {pos[0][i0], pos[1][i1], pos[2][i2]};
    err = fmax(err, fabs(uf[i] - eval_coarse(&gc, uc, x)));
  }
  /* rounding grows with the (k+1)^dim terms of each value and the size of
   * the Lagrange basis at high k (2D Q10 on 26 cells: 1.3e-13); a wrong
   * index or a lost line gives an O(1) difference */
  const double tol = fmax(1e-13, 1e-14 * pow(k + 1, dim));
  CHECK(err < tol, "dim %d k %d coarse %lldx%lld: prolongation is not the embedding (max diff %.3e)", dim, k,
        (long long)cc[0], (long long)cc[1], err);
  /* transpose: vf.(P uc) = (R vf).uc */
  hpmg_kron3_apply(&R, HPMG_REAL_DOUBLE, vf, vc, 0);
  double lhs = hpmg_vec_dot(HPMG_REAL_DOUBLE, gf.N, vf, uf), rhs = hpmg_vec_dot(HPMG_REAL_DOUBLE, gc.N, vc, uc);
  CHECK(fabs(lhs - rhs) <= 1e-13 * fmax(1.0, fabs(lhs)) * sqrt((double)gf.N), "dim %d k %d coarse %lldx%lld: R != P^T (%.17g vs %.17g)",
        dim, k, (long long)cc[0], (long long)cc[1], lhs, rhs);
  /* add mode and float kernels */
  memcpy(vf, uf, 8 * gf.N);
  hpmg_kron3_apply(&P, HPMG_REAL_DOUBLE, uc, vf, 1);
  err = 0;
  for (int64_t i = 0; i < gf.N; i++) err = fmax(err, fabs(vf[i] - 2 * uf[i]));
  CHECK(err < tol, "dim %d k %d coarse %lldx%lld: add mode (%.3e)", dim, k, (long long)cc[0], (long long)cc[1], err);
  hpmg_vec_convert(gc.N, HPMG_REAL_DOUBLE, uc, HPMG_REAL_FLOAT, ucf);
  hpmg_kron3_apply(&P, HPMG_REAL_FLOAT, ucf, uff, 0);
  err = 0;
  for (int64_t i = 0; i < gf.N; i++) err = fmax(err, fabs(uff[i] - uf[i]));
  CHECK(err < 1e-5, "dim %d k %d coarse %lldx%lld: float prolongation (%.3e)", dim, k, (long long)cc[0], (long long)cc[1], err);
  /* restriction in add mode (vf = 2 uf now: wc = R uf + R vf = 3 R uf), and in float */
  double *rc = malloc(8 * gc.N), *wc = malloc(8 * gc.N);
  float *vff = malloc(4 * gf.N), *vcf = malloc(4 * gc.N);
  hpmg_kron3_apply(&R, HPMG_REAL_DOUBLE, uf, rc, 0);
  memcpy(wc, rc, 8 * gc.N);
  hpmg_kron3_apply(&R, HPMG_REAL_DOUBLE, vf, wc, 1);
  hpmg_vec_convert(gf.N, HPMG_REAL_DOUBLE, uf, HPMG_REAL_FLOAT, vff);
  hpmg_kron3_apply(&R, HPMG_REAL_FLOAT, vff, vcf, 0);
  double errf = 0, scale = 0;
  err = 0;
  for (int64_t i = 0; i < gc.N; i++) scale = fmax(scale, fabs(rc[i]));
  for (int64_t i = 0; i < gc.N; i++) err = fmax(err, fabs(wc[i] - 3 * rc[i])), errf = fmax(errf, fabs(vcf[i] - rc[i]));
  CHECK(err <= 1e-13 * scale, "dim %d k %d coarse %lldx%lld: restriction add mode (%.3e)", dim, k, (long long)cc[0], (long long)cc[1], err);
  CHECK(errf <= 1e-5 * scale, "dim %d k %d coarse %lldx%lld: float restriction (%.3e)", dim, k, (long long)cc[0], (long long)cc[1], errf);
  free(rc);
  free(wc); free(vff); free(vcf);
  free(uc); free(uf); free(vf); free(vc); free(ucf); free(uff);
  hpmg_kron3_destroy(&P);
  hpmg_kron3_destroy(&R);
  return 0;
}

int main(void) {
  /* a few lines per direction, and more lines than a vector's lanes, none
   * a multiple of them (the x stage runs on groups of lines, transposed,
   * where the lines are at least a vector long: transfer_kernels.inc) */
  const int64_t small[3] = {2, 3, 2}, large2[3] = {13, 7, 1}, large3[3] = {9, 5, 3};
  for (int k = 1; k <= test_max_degree(10); k++) run(2, k, small), run(2, k, large2);
  for (int k = 1; k <= test_max_degree(8); k++) run(3, k, small);
  for (int k = 1; k <= test_max_degree(4); k++) run(3, k, large3);
  return check_report();
}
