/* Micro-benchmark of the level kernels: operator application, fused Chebyshev
 * step, prolongation and restriction, in double and float. Prints time per
 * call, unknowns/s, GFLOP/s and effective GB/s (x read + y written).
 * The kernels are the variant in use (HPMG_ISA selects another one).
 * usage: op_bench DIM K REFINE [REPEAT] */
#include <stdio.h>
#include <stdlib.h>
#include "la/vec.h"
#include "disc/qk/transfer.h"

static double best_of(int rep, void (*f)(void *), void *ctx) {
  double best = 1e30;
  for (int r = 0; r < rep; r++) {
    double t0 = hpmg_wtime();
    f(ctx);
    double t = hpmg_wtime() - t0;
    if (t < best) best = t;
  }
  return best;
}

typedef struct {
  hpmg_laplace *op;
  hpmg_kron3 *P, *R;
  hpmg_real r;
  void *x, *y, *b, *d, *xc;
} ctx_t;

static void run_apply(void *c) { ctx_t *t = c; hpmg_laplace_apply(t->op, t->r, t->x, t->y); }
static void run_smooth(void *c) {
  ctx_t *t = c;
  hpmg_kernel_args a = {.mode = HPMG_KERNEL_SMOOTH, .x = t->x, .y = t->y, .b = t->b, .d = t->d, .c1 = 0.5, .c2 = 0.3};
  hpmg_laplace_kernel(t->op, t->r, &a);
}
static void run_prolong(void *c) { ctx_t *t = c; hpmg_kron3_apply(t->P, t->r, t->xc, t->y, 1); }
static void run_restrict(void *c) { ctx_t *t = c; hpmg_kron3_apply(t->R, t->r, t->x, t->xc, 0); }

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s DIM K REFINE [REPEAT]\n", argv[0]);
    return 2;
  }
  int dim = atoi(argv[1]), k = atoi(argv[2]), L = atoi(argv[3]), rep = argc > 4 ? atoi(argv[4]) : 10;
  double box[3] = {1, 1, 1};
  int64_t c = (int64_t)1 << L, cells[3] = {c, c, c}, cc[3] = {c / 2, c / 2, c / 2};
  hpmg_grid g, gc;
  hpmg_laplace op;
  hpmg_kron3 P, R;
  if (hpmg_grid_init(dim, k, cells, box, &g) || hpmg_grid_init(dim, k, cc, box, &gc) ||
      hpmg_laplace_create(&g, 0.0, &op) || hpmg_transfer_create(&gc, &P, &R)) {
    fprintf(stderr, "%s\n", hpmg_last_error());
    return 1;
  }
  const double flops = hpmg_laplace_flops_cpu(&op); /* what the CPU kernel executes */
  printf("dim %d k %d cells %lld^%d unknowns %lld flops/unknown %.1f tile %d isa %s (%d-byte vectors)\n", dim, k,
         (long long)c, dim, (long long)g.N, flops / g.N, op.tile, hpmg_cpu_isa(), hpmg_cpu_simd_bytes());
  for (int ri = 0; ri < 2; ri++) {
    hpmg_real r = ri ? HPMG_REAL_FLOAT : HPMG_REAL_DOUBLE;
    size_t s = hpmg_real_size(r);
    ctx_t t = {&op, &P, &R, r, NULL, NULL, NULL, NULL, NULL};
    hpmg_calloc(s * g.N, &t.x); hpmg_calloc(s * g.N, &t.y); hpmg_calloc(s * g.N, &t.b); hpmg_calloc(s * g.N, &t.d);
    hpmg_calloc(s * gc.N, &t.xc);
    hpmg_vec_zero(r, g.N, t.x);
    const char *nm = ri ? "float " : "double";
    double ta = best_of(rep, run_apply, &t), ts = best_of(rep, run_smooth, &t);
    double tp = best_of(rep, run_prolong, &t), tr = best_of(rep, run_restrict, &t);
    printf("%s apply     %8.3f ms  %7.1f MDoF/s  %6.1f GFLOP/s  %6.1f GB/s\n", nm, ta * 1e3, g.N / ta * 1e-6,
           flops / ta * 1e-9, 2.0 * s * g.N / ta * 1e-9);
    printf("%s cheb-step %8.3f ms  %7.1f MDoF/s  (x,b,d read; d,y written: %6.1f GB/s)\n", nm, ts * 1e3,
           g.N / ts * 1e-6, 5.0 * s * g.N / ts * 1e-9);
    printf("%s prolong   %8.3f ms  restrict %8.3f ms\n", nm, tp * 1e3, tr * 1e3);
    hpmg_free(&t.x); hpmg_free(&t.y); hpmg_free(&t.b); hpmg_free(&t.d); hpmg_free(&t.xc);
  }
  hpmg_laplace_destroy(&op);
  hpmg_kron3_destroy(&P);
  hpmg_kron3_destroy(&R);
  return 0;
}
