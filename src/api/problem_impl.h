/* Internal layout of the public problem object, shared by the api sources. */
#ifndef HPMG_API_PROBLEM_IMPL_H
#define HPMG_API_PROBLEM_IMPL_H

#include "grid/box.h"
#include "grid/grid.h"
#include "hpmg.h"

struct hpmg_problem_s {
  hpmg_problem_options o;
  hpmg_grid g; /* finest level */
  struct hpmg_p1_problem_s *p1; /* P1 problems (src/api/p1.c): everything above but o unused */
  struct hpmg_sem_problem_s *sem; /* spectral elements (src/api/sem.c): likewise */
  /* FD problems that need more than the unit box with 2^refine cells and
   * homogeneous Dirichlet faces (fd_box_needed): the box, nodes copied */
  int fdbox;
  /* Q_k problems beyond the 2^refine homogeneous-Dirichlet mesh
   * (qk_box_needed): the box (nodes copied); g is its finest level */
  int qkbox;
  /* Boxes (FD and Q_k): the boundary data of the last solve, for
   * hpmg_problem_write_vtu: 1 the built-in problem's (no b; before any solve
   * too), 0 the faces' data */
  int box_builtin;
  hpmg_box box;
};

/* Validate every field; refuse with a message naming the field and the allowed range. */
hpmg_error hpmg_problem_options_check(const hpmg_problem_options *o);
/* Maximum supported degree per dimension. */
int hpmg_max_degree(int dim);

#endif
