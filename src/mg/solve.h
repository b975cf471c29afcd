/* Solving with the hierarchy, written once for every discretization and
 * backend: the stationary multigrid iteration (with the mixed-precision
 * defect correction), the full-multigrid solve (paper 000, Algorithm 2), and
 * the outer-solve driver (CG, flexible GMRES, V-cycle iteration or FMG in the
 * outer precision; float copies for --precision float; the final residual in
 * double; statistics). */
#ifndef HPMG_MG_SOLVE_H
#define HPMG_MG_SOLVE_H

#include "mg/mg.h"

/* x += V(b - A x) until ||b - A x|| <= rtol r0 (r0 = r0_ref if > 0, else the
 * initial residual), maxit or hpmg_stagnation; the tolerance is tested from
 * iteration min_it on. Three forms, one loop:
 *  - b, x are the finest level's own b and x (&F->b, &F->x): each V-cycle
 *    starts from x in place, and ||b - A x|| comes from A->residual_norm
 *    where A has it (no residual vector);
 *  - x in double, the cycle in float (mixed precision): r = b - A x in double,
 *    ||r|| and (float) r in one pass into the cycle's b, the float
 *    correction added to x in one pass;
 *  - otherwise r = b - A x, z = V r, x += z.
 * work: 2 vectors like x (r, z); NULL in place where A has residual_norm. */
hpmg_error hpmg_mg_stationary(hpmg_mg *mg, const hpmg_linop *A, const hpmg_vec *b, hpmg_vec *x, hpmg_vec work[2],
                              int min_it, double r0_ref, const hpmg_krylov_params *prm, hpmg_krylov_info *info);

/* Paper 000, Algorithm 2: full multigrid start in the cycle's precision, then
 * the stationary iteration with r0 = ||b||, at least one V-cycle (the count
 * excludes the start). Mixed precision runs the start's finest-level cycle
 * as a defect correction in the outer precision. x's initial value is not
 * used. work: 2 vectors like x. */
hpmg_error hpmg_mg_fmg_solve(hpmg_mg *mg, const hpmg_linop *A, const hpmg_vec *b, hpmg_vec *x, hpmg_vec work[2],
                             const hpmg_krylov_params *prm, hpmg_krylov_info *info);

/* ------------------------------------------------------------ the driver */

typedef struct {
  hpmg_solver_kind solver; /* CG, GMRES, VCYCLE or FMG */
  double tol;
  int maxit, restart, verbose;
  /* optional: a singular operator's null-space projection, handed to the
   * Krylov methods (hpmg_krylov_params.project); b must be compatible */
  hpmg_error (*project)(void *pctx, hpmg_vec *v);
  void *pctx;
} hpmg_mg_solve_options;

typedef struct {
  hpmg_mg *mg;        /* not owned */
  hpmg_linop A;       /* the finest operator, any precision (not owned) */
  const hpmg_backend *be;
  int64_t n;
  hpmg_real kreal;    /* the outer iteration's precision */
  hpmg_mg_solve_options o;
  hpmg_vec work[4];   /* kreal */
  hpmg_vec kb, kx;    /* float copies of b and x (kreal float) */
  hpmg_vec check;     /* double residual of the final check (kreal float) */
  hpmg_gmres_work gmres;
  double *hist;       /* residual norm per iteration of the last solve */
  int nhist;
  double t_outer_op;
  int64_t outer_matvecs;
} hpmg_mg_solver;

/* Bytes hpmg_mg_solver_create allocates (GMRES's basis counted in full). */
double hpmg_mg_solver_memory(double n, hpmg_real kreal, const hpmg_mg_solve_options *o);
hpmg_error hpmg_mg_solver_create(hpmg_mg_solver *s, hpmg_mg *mg, hpmg_linop A, const hpmg_backend *be, int64_t n,
                                 hpmg_real kreal, const hpmg_mg_solve_options *o);
void hpmg_mg_solver_destroy(hpmg_mg_solver *s);
/* A x = b for double b, x on the solver's backend (x: initial guess).
 * Convergence is judged by the true residual in double. Fills the solve's
 * fields of st (dofs, levels, setup and memory are the caller's). Returns
 * HPMG_ERR_NOT_CONVERGED with a message when the tolerance is not met. */
hpmg_error hpmg_mg_solver_solve(hpmg_mg_solver *s, const hpmg_vec *b, hpmg_vec *x, hpmg_stats *st);

#endif
