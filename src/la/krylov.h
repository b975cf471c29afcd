/* Krylov methods on an abstract operator/preconditioner, in either precision. */
#ifndef HPMG_LA_KRYLOV_H
#define HPMG_LA_KRYLOV_H

#include "hpmg.h"
#include "la/backend.h"
#include "la/vec.h"

/* A linear operator (or preconditioner) on hpmg_vec: y = Op(x) in the
 * precision of the vectors it is handed. The optional slots are fused forms
 * a discretization provides where it has a kernel for them; NULL: the
 * Krylov code composes apply with vector operations. */
typedef struct {
  void *ctx;
  hpmg_error (*apply)(void *ctx, const hpmg_vec *x, hpmg_vec *y);
  /* optional: r = b - Op(x) in one pass */
  hpmg_error (*residual)(void *ctx, const hpmg_vec *b, const hpmg_vec *x, hpmg_vec *r);
  /* optional: ||b - Op(x)|| without storing the residual */
  hpmg_error (*residual_norm)(void *ctx, const hpmg_vec *b, const hpmg_vec *x, double *nrm);
} hpmg_linop;

/* r = b - A x: A's fused slot, else apply and one vector pass */
hpmg_error hpmg_linop_residual(const hpmg_linop *A, const hpmg_vec *b, const hpmg_vec *x, hpmg_vec *r);

/* Called after every iteration (it = 0 for the initial residual). */
typedef void (*hpmg_monitor)(void *ctx, int it, double rnorm, double r0);

typedef struct {
  int iterations, converged;
  int stagnated; /* stationary iterations (V-cycle, FMG): stopped by hpmg_stagnation */
  double r0, rnorm;
} hpmg_krylov_info;

/* Stop test of the stationary iterations (V-cycle iteration, FMG; mg/solve.h): 1 if the
 * residual norm rn of iteration it fell by less than 2x over the last 5
 * iterations, i.e. the iteration has reached the round-off floor of b - Ax
 * (about eps/h^2 relative) or does not converge; multigrid cycles reduce it by
 * far more. ring: 5 doubles owned by the caller, updated. */
#define HPMG_STAGNATION_WINDOW 5
int hpmg_stagnation(double ring[HPMG_STAGNATION_WINDOW], int it, double rn);
/* The NOT_CONVERGED error of a solve (stagnated or out of iterations). */
hpmg_error hpmg_not_converged(const hpmg_krylov_info *info, double relres, double tol);
/* Mean residual reduction per iteration, (rnorm / r0)^(1/iterations); 0 without iterations. */
double hpmg_krylov_rate(const hpmg_krylov_info *info);
/* The statistics of a plain Krylov solve (one operator application per
 * iteration plus the initial residual): iterations, converged, residual0,
 * residual, rate, operator_applications. */
void hpmg_krylov_stats(const hpmg_krylov_info *info, hpmg_stats *st);

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

/* What every iterative method takes besides its vectors. */
typedef struct {
  double rtol;       /* stop when ||b - A x|| <= rtol ||b - A x0|| */
  int maxit;
  int x0_zero;       /* start from x = 0: x is zeroed and r0 = b, without applying A */
  hpmg_monitor mon;  /* NULL: silent */
  void *mctx;
  /* CG only, optional: called with each iteration's alpha and beta (the
   * Lanczos coefficients; beta = 0 where CG stopped before computing it) */
  void (*cg_coeffs)(void *cctx, int it, double alpha, double beta);
  void *cctx;
  /* optional, for a singular A with a known null space (pure Neumann,
   * periodic): removes the null-space component of v in place. CG applies it
   * to the initial residual and to every preconditioned residual, so that
   * the search directions (and the updates of x) stay in the range; b must
   * already be compatible (projected by the caller). */
  hpmg_error (*project)(void *pctx, hpmg_vec *v);
  void *pctx;
} hpmg_krylov_params;

/* Preconditioned CG for SPD A and symmetric positive M; flexible = 1: the
 * flexible (Polak-Ribiere) beta = -alpha (z_new . A p) / (r . z), which
 * tolerates a preconditioner that varies between iterations (an inexact or
 * nonlinear one) at the cost of one more dot product; with a fixed M it
 * gives the same iterates as CG up to rounding. work: 4 vectors like b (r z
 * p q). Stops on the 2-norm of the recursively updated residual. */
hpmg_error hpmg_pcg(const hpmg_linop *A, const hpmg_linop *M, const hpmg_vec *b, hpmg_vec *x, hpmg_vec work[4],
                    int flexible, const hpmg_krylov_params *prm, hpmg_krylov_info *info);

/* The largest eigenvalue of M A (A SPD, M symmetric positive) estimated by
 * `iters` steps of hpmg_pcg on A x = b from x = 0: the eigenvalues of the
 * Lanczos tridiagonal matrix of the CG coefficients (LAPACKE_dstev), which
 * approach the extreme ones first. b: the start vector (a pseudo-random one
 * for a smoother's estimate). work: 5 vectors like b (x r z p q). */
hpmg_error hpmg_lambda_max_cg(const hpmg_linop *A, const hpmg_linop *M, const hpmg_vec *b, hpmg_vec work[5], int iters,
                              double *lmax);

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
  hpmg_vec *v, *z; /* restart+1 Arnoldi vectors, restart preconditioned ones */
  int nlent;       /* the first nlent of v0 z0 v1 z1 are the caller's vectors */
  double *H;       /* (restart+1) x restart Hessenberg, column-major */
  double *cs, *sn, *g, *y;
} hpmg_gmres_work;

/* lend: up to 4 vectors of the caller (its CG/stationary work vectors, idle
 * during GMRES) that serve as v0 z0 v1 z1, so that GMRES allocates 2m+1-4
 * vectors at most; nlend = 0: none. */
hpmg_error hpmg_gmres_work_create(int restart, const hpmg_vec *lend, int nlend, hpmg_gmres_work *w);
void hpmg_gmres_work_destroy(hpmg_gmres_work *w);
/* Vectors GMRES(restart) holds at most: 2*restart + 1. */
static inline double hpmg_gmres_vectors(int restart) { return 2.0 * restart + 1.0; }
hpmg_error hpmg_gmres(const hpmg_linop *A, const hpmg_linop *M, const hpmg_vec *b, hpmg_vec *x, hpmg_gmres_work *w,
                      const hpmg_krylov_params *prm, hpmg_krylov_info *info);

#endif
