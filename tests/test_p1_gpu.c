/* P1 on the GPU (src/disc/p1/cuda): the GPU-assembled matrix equals the
 * CPU's to rounding on every built-in test mesh (scalar and tensor sigma,
 * 2D and 3D), twice the same bits (no atomics); with Dirichlet, Robin and
 * Neumann groups the system a CUDA solver assembles on the device (matrix and
 * the right-hand side's boundary part) equals the host's to rounding, entry
 * by entry; and Jacobi-CG on the CUDA backend matches the CPU solve. Exits 77
 * (skipped) without a GPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "api/p1.h"
#include "backends/cuda.h"
#include "check.h"
#include "disc/p1/assembly.h"
#include "disc/p1/cuda/p1_cuda.h"
#include "hpmg.h"

#ifdef HPMG_HAVE_CUDA
static void compare_assembly(const char *spec, int dim, int tensor) {
  hpmg_p1_mesh m;
  hpmg_p1_pattern p;
  hpmg_p1_gpu g;
  if (hpmg_p1_mesh_builtin(spec, dim, &m) || hpmg_p1_mesh_renumber(&m, NULL) || hpmg_p1_pattern_build(&m, &p) ||
      hpmg_p1_gpu_create(&m, &p, 1, &g)) {
    CHECK(0, "%s: %s", spec, hpmg_last_error());
    return;
  }
  const int nv = p.nv, tc = dim == 3 ? 6 : 3;
  double *sig = malloc(sizeof(double) * (size_t)(m.num_cells * tc));
  for (int64_t c = 0; c < m.num_cells; c++) {
    double *s = sig + c * tc;
    if (dim == 3) s[0] = 2 + (c % 3), s[1] = 1.5, s[2] = 1 + 0.1 * (c % 7), s[3] = 0.3, s[4] = -0.2, s[5] = 0.1;
    else s[0] = 2 + (c % 3), s[1] = 1.5, s[2] = 0.4;
  }
  const hpmg_p1_coef cf = {tensor ? sig : NULL, tensor ? tc : 1, 1.0};
  double *cpu = malloc(sizeof(double) * (size_t)p.nnz), *gpu = malloc(sizeof(double) * (size_t)p.nnz),
         *gpu2 = malloc(sizeof(double) * (size_t)p.nnz), *scr = malloc(sizeof(double) * (size_t)(p.ncells * nv * nv));
  hpmg_p1_assemble(&m, &p, &cf, scr, cpu);
  double t1, t2;
  if (hpmg_p1_gpu_assemble(g, &cf, &t1) || hpmg_p1_gpu_get_values(g, gpu) || hpmg_p1_gpu_assemble(g, &cf, &t2) ||
      hpmg_p1_gpu_get_values(g, gpu2)) {
    CHECK(0, "%s: GPU assembly: %s", spec, hpmg_last_error());
  } else {
    double amax = 0.0, dmax = 0.0;
    for (int64_t q = 0; q < p.nnz; q++) {
      amax = fmax(amax, fabs(cpu[q]));
      dmax = fmax(dmax, fabs(cpu[q] - gpu[q]));
    }
    printf("%s %dD%s: %lld tets, GPU - CPU max %.3e (max entry %.3e), kernels %.3e s\n", spec, dim,
           tensor ? " tensor" : "", (long long)p.ncells, dmax, amax, t1);
    CHECK(dmax <= 1e-14 * amax, "%s: GPU matrix differs from the CPU's by %.3e (max entry %.3e)", spec, dmax, amax);
    CHECK(!memcmp(gpu, gpu2, sizeof(double) * (size_t)p.nnz), "%s: two GPU assemblies differ", spec);
  }
  free(sig), free(cpu), free(gpu), free(gpu2), free(scr);
  hpmg_p1_gpu_destroy(&g);
  hpmg_p1_pattern_destroy(&p);
  hpmg_p1_mesh_destroy(&m);
}

static double lin_data(const double *x, void *user) { return 1.0 + 0.5 * x[0] - 0.25 * x[1] + 0.125 * x[2]; }

/* the CUDA solver's device-assembled system against the host's: faces
 * xmin, ymax Dirichlet (data from a function), xmax, ymin Robin (alpha 2,
 * data), zmin Neumann (data), the rest zero flux */
static void compare_bc_system(const char *mesh, int dim, int tensor) {
  const char *faces[5] = {"xmin", "ymax", "xmax", "ymin", "zmin"};
  hpmg_p1_bc bc[5];
  memset(bc, 0, sizeof bc);
  const int nbc = dim == 3 ? 5 : 4;
  for (int f = 0; f < nbc; f++) {
    bc[f].group = faces[f];
    bc[f].kind = f < 2 ? HPMG_P1_BC_DIRICHLET : f < 4 ? HPMG_P1_BC_ROBIN : HPMG_P1_BC_NEUMANN;
    bc[f].robin_alpha = bc[f].kind == HPMG_P1_BC_ROBIN ? 2.0 : 0.0;
    bc[f].fn = f == 1 || f == 2 ? lin_data : NULL;
    bc[f].value = 0.5 + f;
  }
  hpmg_problem_options po;
  hpmg_problem_options_default(&po);
  po.disc = HPMG_DISC_P1, po.mesh = mesh, po.dim = dim, po.lambda = 0.5, po.rhs = HPMG_RHS_ONE;
  po.p1_bc = bc, po.num_p1_bc = nbc;
  if (tensor) {
    static const double t3[6] = {2.0, 1.5, 1.2, 0.3, -0.2, 0.1}, t2[3] = {2.0, 1.5, 0.4};
    static hpmg_p1_sigma sg;
    sg.region = "domain", sg.tensor = dim == 3 ? t3 : t2;
    po.sigma = &sg, po.num_sigma = 1;
  }
  hpmg_problem prob;
  hpmg_p1_solver s[2] = {NULL, NULL};
  if (hpmg_problem_create(&po, &prob)) {
    CHECK(0, "%s: %s", mesh, hpmg_last_error());
    return;
  }
  hpmg_p1_problem p = hpmg_problem_p1(prob);
  for (int dev = 0; dev < 2; dev++) {
    hpmg_solver_options so;
    hpmg_solver_options_default(&so);
    so.device = dev ? HPMG_DEVICE_CUDA : HPMG_DEVICE_CPU;
    CHECK(!hpmg_p1_solver_create(p, &so, &s[dev]), "%s: solver on %s: %s", mesh, dev ? "cuda" : "cpu", hpmg_last_error());
  }
  if (s[0] && s[1]) {
    int64_t n, nnz;
    const int64_t *rp;
    const int32_t *col;
    const double *hval;
    CHECK(!hpmg_p1_problem_matrix(p, &n, &nnz, &rp, &col, &hval), "%s: %s", mesh, hpmg_last_error());
    double *v[2], *r[2];
    for (int d = 0; d < 2; d++) {
      v[d] = malloc(sizeof(double) * (size_t)nnz), r[d] = malloc(sizeof(double) * (size_t)n);
      CHECK(!hpmg_p1_solver_system(s[d], v[d], r[d]), "%s: %s", mesh, hpmg_last_error());
    }
    CHECK(!memcmp(v[0], hval, sizeof(double) * (size_t)nnz), "%s: the host solver's matrix is not the problem's", mesh);
    double amax = 0.0, dmax = 0.0, bmax = 0.0, dbmax = 0.0;
    int64_t ident = 0, zeros = 0, data_rows = 0;
    for (int64_t q = 0; q < nnz; q++) amax = fmax(amax, fabs(v[0][q])), dmax = fmax(dmax, fabs(v[0][q] - v[1][q]));
    for (int64_t i = 0; i < n; i++) {
      bmax = fmax(bmax, fabs(r[0][i])), dbmax = fmax(dbmax, fabs(r[0][i] - r[1][i]));
      int id = 1;
      for (int64_t q = rp[i]; q < rp[i + 1]; q++) id &= v[1][q] == (col[q] == i ? 1.0 : 0.0);
      ident += id;
      for (int64_t q = rp[i]; q < rp[i + 1]; q++) zeros += v[1][q] == 0.0;
      data_rows += r[1][i] != 0.0;
    }
    hpmg_stats st;
    hpmg_p1_solver_get_stats(s[1], &st);
    printf("%s %dD%s with BCs: %lld nodes, %lld identity rows, %lld zeros, GPU - CPU matrix %.3e (max %.3e), "
           "rhs %.3e (max %.3e), GPU numeric %.3e s\n",
           mesh, dim, tensor ? " tensor" : "", (long long)n, (long long)ident, (long long)zeros, dmax, amax, dbmax, bmax,
           st.t_numeric);
    CHECK(ident > 0 && zeros > ident && data_rows > 0, "%s: no Dirichlet rows or boundary data on the device", mesh);
    CHECK(dmax <= 1e-14 * amax, "%s: device matrix differs from the host's by %.3e (max entry %.3e)", mesh, dmax, amax);
    CHECK(dbmax <= 1e-13 * bmax, "%s: device boundary rhs differs from the host's by %.3e (max %.3e)", mesh, dbmax, bmax);
    CHECK(st.t_numeric > 0, "%s: no GPU numeric time", mesh);
    for (int d = 0; d < 2; d++) free(v[d]), free(r[d]);
  }
  hpmg_p1_solver_destroy(&s[0]);
  hpmg_p1_solver_destroy(&s[1]);
  hpmg_problem_destroy(&prob);
}

static void compare_solve(const char *mesh, double lambda, hpmg_rhs_kind rhs) {
  double *x[2] = {0};
  int it[2] = {0};
  int64_t n = 0;
  for (int dev = 0; dev < 2; dev++) {
    hpmg_problem_options po;
    hpmg_problem_options_default(&po);
    po.disc = HPMG_DISC_P1, po.mesh = mesh, po.lambda = lambda, po.rhs = rhs;
    hpmg_solver_options so;
    hpmg_solver_options_default(&so);
    so.tol = 1e-8, so.maxit = 100000, so.device = dev ? HPMG_DEVICE_CUDA : HPMG_DEVICE_CPU;
    hpmg_problem prob;
    hpmg_solver s;
    if (hpmg_problem_create(&po, &prob) || hpmg_solver_create(prob, &so, &s)) {
      CHECK(0, "%s: %s", mesh, hpmg_last_error());
      return;
    }
    n = hpmg_problem_num_dofs(prob);
    x[dev] = calloc((size_t)n, sizeof(double));
    CHECK(!hpmg_solver_solve(s, NULL, x[dev]), "%s on %s: %s", mesh, dev ? "cuda" : "cpu", hpmg_last_error());
    hpmg_stats st;
    hpmg_solver_get_stats(s, &st);
    it[dev] = st.iterations;
    printf("CG %s lambda %g on %s: %d iterations, %.4f s\n", mesh, lambda, dev ? "cuda" : "cpu", st.iterations, st.t_krylov);
    hpmg_solver_destroy(&s);
    hpmg_problem_destroy(&prob);
  }
  double d = 0.0, mx = 0.0;
  for (int64_t i = 0; i < n; i++) d = fmax(d, fabs(x[0][i] - x[1][i])), mx = fmax(mx, fabs(x[0][i]));
  CHECK(abs(it[0] - it[1]) <= 2, "%s: CPU %d, GPU %d iterations", mesh, it[0], it[1]);
  CHECK(d <= 1e-6 * mx, "%s: GPU and CPU solutions differ by %.3e (max %.3e)", mesh, d, mx);
  free(x[0]), free(x[1]);
}
#endif

int main(void) {
#ifndef HPMG_HAVE_CUDA
  printf("SKIP: built without CUDA\n");
  return 77;
#else
  if (hpmg_cuda_check()) {
    printf("SKIP: %s\n", hpmg_last_error());
    return 77;
  }
  compare_assembly("regular:1", 3, 0);
  compare_assembly("irregular:2", 3, 1);
  compare_assembly("regular:3", 3, 0);
  compare_assembly("irregular:4", 2, 1);
  compare_bc_system("regular:1", 3, 0);
  compare_bc_system("irregular:1", 3, 1);
  compare_bc_system("regular:2", 2, 1);
  compare_bc_system("irregular:3", 2, 0);
  compare_solve("regular:2", 1.0, HPMG_RHS_VECTOR_ONE);
  compare_solve("irregular:1", 0.0, HPMG_RHS_SINE); /* singular: projection on the device */
  return check_report();
#endif
}
