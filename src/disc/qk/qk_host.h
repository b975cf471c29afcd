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
 * xn must outlive mg), as hpmg_qk_box_levels_build builds them. The coarsest
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
 * box", Levels), level by level from the finest: a quasi-uniform direction
 * (uniform cells, or cells within HPMG_QK_QUASI_UNIFORM of each other) is
 * halved where it can be (pairs of cells: uniform cells at an even count stay
 * uniform, an odd count merges its three narrowest neighbours into one,
 * pair_cells; a periodic one keeps at least 2 cells) and its mean width is at
 * most HPMG_QK_SEMI_RATIO times the thinnest cell of any direction that can
 * still coarsen; a stretched direction (wider ratios) merges, in each half
 * from its ends inwards, pairs of neighbouring cells whose merged width is at
 * most HPMG_QK_SEMI_RATIO times the narrowest other direction after this
 * level's halving, a stretched other direction counted by its mean width
 * (partial semi-coarsening: thin cells next to a wall merge, the middle's
 * tall cells stay until the other directions catch up). A level that would
 * keep more than 90% of the unknowns that way (few merges, or none) halves
 * instead the quasi-uniform directions judged against each other alone; where
 * none can be halved, the stretched directions whose mean widths are within
 * the ratio of the narrowest mean merge every pair of cells. It stops where
 * nothing changes or the next level would have no unknowns. On cells that are
 * the same in every direction (within the ratio) this is full coarsening. */
#define HPMG_QK_SEMI_RATIO 1.4143
#define HPMG_QK_QUASI_UNIFORM 2.0
typedef struct {
  int nl;                            /* levels, finest first: g[0] is the fine grid */
  hpmg_grid g[QK_BOX_MAX_LEVELS];
  double *xn[QK_BOX_MAX_LEVELS][3];  /* the nodes each level's merges made (owned; NULL:
                                        the finer level's, or uniform) */
} hpmg_qk_box_levels;
/* The levels of the general box whose finest grid is fine (its xn must
 * outlive L's grids); hpmg_qk_box_levels_free releases the node arrays not
 * taken over (a taker sets the entry to NULL). */
hpmg_error hpmg_qk_box_levels_build(const hpmg_grid *fine, hpmg_qk_box_levels *L);
/* Level j's grid into g and its node arrays into xn (the caller frees them
 * now; NULL where the level made none). */
void hpmg_qk_box_levels_take(hpmg_qk_box_levels *L, int j, hpmg_grid *g, double *xn[3]);
void hpmg_qk_box_levels_free(hpmg_qk_box_levels *L);
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
