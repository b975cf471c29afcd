/* Where the time of a spectral-element p-multigrid solve goes (docs/sem.md,
 * "Time and memory"; bench/results/sem-solve/README.md):
 *
 *   sem_split_bench [p=8] [N=6] [solver=kvmg|kmg|mg] [repeats=3]
 *
 * N^3 elements of degree p on the unit cube, Dirichlet, lambda = 0, f
 * pseudo-random at the GLL nodes; a whole solve as hpmg_sem_solver_solve
 * does it (condensed load, p-multigrid to a 1e-10 reduction, recovery), the
 * best of `repeats` by wall time, OMP_NUM_THREADS threads, split into:
 *   load       the condensed right-hand side (hpmg_sem_condensed_rhs)
 *   per level  operator: residuals of the cycle and inside the smoother
 *              (the smoother's count times the time of one operator
 *              application, measured apart); star: the rest of the
 *              smoothing slot (gather, Algorithm 1, weights, scatter,
 *              update); transfers: restriction and prolongation
 *   coarse     the p = 2 coarse solve, as hpmg_sem_solver chooses it
 *              (HPMG_SEM_COARSE_AUTO: the exact FDM solve on these meshes)
 *   krylov     the outer iteration's own work (its operator applications
 *              on the finest level, vector updates, norms)
 *   recovery   the interiors (hpmg_sem_recover_field)
 * and microseconds per GLL node. Timings on a shared machine are noisy. */
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

static double zero_bc(void *ctx, int face, const double x[3]) {
  (void)ctx, (void)face, (void)x;
  return 0.0;
}

#define CHECK(call)                                 \
  do {                                              \
    if (call) {                                     \
      fprintf(stderr, "%s\n", hpmg_last_error());   \
      return 1;                                     \
    }                                               \
  } while (0)

int main(int argc, char **argv) {
  const int p = argc > 1 ? atoi(argv[1]) : 8;
  const int N = argc > 2 ? atoi(argv[2]) : 6;
  const char *sname = argc > 3 ? argv[3] : "kvmg";
  const int repeats = argc > 4 ? atoi(argv[4]) : 3;
  if (p < 2 || p > 32 || N < 1 || repeats < 1 || (strcmp(sname, "mg") && strcmp(sname, "kmg") && strcmp(sname, "kvmg"))) {
    fprintf(stderr, "usage: sem_split_bench [p=8 (2..32)] [N=6] [solver=kvmg|kmg|mg] [repeats=3]\n");
    return 2;
  }
  const hpmg_sem_mg_kind kind = !strcmp(sname, "mg") ? HPMG_SEM_SOLVE_MG
                                : !strcmp(sname, "kmg") ? HPMG_SEM_SOLVE_KMG
                                                        : HPMG_SEM_SOLVE_KVMG;
  hpmg_problem_options o;
  hpmg_problem_options_default(&o);
  o.disc = HPMG_DISC_SEM;
  o.dim = 3;
  o.degree = p;
  for (int d = 0; d < 3; d++) o.cells[d] = N;
  hpmg_box box;
  hpmg_sem_mesh m;
  CHECK(hpmg_box_init(&o, &box) || hpmg_sem_mesh_create(&box, p, 0.0, &m));
  double *xl[3] = {NULL, NULL, NULL};
  for (int d = 0; d < 3; d++) CHECK(hpmg_sem_lattice_coords(&m, d, &xl[d]));
  const int64_t nn = m.nlat_total, ns = m.ns;
  double *f = malloc(sizeof(double) * (size_t)nn), *u = malloc(sizeof(double) * (size_t)nn);
  double *rhs = malloc(sizeof(double) * (size_t)ns), *uD = malloc(sizeof(double) * (size_t)ns);
  double *x = malloc(sizeof(double) * (size_t)ns), *y = malloc(sizeof(double) * (size_t)ns);
  for (int64_t i = 0; i < nn; i++) f[i] = urand();
  hpmg_sem_pmg pm;
  CHECK(hpmg_sem_pmg_create(&box, &m, kind, 1, 1, HPMG_SEM_COARSE_AUTO, &pm));
  const int nl = pm.nlevels;
  /* the time of one operator application per level, best of 5 */
  double t_apply[HPMG_SEM_PMG_MAX_LEVELS];
  for (int l = 0; l < nl; l++) {
    const hpmg_sem_mesh *ml = pm.m[l];
    double *w = malloc(sizeof(double) * hpmg_sem_mesh_work_size(ml));
    double *a = malloc(sizeof(double) * (size_t)ml->ns), *b = malloc(sizeof(double) * (size_t)ml->ns);
    for (int64_t i = 0; i < ml->ns; i++) a[i] = urand();
    t_apply[l] = 1e300;
    for (int r = 0; r < 5; r++) {
      const double t0 = hpmg_wtime();
      hpmg_sem_mesh_apply(ml, 1, a, b, w);
      const double t = hpmg_wtime() - t0;
      if (t < t_apply[l]) t_apply[l] = t;
    }
    free(w), free(a), free(b);
  }
  double best = 1e300, b_load = 0, b_rec = 0, b_kry = 0, b_coarse = 0;
  double b_sm[HPMG_SEM_PMG_MAX_LEVELS], b_op[HPMG_SEM_PMG_MAX_LEVELS], b_tr[HPMG_SEM_PMG_MAX_LEVELS];
  int64_t b_mv[HPMG_SEM_PMG_MAX_LEVELS];
  hpmg_krylov_info info = {0};
  for (int r = 0; r < repeats; r++) {
    hpmg_mg_reset_stats(&pm.mg);
    for (int l = 0; l < nl; l++) pm.mg.lv[l].matvecs = 0;
    const double t0 = hpmg_wtime();
    CHECK(hpmg_sem_condensed_rhs(&m, xl, f, 0.0, zero_bc, NULL, rhs, uD));
    const double t1 = hpmg_wtime();
    hpmg_krylov_params prm = {0};
    prm.rtol = 1e-10;
    prm.maxit = 500;
    prm.x0_zero = 1;
    memset(x, 0, sizeof(double) * (size_t)ns);
    CHECK(hpmg_sem_pmg_solve(&pm, rhs, x, &prm, &info));
    const double t2 = hpmg_wtime();
    for (int64_t i = 0; i < ns; i++) y[i] = x[i] + uD[i];
    CHECK(hpmg_sem_recover_field(&m, xl, f, 0.0, zero_bc, NULL, y, u));
    const double t3 = hpmg_wtime();
    if (t3 - t0 < best) {
      best = t3 - t0, b_load = t1 - t0, b_rec = t3 - t2, b_coarse = pm.mg.t_coarse;
      double lv = 0;
      for (int l = 0; l < nl; l++) {
        const hpmg_level *L = &pm.mg.lv[l];
        b_mv[l] = L->matvecs;
        b_op[l] = L->t_op + (double)L->matvecs * t_apply[l];
        b_sm[l] = L->t_smooth - (double)L->matvecs * t_apply[l];
        b_tr[l] = L->t_transfer;
        lv += L->t_smooth + L->t_op + L->t_transfer;
      }
      b_kry = (t2 - t1) - lv - b_coarse;
    }
  }
  const double nodes = (double)nn;
  printf("# p = %d, %d^3 elements, %s to 1e-10, %d iterations, %lld GLL nodes, %lld condensed; best of %d\n", p, N,
         sname, info.iterations, (long long)nn, (long long)ns, repeats);
  printf("%-22s %9s %7s %9s\n", "part", "s", "%", "us/node");
#define ROW(name, t) printf("%-22s %9.5f %7.1f %9.4f\n", name, t, 100.0 * (t) / best, 1e6 * (t) / nodes)
  ROW("condensed load", b_load);
  for (int l = nl - 1; l >= 1; l--) {
    char s[64];
    snprintf(s, sizeof s, "p=%d operator (%lld+)", pm.deg[l], (long long)b_mv[l]);
    ROW(s, b_op[l]);
    snprintf(s, sizeof s, "p=%d star smoother", pm.deg[l]);
    ROW(s, b_sm[l]);
    snprintf(s, sizeof s, "p=%d transfers", pm.deg[l]);
    ROW(s, b_tr[l]);
  }
  ROW("p=2 coarse solve", b_coarse);
  ROW("outer Krylov/MG", b_kry);
  ROW("recovery", b_rec);
  ROW("total", best);
  printf("# coarse solves %d, their CG iterations %d, degree-1 V-cycles %d\n", pm.coarse_solves, pm.coarse_its,
         pm.q1_cycles);
  printf("# one operator application, us per element:");
  for (int l = nl - 1; l >= 0; l--) printf(" p=%d %.2f", pm.deg[l], 1e6 * t_apply[l] / (double)m.ne);
  printf("\n");
  hpmg_sem_pmg_destroy(&pm);
  for (int d = 0; d < 3; d++) hpmg_free(&xl[d]);
  free(f), free(u), free(rhs), free(uD), free(x), free(y);
  hpmg_sem_mesh_destroy(&m);
  hpmg_box_destroy(&box);
  return 0;
}
