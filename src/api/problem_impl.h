/* Internal layout of the public problem object, shared by the api sources. */
#ifndef HPMG_API_PROBLEM_IMPL_H
#define HPMG_API_PROBLEM_IMPL_H

#include "grid/grid.h"
#include "hpmg.h"

struct hpmg_problem_s {
  hpmg_problem_options o;
  hpmg_grid g; /* finest level */
  struct hpmg_p1_problem_s *p1; /* P1 problems (src/api/p1.c): everything above but o unused */
};

/* Validate every field; refuse with a message naming the field and the allowed range. */
hpmg_error hpmg_problem_options_check(const hpmg_problem_options *o);
/* Maximum supported degree per dimension. */
int hpmg_max_degree(int dim);

#endif
