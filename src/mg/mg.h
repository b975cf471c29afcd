/* Multigrid written once: the hierarchy of levels, the V-cycle (standard or
 * adding the level residual to the correction), full multigrid and the
 * multigrid preconditioner, over level objects a discretization supplies
 * (the Q_k levels of src/disc/qk/qk_host.c and src/disc/qk/cuda/qk_levels.cu, the
 * finite-difference levels of src/disc/fd/fd_mg.c). Each level lives on a
 * backend; a transfer between levels on different backends copies through
 * mirrors of the coarser level's vectors (paper 002's CPU-GPU split).
 *
 * A discretization fills, per level, the required slots of hpmg_level_ops
 * and, where it has a fused kernel, the optional ones; the cycle calls the
 * fused slot when it is there. */
#ifndef HPMG_MG_H
#define HPMG_MG_H

#include "la/backend.h"
#include "la/krylov.h"

typedef struct hpmg_level hpmg_level;

typedef struct {
  /* sweeps of the smoother on A x = b with the level's b and x; x_is_zero: x
   * is zero on entry (the slot zeroes it if it reads it); post: the
   * post-smoothing of the cycle (reverse order where the smoother makes the
   * cycle symmetric). Slots may swap x.data with r.data (out-of-place
   * sweeps) unless the level is the finest of a hierarchy with fine_aliases. */
  hpmg_error (*smooth)(hpmg_level *L, int x_is_zero, int post, int sweeps);
  /* r = b - A x */
  hpmg_error (*residual)(hpmg_level *L);
  /* coarse = R fine: the restriction to the next coarser level (coarse is
   * that level's b, or its mirror cb on this level's backend) */
  hpmg_error (*restrict_to)(hpmg_level *L, const hpmg_vec *fine, hpmg_vec *coarse);
  /* x (+)= P coarse_x */
  hpmg_error (*prolong)(hpmg_level *L, const hpmg_vec *coarse_x, int add);
  /* the coarsest level only: x = A^{-1} b (or an approximation as accurate
   * as the cycle needs) */
  hpmg_error (*coarse_solve)(hpmg_level *L);
  /* optional: coarse = R (b - A x) without storing the residual */
  hpmg_error (*residual_restrict)(hpmg_level *L, hpmg_vec *coarse);
  /* optional: coarse -= R A x, where coarse holds R b (FMG's first cycle on
   * a level: its coarse right-hand side still holds FMG's restriction of b) */
  hpmg_error (*restrict_update)(hpmg_level *L, hpmg_vec *coarse);
  /* optional: x += P coarse_x, then `sweeps` post-smoothing sweeps */
  hpmg_error (*correct_smooth)(hpmg_level *L, const hpmg_vec *coarse_x, int sweeps);
  /* optional: FMG's interpolation x = P_fmg coarse_x to a new level
   * (NULL: x = P coarse_x) */
  hpmg_error (*fmg_interp)(hpmg_level *L, const hpmg_vec *coarse_x);
  /* optional: fmg_interp, then `sweeps` pre-smoothing sweeps */
  hpmg_error (*interp_smooth)(hpmg_level *L, const hpmg_vec *coarse_x, int sweeps);
  /* frees ctx */
  void (*destroy)(hpmg_level *L);
} hpmg_level_ops;

struct hpmg_level {
  const hpmg_level_ops *ops;
  void *ctx; /* the discretization's level data */
  const hpmg_backend *be;
  int64_t n;          /* entries of the level vectors */
  hpmg_vec b, x, r;   /* on be, in the cycle's precision */
  hpmg_vec cb, cx;    /* mirrors of the next coarser level's b and x on be, when that level lives elsewhere */
  double t_smooth, t_op, t_transfer, t_comm; /* seconds (smoothing, residuals, transfers from/to it, copies) */
  int64_t matvecs;    /* operator applications inside the level's smoother (the slots count them) */
  int sweep_factor;   /* the cycle's pre/post sweeps on this level times this (a variable V-cycle;
                         hpmg_mg_init sets 1, the discretization may raise it) */
  hpmg_vec fmg_b, fmg_x; /* FMG's shifts of this level (hpmg_mg_set_fmg_shift; n 0: none) */
};

typedef struct {
  int pre, post;    /* smoothing sweeps */
  int add_residual; /* x += P e_c + r (HPMG_CYCLE_ADD_RESIDUAL) */
  int timing;       /* 0: none; 1: wall clock; 2: wall clock after the backend's sync */
} hpmg_cycle_options;

typedef struct {
  int nlevels;
  hpmg_level *lv; /* lv[0] coarsest, lv[nlevels-1] finest */
  hpmg_real real; /* the cycle's precision */
  hpmg_cycle_options opt;
  int fine_aliases; /* the finest b and x are the caller's vectors, set per cycle */
  double t_coarse;
  int64_t matvecs;  /* residuals computed by the cycle (all levels) */
} hpmg_mg;

/* nlevels zeroed levels to fill: ops, ctx, be, n; then hpmg_mg_setup. */
hpmg_error hpmg_mg_init(hpmg_mg *mg, int nlevels, hpmg_real real, const hpmg_cycle_options *opt, int fine_aliases);
/* Allocates each level's b, x (not on the finest with fine_aliases) and r
 * (where need_r[l] != 0; NULL: every level), and the mirrors where a level's
 * coarser neighbour lives on another backend. */
hpmg_error hpmg_mg_setup(hpmg_mg *mg, const int *need_r);
void hpmg_mg_destroy(hpmg_mg *mg);
/* Bytes of the vectors hpmg_mg_setup allocates for a level of n entries. */
double hpmg_mg_level_bytes(hpmg_real real, double n, int own_bx, int need_r);
void hpmg_mg_reset_stats(hpmg_mg *mg);

/* FMG's affine shifts of level l, from host arrays of lv[l].n doubles (NULL: none; both NULL
 * removes them): FMG adds b_shift to the level's right-hand side after restricting the finer
 * level's to it (not in the cycles, whose coarse right-hand sides are residuals), and x_shift
 * to its x after interpolating the coarser level's solution to it. A discretization whose
 * boundary data are lifted into b on the finest level gives each level its own problem so:
 * b_shift(l) = R t(l+1) - t(l), x_shift(l) = the coarser level's boundary data interpolated
 * to this level's unknowns, t the levels' liftings (qk_box_fmg_shifts). Stored on the level's
 * backend in the cycle's precision. */
hpmg_error hpmg_mg_set_fmg_shift(hpmg_mg *mg, int l, const double *b_shift, const double *x_shift);
/* One V-cycle on the level vectors of level l: x = V(b) from x (x_is_zero:
 * from 0). */
hpmg_error hpmg_mg_vcycle(hpmg_mg *mg, int l, int x_is_zero);
/* Full multigrid on the level vectors (the finest b set): b restricted down
 * (plus each level's fmg_b), coarse solve, then per level x = P_fmg x_c (plus
 * its fmg_x) and one V-cycle from it (on the finest level only if
 * finest_cycle). */
hpmg_error hpmg_mg_fmg(hpmg_mg *mg, int finest_cycle);
/* z = V(r), one V-cycle from zero on the finest level; r and z in any
 * precision on the finest level's backend (converted to and from the
 * cycle's where they differ, aliased where the hierarchy allows it). */
hpmg_error hpmg_mg_precondition(hpmg_mg *mg, const hpmg_vec *r, hpmg_vec *z);
/* hpmg_mg_precondition as a linear operator for the Krylov methods */
hpmg_linop hpmg_mg_linop(hpmg_mg *mg);

/* The hierarchy's clock: 0 without timing, else the wall clock (after be's
 * sync with timing 2), for phases timed alike outside the cycle. */
double hpmg_mg_clock(const hpmg_mg *mg, const hpmg_backend *be);

/* A coarse level's CG solve x = A^{-1} b in double from x = 0, run as a
 * direct solver (relative residual 1e-14, at most 10n + 100 iterations):
 * the coarse solve of a level too large to factorize. work: 4 vectors like b. */
hpmg_error hpmg_mg_coarse_cg(const hpmg_linop *A, const hpmg_linop *M, const hpmg_vec *b, hpmg_vec *x, hpmg_vec work[4]);

#endif
