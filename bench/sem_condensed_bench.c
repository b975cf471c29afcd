/* Time per element of the condensed spectral-element operator (O(p^dim),
 * src/disc/sem) next to the full element operator by sum factorization
 * (O(p^{dim+1})), over a batch of elements with OpenMP over elements.
 *
 *   sem_condensed_bench [dim=3] [pmin=2] [pmax=32] [elements=512] [min_seconds=0.2]
 *
 * Per unknown means per p^dim, the share of one element in the unknowns of a
 * continuous mesh. GFLOP/s from the kernels' own operation counts
 * (hpmg_sem_condensed_flops, hpmg_sem_full_flops). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include "disc/sem/sem_element.h"

typedef hpmg_error (*batch_fn)(const hpmg_sem_element *, int64_t, const double *, const double *, double *);

/* seconds per call: repeat until min_s has passed, best of 3 such rounds */
static double time_batch(batch_fn fn, const hpmg_sem_element *el, int64_t ne, const double *d, const double *u,
                         double *y, double min_s) {
  if (fn(el, ne, d, u, y)) return -1.0; /* warm-up */
  double best = 1e30;
  for (int round = 0; round < 3; round++) {
    int reps = 0;
    double t0 = hpmg_wtime(), t;
    do {
      if (fn(el, ne, d, u, y)) return -1.0;
      reps++;
      t = hpmg_wtime() - t0;
    } while (t < min_s);
    if (t / reps < best) best = t / reps;
  }
  return best;
}

int main(int argc, char **argv) {
  int dim = argc > 1 ? atoi(argv[1]) : 3;
  int pmin = argc > 2 ? atoi(argv[2]) : 2, pmax = argc > 3 ? atoi(argv[3]) : 32;
  int64_t ne = argc > 4 ? atoll(argv[4]) : 512;
  double min_s = argc > 5 ? atof(argv[5]) : 0.2;
  if ((dim != 2 && dim != 3) || pmin < HPMG_SEM_MIN_DEGREE || pmax > HPMG_SEM_MAX_DEGREE || pmin > pmax || ne < 1) {
    fprintf(stderr, "usage: %s [dim=2|3] [pmin>=%d] [pmax<=%d] [elements>=1] [min_seconds]\n", argv[0],
            HPMG_SEM_MIN_DEGREE, HPMG_SEM_MAX_DEGREE);
    return 2;
  }
  printf("# sem_condensed_bench: dim=%d, %lld elements, %d OpenMP threads\n", dim, (long long)ne,
         omp_get_max_threads());
  printf("# %3s %12s %10s %8s | %12s %10s %8s | %6s\n", "p", "cond ns/el", "ns/unk", "GFLOP/s", "full ns/el",
         "ns/unk", "GFLOP/s", "full/cond");
  for (int p = pmin; p <= pmax; p++) {
    hpmg_sem_element el;
    if (hpmg_sem_element_create(dim, p, &el)) {
      fprintf(stderr, "p=%d: %s\n", p, hpmg_last_error());
      return 1;
    }
    double *d = malloc(sizeof(double) * (size_t)ne * (dim + 1));
    double *uB = malloc(sizeof(double) * (size_t)ne * el.nb), *yB = malloc(sizeof(double) * (size_t)ne * el.nb);
    double *u = malloc(sizeof(double) * (size_t)ne * el.nloc), *y = malloc(sizeof(double) * (size_t)ne * el.nloc);
    if (!d || !uB || !yB || !u || !y) {
      fprintf(stderr, "p=%d: out of memory\n", p);
      return 1;
    }
    for (int64_t e = 0; e < ne; e++) { /* anisotropic, slightly different elements */
      double h[3] = {1.0 + 0.001 * (e % 7), 0.3, 2.5};
      hpmg_sem_coefficients(dim, h, 0.0, d + e * (dim + 1));
    }
    srand(1);
    for (int64_t i = 0; i < ne * el.nb; i++) uB[i] = rand() / (double)RAND_MAX - 0.5;
    for (int64_t i = 0; i < ne * el.nloc; i++) u[i] = rand() / (double)RAND_MAX - 0.5;
    double tc = time_batch(hpmg_sem_condensed_apply_batch, &el, ne, d, uB, yB, min_s);
    double tf = time_batch(hpmg_sem_apply_full_batch, &el, ne, d, u, y, min_s);
    if (tc < 0 || tf < 0) {
      fprintf(stderr, "p=%d: %s\n", p, hpmg_last_error());
      return 1;
    }
    double unk = dim == 2 ? (double)p * p : (double)p * p * p;
    double nc = 1e9 * tc / ne, nf = 1e9 * tf / ne;
    printf("  %3d %12.1f %10.2f %8.2f | %12.1f %10.2f %8.2f | %6.2f\n", p, nc, nc / unk,
           hpmg_sem_condensed_flops(&el) / nc, nf, nf / unk, hpmg_sem_full_flops(&el) / nf, nf / nc);
    fflush(stdout);
    free(d);
    free(uB);
    free(yB);
    free(u);
    free(y);
    hpmg_sem_element_free(&el);
  }
  return 0;
}
