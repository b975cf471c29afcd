/* The GPU direct box FD solver (src/disc/fd/cuda/fd_direct.cu) equals the CPU
 * one (tests/test_fd_direct.c checks the CPU one against the operator) to
 * round-off: every BC pair per direction in 2D and 3D, vertex and cell
 * layout, uniform and stretched in each direction, lambda = 0 and > 0, odd /
 * even / prime cells; the singular problems' reported defect; and the chunked
 * transform loop (small staging buffers, with a remainder chunk); the
 * cuSPARSE tridiagonal solvers in place of the one-thread-per-line kernel;
 * the all-periodic fast path (one multi-dimensional D2Z / Z2D), taken exactly
 * when every direction is periodic and uniform (asserted), in 2D and 3D, odd
 * and even cells, both layouts, lambda = 0 and > 0.
 * Exit 77 (skip) without a GPU or without FFTW. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "disc/fd/fd_direct.h"
#include "la/backend.h"

static const hpmg_bc_kind PAIRS[5][2] = {{HPMG_BC_DIRICHLET, HPMG_BC_DIRICHLET}, {HPMG_BC_NEUMANN, HPMG_BC_NEUMANN},
                                         {HPMG_BC_DIRICHLET, HPMG_BC_NEUMANN}, {HPMG_BC_NEUMANN, HPMG_BC_DIRICHLET},
                                         {HPMG_BC_PERIODIC, HPMG_BC_PERIODIC}};
static const char *PNAME[5] = {"DD", "NN", "DN", "ND", "PP"};
static const hpmg_backend *be;
static double worst = 0;

static double *coords(int64_t cells, double L, int stretch) {
  double *x = malloc(sizeof(double) * (size_t)(cells + 1));
  for (int64_t i = 0; i <= cells; i++) {
    const double t = (double)i / (double)cells;
    x[i] = stretch ? L / 2 * (1 + tanh(2.0 * (2 * t - 1)) / tanh(2.0)) : L * t;
  }
  x[0] = 0;
  x[cells] = L;
  return x;
}

static void one(int dim, const int64_t cells[3], const int pairs[3], int layout, int sd, double lambda) {
  hpmg_box box;
  memset(&box, 0, sizeof box);
  box.dim = dim;
  box.layout = layout ? HPMG_FD_CELL : HPMG_FD_VERTEX;
  for (int d = 0; d < 3; d++) {
    box.cells[d] = d < dim ? cells[d] : 1;
    box.len[d] = 1.0 + 0.5 * d;
    if (d >= dim) continue;
    box.x[d] = coords(cells[d], box.len[d], d == sd);
    box.uniform[d] = d != sd;
    box.bc[2 * d] = PAIRS[pairs[d]][0];
    box.bc[2 * d + 1] = PAIRS[pairs[d]][1];
  }
  fd_direct sc = NULL, sg = NULL;
  hpmg_error e = fd_direct_create(&box, lambda, 1, 0, &sg);
  if (e == HPMG_ERR_BACKEND) { printf("skip: %s\n", hpmg_last_error()); exit(77); }
  CHECK(e == HPMG_SUCCESS, "GPU create: %s", hpmg_last_error());
  int all_periodic = sd < 0;
  for (int d = 0; d < dim; d++) all_periodic = all_periodic && pairs[d] == 4;
  CHECK(!sg || fd_direct_gpu_fast(sg) == all_periodic, "%dD %s fast path %d, expected %d", dim,
        layout ? "cell" : "vertex", fd_direct_gpu_fast(sg), all_periodic);
  e = fd_direct_create(&box, lambda, 0, 0, &sc);
  if (e == HPMG_ERR_BACKEND) { printf("skip: %s\n", hpmg_last_error()); exit(77); }
  const int64_t N = fd_direct_size(sc);
  const size_t bytes = sizeof(double) * (size_t)N;
  double *b = malloc(bytes), *uc = malloc(bytes), *ug = malloc(bytes);
  for (int64_t c = 0; c < N; c++) b[c] = check_rand();
  void *db = NULL, *du = NULL;
  if (be->alloc(bytes, &db) || be->alloc(bytes, &du) || be->to_device(b, db, bytes)) {
    printf("FAIL: device buffers: %s\n", hpmg_last_error());
    exit(1);
  }
  CHECK(fd_direct_solve(sc, b, uc) == HPMG_SUCCESS, "CPU solve: %s", hpmg_last_error());
  e = fd_direct_solve(sg, db, du);
  CHECK(e == HPMG_SUCCESS, "GPU solve: %s", hpmg_last_error());
  if (!e) {
    be->to_host(du, ug, bytes);
    double dn = 0, un = 0;
    for (int64_t c = 0; c < N; c++) { dn = fmax(dn, fabs(uc[c] - ug[c])); un = fmax(un, fabs(uc[c])); }
    if (dn / un > worst) worst = dn / un;
    CHECK(dn <= 1e-11 * un, "%dD %s %s%s%s %lldx%lldx%lld stretch %d lambda %g: GPU - CPU %.3e of %.3e", dim,
          layout ? "cell" : "vertex", PNAME[pairs[0]], PNAME[pairs[1]], dim == 3 ? PNAME[pairs[2]] : "",
          (long long)cells[0], (long long)cells[1], (long long)cells[2], sd, lambda, dn, un);
    /* in place (b == u, where the scaling pass may be skipped): the same solution */
    double *ui = malloc(bytes);
    be->to_device(b, du, bytes);
    CHECK(fd_direct_solve(sg, du, du) == HPMG_SUCCESS, "GPU in-place solve: %s", hpmg_last_error());
    be->to_host(du, ui, bytes);
    double di = 0;
    for (int64_t c = 0; c < N; c++) di = fmax(di, fabs(ui[c] - ug[c]));
    CHECK(di <= 1e-13 * un, "in place: differs by %.3e of %.3e", di, un);
    free(ui);
    double s1, r1, s2, r2;
    fd_direct_defect(sc, &s1, &r1);
    fd_direct_defect(sg, &s2, &r2);
    CHECK(fabs(s1 - s2) <= 1e-12 * (double)N && fabs(r1 - r2) <= 1e-12, "defect CPU %g GPU %g", s1, s2);
  }
  be->free(&db);
  be->free(&du);
  fd_direct_destroy(&sc);
  fd_direct_destroy(&sg);
  for (int d = 0; d < 3; d++) free(box.x[d]);
  free(b); free(uc); free(ug);
}

int main(void) {
  if (hpmg_backend_cuda(&be)) { printf("skip: %s\n", hpmg_last_error()); return 77; }
  const int64_t c2[3] = {13, 8, 1}, c3[3] = {7, 6, 5}, c3b[3] = {32, 17, 24};
  int pairs[3];
  for (int comb = 0; comb < 25; comb++) {
    pairs[0] = comb % 5; pairs[1] = comb / 5; pairs[2] = 0;
    for (int layout = 0; layout < 2; layout++)
      for (int sd = -1; sd < 2; sd++) one(2, c2, pairs, layout, sd, (comb + sd) % 2 ? 0.0 : 0.9);
  }
  printf("2D: worst GPU - CPU %.2e\n", worst);
  for (int comb = 0; comb < 125; comb++) {
    pairs[0] = comb % 5; pairs[1] = (comb / 5) % 5; pairs[2] = comb / 25;
    for (int layout = 0; layout < 2; layout++)
      for (int sd = -1; sd < 3; sd++) one(3, c3, pairs, layout, sd, (comb + sd + layout) % 2 ? 0.0 : 0.9);
  }
  printf("3D: worst GPU - CPU %.2e\n", worst);
  /* the all-periodic fast path: odd and even cells per direction, both
   * layouts, lambda = 0 (singular: the constant mode and the defect) and > 0 */
  const int pp[3] = {4, 4, 4};
  const int64_t p2[3][3] = {{13, 8, 1}, {16, 9, 1}, {3, 4, 1}}, p3[3][3] = {{7, 6, 5}, {8, 9, 10}, {32, 17, 24}};
  for (int c = 0; c < 3; c++)
    for (int layout = 0; layout < 2; layout++)
      for (int l = 0; l < 2; l++) {
        one(2, p2[c], pp, layout, -1, l ? 0.9 : 0.0);
        one(3, p3[c], pp, layout, -1, l ? 0.9 : 0.0);
      }
  printf("periodic fast path: worst GPU - CPU %.2e\n", worst);
  /* chunked transforms: 64 KiB staging buffers, chunks of a few lines plus a remainder */
  const size_t old = fd_cuda_direct_set_chunk_bytes(65536);
  for (int comb = 0; comb < 125; comb += 11) {
    pairs[0] = comb % 5; pairs[1] = (comb / 5) % 5; pairs[2] = comb / 25;
    for (int sd = -1; sd < 3; sd++) one(3, c3b, pairs, comb % 2, sd, comb % 3 ? 0.0 : 0.9);
  }
  fd_cuda_direct_set_chunk_bytes(old);
  printf("chunked: worst GPU - CPU %.2e\n", worst);
  /* the cuSPARSE tridiagonal solvers (strided along x, interleaved along y and z) */
  fd_cuda_direct_set_tri(1);
  for (int comb = 0; comb < 125; comb++) {
    pairs[0] = comb % 5; pairs[1] = (comb / 5) % 5; pairs[2] = comb / 25;
    for (int sd = 0; sd < 3; sd++) one(3, c3, pairs, comb % 2, sd, (comb + sd) % 2 ? 0.0 : 0.9);
  }
  for (int comb = 0; comb < 25; comb++) {
    pairs[0] = comb % 5; pairs[1] = comb / 5; pairs[2] = 0;
    for (int sd = 0; sd < 2; sd++) one(2, c2, pairs, comb % 2, sd, (comb + sd) % 2 ? 0.0 : 0.9);
  }
  fd_cuda_direct_set_tri(0);
  printf("cuSPARSE tridiagonal: worst GPU - CPU %.2e\n", worst);
  return check_report();
}
