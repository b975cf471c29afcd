#include <math.h>
#include "krylov.h"

static hpmg_error check_finite(double v, int it) {
  if (!isfinite(v))
    return hpmg_error_set(HPMG_ERR_NUMERIC, "residual became %g at iteration %d (NaN/Inf in the iteration)", v, it);
  return HPMG_SUCCESS;
}

hpmg_error hpmg_pcg(hpmg_real real, int64_t n, hpmg_linop A, hpmg_linop M, const void *b, void *x,
                    double rtol, int maxit, void *work[4], hpmg_monitor mon, void *mctx,
                    hpmg_krylov_info *info) {
  void *r = work[0], *z = work[1], *p = work[2], *q = work[3];
  HPMG_CALL(A.apply(A.ctx, x, q));
  hpmg_vec_copy(real, n, b, r);
  hpmg_vec_axpy(real, n, -1.0, q, r);
  double rn = hpmg_vec_norm(real, n, r);
  const double r0 = rn;
  info->r0 = r0;
  info->rnorm = rn;
  info->iterations = 0;
  info->converged = rn == 0.0;
  HPMG_CALL(check_finite(rn, 0));
  if (mon) mon(mctx, 0, rn, r0);
  if (info->converged) return HPMG_SUCCESS;
  HPMG_CALL(M.apply(M.ctx, r, z));
  hpmg_vec_copy(real, n, z, p);
  double rz = hpmg_vec_dot(real, n, r, z);
  for (int it = 1; it <= maxit; it++) {
    HPMG_CALL(A.apply(A.ctx, p, q));
    const double pq = hpmg_vec_dot(real, n, p, q);
    if (!(pq > 0))
      return hpmg_error_set(HPMG_ERR_NUMERIC, "CG breakdown: p.Ap = %g at iteration %d (operator or preconditioner not SPD?)", pq, it);
    const double alpha = rz / pq;
    hpmg_vec_axpy(real, n, alpha, p, x);
    hpmg_vec_axpy(real, n, -alpha, q, r);
    rn = hpmg_vec_norm(real, n, r);
    info->iterations = it;
    info->rnorm = rn;
    HPMG_CALL(check_finite(rn, it));
    if (mon) mon(mctx, it, rn, r0);
    if (rn <= rtol * r0) {
      info->converged = 1;
      return HPMG_SUCCESS;
    }
    HPMG_CALL(M.apply(M.ctx, r, z));
    const double rz_new = hpmg_vec_dot(real, n, r, z);
    hpmg_vec_xpby(real, n, z, rz_new / rz, p);
    rz = rz_new;
  }
  return HPMG_SUCCESS;
}

hpmg_error hpmg_richardson(hpmg_real real, int64_t n, hpmg_linop A, hpmg_linop M, const void *b, void *x,
                           double rtol, int maxit, void *work[2], hpmg_monitor mon, void *mctx,
                           hpmg_krylov_info *info) {
  void *r = work[0], *z = work[1];
  double r0 = 0.0;
  info->iterations = 0;
  info->converged = 0;
  for (int it = 0;; it++) {
    HPMG_CALL(A.apply(A.ctx, x, z));
    hpmg_vec_copy(real, n, b, r);
    hpmg_vec_axpy(real, n, -1.0, z, r);
    const double rn = hpmg_vec_norm(real, n, r);
    HPMG_CALL(check_finite(rn, it));
    if (it == 0) r0 = info->r0 = rn;
    info->rnorm = rn;
    info->iterations = it;
    if (mon) mon(mctx, it, rn, r0);
    if (rn <= rtol * r0) {
      info->converged = 1;
      return HPMG_SUCCESS;
    }
    if (it == maxit) return HPMG_SUCCESS;
    HPMG_CALL(M.apply(M.ctx, r, z));
    hpmg_vec_axpy(real, n, 1.0, z, x);
  }
}
