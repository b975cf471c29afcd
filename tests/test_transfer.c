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

static int run(int dim, int k) {
  const double box[3] = {1.0, 0.6, 1.4};
  int64_t cc[3] = {2, 3, 2}, cf[3] = {4, 6, 4};
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
  double pos[3][256], err = 0;
  for (int d = 0; d < 3; d++)
    if (d < dim) hpmg_node_positions_1d(k, (int)gf.cells[d], gf.h[d], pos[d]);
    else pos[d][0] = 0;
  for (int64_t i = 0; i < gf.N; i++) {
    int64_t i0 = i % gf.n[0], i1 = (i / gf.n[0]) % gf.n[1], i2 = i / (gf.n[0] * gf.n[1]);
    double x[3] = {pos[0][i0], pos[1][i1], pos[2][i2]};
    err = fmax(err, fabs(uf[i] - eval_coarse(&gc, uc, x)));
  }
  CHECK(err < 1e-13, "dim %d k %d: prolongation is not the embedding (max diff %.3e)", dim, k, err);
  /* transpose: vf.(P uc) = (R vf).uc */
  hpmg_kron3_apply(&R, HPMG_REAL_DOUBLE, vf, vc, 0);
  double lhs = hpmg_vec_dot(HPMG_REAL_DOUBLE, gf.N, vf, uf), rhs = hpmg_vec_dot(HPMG_REAL_DOUBLE, gc.N, vc, uc);
  CHECK(fabs(lhs - rhs) <= 1e-13 * fmax(1.0, fabs(lhs)) * sqrt((double)gf.N), "dim %d k %d: R != P^T (%.17g vs %.17g)",
        dim, k, lhs, rhs);
  /* add mode and float kernels */
  memcpy(vf, uf, 8 * gf.N);
  hpmg_kron3_apply(&P, HPMG_REAL_DOUBLE, uc, vf, 1);
  err = 0;
  for (int64_t i = 0; i < gf.N; i++) err = fmax(err, fabs(vf[i] - 2 * uf[i]));
  CHECK(err < 1e-13, "dim %d k %d: add mode (%.3e)", dim, k, err);
  hpmg_vec_convert(gc.N, HPMG_REAL_DOUBLE, uc, HPMG_REAL_FLOAT, ucf);
  hpmg_kron3_apply(&P, HPMG_REAL_FLOAT, ucf, uff, 0);
  err = 0;
  for (int64_t i = 0; i < gf.N; i++) err = fmax(err, fabs(uff[i] - uf[i]));
  CHECK(err < 1e-5, "dim %d k %d: float prolongation (%.3e)", dim, k, err);
  free(uc); free(uf); free(vf); free(vc); free(ucf); free(uff);
  hpmg_kron3_destroy(&P);
  hpmg_kron3_destroy(&R);
  return 0;
}

int main(void) {
  for (int k = 1; k <= test_max_degree(10); k++) run(2, k);
  for (int k = 1; k <= test_max_degree(8); k++) run(3, k);
  return check_report();
}
