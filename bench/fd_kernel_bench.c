/* Each FD kernel of a backend alone at one grid size, against the DRAM
 * traffic it must move (scripts/gpu-fd-perf, docs/fd.md "Streaming bound"):
 *   fd_kernel_bench DIM L [cpu|cuda] [double|float]
 * Prints one JSON line per kernel: median seconds of 5 calls, the vectors of
 * the fine level it must read or write (streams; a coarse vector counts
 * 1/2^d), and the implied bandwidth. Compare with bench/gpu_peak's copy. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "la/backend.h"
#include "disc/fd/fd_mg.h"

static const fd_ops *o;
static const hpmg_backend *be; /* memory, copy and dot: the backend the solver uses */
static double median5(double *t) {
  for (int i = 0; i < 5; i++)
    for (int j = i + 1; j < 5; j++)
      if (t[j] < t[i]) { double x = t[i]; t[i] = t[j]; t[j] = x; }
  return t[2];
}
#define TIME(name, streams, expr)                                                                       \
  do {                                                                                                  \
    double t_[5];                                                                                       \
    for (int r_ = -1; r_ < 5; r_++) {                                                                   \
      be->sync();                                                                                       \
      const double t0_ = hpmg_wtime();                                                                  \
      expr;                                                                                             \
      be->sync();                                                                                       \
      if (r_ >= 0) t_[r_] = hpmg_wtime() - t0_;                                                         \
    }                                                                                                   \
    const double m_ = median5(t_);                                                                      \
    printf("{\"dim\":%d,\"n\":%lld,\"prec\":\"%s\",\"kernel\":\"%s\",\"s\":%.6e,\"streams\":%.3f,"        \
           "\"GBps\":%.1f}\n", dim, (long long)n, sz == 8 ? "double" : "float", name, m_, (double)(streams), \
           (double)(streams) * (double)sz * (double)N / m_ * 1e-9);                                       \
  } while (0)

int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: %s DIM L [cpu|cuda] [double|float]\n", argv[0]); return 2; }
  const int dim = atoi(argv[1]), L = atoi(argv[2]);
  const int cuda = argc > 3 && !strcmp(argv[3], "cuda");
  const fd_prec p = argc > 4 && !strcmp(argv[4], "float") ? FD_FLOAT : FD_DOUBLE;
  if (cuda) {
    if (fd_ops_cuda(p, &o) || hpmg_backend_cuda(&be)) { fprintf(stderr, "%s\n", hpmg_last_error()); return 77; }
  } else {
    o = fd_ops_cpu(p);
    be = hpmg_backend_host();
  }
  const hpmg_real real = (hpmg_real)p;
  const int64_t n = (int64_t)1 << L, N = fd_points(dim, n), Nc = fd_points(dim, n / 2);
  const size_t sz = fd_prec_size(p);
  const double c = 1.0 / (dim == 2 ? 4 : 8);
  void *u, *f, *r, *uc, *fc;
  if (be->alloc(sz * (size_t)N, &u) || be->alloc(sz * (size_t)N, &f) || be->alloc(sz * (size_t)N, &r) ||
      be->alloc(sz * (size_t)Nc, &uc) || be->alloc(sz * (size_t)Nc, &fc)) {
    fprintf(stderr, "%s\n", hpmg_last_error());
    return 1;
  }
  double nrm;
  TIME("copy", 2, be->copy(real, N, f, r));
  TIME("residual", 3, o->residual(dim, n, u, f, r));
  TIME("residual_norm", 2, o->residual_norm(dim, n, u, f, &nrm));
  TIME("dot", 2, be->dot(real, N, u, f, &nrm));
  TIME("restrict", 1 + c, o->restrict_rhs(dim, n, r, fc));
  if (o->residual_restrict) TIME("residual_restrict", 2 + c, o->residual_restrict(dim, n, u, f, fc));
  if (o->restrict_update) TIME("restrict_update", 1 + 2 * c, o->restrict_update(dim, n, u, fc));
  TIME("prolong_add", 2 + c, o->prolong(dim, n, uc, u, 1));
  TIME("prolong_set", 1 + c, o->prolong(dim, n, uc, u, 0));
  TIME("prolong_cubic", 1 + c, o->prolong_cubic(dim, n, uc, u));
  TIME("mcgs_forward", 3, o->smooth(dim, n, FD_SMOOTH_MCGS, 1, 1, 0, &u, f, &r));
  TIME("mcgs_backward", 3, o->smooth(dim, n, FD_SMOOTH_MCGS, 1, 1, 1, &u, f, &r));
  TIME("rbgs_forward", 3, o->smooth(dim, n, FD_SMOOTH_RBGS, 1, 1, 0, &u, f, &r));
  if (cuda && dim == 3) { /* the 3D GS kernels: rows (4 launches per sweep) against z-marching (2 sweeps per pass) */
    const int64_t old = fd_cuda_set_gs_march_min(INT64_MAX);
    TIME("mcgs2_rows_forward", 6, o->smooth(dim, n, FD_SMOOTH_MCGS, 1, 2, 0, &u, f, &r));
    fd_cuda_set_gs_march_min(0);
    TIME("mcgs1_march_forward", 3, o->smooth(dim, n, FD_SMOOTH_MCGS, 1, 1, 0, &u, f, &r));
    TIME("mcgs2_march_forward", 6, o->smooth(dim, n, FD_SMOOTH_MCGS, 1, 2, 0, &u, f, &r));
    TIME("mcgs2_march_backward", 6, o->smooth(dim, n, FD_SMOOTH_MCGS, 1, 2, 1, &u, f, &r));
    /* the cycle's correction + post-smoothing: fused (one pass) against prolong(add), then the pass */
    TIME("correct_mcgs2_fused", 8 + c, o->correct_smooth(dim, n, uc, FD_SMOOTH_MCGS, 1, 2, 1, &u, f, &r));
    TIME("correct_mcgs2_unfused", 8 + c, (o->prolong(dim, n, uc, u, 1), o->smooth(dim, n, FD_SMOOTH_MCGS, 1, 2, 1, &u, f, &r)));
    /* FMG's cubic interpolation + pre-smoothing: fused (one pass, u not read) against prolong_cubic, then the pass */
    TIME("interp_mcgs2_fused", 7 + c, o->interp_smooth(dim, n, uc, FD_SMOOTH_MCGS, 1, 2, &u, f, &r));
    TIME("interp_mcgs2_unfused", 7 + c, (o->prolong_cubic(dim, n, uc, u), o->smooth(dim, n, FD_SMOOTH_MCGS, 1, 2, 0, &u, f, &r)));
    fd_cuda_set_gs_march_min(old);
  }
  be->free(&u); be->free(&f); be->free(&r); be->free(&uc); be->free(&fc);
  return 0;
}
