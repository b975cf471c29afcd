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
  int stagnated; /* stationary iterations (V-cycle, FMG): stopped by hpmg_stagnation */
  double r0, rnorm;
} hpmg_krylov_info;

/* Stop test of the stationary iterations (V-cycle iteration, FMG): 1 if the
 * residual norm rn of iteration it fell by less than 2x over the last 5
 * iterations, i.e. the iteration has reached the round-off floor of b - Ax
 * (about eps/h^2 relative) or does not converge; multigrid cycles reduce it by
 * far more. ring: 5 doubles owned by the caller, updated. */
#define HPMG_STAGNATION_WINDOW 5
int hpmg_stagnation(double ring[HPMG_STAGNATION_WINDOW], int it, double rn);
/* The NOT_CONVERGED error of a solve (stagnated or out of iterations). */
hpmg_error hpmg_not_converged(const hpmg_krylov_info *info, double relres, double tol);

/* The solvers' residual history (CPU monitor and GPU loops alike): hist[it] = rn
 * while it <= cap - 1, *n = entries kept; verbose: one line per iteration
 * (residual, relative to r0, reduction against the previous entry). */
void hpmg_history_record(double *hist, int *n, int cap, int it, double rn, double r0, int verbose);

/* HPMG_ERR_ARG unless the V-cycle kind can serve the outer solver: CG needs a
 * symmetric positive definite preconditioner, which the add-residual cycle is
 * not. One rule for the CPU and the GPU solver. */
hpmg_error hpmg_cycle_check(hpmg_solver_kind solver, hpmg_cycle_kind cycle);

/* HPMG_ERR_NUMERIC with a message if a residual norm became NaN/Inf at iteration it. */
hpmg_error hpmg_check_residual(double v, int it);

/* Preconditioned CG for SPD A and symmetric positive M. work: 4 vectors of n.
 * Stops when ||b - A x|| <= rtol ||b - A x0|| (2-norm of the recursive residual). */
hpmg_error hpmg_pcg(hpmg_real real, int64_t n, hpmg_linop A, hpmg_linop M, const void *b, void *x,
                    double rtol, int maxit, void *work[4], hpmg_monitor mon, void *mctx,
                    hpmg_krylov_info *info);

/* Stationary iteration x += M (b - A x) (e.g. V-cycles). work: 2 vectors. */
hpmg_error hpmg_richardson(hpmg_real real, int64_t n, hpmg_linop A, hpmg_linop M, const void *b, void *x,
                           double rtol, int maxit, void *work[2], hpmg_monitor mon, void *mctx,
                           hpmg_krylov_info *info);

/* Restarted GMRES(m), right-preconditioned in the flexible form (Saad's
 * FGMRES): the preconditioned vectors z_j = M v_j are kept and x += Z y, so
 * a preconditioner that is not exactly linear (a float V-cycle inside a
 * double iteration) costs no accuracy and no extra application at restart.
 * Arnoldi by modified Gram-Schmidt, Givens rotations give ||b - A x|| of the
 * current iterate without forming it; the true residual is recomputed at
 * every restart. Stops when that norm <= rtol ||b - A x0||. Vectors are
 * allocated on first use (a solve that converges in j < m steps allocates
 * 2j+1) and kept for later solves. */
typedef struct {
  int restart;
  size_t bytes;   /* bytes per vector the vectors were allocated with */
  void **v, **z;  /* restart+1 Arnoldi vectors, restart preconditioned ones */
  double *H;      /* (restart+1) x restart Hessenberg, column-major */
  double *cs, *sn, *g, *y;
} hpmg_gmres_work;

/* The small least-squares part of GMRES, shared by the CPU and CUDA
 * solvers. H is the (m+1) x m Hessenberg matrix, column-major. Column j
 * (entries 0..j+1) is new: apply the j earlier Givens rotations to it, make
 * the rotation that zeroes H[j+1][j], apply it to g; returns |g[j+1]|, the
 * residual norm. *rho = the new diagonal (0: breakdown). */
double hpmg_gmres_rotate(int m, double *H, double *cs, double *sn, double *g, int j, double *rho);
/* y[0..j) = R^{-1} g with R the leading j x j upper triangle of H. */
void hpmg_gmres_backsolve(int m, const double *H, const double *g, int j, double *y);

hpmg_error hpmg_gmres_work_create(int restart, hpmg_gmres_work *w);
void hpmg_gmres_work_destroy(hpmg_gmres_work *w);
/* Vectors of n entries GMRES(restart) holds at most: 2*restart + 1. */
static inline double hpmg_gmres_vectors(int restart) { return 2.0 * restart + 1.0; }
hpmg_error hpmg_gmres(hpmg_real real, int64_t n, hpmg_linop A, hpmg_linop M, const void *b, void *x, double rtol,
                      int maxit, hpmg_gmres_work *w, hpmg_monitor mon, void *mctx, hpmg_krylov_info *info);

#endif
