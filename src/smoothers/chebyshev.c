/* Chebyshev acceleration of point Jacobi (as deal.II's PreconditionChebyshev,
 * step-37): the polynomial of degree m in D^{-1}A that is smallest on
 * [lambda_max/range, lambda_max], with lambda_max = 1.2 x the Lanczos estimate
 * (the estimate is from below; 1.2 keeps the top of the spectrum inside the
 * damped interval). Recurrence of Saad, Iterative Methods, Alg. 12.1: each
 * step is one fused matvec pass r = b - Ax, d = c1 d + c2 D^{-1} r, x += d. */
#include <stdlib.h>
#include "la/vec.h"
#include "smoother.h"

static hpmg_error cheb_apply(hpmg_smoother *s, const void *b, void *x, int x_is_zero, int post, int sweeps) {
  const hpmg_laplace *op = s->op;
  const int64_t n = op->g.N;
  const int m = (int)s->p[0];
  const double lmax = s->lambda_max, lmin = lmax / s->p[1];
  const double theta = 0.5 * (lmax + lmin), delta = 0.5 * (lmax - lmin), sigma = theta / delta;
  void *d = s->work[0], *tmp = s->work[1];
  if (n == 0) return HPMG_SUCCESS;
  for (int sw = 0; sw < sweeps; sw++) {
    const int zero = x_is_zero && sw == 0;
    /* operator passes: m-1 after a pointwise first step, m otherwise; pick the
     * first destination so the last one lands in x (no final copy) */
    const int passes = zero ? m - 1 : m;
    void *cur = x, *other = tmp;
    double rho = 1.0 / sigma;
    if (zero) {
      void *dst = passes % 2 == 0 ? x : tmp;
      hpmg_laplace_inverse_diagonal(op, s->real, 1.0 / theta, b, d, dst);
      cur = dst;
      other = dst == x ? tmp : x;
    }
    for (int k = zero ? 1 : 0; k < m; k++) {
      hpmg_kernel_args a = {.mode = HPMG_KERNEL_SMOOTH, .x = cur, .y = other, .b = b, .d = d};
      if (k == 0) {
        a.c1 = 0.0;
        a.c2 = 1.0 / theta;
      } else {
        double rho_new = 1.0 / (2.0 * sigma - rho);
        a.c1 = rho_new * rho;
        a.c2 = 2.0 * rho_new / delta;
        rho = rho_new;
      }
      hpmg_laplace_kernel(op, s->real, &a);
      s->matvecs++;
      void *t = cur;
      cur = other;
      other = t;
    }
    if (cur != x) hpmg_vec_copy(s->real, n, cur, x);
  }
  return HPMG_SUCCESS;
}

hpmg_error hpmg_smoother_chebyshev(const hpmg_laplace *op, hpmg_real r, int degree, double range,
                                   int eig_iters, hpmg_smoother **out) {
  HPMG_CHECK_ARG(degree >= 1 && degree <= 100, "Chebyshev degree must be in 1..100 (got %d)", degree);
  HPMG_CHECK_ARG(range > 1.0, "Chebyshev smoothing range must be > 1 (got %g)", range);
  hpmg_smoother *s = calloc(1, sizeof *s);
  if (!s) return hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate smoother");
  s->name = "chebyshev";
  s->apply = cheb_apply;
  s->op = op;
  s->real = r;
  s->p[0] = degree;
  s->p[1] = range;
  *out = s;
  const size_t bytes = (size_t)op->g.N * hpmg_real_size(r);
  HPMG_CALL(hpmg_malloc(bytes, &s->work[0]));
  HPMG_CALL(hpmg_malloc(bytes, &s->work[1]));
  double est;
  HPMG_CALL(hpmg_estimate_lambda_max(op, HPMG_REAL_DOUBLE, eig_iters, &est));
  s->lambda_max = 1.2 * est;
  return HPMG_SUCCESS;
}
