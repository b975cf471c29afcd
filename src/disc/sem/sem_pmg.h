/* The p-multigrid of paper 001 (Sec. 4.1; docs/sem.md, "p-multigrid") on
 * the condensed system, as levels of the solver core (src/mg/mg.h: the
 * V-cycle is hpmg_mg_vcycle, the solvers hpmg_mg_stationary and hpmg_pcg):
 *
 *  - degrees p_l = 2 * 2^l for p_l < p, and p_L = p (p = 16: 2 4 8 16;
 *    p = 12: 2 4 8 12; p = 2: one level, the coarse solve alone), each level
 *    a mesh of the same elements at degree p_l (sem_mesh.h);
 *  - prolongation J_l (level l-1 to l): the embedded GLL-to-GLL
 *    interpolation of each element's polynomial, restricted to the skeleton.
 *    A face's trace depends only on the face's own nodes, so the element
 *    interiors are not needed; per element, the boundary values are embedded
 *    in the element's nodal array (interior 0), interpolated by the tensor
 *    product of the 1D matrix, and read back on the boundary; the direct
 *    stiffness sum of the elements is divided by the multiplicity
 *    (J = D^{-1} sum_e Q_e^T I_e Q_e^c); Dirichlet nodes masked;
 *  - restriction: J_l^T exactly (multiplicity division first, then the
 *    transposed element interpolation and the coarse direct stiffness sum);
 *  - smoothing: the star smoother (sem_smoother.h), x += S (b - A x), nu
 *    sweeps before and after (paper: nu = 1); kvMG: nu_l = nu 2^{L-l};
 *  - coarse solve at p_0 = 2: Jacobi-preconditioned CG (hpmg_pcg, dCG's
 *    operator and diagonal) to a relative residual of 1e-12 from zero.
 *
 * The operator of every level is the condensed operator of that degree
 * (rediscretized, as in the paper), masked at Dirichlet nodes. */
#ifndef HPMG_SEM_PMG_H
#define HPMG_SEM_PMG_H

#include "disc/sem/sem_smoother.h"
#include "mg/mg.h"

typedef enum {
  HPMG_SEM_SOLVE_MG = 0, /* V-cycle iteration, nu = 1 (paper 001, Algorithm 4) */
  HPMG_SEM_SOLVE_KMG,    /* flexible CG, one V-cycle with nu = 1 per iteration (Algorithm 5) */
  HPMG_SEM_SOLVE_KVMG    /* the same with nu_l = 2^{L-l} */
} hpmg_sem_mg_kind;

#define HPMG_SEM_PMG_MAX_LEVELS 8

typedef struct {
  hpmg_sem_mg_kind kind;
  int nlevels;
  int deg[HPMG_SEM_PMG_MAX_LEVELS];
  hpmg_sem_mesh mesh[HPMG_SEM_PMG_MAX_LEVELS]; /* coarser levels' meshes (owned); the finest is fine */
  const hpmg_sem_mesh *m[HPMG_SEM_PMG_MAX_LEVELS];
  hpmg_mg mg;
  double coarse_rtol;
  int coarse_its; /* CG iterations of all coarse solves since the last reset */
} hpmg_sem_pmg;

/* Degrees of the levels for finest degree p (p_0 = 2 first); returns the count. */
int hpmg_sem_pmg_degrees(int p, int *deg);

/* The hierarchy below the finest mesh `fine` (degree >= 2; not owned, must
 * outlive it); box: the geometry fine was made from; pre, post: sweeps per
 * level (multiplied by 2^{L-l} on level l for kvMG), 0..64, not both 0. */
hpmg_error hpmg_sem_pmg_create(const hpmg_box *box, const hpmg_sem_mesh *fine, hpmg_sem_mg_kind kind, int pre,
                               int post, hpmg_sem_pmg *pm);
void hpmg_sem_pmg_destroy(hpmg_sem_pmg *pm);
double hpmg_sem_pmg_bytes(const hpmg_sem_pmg *pm);

/* Solve the masked condensed system of the finest mesh, A x = rhs, from x
 * (x0_zero honoured) to ||r|| <= prm->rtol ||r0||: MG by hpmg_mg_stationary,
 * kMG and kvMG by flexible hpmg_pcg with one V-cycle as preconditioner;
 * singular systems (no Dirichlet face, lambda = 0) projected as in dCG.
 * prm->project is set here. */
hpmg_error hpmg_sem_pmg_solve(hpmg_sem_pmg *pm, const double *rhs, double *x, hpmg_krylov_params *prm,
                              hpmg_krylov_info *info);

/* y = J x: the prolongation from level l-1 to level l (skeleton vectors). */
void hpmg_sem_pmg_prolong(const hpmg_sem_pmg *pm, int l, const double *xc, double *y);
/* yc = J^T x: the restriction from level l to level l-1. */
void hpmg_sem_pmg_restrict(const hpmg_sem_pmg *pm, int l, const double *x, double *yc);

#endif
