/* P1 assembly benchmark (paper 003, docs/p1.md "Measured"): on regular:L,
 * the symbolic phase, and the numeric phase of S + lambda M as the serial
 * element loop, the threaded row-wise gather, and (when built with PETSc)
 * the same element loop into a preallocated MATSEQAIJ through MatSetValues
 * with ADD_VALUES, in one run; on the GPU the numeric phase's kernels; and
 * the Jacobi-CG solve (b = 1, lambda = 1, rtol 1e-8) on either device.
 *
 * usage: p1_assembly_bench cpu LMIN LMAX [REPEAT]
 *        p1_assembly_bench gpu LMIN LMAX [REPEAT]
 *        p1_assembly_bench solve cpu|cuda L
 * Lines starting with RESULT are for scripts (scripts/gpu-check-p1). */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "disc/p1/assembly.h"
#include "disc/p1/cuda/p1_cuda.h"
#include "disc/p1/mesh.h"
#include "hpmg.h"
#ifdef HPMG_HAVE_PETSC
#include <petscmat.h>
#endif

#define CK(call)                                                          \
  do {                                                                    \
    if ((call)) {                                                         \
      fprintf(stderr, "%s failed: %s\n", #call, hpmg_last_error());       \
      exit(1);                                                            \
    }                                                                     \
  } while (0)


#ifdef HPMG_HAVE_PETSC
/* the element loop of Algorithm 3.1 into PETSc: MatSetValues(ADD_VALUES) on a
 * MATSEQAIJ preallocated with the exact row lengths; returns the best time */
static double petsc_assembly(const hpmg_p1_mesh *m, const hpmg_p1_pattern *p, const hpmg_p1_coef *cf, int repeat,
                             const double *ref, double *err) {
  Mat A;
  PetscInt *nnz = malloc(sizeof(PetscInt) * (size_t)p->n);
  for (int64_t i = 0; i < p->n; i++) nnz[i] = (PetscInt)(p->rowptr[i + 1] - p->rowptr[i]);
  MatCreateSeqAIJ(PETSC_COMM_SELF, (PetscInt)p->n, (PetscInt)p->n, 0, nnz, &A);
  MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE);
  const int nv = p->nv;
  double best = 1e30;
  for (int r = 0; r < repeat; r++) {
    MatZeroEntries(A);
    const double t0 = hpmg_wtime();
    double loc[16];
    PetscInt idx[4];
    for (int64_t c = 0; c < p->ncells; c++) {
      hpmg_p1_local_matrix(m, cf, c, loc);
      for (int k = 0; k < nv; k++) idx[k] = (PetscInt)m->cell_nodes[c * nv + k];
      MatSetValues(A, nv, idx, nv, idx, loc, ADD_VALUES);
    }
    MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY);
    MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY);
    best = fmin(best, hpmg_wtime() - t0);
  }
  /* compare with ours */
  double d = 0.0;
  for (int64_t i = 0; i < p->n; i++) {
    PetscInt ncols;
    const PetscInt *cols;
    const PetscScalar *vals;
    MatGetRow(A, (PetscInt)i, &ncols, &cols, &vals);
    for (PetscInt q = 0; q < ncols; q++) d = fmax(d, fabs(vals[q] - ref[hpmg_p1_find(p, i, cols[q])]));
    MatRestoreRow(A, (PetscInt)i, &ncols, &cols, &vals);
  }
  *err = d;
  MatDestroy(&A);
  free(nnz);
  return best;
}
#endif

static void cpu(int L, int repeat) {
  char spec[32];
  snprintf(spec, sizeof spec, "regular:%d", L);
  hpmg_p1_mesh m;
  hpmg_p1_pattern p;
  CK(hpmg_p1_mesh_builtin(spec, 3, &m));
  CK(hpmg_p1_mesh_renumber(&m, NULL));
  double t0 = hpmg_wtime();
  CK(hpmg_p1_pattern_build(&m, &p));
  const double tsym = hpmg_wtime() - t0;
  const int nv = p.nv;
  double *val = malloc(sizeof(double) * (size_t)p.nnz), *ref = malloc(sizeof(double) * (size_t)p.nnz);
  double *scr = malloc(sizeof(double) * (size_t)(p.ncells * nv * nv));
  const hpmg_p1_coef cf = {NULL, 1, 1.0};
  double tser = 1e30, tthr = 1e30;
  for (int r = 0; r < repeat; r++) {
    t0 = hpmg_wtime();
    hpmg_p1_assemble_serial(&m, &p, &cf, ref);
    tser = fmin(tser, hpmg_wtime() - t0);
    t0 = hpmg_wtime();
    hpmg_p1_assemble(&m, &p, &cf, scr, val);
    tthr = fmin(tthr, hpmg_wtime() - t0);
  }
  const int same = !memcmp(val, ref, sizeof(double) * (size_t)p.nnz);
  const double tets = (double)p.ncells;
  printf("%-11s %9lld nodes %9lld tets %10lld nnz | symbolic %.4f s | numeric serial %.4f s (%.3g tets/s), "
         "%d threads %.4f s (%.3g tets/s, %s serial)",
         spec, (long long)p.n, (long long)p.ncells, (long long)p.nnz, tsym, tser, tets / tser, omp_get_max_threads(),
         tthr, tets / tthr, same ? "bitwise =" : "DIFFERS from");
  double tpetsc = NAN;
#ifdef HPMG_HAVE_PETSC
  double err;
  tpetsc = petsc_assembly(&m, &p, &cf, repeat, ref, &err);
  printf(" | PETSc MatSetValues %.4f s (%.3g tets/s, max diff %.1e)", tpetsc, tets / tpetsc, err);
#endif
  printf("\nRESULT cpu %d %lld %lld %lld %.6e %.6e %.6e %.6e\n", L, (long long)p.n, (long long)p.ncells, (long long)p.nnz,
         tsym, tser, tthr, tpetsc);
  free(val), free(ref), free(scr);
  hpmg_p1_pattern_destroy(&p);
  hpmg_p1_mesh_destroy(&m);
}

static void gpu(int L, int repeat) {
#ifdef HPMG_HAVE_CUDA
  char spec[32];
  snprintf(spec, sizeof spec, "regular:%d", L);
  hpmg_p1_mesh m;
  hpmg_p1_pattern p;
  hpmg_p1_gpu g;
  CK(hpmg_p1_mesh_builtin(spec, 3, &m));
  CK(hpmg_p1_mesh_renumber(&m, NULL));
  double t0 = hpmg_wtime();
  CK(hpmg_p1_pattern_build(&m, &p));
  const double tsym = hpmg_wtime() - t0;
  t0 = hpmg_wtime();
  CK(hpmg_p1_gpu_create(&m, &p, 1, &g));
  const double tup = hpmg_wtime() - t0;
  const hpmg_p1_coef cf = {NULL, 1, 1.0};
  double best = 1e30, t;
  for (int r = 0; r < repeat; r++) {
    CK(hpmg_p1_gpu_assemble(g, &cf, &t));
    best = fmin(best, t);
  }
  const double tets = (double)p.ncells;
  printf("%-11s %9lld nodes %10lld tets %11lld nnz | host symbolic %.3f s, lists + upload %.3f s | GPU numeric "
         "%.3e s = %.3g tets/s (best of %d)\n",
         spec, (long long)p.n, (long long)p.ncells, (long long)p.nnz, tsym, tup, best, tets / best, repeat);
  printf("RESULT gpu %d %lld %lld %lld %.6e %.6e %.6e\n", L, (long long)p.n, (long long)p.ncells, (long long)p.nnz, tsym,
         tup, best);
  fflush(stdout);
  hpmg_p1_gpu_destroy(&g);
  hpmg_p1_pattern_destroy(&p);
  hpmg_p1_mesh_destroy(&m);
#else
  (void)L, (void)repeat;
  fprintf(stderr, "p1_assembly_bench: built without CUDA\n");
  exit(77);
#endif
}

static void solve(int cuda, int L) {
  char spec[32];
  snprintf(spec, sizeof spec, "regular:%d", L);
  hpmg_problem_options po;
  hpmg_problem_options_default(&po);
  po.disc = HPMG_DISC_P1, po.mesh = spec, po.lambda = 1.0, po.rhs = HPMG_RHS_VECTOR_ONE;
  hpmg_solver_options so;
  hpmg_solver_options_default(&so);
  so.tol = 1e-8, so.maxit = 100000, so.device = cuda ? HPMG_DEVICE_CUDA : HPMG_DEVICE_CPU;
  hpmg_problem prob;
  hpmg_solver s;
  CK(hpmg_problem_create(&po, &prob));
  CK(hpmg_solver_create(prob, &so, &s));
  const int64_t n = hpmg_problem_num_dofs(prob);
  double *x = calloc((size_t)n, sizeof *x);
  CK(hpmg_solver_solve(s, NULL, x)); /* warm-up (first touch, GPU clocks) */
  memset(x, 0, sizeof(double) * (size_t)n);
  CK(hpmg_solver_solve(s, NULL, x));
  hpmg_stats st;
  hpmg_solver_get_stats(s, &st);
  printf("CG %s on %s: %lld nodes, %d iterations, CG %.4f s (%.3f ms/iteration), relres %.2e, setup %.3f s "
         "(symbolic %.3f, numeric %.3f)\n",
         spec, cuda ? "cuda" : "cpu", (long long)n, st.iterations, st.t_krylov, 1e3 * st.t_krylov / st.iterations,
         st.residual / st.residual0, st.t_setup, st.t_symbolic, st.t_numeric);
  printf("RESULT solve %s %d %lld %d %.6e %.6e\n", cuda ? "cuda" : "cpu", L, (long long)n, st.iterations, st.t_krylov,
         st.t_numeric);
  free(x);
  hpmg_solver_destroy(&s);
  hpmg_problem_destroy(&prob);
}

int main(int argc, char **argv) {
  if (argc >= 4 && !strcmp(argv[1], "solve")) {
    solve(!strcmp(argv[2], "cuda"), atoi(argv[3]));
    return 0;
  }
  if (argc < 4 || (strcmp(argv[1], "cpu") && strcmp(argv[1], "gpu"))) {
    fprintf(stderr, "usage: p1_assembly_bench cpu|gpu LMIN LMAX [REPEAT] | solve cpu|cuda L\n");
    return 2;
  }
  const int lo = atoi(argv[2]), hi = atoi(argv[3]), repeat = argc > 4 ? atoi(argv[4]) : 3;
#ifdef HPMG_HAVE_PETSC
  PetscInitializeNoArguments();
#endif
  for (int L = lo; L <= hi; L++) {
    if (!strcmp(argv[1], "cpu")) cpu(L, repeat);
    else gpu(L, repeat);
    fflush(stdout);
  }
#ifdef HPMG_HAVE_PETSC
  PetscFinalize();
#endif
  return 0;
}
