#include <limits.h>
#include <math.h>
#include "grid.h"

hpmg_error hpmg_grid_init(int dim, int k, const int64_t cells[3], const double box[3], hpmg_grid *g) {
  HPMG_CHECK_ARG(dim == 2 || dim == 3, "dimension must be 2 or 3 (got %d)", dim);
  HPMG_CHECK_ARG(k >= 1 && k <= 15, "degree must be in 1..15 (got %d)", k);
  g->dim = dim;
  g->k = k;
  g->N = 1;
  for (int d = 0; d < 3; d++) {
    if (d >= dim) {
      g->cells[d] = 1;
      g->n[d] = 1;
      g->h[d] = 1.0;
      continue;
    }
    HPMG_CHECK_ARG(cells[d] >= 1, "cells per direction must be >= 1");
    HPMG_CHECK_ARG(cells[d] <= (INT_MAX - 1) / k,
                   "%lld cells of degree %d in one direction exceed 2^31 nodes",
                   (long long)cells[d], k);
    HPMG_CHECK_ARG(box[d] > 0 && isfinite(box[d]), "box lengths must be positive and finite");
    g->cells[d] = cells[d];
    g->n[d] = (int64_t)k * cells[d] - 1;
    g->h[d] = box[d] / (double)cells[d];
    HPMG_CHECK_ARG(g->n[d] == 0 || g->N <= INT64_MAX / g->n[d], "number of unknowns overflows 64 bits");
    g->N *= g->n[d];
  }
  return HPMG_SUCCESS;
}
