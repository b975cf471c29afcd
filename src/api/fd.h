/* The public problem and solver objects on a finite-difference problem
 * (HPMG_DISC_FD): public options -> fd_config, the API's interior-point
 * vectors <-> the FD solver's grid vectors, statistics. The solver itself is
 * src/disc/fd/fd_mg (docs/fd.md). */
#ifndef HPMG_API_FD_H
#define HPMG_API_FD_H

#include "grid/box.h"
#include "hpmg.h"

typedef struct hpmg_fd_run_s *hpmg_fd_run;

/* dim and refine in range, every Q_k-only field at its default */
hpmg_error hpmg_fd_problem_check(const hpmg_problem_options *po);
/* b_i = f(x_i) at the interior grid points */
hpmg_error hpmg_fd_point_values(int dim, int refine, hpmg_function f, void *user, double *b);
/* discrete L2 error sqrt(h^d sum e^2), RMS over the (n+1)^d points, max error
 * of the interior-point vector x against prod sin(pi x_i); any output may be NULL */
void hpmg_fd_error(int dim, int refine, const double *x, double *l2h, double *rms, double *maxerr);
/* hpmg_solver_options_resolve for an FD problem */
hpmg_error hpmg_fd_options_resolve(const hpmg_problem_options *po, hpmg_solver_options *so);
/* host bytes (the FD solver's, its grid solution vector, the caller's x) and GPU bytes */
hpmg_error hpmg_fd_memory_estimate(const hpmg_problem_options *po, const hpmg_solver_options *so, double *host,
                                   double *device);
hpmg_error hpmg_fd_run_create(const hpmg_problem_options *po, const hpmg_solver_options *so, hpmg_fd_run *run);
/* The same on a general box (disc/fd/fd_box.h): po and box must outlive the run. */
hpmg_error hpmg_fd_box_run_create(const hpmg_problem_options *po, const hpmg_box *box, const hpmg_solver_options *so,
                                  hpmg_fd_run *run);
/* hpmg_solver_options_resolve on a general box: bx, or (NULL) the box of po
 * (whose node arrays must then be valid) */
hpmg_error hpmg_fd_box_options_resolve(const hpmg_problem_options *po, const hpmg_box *bx, hpmg_solver_options *so);
void hpmg_fd_run_destroy(hpmg_fd_run *run);
/* b: f at the interior points (NULL: the built-in one); x: the solution out */
hpmg_error hpmg_fd_run_solve(hpmg_fd_run run, const double *b, double *x);
void hpmg_fd_run_get_stats(hpmg_fd_run run, hpmg_stats *st);
int hpmg_fd_run_history(hpmg_fd_run run, const double **h);
void hpmg_fd_run_set_verbose(hpmg_fd_run run, int verbose);

#endif
