/* The Q_k operator on a general box (docs/bc.md): time per application and
 * per fused Chebyshev step, double, for the same cells with Dirichlet faces,
 * Neumann faces with tanh-stretched cells, and periodic directions (the
 * wrap pass of laplace.c on top of the kernel: its share of the application
 * is the time with the pass minus the kernel's alone, best of each), best
 * of REPEAT.
 * usage: qk_box_bench DIM K CELLS [REPEAT] */
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include "disc/qk/laplace.h"
#include "grid/grid.h"

/* best time of the operator (kernel_only: the kernel without the wrap pass) */
static double best_apply(const hpmg_laplace *op, hpmg_kernel_mode mode, double *x, double *y, double *b, double *d,
                         int rep, int kernel_only) {
  double best = 1e30;
  for (int r = 0; r < rep; r++) {
    hpmg_kernel_args a = {.mode = mode, .x = x, .y = y, .b = b, .d = d, .c1 = 0.5, .c2 = 0.3};
    const double t0 = hpmg_wtime();
    if (kernel_only) hpmg_laplace_kernels_select()->kernel[HPMG_REAL_DOUBLE](op, &a);
    else hpmg_laplace_kernel(op, HPMG_REAL_DOUBLE, &a);
    const double t = hpmg_wtime() - t0;
    best = t < best ? t : best;
  }
  return best;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s DIM K CELLS [REPEAT]\n", argv[0]);
    return 2;
  }
  const int dim = atoi(argv[1]), k = atoi(argv[2]), c = atoi(argv[3]), rep = argc > 4 ? atoi(argv[4]) : 20;
  const char *names[5] = {"dirichlet", "neumann+tanh", "periodic x", "periodic x,z", "periodic all"};
  double *xn = malloc(sizeof(double) * (size_t)(c + 1));
  for (int i = 0; i <= c; i++) { /* tanh 2 clustering on [0,1] */
    const double s = (double)i / c;
    xn[i] = 0.5 * (1 + tanh(2.0 * (2 * s - 1)) / tanh(2.0));
  }
  for (int v = 0; v < 5; v++) {
    const int64_t cells[3] = {c, c, c};
    const double box[3] = {1, 1, 1};
    hpmg_grid g;
    if (hpmg_grid_init(dim, k, cells, box, &g)) return fprintf(stderr, "%s\n", hpmg_last_error()), 1;
    for (int d = 0; d < dim; d++) {
      const int per = v == 4 || (v >= 2 && d == 0) || (v == 3 && d == 2);
      const hpmg_bc_kind kind = v == 1 ? HPMG_BC_NEUMANN : per ? HPMG_BC_PERIODIC : HPMG_BC_DIRICHLET;
      g.bc[2 * d] = g.bc[2 * d + 1] = kind;
      if (v == 1) g.xn[d] = xn;
      const hpmg_dir1d L = hpmg_grid_dir(&g, d);
      g.n[d] = hpmg_dir1d_n(&L);
      g.off[d] = hpmg_dir1d_off(&L);
    }
    g.N = g.n[0] * g.n[1] * g.n[2];
    hpmg_laplace op;
    if (hpmg_laplace_create(&g, 0.0, &op)) return fprintf(stderr, "%s\n", hpmg_last_error()), 1;
    double *x = malloc(sizeof(double) * g.N), *y = malloc(sizeof(double) * g.N), *b = malloc(sizeof(double) * g.N),
           *d = calloc((size_t)g.N, sizeof(double));
    for (int64_t i = 0; i < g.N; i++) x[i] = (double)(i % 7) / 7, b[i] = 1.0;
    const double ta = best_apply(&op, HPMG_KERNEL_APPLY, x, y, b, d, rep, 0),
                 ts = best_apply(&op, HPMG_KERNEL_SMOOTH, x, y, b, d, rep, 0);
    printf("%dD Q%d %d^%d cells %-13s %10lld unknowns: apply %.3f ms (%.1f MDoF/s), cheb-step %.3f ms (%.1f MDoF/s)", dim, k,
           c, dim, names[v], (long long)g.N, 1e3 * ta, g.N / ta / 1e6, 1e3 * ts, g.N / ts / 1e6);
    if (op.wrap) { /* the wrap pass's share of the application */
      const double ka = best_apply(&op, HPMG_KERNEL_APPLY, x, y, b, d, rep, 1);
      printf("; kernel alone %.3f ms, wrap pass %.1f%% of apply", 1e3 * ka, 100 * (ta - ka) / ta);
    }
    printf("\n");
    free(x), free(y), free(b), free(d);
    hpmg_laplace_destroy(&op);
  }
  free(xn);
  return 0;
}
