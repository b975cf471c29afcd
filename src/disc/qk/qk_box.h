/* Q_k on a general box (docs/bc.md): the problem's data beyond the operator.
 * The right-hand side is the load vector of f plus the boundary data:
 * Dirichlet values enter by lifting (b -= A_{free,boundary} g, g the nodal
 * interpolant of the data on the Dirichlet faces), Neumann fluxes by face
 * integrals (b_i += integral over the face of g phi_i, (k+1)-point Gauss per
 * cell). Manufactured solutions: fd_box_manufactured (the FD box's). */
#ifndef HPMG_DISC_QK_BOX_H
#define HPMG_DISC_QK_BOX_H

#include "grid/box.h"
#include "grid/grid.h"
#include "la/backend.h"
#include "la/vec.h"
#include "mg/mg.h"

/* 1 when a Q_k problem needs the general box path (cells, spacing or BCs
 * beyond the default unit-free homogeneous Dirichlet 2^refine mesh). */
int qk_box_needed(const hpmg_problem_options *o);
/* 1 for a singular operator: no Dirichlet face and lambda = 0. */
int qk_box_singular(const hpmg_grid *g, double lambda);
/* b_i = integral of f phi_i over the box ((k+1)-point Gauss per cell). */
hpmg_error qk_box_load(const hpmg_grid *g, hpmg_function f, void *user, double *b);
/* rhs = load + lifting + fluxes. load: the caller's load vector, BC data
 * from o->bc; NULL: the built-in problem (HPMG_RHS_SINE: f, Dirichlet values
 * and fluxes of the manufactured solution; ONE: f = 1, BC data from o->bc).
 * HPMG_ERR_NUMERIC for non-finite boundary data. */
hpmg_error qk_box_rhs(const hpmg_problem_options *o, const hpmg_box *b, const hpmg_grid *g, const double *load,
                      double *rhs);
/* The right-hand side a Q_k box solve iterates on (the CPU solver in
 * solver.c and the GPU solver, qk_levels.cu): rhs = qk_box_rhs(b) (b: the
 * caller's load vector, checked for non-finite entries; NULL: the built-in
 * one, whose boundary data are the manufactured solution's, so the faces
 * must carry none); singular (w != NULL: qk_box_weights, sumw their sum):
 * the compatibility check of fd_box_compat_check, then b -= (sum b / sumw) w
 * and its round-off mean removed; *c: the constant removed (0 otherwise). */
hpmg_error qk_box_solve_rhs(const hpmg_problem_options *o, const hpmg_box *b, const hpmg_grid *g, const double *load,
                            const double *w, double sumw, double *rhs, double *c);
/* FMG's shifts (hpmg_mg_set_fmg_shift) for the levels g[0..mg->nlevels) (coarsest first) of
 * the box problem o on b, whose Dirichlet data (the manufactured solution's where builtin, as
 * qk_box_rhs takes them) are lifted into the finest right-hand side: each coarser level
 * solves its own problem with its own lifting of the data, and FMG interpolates the solution
 * with the data at the coarser level's boundary nodes. Without them the coarser levels'
 * solutions drop to 0 at the boundary, so the interpolated start is off by the data in a
 * layer of fine cells (3D Q2 128^3, data 1/4 + linear: FMG's residual 5.3e-3 of |b|, then 4
 * V-cycles to 1e-9). Removes them where the data are zero, or are values at the finest
 * level's face nodes, which the coarser levels cannot evaluate. Made once per kind of solve:
 * nothing to do where *made_for == builtin; *made_for is set to builtin (-1 on an error: none
 * made yet) and the seconds spent are added to *t_setup (the solvers' FMG setup, at the
 * first solve, which says whether b is the built-in one). One more vector per level
 * (qk_box_dirichlet: the memory estimates count it). */
hpmg_error qk_box_fmg_shifts(const hpmg_problem_options *o, const hpmg_box *b, int builtin, const hpmg_grid *const *g,
                             hpmg_mg *mg, int *made_for, double *t_setup);
/* 1 when a face of o has a Dirichlet condition (FMG's shifts exist only then) */
int qk_box_dirichlet(const hpmg_problem_options *o);
/* L2 error ((k+2)-point Gauss) and max error at the nodes against the
 * manufactured solution, boundary nodes included with their lifted values
 * (singular problems: of the error minus its mean). */
hpmg_error qk_box_error(const hpmg_problem_options *o, const hpmg_box *b, const hpmg_grid *g, const double *x,
                        double *l2, double *mx);
/* Write x as VTK XML (hpmg_vtu_write_lattice: one Lagrange cell per cell,
 * the box's node coordinates, a periodic direction's last plane repeated)
 * with the Dirichlet faces' values: the built-in problem's (builtin, as a
 * solve without b takes them: the manufactured solution with HPMG_RHS_SINE)
 * or the faces' data o->bc (a solve with the caller's b). */
hpmg_error qk_box_write_vtu(const hpmg_problem_options *o, const hpmg_box *b, const hpmg_grid *g, const double *x,
                            int builtin, const char *path);
/* m_i = integral of phi_i (m = M 1): the weights of the singular case's
 * projection b -= (sum b / sum m) m and of the mean of a solution. */
hpmg_error qk_box_weights(const hpmg_grid *g, double *m);
/* v -= mean(v) (the Krylov methods' null-space projection, any precision) */
hpmg_error qk_box_project_mean(void *ctx, hpmg_vec *v);

#endif
