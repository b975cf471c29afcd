/* The statically condensed spectral-element system on a mesh (sem_mesh.h):
 * element loads with Neumann fluxes, the condensed right-hand side with
 * Dirichlet values lifted, interior recovery into the full field, its error
 * against an exact solution, and dCG, Jacobi-preconditioned CG (hpmg_pcg) on
 * the condensed system (docs/sem.md).
 *
 * The full field lives on the GLL lattice of the mesh (sem_mesh.h: nlat[d]
 * nodes per direction, x fastest, a periodic direction without its last
 * plane), nlat_total values; f is given there as point values, the load of
 * element e is F_e = J_e (M (x) M (x) M) f at its nodes (J_e = prod h / 2^dim,
 * the diagonal GLL mass), plus, on a Neumann face of the domain, the flux g
 * times the face's GLL mass. */
#ifndef HPMG_SEM_SYSTEM_H
#define HPMG_SEM_SYSTEM_H

#include "disc/sem/sem_mesh.h"
#include "la/krylov.h"

/* Boundary data: g on domain face `face` (0 = xmin .. 5 = zmax) at x: the
 * Dirichlet value, or the Neumann flux du/dn with n the outward normal. */
typedef double (*hpmg_sem_bc_fn)(void *ctx, int face, const double x[3]);
/* A scalar field u(x) (an exact solution). */
typedef double (*hpmg_sem_field_fn)(void *ctx, const double x[3]);

/* Lattice coordinates of direction d: cells[d] p + 1 values (also for a
 * periodic direction, whose last value is the box length). Caller frees. */
hpmg_error hpmg_sem_lattice_coords(const hpmg_sem_mesh *m, int d, double **xl);

/* 1 when the condensed system is singular: no Dirichlet face and lambda = 0
 * (the constants are its null space). */
static inline int hpmg_sem_singular(const hpmg_sem_mesh *m) { return m->ndir == 0 && m->lambda == 0; }

/* Singular systems: the constant c = (sum of all loads) / (domain volume),
 * which the compatibility condition requires to be 0 (the loads of f - c
 * are compatible), and cabs = (sum of their absolute values) / volume, its
 * scale. */
hpmg_error hpmg_sem_load_mean(const hpmg_sem_mesh *m, double *const xl[3], const double *f, hpmg_sem_bc_fn bc, void *bctx,
                              double *c, double *cabs);
/* The mean of the full field u over the domain (GLL quadrature), the
 * constant a singular problem's solution is made free of. */
double hpmg_sem_field_mean(const hpmg_sem_mesh *m, const double *u);

/* The condensed right-hand side of the loads of f - shift, with the
 * Dirichlet values uD (skeleton vector: g at the Dirichlet nodes, 0
 * elsewhere) lifted: rhs = sum_e Q_e^T Fhat_e - Hhat uD, 0 at the Dirichlet
 * nodes. The solution of the masked system plus uD is the condensed
 * solution. HPMG_ERR_NUMERIC for non-finite boundary data. */
hpmg_error hpmg_sem_condensed_rhs(const hpmg_sem_mesh *m, double *const xl[3], const double *f, double shift,
                                  hpmg_sem_bc_fn bc, void *bctx, double *rhs, double *uD);

/* The full field u (lattice) from the condensed solution us (skeleton):
 * boundary values copied, interiors by u_I = H_II^{-1}(F_I - H_IB u_B) with
 * the loads of f - shift. */
hpmg_error hpmg_sem_recover_field(const hpmg_sem_mesh *m, double *const xl[3], const double *f, double shift,
                                  hpmg_sem_bc_fn bc, void *bctx, const double *us, double *u);

/* Errors of the full field u (lattice) against exact: L2 by (p+2)-point
 * Gauss quadrature per direction on every element (u interpolated from its
 * GLL nodes), max over the lattice nodes. mean_free: both first shifted to
 * mean zero over the domain (singular problems). */
hpmg_error hpmg_sem_error(const hpmg_sem_mesh *m, double *const xl[3], const double *u, hpmg_sem_field_fn exact,
                          void *ectx, int mean_free, double *l2, double *maxerr);

/* dCG: Jacobi-preconditioned CG on the masked condensed system Hhat x = rhs
 * through hpmg_pcg, from x (initial guess) to ||r|| <= prm->rtol ||r0||;
 * singular systems: rhs and the iterates kept free of the constants (the
 * project hook). prm->project is set here. */
hpmg_error hpmg_sem_dcg(const hpmg_sem_mesh *m, const double *rhs, double *x, hpmg_krylov_params *prm,
                        hpmg_krylov_info *info);

/* The same Jacobi-CG as an object (the p-multigrid's coarse solve reuses it):
 * the inverse diagonal and the CG vectors, made once; run solves Hhat x = b
 * (b projected in place when singular; x is the initial guess unless
 * prm->x0_zero). */
typedef struct {
  const hpmg_sem_mesh *m;
  double *work, *invdiag;
  hpmg_vec w[4];
} hpmg_sem_dcg_solver;
hpmg_error hpmg_sem_dcg_create(const hpmg_sem_mesh *m, hpmg_sem_dcg_solver *s);
void hpmg_sem_dcg_destroy(hpmg_sem_dcg_solver *s);
hpmg_error hpmg_sem_dcg_run(hpmg_sem_dcg_solver *s, hpmg_vec *b, hpmg_vec *x, hpmg_krylov_params *prm,
                            hpmg_krylov_info *info);

/* v -= mean(v) (the arithmetic mean of the skeleton entries): removes the
 * constants, the null space of a singular condensed system (the project
 * hook of hpmg_krylov_params; ctx unused). */
hpmg_error hpmg_sem_project_constants(void *ctx, hpmg_vec *v);

#endif
