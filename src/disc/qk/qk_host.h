/* Cartesian Q_k finite elements on the host backend: the multigrid levels
 * (matrix-free operator, Kronecker transfers, Chebyshev/Jacobi/Gauss-Seidel/
 * vertex-patch smoothers, dense Cholesky or CG coarse solve) behind
 * hpmg_level_ops, and the finest operator as an hpmg_linop. Levels have
 * cells = coarse*2^l, l = 0..refine (levels without unknowns are skipped). */
#ifndef HPMG_DISC_QK_HOST_H
#define HPMG_DISC_QK_HOST_H

#include "mg/mg.h"
#include "disc/qk/patch.h"
#include "disc/qk/smoother.h"

typedef struct {
  hpmg_smoother_kind smoother;
  int cheby_degree, cheby_eig_iters;
  double cheby_range, jacobi_omega;
  /* 1: post-smoothing runs in the adjoint order of pre-smoothing (reverse
   * patch colors, backward Gauss-Seidel), so the V-cycle is symmetric, as CG
   * needs. 0: the same smoother S before and after (paper 000, Algorithm 1),
   * for GMRES, FMG and the V-cycle iteration. */
  int symmetric;
  hpmg_patch_options patch; /* HPMG_SMOOTHER_PATCH only */
  hpmg_gs_order gs_order;   /* HPMG_SMOOTHER_GS/SGS only */
} hpmg_qk_smoother_options;

/* The levels of mg (initialized here: hpmg_mg_init + hpmg_mg_setup). */
hpmg_error hpmg_qk_host_create(int dim, int k, int coarse, int refine, const double box[3], double lambda,
                               hpmg_real real, const hpmg_qk_smoother_options *so, const hpmg_cycle_options *co,
                               int fine_aliases, hpmg_mg *mg);
/* The levels of a general box (grid.h) from its finest grid `fine` (whose
 * xn must outlive mg), as hpmg_qk_box_coarsening builds them. The coarsest
 * level is solved exactly (dense Cholesky up to 3000 unknowns, else
 * Jacobi-CG to 1e-14). singular: the operator's null space is the constants
 * (no Dirichlet face, lambda = 0): the coarse solve takes the compatible part
 * of its right-hand side and factors A + a 1 1^T. Smoothers: Chebyshev,
 * Jacobi, Gauss-Seidel (lexicographic), the vertex patch. */
hpmg_error hpmg_qk_host_create_box(const hpmg_grid *fine, double lambda, int singular, hpmg_real real,
                                   const hpmg_qk_smoother_options *so, const hpmg_cycle_options *co, int fine_aliases,
                                   hpmg_mg *mg);
#define QK_BOX_MAX_LEVELS 64
/* Semi-coarsening towards isotropic cells (docs/bc.md, "Q_k on a general
 * box"): each coarser level merges pairs of cells in the directions that can
 * be halved (hpmg_grid_coarsenable: an even count; a periodic one keeps at
 * least 2 cells) and whose balanced width is at most HPMG_QK_SEMI_RATIO times
 * the smallest balanced width of all such directions, down to the level
 * where no direction can be halved or the next would have no unknowns. The
 * balanced width of a direction is sqrt(thinnest * widest cell) (its cell
 * width where uniform): the width of an isotropic neighbour at which its
 * flattest and its tallest cells are equally anisotropic, so a tanh-stretched
 * direction is not halved on and on while its middle cells grow taller than
 * the others' (the thinnest cell, the rule of 909e2b0, did that). On
 * cells that are the same in every direction (within the ratio) this is full
 * coarsening. Returns the number of levels nl (<= max); flags[j][d] (j =
 * 1..nl-1): level j from the finest was halved in direction d; N[j] (N may be
 * NULL): its unknowns (N[0] = fine->N). */
#define HPMG_QK_SEMI_RATIO 1.4143
/* On a box with a stretched direction (some xn set) the level j levels below
 * the finest smooths 2^j times the cycle's sweeps, at most this many times
 * (a variable V-cycle: the anisotropy one coarsening decision per direction
 * and level leaves is on the coarse levels, which shrink by only 2 or 4 where
 * semi-coarsened; docs/bc.md, "Q_k finite elements on the box", Levels). */
#define HPMG_QK_STRETCHED_MAX_SWEEPS 4
/* The sweep factor (hpmg_level.sweep_factor) of the box level `below` levels
 * under the finest: 2^below, at most HPMG_QK_STRETCHED_MAX_SWEEPS, where a
 * direction of fine is stretched; 1 elsewhere (host and GPU levels alike). */
int hpmg_qk_box_sweep_factor(const hpmg_grid *fine, int below);
int hpmg_qk_box_coarsening(const hpmg_grid *fine, int flags[][3], int64_t *N, int max);
/* Bytes hpmg_qk_host_create allocates, without allocating. */
double hpmg_qk_host_memory(int dim, int k, int coarse, int refine, hpmg_real real, const hpmg_qk_smoother_options *so,
                           int fine_aliases);
/* The level operator of mg's level l (for the outer iteration and reports). */
const hpmg_laplace *hpmg_qk_host_operator(const hpmg_mg *mg, int l);
/* The finest operator as a linear operator in the precision of its vectors. */
hpmg_linop hpmg_qk_host_linop(const hpmg_mg *mg);
/* 0 if the coarsest level k*coarse - 1 has interior nodes, else 1 (start one level finer) */
static inline int hpmg_qk_first_level(int k, int coarse) { return (int64_t)k * coarse - 1 > 0 ? 0 : 1; }

#endif
