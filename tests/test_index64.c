/* 64-bit sizes: a problem beyond 2^31 unknowns is described exactly (counts,
 * last index, memory estimate) without allocating it, and refused with the
 * estimate when it does not fit in memory. */
#include <stdint.h>
#include <string.h>
#include "check.h"
#include "grid/grid.h"
#include "hpmg.h"

int main(void) {
  /* 3D, k = 3, 1024^3 cells: (3*1024-1)^3 = 28,970,000,000 unknowns (> 2^34) */
  hpmg_grid g;
  const double box[3] = {1, 1, 1};
  int64_t c = 1024, cells[3] = {c, c, c};
  CHECK_OK(hpmg_grid_init(3, 3, cells, box, &g));
  const int64_t n1 = 3 * 1024 - 1;
  CHECK(g.N == n1 * n1 * n1, "N = %lld", (long long)g.N);
  CHECK(g.N > ((int64_t)1 << 34), "N exceeds 2^34");
  CHECK(hpmg_grid_index(&g, n1 - 1, n1 - 1, n1 - 1) == g.N - 1, "last index");
  CHECK(hpmg_grid_index(&g, 0, 0, n1 - 1) == (n1 - 1) * n1 * n1, "first index of last plane");

  hpmg_problem_options po;
  hpmg_solver_options so;
  hpmg_problem_options_default(&po);
  hpmg_solver_options_default(&so);
  po.dim = 3;
  po.degree = 3;
  po.refine = 10;
  hpmg_problem prob;
  CHECK_OK(hpmg_problem_create(&po, &prob));
  CHECK(hpmg_problem_num_dofs(prob) == g.N, "problem dofs %lld", (long long)hpmg_problem_num_dofs(prob));
  double bytes = 0;
  CHECK_OK(hpmg_memory_estimate(&po, &so, &bytes));
  /* at least the caller's b and x and four Krylov vectors, in double */
  CHECK(bytes >= 6.0 * 8.0 * (double)g.N, "memory estimate %.3e bytes", bytes);
  hpmg_solver solver = NULL;
  hpmg_error e = hpmg_solver_create(prob, &so, &solver);
  CHECK(e == HPMG_ERR_MEMORY && solver == NULL, "solver for 2.9e10 unknowns must be refused (got %d)", (int)e);
  CHECK(strstr(hpmg_last_error(), "needs about") != NULL, "message gives the estimate: '%s'", hpmg_last_error());
  printf("refused as expected: %s\n", hpmg_last_error());
  hpmg_problem_destroy(&prob);

  /* 2D: 2^31 + more unknowns, still exact */
  int64_t c2 = 1 << 16, cells2[3] = {c2, c2, 1};
  CHECK_OK(hpmg_grid_init(2, 1, cells2, box, &g));
  CHECK(g.N == (int64_t)(c2 - 1) * (c2 - 1), "2D N");
  CHECK(g.N > INT32_MAX, "2D N exceeds 2^31");
  /* overflow of 2^31 nodes per direction is refused */
  int64_t huge[3] = {(int64_t)1 << 30, 1, 1};
  CHECK(hpmg_grid_init(2, 4, huge, box, &g) == HPMG_ERR_ARG, "per-direction overflow refused");
  po.refine = 30;
  po.degree = 8;
  CHECK(hpmg_problem_create(&po, &prob) == HPMG_ERR_ARG, "refine 30 with k=8 refused");
  return check_report();
}
