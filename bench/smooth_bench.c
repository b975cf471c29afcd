/* One level's smoothing step: time per step, in units of one operator
 * application (paper 004 reports 5-11 for its patch smoother), and DoF/s.
 * Also the driver of the memory-traffic measurement (bench/patch_traffic.sh:
 * cachegrind on STEPS = 1 and 3, the difference / 2 is one step).
 * usage: smooth_bench DIM K REFINE STEPS [patch|patch-general|chebyshev] [zorder|lexicographic|hierarchical]
 *                     [BATCH: N|auto|all] [double|float]
 * patch-general: the patch smoother's general-box path (factors per vertex
 * index) on the same plain grid, for its cost (lane groups share factors);
 * patch-stretched: that path with the cells graded geometrically (widest /
 * narrowest 4) in every direction, so every patch has its own factors (lane
 * groups with factors per lane); the operator timing stays the uniform one.
 * SMOOTH_BENCH_SCALAR=1 runs the patch sweeps one patch at a time. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "la/vec.h"
#include "disc/qk/chebyshev.h"
#include "disc/qk/patch.h"

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: %s DIM K REFINE STEPS [patch|patch-general|patch-stretched|chebyshev] "
                    "[zorder|lexicographic|hierarchical] "
                    "[N|auto|all] [double|float]\n", argv[0]);
    return 2;
  }
  const int dim = atoi(argv[1]), k = atoi(argv[2]), L = atoi(argv[3]), steps = atoi(argv[4]);
  const char *sm = argc > 5 ? argv[5] : "patch", *ord = argc > 6 ? argv[6] : "zorder";
  const char *bat = argc > 7 ? argv[7] : "auto", *prec = argc > 8 ? argv[8] : "double";
  const hpmg_real r = strcmp(prec, "float") ? HPMG_REAL_DOUBLE : HPMG_REAL_FLOAT;
  double box[3] = {1, 1, 1};
  int64_t c = (int64_t)1 << L, cells[3] = {c, c, dim == 3 ? c : 1};
  hpmg_grid g;
  hpmg_laplace op;
  hpmg_smoother *s = NULL;
  hpmg_patch_options po = {.mode = HPMG_PATCH_MULTIPLICATIVE, .local = HPMG_LOCAL_FDM,
                           .order = !strcmp(ord, "lexicographic") ? HPMG_PATCH_ORDER_LEXICOGRAPHIC
                                    : !strcmp(ord, "hierarchical") ? HPMG_PATCH_ORDER_HIERARCHICAL
                                                                   : HPMG_PATCH_ORDER_ZORDER,
                           .batch = !strcmp(bat, "auto") ? 0 : !strcmp(bat, "all") ? -1 : atoll(bat)};
  double *xn[3] = {NULL, NULL, NULL};
  if (hpmg_grid_init(dim, k, cells, box, &g) || hpmg_laplace_create(&g, 0.0, &op)) {
    fprintf(stderr, "%s\n", hpmg_last_error());
    return 1;
  }
  hpmg_laplace sop = op; /* the smoother's view of the level */
  if (!strcmp(sm, "patch-stretched"))
    for (int d = 0; d < dim; d++) {
      xn[d] = malloc(sizeof(double) * (size_t)(c + 1));
      const double q = c > 1 ? pow(4.0, 1.0 / (double)(c - 1)) : 1.0;
      double w = 1, tot = 0;
      for (int64_t i = 0; i < c; i++, w *= q) tot += w;
      xn[d][0] = 0;
      w = 1;
      for (int64_t i = 0; i < c; i++, w *= q) xn[d][i + 1] = xn[d][i] + box[d] * w / tot;
      sop.g.xn[d] = xn[d];
    }
  if (!strcmp(sm, "patch")           ? hpmg_smoother_patch(&sop, r, &po, &s)
      : !strcmp(sm, "patch-general") ? hpmg_smoother_patch_general(&sop, r, &po, &s)
      : !strcmp(sm, "patch-stretched") ? hpmg_smoother_patch(&sop, r, &po, &s)
                                     : hpmg_smoother_chebyshev(&op, r, 5, 15.0, 12, &s)) {
    fprintf(stderr, "%s\n", hpmg_last_error());
    return 1;
  }
  /* SMOOTH_BENCH_SCALAR=1: the patch sweep one patch at a time (no SIMD over patches) */
  if (getenv("SMOOTH_BENCH_SCALAR") && atoi(getenv("SMOOTH_BENCH_SCALAR")) && strncmp(sm, "patch", 5) == 0)
    hpmg_patch_set_simd(s, 0);
  const size_t bytes = hpmg_real_size(r) * (size_t)g.N;
  void *x, *b, *y;
  if (hpmg_malloc(bytes, &x) || hpmg_malloc(bytes, &b) || hpmg_malloc(bytes, &y)) return 1;
  srand(1);
  for (int64_t i = 0; i < g.N; i++) {
    double vx = rand() / (double)RAND_MAX - 0.5, vb = rand() / (double)RAND_MAX - 0.5;
    if (r == HPMG_REAL_DOUBLE) ((double *)x)[i] = vx, ((double *)b)[i] = vb;
    else ((float *)x)[i] = (float)vx, ((float *)b)[i] = (float)vb;
  }
  double ts = 1e30, ta = 1e30;
  for (int i = 0; i < steps; i++) {
    double t0 = hpmg_wtime();
    s->apply(s, b, x, 0, 0, 1);
    double t = hpmg_wtime() - t0;
    if (t < ts) ts = t;
  }
  for (int i = 0; i < (steps > 3 ? steps : 3); i++) {
    double t0 = hpmg_wtime();
    hpmg_laplace_apply(&op, r, x, y);
    double t = hpmg_wtime() - t0;
    if (t < ta) ta = t;
  }
  printf("smooth_bench dim=%d k=%d cells=%lld unknowns=%lld smoother=%s order=%s batch=%s precision=%s "
         "step_s=%.6f apply_s=%.6f step_in_applies=%.2f step_dofs_per_s=%.4e\n",
         dim, k, (long long)c, (long long)g.N, sm, ord, bat, prec, ts, ta, ts / ta, g.N / ts);
  hpmg_free(&x);
  hpmg_free(&b);
  hpmg_free(&y);
  hpmg_smoother_destroy(&s);
  hpmg_laplace_destroy(&op);
  for (int d = 0; d < 3; d++) free(xn[d]);
  return 0;
}
