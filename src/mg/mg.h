/* Geometric multigrid on the hierarchy of Cartesian levels obtained by
 * uniform refinement of the coarse mesh: level operators rediscretized
 * matrix-free, prolongation = embedding, restriction = its transpose, exact
 * coarse solve (dense Cholesky, or CG to 1e-14 when the coarse level is big). */
#ifndef HPMG_MG_H
#define HPMG_MG_H

#include "mg/transfer.h"
#include "smoothers/patch.h"
#include "smoothers/smoother.h"

typedef struct {
  double op, smooth, transfer, coarse; /* seconds */
  int64_t matvecs;                     /* residual matvecs on all levels */
} hpmg_mg_timers;

typedef struct {
  hpmg_grid g;
  hpmg_laplace op;
  hpmg_smoother *smoother;
  void *b, *x, *r;   /* level vectors (level precision); b, x may alias caller's on the finest */
  void *own_b, *own_x;
  hpmg_kron3 P, R;   /* transfers between this level and the next coarser one */
  double t_smooth, t_op, t_transfer; /* seconds spent on this level (smoothing,
                                        residual, restriction from / prolongation to it) */
} hpmg_mg_level;

typedef struct {
  hpmg_smoother_kind smoother;
  int cheby_degree, cheby_eig_iters;
  double cheby_range, jacobi_omega;
  int pre, post;
  /* 1: post-smoothing runs in the adjoint order of pre-smoothing (reverse
   * patch colors, backward Gauss-Seidel), so the V-cycle is symmetric, as CG
   * needs. 0: the same smoother S before and after (paper 000, Algorithm 1),
   * for GMRES, FMG and the V-cycle iteration. */
  int symmetric;
  /* 1: the coarse-grid correction adds the level residual too, x += P e_c + r
   * (HPMG_CYCLE_ADD_RESIDUAL, the cycle behind paper 000's published counts) */
  int add_residual;
  hpmg_patch_options patch; /* HPMG_SMOOTHER_PATCH only */
  hpmg_gs_order gs_order;   /* HPMG_SMOOTHER_GS/SGS only */
  hpmg_real real; /* precision of the cycle */
} hpmg_mg_options;

typedef struct {
  int nlevels;
  hpmg_mg_level *lv; /* lv[0] coarsest, lv[nlevels-1] finest */
  hpmg_mg_options opt;
  double *chol;      /* dense Cholesky factor of the coarsest operator, or NULL (CG) */
  double *cwork[5];  /* double scratch of the coarse solve */
  hpmg_mg_timers t;
} hpmg_mg;

/* Levels with cells = coarse*2^l, l = 0..refine (levels without unknowns are
 * skipped). fine_aliases: the finest level's b/x are supplied per cycle. */
hpmg_error hpmg_mg_create(int dim, int k, int coarse, int refine, const double box[3], double lambda,
                          const hpmg_mg_options *opt, int fine_aliases, hpmg_mg *mg);
void hpmg_mg_destroy(hpmg_mg *mg);
/* x = V(b): one V-cycle from a zero initial guess, on the finest level. b and
 * x in the cycle's precision (b, x of the finest level if NULL). */
hpmg_error hpmg_mg_vcycle(hpmg_mg *mg, const void *b, void *x);
/* Full multigrid start: solve on the coarsest level, interpolate up, one
 * V-cycle per level. finest_cycle = 0 stops after the interpolation into the
 * finest level, for a caller that runs that level's cycle as a defect
 * correction in its own (higher) precision. */
hpmg_error hpmg_mg_fmg(hpmg_mg *mg, const void *b, void *x, int finest_cycle);
/* Bytes hpmg_mg_create allocates (vectors and factors), without allocating. */
double hpmg_mg_memory(int dim, int k, int coarse, int refine, const hpmg_mg_options *opt, int fine_aliases);

#endif
