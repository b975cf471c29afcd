/* Krylov methods on an abstract operator/preconditioner, in either precision. */
#ifndef HPMG_LA_KRYLOV_H
#define HPMG_LA_KRYLOV_H

#include "la/vec.h"

typedef struct {
  void *ctx;
  hpmg_error (*apply)(void *ctx, const void *x, void *y); /* y = Op(x) */
} hpmg_linop;

/* Called after every iteration (it = 0 for the initial residual). */
typedef void (*hpmg_monitor)(void *ctx, int it, double rnorm, double r0);

typedef struct {
  int iterations, converged;
  double r0, rnorm;
} hpmg_krylov_info;

/* Preconditioned CG for SPD A and symmetric positive M. work: 4 vectors of n.
 * Stops when ||b - A x|| <= rtol ||b - A x0|| (2-norm of the recursive residual). */
hpmg_error hpmg_pcg(hpmg_real real, int64_t n, hpmg_linop A, hpmg_linop M, const void *b, void *x,
                    double rtol, int maxit, void *work[4], hpmg_monitor mon, void *mctx,
                    hpmg_krylov_info *info);

/* Stationary iteration x += M (b - A x) (e.g. V-cycles). work: 2 vectors. */
hpmg_error hpmg_richardson(hpmg_real real, int64_t n, hpmg_linop A, hpmg_linop M, const void *b, void *x,
                           double rtol, int maxit, void *work[2], hpmg_monitor mon, void *mctx,
                           hpmg_krylov_info *info);

#endif
