/* The OpenMP region threshold of small loops; see par.h. */
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
