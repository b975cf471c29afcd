/* The OpenMP region threshold of small loops, the dense calls on one thread; see par.h. */
#include "core/par.h"
#include <stdlib.h>
#include <strings.h>

double hpmg_par_min = -1.0;

void hpmg_par_init(void) {
  if (hpmg_par_min >= 0) return;
  const char *w = getenv("OMP_WAIT_POLICY");
  hpmg_par_min = w && !strcasecmp(w, "passive") ? HPMG_PAR_MIN_PASSIVE : HPMG_PAR_MIN_SPIN;
}

double hpmg_set_par_min(double units) {
  const double old = hpmg_par_min;
  hpmg_par_min = units;
  return old;
}

/* OpenBLAS's thread-count calls, where the program is linked with it */
extern int openblas_get_num_threads(void) __attribute__((weak));
extern void openblas_set_num_threads(int) __attribute__((weak));

int hpmg_blas_serial_begin(void) {
  if (!openblas_get_num_threads || !openblas_set_num_threads) return 0;
  const int n = openblas_get_num_threads();
  if (n > 1) openblas_set_num_threads(1);
  return n;
}

void hpmg_blas_serial_end(int previous) {
  if (previous > 1 && openblas_set_num_threads) openblas_set_num_threads(previous);
}
