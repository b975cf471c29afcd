/* Exact solve of the condensed spectral-element system by fast
 * diagonalization of the full (uncondensed) system (docs/sem.md, "Coarse
 * solve by fast diagonalization"); the p-multigrid's coarse solve at p = 2
 * (sem_pmg.h, HPMG_SEM_COARSE_FDM).
 *
 * On the Cartesian mesh (sem_mesh.h) the assembled operator of degree p is a
 * Kronecker sum of 1D matrices: with K_d, M_d the 1D stiffness (2/h L_S per
 * element) and the diagonal GLL mass (h/2 M_S) assembled along direction d
 * over the direction's non-Dirichlet lattice nodes (periodic: wrapped),
 *   H = lambda M_3(x)M_2(x)M_1 + M_3(x)M_2(x)K_1 + M_3(x)K_2(x)M_1 + K_3(x)M_2(x)M_1
 * (2D: two factors). With K_d S_d = M_d S_d Lambda_d, S_d^T M_d S_d = I,
 *   H^{-1} = (S_3(x)S_2(x)S_1) D^{-1} (S_3(x)S_2(x)S_1)^T,
 *   D = lambda + Lambda_1 (+) Lambda_2 (+) Lambda_3.
 * The condensed operator is the Schur complement of H on the skeleton, whose
 * inverse is the skeleton block of H^{-1}: the condensed solution of b is the
 * skeleton part of H^{-1} [b on the skeleton, 0 in the element interiors].
 * Per solve 4 N (n_1 + n_2 + n_3) flops (N = n_1 n_2 n_3 lattice unknowns),
 * O(N^{4/3}); the setup is three 1D eigenproblems (LAPACKE_dsygv).
 * Dirichlet skeleton nodes: x = b there (the masked operator's identity
 * rows). Singular (no Dirichlet face, lambda = 0): the constant mode of D is
 * left out (its inverse 0), so the right-hand side must have zero sum (the
 * caller projects, as the other coarse solves do). */
#ifndef HPMG_SEM_FDM_H
#define HPMG_SEM_FDM_H

#include "disc/sem/sem_mesh.h"

typedef struct {
  const hpmg_sem_mesh *m; /* not owned */
  int dim;
  int64_t n[3];           /* 1D unknowns per direction (1 beyond dim) */
  int64_t g0[3];          /* lattice coordinate of the first 1D unknown */
  int64_t N;              /* n[0] n[1] n[2] */
  double *S[3], *ST[3];   /* n x n eigenvectors (columns) and their transpose, row-major */
  double *lam[3];         /* eigenvalues, ascending (the constant mode's set to 0 where there is one) */
  double *dinv;           /* N: 1 / D, 0 for the singular constant mode */
  int64_t *skel;          /* N: skeleton index of each lattice unknown, -1 in an element interior */
  double *u, *t;          /* N each: the full vector and the transform's scratch */
} hpmg_sem_fdm;

/* Operations of one solve (4 N sum n_d), and of the setup's eigenproblems
 * (about 10 n_d^3 each, dsygv with eigenvectors). */
double hpmg_sem_fdm_flops(const hpmg_sem_mesh *m);
double hpmg_sem_fdm_setup_flops(const hpmg_sem_mesh *m);
/* Bytes create would hold for mesh m. */
double hpmg_sem_fdm_bytes(const hpmg_sem_mesh *m);

/* Set up for mesh m (any degree; not owned, must outlive f). HPMG_ERR_NUMERIC
 * if an eigenproblem fails, HPMG_ERR_MEMORY. Nothing kept on failure. */
hpmg_error hpmg_sem_fdm_create(const hpmg_sem_mesh *m, hpmg_sem_fdm *f);
void hpmg_sem_fdm_destroy(hpmg_sem_fdm *f);

/* x = Hhat^{-1} b on the skeleton (ns values each; x and b may not overlap):
 * the masked condensed operator's exact inverse (singular: of its range). */
void hpmg_sem_fdm_solve(hpmg_sem_fdm *f, const double *b, double *x);

#endif
