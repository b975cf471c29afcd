/* Smoothers of one multigrid level, behind one interface. Each works on the
 * level's matrix-free operator in the level's precision. */
#ifndef HPMG_SMOOTHER_H
#define HPMG_SMOOTHER_H

#include "disc/qk/laplace.h"

typedef struct hpmg_smoother hpmg_smoother;
struct hpmg_smoother {
  const char *name;
  /* `sweeps` smoothing steps on A x = b. x_is_zero: x is zero on entry (the
   * first step then needs no matvec). post: post-smoothing (Gauss-Seidel runs
   * backward so that pre/post make a symmetric V-cycle). */
  hpmg_error (*apply)(hpmg_smoother *s, const void *b, void *x, int x_is_zero, int post, int sweeps);
  void (*destroy)(hpmg_smoother *s);
  const hpmg_laplace *op;
  hpmg_real real;
  double lambda_max; /* estimated largest eigenvalue of D^{-1}A (Chebyshev) */
  int64_t matvecs;   /* operator applications done so far */
  void *work[2];     /* scratch vectors (level size, level precision) */
  double p[4];       /* parameters (degree, range, omega, symmetric) */
};

hpmg_error hpmg_smoother_chebyshev(const hpmg_laplace *op, hpmg_real r, int degree, double range,
                                   int eig_iters, hpmg_smoother **s);
hpmg_error hpmg_smoother_jacobi(const hpmg_laplace *op, hpmg_real r, double omega, hpmg_smoother **s);
/* symmetric = 0: one sweep per step, backward where `post` asks (the
 * symmetric cycle's post-smoothing); symmetric = 1: each sweep is forward then
 * backward. order: lexicographic, or deal.II's cellwise level numbering of a
 * mesh refined from coarse^dim cells (hpmg_grid_cellwise_order). On error *s
 * may be set and must still be destroyed. */
hpmg_error hpmg_smoother_gauss_seidel(const hpmg_laplace *op, hpmg_real r, int symmetric, hpmg_gs_order order,
                                      int64_t coarse, hpmg_smoother **s);
void hpmg_smoother_destroy(hpmg_smoother **s);

/* Largest eigenvalue of D^{-1}A estimated by `iters` steps of Jacobi-
 * preconditioned CG (Lanczos tridiagonal, LAPACKE_dstev). */
hpmg_error hpmg_estimate_lambda_max(const hpmg_laplace *op, hpmg_real r, int iters, double *lmax);

#endif
