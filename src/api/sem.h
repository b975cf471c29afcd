/* The public problem and solver objects on a spectral-element problem
 * (HPMG_DISC_SEM): the box's mesh and skeleton, the condensed load, dCG,
 * the recovery of the full field (paper 001, docs/sem.md). */
#ifndef HPMG_API_SEM_H
#define HPMG_API_SEM_H

#include "hpmg.h"

typedef struct hpmg_sem_problem_s *hpmg_sem_problem;
typedef struct hpmg_sem_solver_s *hpmg_sem_solver;

/* every option, before anything is allocated */
hpmg_error hpmg_sem_problem_check(const hpmg_problem_options *o);
hpmg_error hpmg_sem_problem_create(const hpmg_problem_options *o, hpmg_sem_problem *p);
void hpmg_sem_problem_destroy(hpmg_sem_problem *p);
int64_t hpmg_sem_problem_num_dofs(hpmg_sem_problem p);
void hpmg_sem_problem_grid(hpmg_sem_problem p, int64_t n[3]);
/* f at the GLL nodes */
hpmg_error hpmg_sem_problem_load_vector(hpmg_sem_problem p, hpmg_function f, void *user, double *b);
/* L2 ((p+2)-point Gauss per direction and element) and max nodal error
 * against the built-in manufactured solution (singular problems: both mean-free) */
hpmg_error hpmg_sem_problem_error(hpmg_sem_problem p, const double *x, double *l2, double *maxerr);
/* VTK XML, one Lagrange cell per element */
hpmg_error hpmg_sem_problem_write_vtu(hpmg_sem_problem p, const double *x, const char *path);
/* bytes of host memory a solve needs (mesh, vectors, the caller's b and x) */
double hpmg_sem_memory_estimate(const hpmg_problem_options *o);

hpmg_error hpmg_sem_options_resolve(hpmg_solver_options *so);
hpmg_error hpmg_sem_solver_create(hpmg_sem_problem p, const hpmg_solver_options *so, hpmg_sem_solver *s);
void hpmg_sem_solver_destroy(hpmg_sem_solver *s);
hpmg_error hpmg_sem_solver_solve(hpmg_sem_solver s, const double *b, double *x);
void hpmg_sem_solver_get_stats(hpmg_sem_solver s, hpmg_stats *st);
int hpmg_sem_solver_history(hpmg_sem_solver s, const double **h);
void hpmg_sem_solver_set_verbose(hpmg_sem_solver s, int verbose);

#endif
