/* Time per star of the star smoother's local solver (src/disc/sem/sem_star.c,
 * paper 001 Algorithm 1, Fig. 5), one thread, over a set of stars that
 * apply their inverse one after the other (different data, 1D blocks of 8
 * different widths per direction, as on a stretched mesh), next to the
 * full-block fast diagonalization (TPF) for small p.
 *
 *   sem_star_bench [dim=3] [pmin=2] [pmax=32] [stars=500] [min_seconds=0.2] [vertex|element] [tpf_pmax=12]
 *                  [mmc_pmax=12]
 *
 * and the paper's "MMC" up to mmc_pmax: the dense inverse of one star (the
 * kernel's linear map on the star-local vector, 3n^2 x 3n^2, formed column by
 * column) applied to all stars' vectors by one DGEMM (18 n^4 per star in 3D).
 * Run with OPENBLAS_NUM_THREADS=1 for one thread.
 *
 * Times per star are the best of 3 rounds of at least min_seconds each, as
 * wall time and as the process's CPU time (on a shared, oversubscribed machine
 * the wall time also counts waiting; both stay noisy there). Per DoF means per
 * n^dim points of the block (n = 2p-1; the paper's "equivalent DOF"), from the
 * CPU time, as the GFLOP/s (the kernel's own count, hpmg_sem_star_flops, not
 * counting the padding of rows to multiples of 4) and the TPF and MMC columns. The
 * last lines fit cpu time = C p^e (and C n^e) over p >= 8 and p >= 16 by least
 * squares in log-log. */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "disc/sem/sem_star.h"

#define NBLK 8

typedef void (*solve_fn)(const hpmg_sem_star *, const double *, double *, double *);

/* CPU time of the process (all its threads, so that a BLAS that starts
 * threads is charged for them): on a shared, oversubscribed machine the time
 * the kernel ran, where the wall time also counts the time it waited */
static double proc_cpu(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* seconds per star, wall and CPU time: all stars in turn until min_s
 * has passed, the best of 3 such rounds for each */
static void time_stars(solve_fn fn, const hpmg_sem_star *st, int nst, const double *f, double *u, double *work,
                       double min_s, double *wall, double *cpu) {
  const size_t sz = st[0].size;
  for (int s = 0; s < nst; s++) fn(&st[s], f + s * sz, u + s * sz, work); /* warm-up */
  *wall = *cpu = 1e30;
  for (int round = 0; round < 3; round++) {
    long reps = 0;
    double t0 = hpmg_wtime(), c0 = proc_cpu(), t;
    do {
      for (int s = 0; s < nst; s++) fn(&st[s], f + s * sz, u + s * sz, work);
      reps += nst;
      t = hpmg_wtime() - t0;
    } while (t < min_s);
    const double c = proc_cpu() - c0;
    if (t / reps < *wall) *wall = t / reps;
    if (c / reps < *cpu) *cpu = c / reps;
  }
}

int main(int argc, char **argv) {
  int dim = argc > 1 ? atoi(argv[1]) : 3;
  int pmin = argc > 2 ? atoi(argv[2]) : 2, pmax = argc > 3 ? atoi(argv[3]) : 32;
  int nst = argc > 4 ? atoi(argv[4]) : 500;
  double min_s = argc > 5 ? atof(argv[5]) : 0.2;
  const char *var = argc > 6 ? argv[6] : "vertex";
  int tpf_pmax = argc > 7 ? atoi(argv[7]) : 12;
  int mmc_pmax = argc > 8 ? atoi(argv[8]) : 12;
  const int ne = strcmp(var, "element") == 0 ? HPMG_SEM_STAR_ELEMENT : HPMG_SEM_STAR_VERTEX;
  if ((dim != 2 && dim != 3) || pmin < HPMG_SEM_MIN_DEGREE || pmax > HPMG_SEM_MAX_DEGREE || pmin > pmax ||
      nst < 1 || !(min_s > 0) || (strcmp(var, "vertex") && strcmp(var, "element"))) {
    fprintf(stderr,
            "usage: %s [dim=2|3] [pmin>=%d] [pmax<=%d] [stars>=1] [min_seconds>0] [vertex|element] [tpf_pmax] "
            "[mmc_pmax]\n",
            argv[0], HPMG_SEM_MIN_DEGREE, HPMG_SEM_MAX_DEGREE);
    return 2;
  }
  printf("# sem_star_bench: dim=%d, %s blocks (n = %dp-1), %d stars, one thread, best of 3 rounds of %.2f s\n", dim,
         var, ne, nst, min_s);
  printf("# %3s %4s %11s %11s %9s %8s | %11s %8s | %11s %8s | %10s %10s %10s\n", "p", "n", "wall us/st",
         "cpu us/st", "ns/DoF", "GFLOP/s", "tpf cpu us", "tpf/star", "mmc cpu us", "mmc/star", "KiB vector",
         "KiB blocks", "KiB work");
  double lp[HPMG_SEM_MAX_DEGREE + 1], ln[HPMG_SEM_MAX_DEGREE + 1], lt[HPMG_SEM_MAX_DEGREE + 1];
  for (int p = pmin; p <= pmax; p++) {
    hpmg_sem_element el;
    if (hpmg_sem_element_create(dim, p, &el)) {
      fprintf(stderr, "p=%d: %s\n", p, hpmg_last_error());
      return 1;
    }
    hpmg_sem_block1d blk[3][NBLK];
    for (int k = 0; k < dim; k++)
      for (int i = 0; i < NBLK; i++) {
        const double h[3] = {1.0 + 0.1 * i, (1.0 + 0.1 * i) * (1.0 + 0.05 * k), 1.2};
        const int side[2] = {HPMG_SEM_SIDE_ELEMENT, HPMG_SEM_SIDE_ELEMENT};
        if (hpmg_sem_block1d_create(&el, ne, h, side, &blk[k][i])) {
          fprintf(stderr, "p=%d: %s\n", p, hpmg_last_error());
          return 1;
        }
      }
    hpmg_sem_star *st = malloc(sizeof(hpmg_sem_star) * nst);
    for (int s = 0; s < nst; s++) {
      const hpmg_sem_block1d *b[3] = {&blk[0][s % NBLK], &blk[1][(s / NBLK) % NBLK],
                                      dim == 3 ? &blk[2][(s / (NBLK * NBLK)) % NBLK] : NULL};
      if (hpmg_sem_star_init(&st[s], dim, b, 0.0)) {
        fprintf(stderr, "p=%d: %s\n", p, hpmg_last_error());
        return 1;
      }
    }
    const size_t sz = st[0].size, wsz = hpmg_sem_star_work_size(&st[0]);
    double *f = malloc(sizeof(double) * sz * nst), *u = malloc(sizeof(double) * sz * nst);
    double *work = malloc(sizeof(double) * wsz);
    if (!f || !u || !work) {
      fprintf(stderr, "p=%d: out of memory\n", p);
      return 1;
    }
    srand(1);
    for (size_t i = 0; i < sz * nst; i++) f[i] = rand() / (double)RAND_MAX - 0.5;
    double t, tc, ttpf = 0.0, ttpfc = 0.0;
    time_stars(hpmg_sem_star_solve, st, nst, f, u, work, min_s, &t, &tc);
    if (p <= tpf_pmax) {
      const int ntpf = nst < 20 ? nst : 20;
      double *tw = malloc(sizeof(double) * hpmg_sem_star_tpf_work_size(&st[0]));
      time_stars(hpmg_sem_star_solve_tpf, st, ntpf, f, u, tw, min_s, &ttpf, &ttpfc);
      free(tw);
    }
    double tmmc = 0.0;
    if (p <= mmc_pmax) { /* Z: the kernel's map u = Z f; U^T = F^T Z^T for all stars at once */
      double *Z = malloc(sizeof(double) * sz * sz), *e = calloc(sz, sizeof(double)), *col = malloc(sizeof(double) * sz);
      if (!Z || !e || !col) {
        fprintf(stderr, "p=%d: out of memory for the dense inverse\n", p);
        return 1;
      }
      for (size_t j = 0; j < sz; j++) {
        e[j] = 1.0;
        hpmg_sem_star_solve(&st[0], e, col, work);
        e[j] = 0.0;
        for (size_t i = 0; i < sz; i++) Z[i * sz + j] = col[i];
      }
      double best = 1e30;
      for (int round = 0; round < 3; round++) {
        long reps = 0;
        double c0 = proc_cpu(), t0 = hpmg_wtime();
        do {
          cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nst, (int)sz, (int)sz, 1.0, f, (int)sz, Z, (int)sz, 0.0,
                      u, (int)sz);
          reps += nst;
        } while (hpmg_wtime() - t0 < min_s);
        if ((proc_cpu() - c0) / reps < best) best = (proc_cpu() - c0) / reps;
      }
      tmmc = best;
      hpmg_sem_star_solve(&st[0], f, col, work); /* the DGEMM's first star against the kernel */
      double dd = 0.0, nn = 0.0;
      for (size_t i = 0; i < sz; i++) {
        dd += (u[i] - col[i]) * (u[i] - col[i]);
        nn += col[i] * col[i];
      }
      if (!(dd <= 1e-20 * nn)) {
        fprintf(stderr, "p=%d: dense inverse differs from the kernel (rel %.3g)\n", p, sqrt(dd / nn));
        return 1;
      }
      free(Z);
      free(e);
      free(col);
    }
    const int n = st[0].n;
    const double nd = dim == 2 ? (double)n * n : (double)n * n * n;
    printf("  %3d %4d %11.3f %11.3f %9.3f %8.2f | ", p, n, 1e6 * t, 1e6 * tc, 1e9 * tc / nd,
           1e-9 * hpmg_sem_star_flops(&st[0]) / tc);
    if (ttpf > 0)
      printf("%11.3f %8.1f | ", 1e6 * ttpfc, ttpfc / tc);
    else
      printf("%11s %8s | ", "-", "-");
    if (tmmc > 0)
      printf("%11.3f %8.2f | ", 1e6 * tmmc, tmmc / tc);
    else
      printf("%11s %8s | ", "-", "-");
    printf("%10.1f %10.1f %10.1f\n", sizeof(double) * sz / 1024.0, dim * hpmg_sem_block1d_bytes(&blk[0][0]) / 1024.0,
           sizeof(double) * wsz / 1024.0);
    fflush(stdout);
    lp[p] = log(p);
    ln[p] = log(n);
    lt[p] = log(tc);
    free(f);
    free(u);
    free(work);
    free(st);
    for (int k = 0; k < dim; k++)
      for (int i = 0; i < NBLK; i++) hpmg_sem_block1d_free(&blk[k][i]);
    hpmg_sem_element_free(&el);
  }
  for (int from = 8; from <= 16; from += 8) /* least-squares slopes in log-log */
    if (pmax - (pmin > from ? pmin : from) >= 1) {
      const int lo = pmin > from ? pmin : from, m = pmax - lo + 1;
      double sx = 0, sn = 0, sy = 0, sxx = 0, snn = 0, sxy = 0, sny = 0;
      for (int p = lo; p <= pmax; p++) {
        sx += lp[p];
        sn += ln[p];
        sy += lt[p];
        sxx += lp[p] * lp[p];
        snn += ln[p] * ln[p];
        sxy += lp[p] * lt[p];
        sny += ln[p] * lt[p];
      }
      printf("# log-log fit over p = %d..%d: time ~ p^%.2f, time ~ n^%.2f\n", lo, pmax,
             (m * sxy - sx * sy) / (m * sxx - sx * sx), (m * sny - sn * sy) / (m * snn - sn * sn));
    }
  printf("# KiB vector: one star-local vector (the input; the output is another); KiB blocks: the %d 1D blocks of a\n"
         "# star when not shared with other stars; KiB work: scratch of one solve (per thread, not per star)\n",
         dim);
  return 0;
}
