/* The coarse problem of the spectral-element p-multigrid (src/disc/sem/sem_pmg.h;
 * docs/sem.md, "Coarse solve"): its time per element as the mesh grows, for
 * the exact fast-diagonalization solve (HPMG_SEM_COARSE_FDM, the default up
 * to HPMG_SEM_FDM_MAX_FLOPS_PER_ELEMENT), the degree-1 h-multigrid coarse
 * solve (HPMG_SEM_COARSE_HMG, the default beyond) and paper 001's Jacobi-CG
 * at p = 2 (HPMG_SEM_COARSE_CG).
 *
 *   sem_coarse_bench [p=4] [N list=4,8,12,16] [solver=kmg|mg|kvmg] [repeats=3]
 *
 * Per N^3 elements on the unit cube (Dirichlet, lambda = 0, random condensed
 * right-hand side) and coarse solver: the outer iterations to a 1e-10
 * reduction, the coarse solves and their iterations (CG iterations, and the
 * V-cycles of the degree-1 multigrid inside the h-MG-preconditioned CG), the
 * solve time, the time of the coarse solves (the p = 2 level's coarse_solve
 * slot, everything below p = 4) and that time per element and coarse solve
 * in microseconds; best of `repeats` solves
 * by wall time, OMP_NUM_THREADS threads. Timings on a shared machine are noisy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/core.h"
#include "disc/sem/sem_pmg.h"
#include "disc/sem/sem_system.h"
#include "grid/box.h"

static unsigned long long rng = 12345;
static double urand(void) {
  rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(rng >> 11) / 9007199254740992.0 - 0.5;
}

int main(int argc, char **argv) {
  const int p = argc > 1 ? atoi(argv[1]) : 4;
  const char *list = argc > 2 ? argv[2] : "4,8,12,16";
  const char *sname = argc > 3 ? argv[3] : "kmg";
  const int repeats = argc > 4 ? atoi(argv[4]) : 3;
  const hpmg_sem_mg_kind kind = !strcmp(sname, "mg") ? HPMG_SEM_SOLVE_MG
                                : !strcmp(sname, "kvmg") ? HPMG_SEM_SOLVE_KVMG
                                                         : HPMG_SEM_SOLVE_KMG;
  if (p < 2 || p > 32 || repeats < 1 || (strcmp(sname, "mg") && strcmp(sname, "kmg") && strcmp(sname, "kvmg"))) {
    fprintf(stderr, "usage: sem_coarse_bench [p=4 (2..32)] [N list=4,8,12,16] [solver=kmg|mg|kvmg] [repeats=3]\n");
    return 2;
  }
  printf("# p = %d, %s, 1e-10; coarse: the time of the coarse part (see the header), us/el/solve: per element and coarse solve\n",
         p, sname);
  printf("%4s %7s %5s %4s %7s %6s %6s %9s %9s %13s\n", "N", "elems", "coarse", "its", "csolves", "cg_its", "q1_vc",
         "solve_s", "coarse_s", "us/el/solve");
  char *dup = strdup(list);
  for (char *tok = strtok(dup, ","); tok; tok = strtok(NULL, ",")) {
    const int N = atoi(tok);
    if (N < 1) continue;
    hpmg_problem_options o;
    hpmg_problem_options_default(&o);
    o.disc = HPMG_DISC_SEM;
    o.dim = 3;
    o.degree = p;
    for (int d = 0; d < 3; d++) o.cells[d] = N;
    hpmg_box box;
    hpmg_sem_mesh m;
    if (hpmg_box_init(&o, &box) || hpmg_sem_mesh_create(&box, p, 0.0, &m)) {
      fprintf(stderr, "%s\n", hpmg_last_error());
      return 1;
    }
    double *rhs = malloc(sizeof(double) * (size_t)m.ns), *x = malloc(sizeof(double) * (size_t)m.ns);
    for (int64_t i = 0; i < m.ns; i++) rhs[i] = m.dirichlet && m.dirichlet[i] ? 0.0 : urand();
    for (int cs = 0; cs < 3; cs++) {
      const hpmg_sem_coarse_kind ck = cs == 2 ? HPMG_SEM_COARSE_CG : cs ? HPMG_SEM_COARSE_HMG : HPMG_SEM_COARSE_FDM;
      hpmg_sem_pmg pm;
      if (hpmg_sem_pmg_create(&box, &m, kind, 1, 1, ck, &pm)) {
        fprintf(stderr, "%s\n", hpmg_last_error());
        return 1;
      }
      double best = 1e300, bestc = 0;
      hpmg_krylov_info info = {0};
      for (int r = 0; r < repeats; r++) {
        memset(x, 0, sizeof(double) * (size_t)m.ns);
        hpmg_mg_reset_stats(&pm.mg);
        hpmg_krylov_params prm = {0};
        prm.rtol = 1e-10;
        prm.maxit = 500;
        prm.x0_zero = 1;
        const double t0 = hpmg_wtime();
        if (hpmg_sem_pmg_solve(&pm, rhs, x, &prm, &info)) {
          fprintf(stderr, "%s\n", hpmg_last_error());
          return 1;
        }
        const double t = hpmg_wtime() - t0;
        const double tc = pm.mg.t_coarse;
        if (t < best) best = t, bestc = tc;
      }
      printf("%4d %7lld %5s %4d %7d %6d %6d %9.4f %9.4f %13.3f\n", N, (long long)m.ne, cs == 2 ? "CG" : cs ? "h-MG" : "FDM",
             info.iterations, pm.coarse_solves, pm.coarse_its, pm.q1_cycles, best, bestc, 1e6 * bestc / (pm.coarse_solves > 0 ? pm.coarse_solves : 1) / (double)m.ne);
      fflush(stdout);
      hpmg_sem_pmg_destroy(&pm);
    }
    free(rhs);
    free(x);
    hpmg_sem_mesh_destroy(&m);
    hpmg_box_destroy(&box);
  }
  free(dup);
  return 0;
}
