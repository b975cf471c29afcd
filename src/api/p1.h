/* The public problem and solver objects on a P1 problem (HPMG_DISC_P1):
 * mesh, coefficients and boundary conditions -> assembled CSR matrix, and
 * its Jacobi-preconditioned CG solve on the host or the CUDA backend
 * (docs/p1.md). */
#ifndef HPMG_API_P1_H
#define HPMG_API_P1_H

#include "disc/p1/mesh.h"
#include "hpmg.h"

typedef struct hpmg_p1_problem_s *hpmg_p1_problem;
typedef struct hpmg_p1_solver_s *hpmg_p1_solver;

hpmg_error hpmg_p1_problem_check(const hpmg_problem_options *o);
/* reads or generates the mesh, renumbers it, builds the CSR pattern and the
 * boundary conditions' data; A is assembled by the solver, on its device */
hpmg_error hpmg_p1_problem_create(const hpmg_problem_options *o, hpmg_p1_problem *p);
void hpmg_p1_problem_destroy(hpmg_p1_problem *p);
int64_t hpmg_p1_problem_num_dofs(hpmg_p1_problem p);
int hpmg_p1_problem_dim(hpmg_p1_problem p);
/* b_i = (phi_i, f), 4-point (3D) / 3-point (2D) degree-2 quadrature per cell */
hpmg_error hpmg_p1_problem_load_vector(hpmg_p1_problem p, hpmg_function f, void *user, double *b);
/* L2 (degree-2 quadrature) and max nodal error against the manufactured solution */
hpmg_error hpmg_p1_problem_error(hpmg_p1_problem p, const double *x, double *l2, double *maxerr);
hpmg_error hpmg_p1_problem_write_vtu(hpmg_p1_problem p, const double *x, const char *path);
/* bytes of host memory a P1 problem needs (built-in meshes; 0 for files: not known before reading) */
double hpmg_p1_memory_estimate(const hpmg_problem_options *po);

hpmg_error hpmg_p1_options_resolve(hpmg_solver_options *so);
hpmg_error hpmg_p1_solver_create(hpmg_p1_problem p, const hpmg_solver_options *so, hpmg_p1_solver *s);
void hpmg_p1_solver_destroy(hpmg_p1_solver *s);
hpmg_error hpmg_p1_solver_solve(hpmg_p1_solver s, const double *b, double *x);
void hpmg_p1_solver_get_stats(hpmg_p1_solver s, hpmg_stats *st);
int hpmg_p1_solver_history(hpmg_p1_solver s, const double **h);
void hpmg_p1_solver_set_verbose(hpmg_p1_solver s, int verbose);

/* internals for tests and benchmarks: the host-assembled matrix with the
 * boundary conditions (CSR, full symmetric; assembled on the first call) and
 * the mesh */
hpmg_error hpmg_p1_problem_matrix(hpmg_p1_problem p, int64_t *n, int64_t *nnz, const int64_t **rowptr, const int32_t **col,
                                  const double **val);
const hpmg_p1_mesh *hpmg_p1_problem_mesh(hpmg_p1_problem p);
/* the solver's matrix (nnz values: the device's on CUDA) and the boundary
 * part of its right-hand side (n) */
hpmg_error hpmg_p1_solver_system(hpmg_p1_solver s, double *val, double *rhs_bc);
/* the P1 part of a public problem (NULL for other discretizations) */
hpmg_p1_problem hpmg_problem_p1(hpmg_problem p);

#endif
