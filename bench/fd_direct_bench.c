/* Benchmark of the direct (transform + tridiagonal) FD solver,
 * src/disc/fd/fd_direct.c (docs/fd.md, "Direct solvers").
 *
 * Usage: fd_direct_bench DEVICE CASE NX NY NZ [REPS] [MEASURE] [BETA]
 *   DEVICE  cpu | cuda
 *   CASE    periodic   uniform, periodic in every direction, cell layout
 *           dirichlet  uniform, homogeneous Dirichlet, vertex layout, NX cells
 *                      per direction (NX^3 box); on the CPU the unit-box
 *                      sine-transform solver fd_fft runs on the same grid in
 *                      the same process (A/B)
 *           channel    periodic x and z, Neumann walls in y stretched by
 *                      tanh (BETA, default 3: first-cell aspect ratio dx/dy
 *                      about 77 at 256x192x256 and 1024x768x1024), cell
 *                      layout, lambda = 0, box 2 pi x 2 x pi
 *           cufft      (cuda only) the plain cuFFT periodic solve (D2Z, divide,
 *                      Z2D) on the periodic grid: the reference for "periodic"
 *   REPS    timed solves after one warm-up (default 5)
 *   MEASURE 1: FFTW_MEASURE plans (CPU; default 0: FFTW_ESTIMATE)
 * Environment: FD_DIRECT_TRI=1 solves the GPU's tridiagonal systems with
 * cuSPARSE instead of the one-thread-per-line kernel.
 * Timed are in-place solves (b == u; fd_fft: its own array), the right-hand
 * side reloaded untimed before each; an out-of-place solve adds one pass.
 * Prints one line per solver: time per solve (best and median), unknowns per
 * second (best) and planning time (preceded, on the GPU's all-periodic fast
 * path, by a comment line saying so); correctness is tests/test_fd_direct.c's
 * (CPU) and tests/test_fd_direct_gpu.c's (GPU = CPU). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "disc/fd/fd_direct.h"
#include "disc/fd/fd_fft.h"
#include "la/backend.h"

static int cmp(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void report(const char *solver, const char *cas, const char *dev, const int64_t n[3], int64_t N, double plan,
                   double *t, int reps) {
  qsort(t, (size_t)reps, sizeof(double), cmp);
  printf("%-18s %-9s %-4s %5lldx%-5lldx%-5lld unknowns %11lld  best %9.4f s  median %9.4f s  %8.3e DoF/s  plan %.2f s\n",
         solver, cas, dev, (long long)n[0], (long long)n[1], (long long)n[2], (long long)N, t[0], t[reps / 2],
         (double)N / t[0], plan);
  fflush(stdout);
}

#define DIE(...) do { fprintf(stderr, __VA_ARGS__); fprintf(stderr, "\n"); exit(1); } while (0)

int main(int argc, char **argv) {
  if (argc < 6) DIE("usage: %s cpu|cuda periodic|dirichlet|channel|cufft NX NY NZ [REPS] [MEASURE]", argv[0]);
  const int device = strcmp(argv[1], "cuda") == 0;
  const char *cas = argv[2];
  const int64_t cells[3] = {atoll(argv[3]), atoll(argv[4]), atoll(argv[5])};
  const int reps = argc > 6 ? atoi(argv[6]) : 5, measure = argc > 7 ? atoi(argv[7]) : 0;
  const double beta = argc > 8 ? atof(argv[8]) : 3.0;
  if (!(beta > 0)) DIE("BETA must be > 0");
  if (reps < 1 || cells[0] < 3 || cells[1] < 3 || cells[2] < 3) DIE("bad sizes or repetitions");
  const hpmg_backend *be = hpmg_backend_host();
  if (device && hpmg_backend_cuda(&be)) DIE("%s", hpmg_last_error());
  double *t = malloc(sizeof(double) * (size_t)reps);

  if (!strcmp(cas, "cufft")) {
    double sec[64];
    if (reps > 64) DIE("at most 64 repetitions");
    if (fd_cuda_periodic_reference(cells, reps, sec)) DIE("%s", hpmg_last_error());
    memcpy(t, sec, sizeof(double) * (size_t)reps);
    report("cufft-ref", "periodic", "cuda", cells, cells[0] * cells[1] * cells[2], 0, t, reps);
    free(t);
    return 0;
  }

  hpmg_box box;
  memset(&box, 0, sizeof box);
  box.dim = 3;
  const int channel = !strcmp(cas, "channel"), dirichlet = !strcmp(cas, "dirichlet");
  if (!channel && !dirichlet && strcmp(cas, "periodic")) DIE("unknown case %s", cas);
  box.layout = dirichlet ? HPMG_FD_VERTEX : HPMG_FD_CELL;
  const double pi = 3.14159265358979323846;
  for (int d = 0; d < 3; d++) {
    box.cells[d] = cells[d];
    box.len[d] = channel ? (d == 0 ? 2 * pi : d == 1 ? 2.0 : pi) : 1.0;
    box.x[d] = malloc(sizeof(double) * (size_t)(cells[d] + 1));
    const int stretch = channel && d == 1;
    for (int64_t i = 0; i <= cells[d]; i++) {
      const double s = (double)i / (double)cells[d];
      box.x[d][i] = stretch ? box.len[d] / 2 * (1 + tanh(beta * (2 * s - 1)) / tanh(beta)) : box.len[d] * s;
    }
    box.uniform[d] = !stretch;
    const hpmg_bc_kind k = dirichlet ? HPMG_BC_DIRICHLET : (channel && d == 1 ? HPMG_BC_NEUMANN : HPMG_BC_PERIODIC);
    box.bc[2 * d] = box.bc[2 * d + 1] = k;
  }
  if (channel)
    printf("# channel %lldx%lldx%lld: tanh beta %g, first cell in y %.3e, dx %.3e: aspect ratio dx/dy_min %.1f\n",
           (long long)cells[0], (long long)cells[1], (long long)cells[2], beta, box.x[1][1], box.len[0] / cells[0],
           box.len[0] / (double)cells[0] / box.x[1][1]);
  const int64_t n[3] = {hpmg_box_n(&box, 0), hpmg_box_n(&box, 1), hpmg_box_n(&box, 2)};
  const int64_t N = n[0] * n[1] * n[2];
  double *hb = malloc(sizeof(double) * (size_t)N);
  if (!hb) DIE("out of host memory");
  uint64_t r = 88172645463325252ull;
  for (int64_t c = 0; c < N; c++) {
    r ^= r << 13; r ^= r >> 7; r ^= r << 17;
    hb[c] = (double)(r >> 11) / 9007199254740992.0 - 0.5;
  }
  void *b = NULL, *u = NULL;
  if (be->alloc(sizeof(double) * (size_t)N, &b) || be->alloc(sizeof(double) * (size_t)N, &u)) DIE("%s", hpmg_last_error());
  if (be->to_device(hb, b, sizeof(double) * (size_t)N)) DIE("%s", hpmg_last_error());
  /* FD_DIRECT_TRI=1: the GPU's tridiagonal solves through cuSPARSE */
  const char *tri_env = getenv("FD_DIRECT_TRI");
  const int tri_sp = device && tri_env && atoi(tri_env) == 1;
  if (tri_sp) fd_cuda_direct_set_tri(1);
  fd_direct s;
  if (fd_direct_create(&box, 0.0, device, measure, &s)) DIE("%s", hpmg_last_error());
  /* Dirichlet on the CPU: the unit-box sine solver on the same grid, its
   * (n+1)^3 array with boundary, solves alternating with fd_direct's so that
   * both see the same machine load */
  fd_fft f = NULL;
  double *tf = malloc(sizeof(double) * (size_t)reps);
  if (dirichlet && !device) {
    if (cells[0] != cells[1] || cells[0] != cells[2] || (cells[0] & (cells[0] - 1)))
      DIE("dirichlet A/B: fd_fft needs equal power-of-two cells");
    if (fd_fft_create(3, cells[0], FD_DOUBLE, 0, measure, &f)) DIE("%s", hpmg_last_error());
    double *buf = fd_fft_buffer(f);
    const int64_t s1 = cells[0] + 1;
    for (int64_t c = 0; c < N; c++) {
      const int64_t i = c % n[0], j = (c / n[0]) % n[1], k = c / (n[0] * n[1]);
      buf[(i + 1) + s1 * ((j + 1) + s1 * (k + 1))] = hb[c];
    }
    fd_fft_execute(f); /* warm-up */
  }
  if (fd_direct_solve(s, b, u)) DIE("%s", hpmg_last_error()); /* warm-up */
  /* timed: in-place solves of the same right-hand side, reloaded untimed before each */
  const size_t bytes = sizeof(double) * (size_t)N;
  for (int k = 0; k < reps; k++) {
    if (be->to_device(hb, u, bytes)) DIE("%s", hpmg_last_error());
    if (device) be->sync();
    double t0 = hpmg_wtime();
    if (fd_direct_solve(s, u, u)) DIE("%s", hpmg_last_error());
    if (device) be->sync();
    t[k] = hpmg_wtime() - t0;
    if (f) {
      double *buf = fd_fft_buffer(f);
      const int64_t s1 = cells[0] + 1;
      for (int64_t c = 0; c < N; c++) {
        const int64_t i = c % n[0], j = (c / n[0]) % n[1], kk = c / (n[0] * n[1]);
        buf[(i + 1) + s1 * ((j + 1) + s1 * (kk + 1))] = hb[c];
      }
      t0 = hpmg_wtime();
      fd_fft_execute(f);
      tf[k] = hpmg_wtime() - t0;
    }
  }
  if (fd_direct_gpu_fast(s)) printf("# fd_direct: GPU fast path (one 3D cuFFT D2Z / Z2D pair)\n");
  report(tri_sp ? "fd_direct+cusparse" : "fd_direct", cas, device ? "cuda" : "cpu", n, N, fd_direct_plan_seconds(s), t, reps);
  if (f) report("fd_fft", cas, "cpu", n, N, fd_fft_plan_seconds(f), tf, reps);
  fd_direct_destroy(&s);
  fd_fft_destroy(&f);
  free(tf);
  be->free(&b);
  be->free(&u);
  for (int d = 0; d < 3; d++) free(box.x[d]);
  free(hb);
  free(t);
  return 0;
}
