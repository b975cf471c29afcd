/* P1 on the GPU (src/disc/p1/cuda): the GPU-assembled matrix equals the
 * CPU's to rounding on every built-in test mesh (scalar and tensor sigma,
 * 2D and 3D), twice the same bits (no atomics), and Jacobi-CG on the CUDA
 * backend matches the CPU solve. Exits 77 (skipped) without a GPU. */
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
  compare_solve("regular:2", 1.0, HPMG_RHS_VECTOR_ONE);
  compare_solve("irregular:1", 0.0, HPMG_RHS_SINE); /* singular: projection on the device */
  return check_report();
#endif
}
