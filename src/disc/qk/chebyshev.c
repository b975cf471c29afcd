/* Chebyshev acceleration of point Jacobi (as deal.II's PreconditionChebyshev,
 * step-37): the polynomial of degree m in D^{-1}A that is smallest on
 * [lambda_max/range, lambda_max], with lambda_max = 1.2 x the Lanczos estimate
 * (the estimate is from below; 1.2 keeps the top of the spectrum inside the
 * damped interval), computed in float. Recurrence of Saad, Iterative Methods, Alg. 12.1: each
 * step is one fused matvec pass r = b - Ax, d = c1 d + c2 D^{-1} r, x += d. */
#include <stdlib.h>
#include "la/vec.h"
#include "smoother.h"
#include "chebyshev.h"

void hpmg_chebyshev_schedule_make(double lambda_max, double range, int m, int x_is_zero,
                                  hpmg_chebyshev_schedule *cs) {
  const double lmin = lambda_max / range;
  const double theta = 0.5 * (lambda_max + lmin), delta = 0.5 * (lambda_max - lmin), sigma = theta / delta;
  double rho = 1.0 / sigma;
  /* operator passes: m-1 after a pointwise first step, m otherwise; the first
   * destination is chosen so the last pass lands in x (no final copy) */
  cs->passes = x_is_zero ? m - 1 : m;
  cs->first_scale = 1.0 / theta;
  cs->first_to_x = cs->passes % 2 == 0;
  for (int k = x_is_zero ? 1 : 0, p = 0; k < m; k++, p++) {
    if (k == 0) {
      cs->c1[p] = 0.0;
      cs->c2[p] = 1.0 / theta;
    } else {
      const double rho_new = 1.0 / (2.0 * sigma - rho);
      cs->c1[p] = rho_new * rho;
      cs->c2[p] = 2.0 * rho_new / delta;
      rho = rho_new;
    }
  }
}

static hpmg_error cheb_apply(hpmg_smoother *s, const void *b, void *x, int x_is_zero, int post, int sweeps) {
  const hpmg_laplace *op = s->op;
  const int64_t n = op->g.N;
  void *d = s->work[0], *tmp = s->work[1];
  if (n == 0) return HPMG_SUCCESS;
  for (int sw = 0; sw < sweeps; sw++) {
    hpmg_chebyshev_schedule cs;
    hpmg_chebyshev_schedule_make(s->lambda_max, s->p[1], (int)s->p[0], x_is_zero && sw == 0, &cs);
    void *cur = x, *other = tmp;
    if (x_is_zero && sw == 0) {
      cur = cs.first_to_x ? x : tmp;
      other = cs.first_to_x ? tmp : x;
      hpmg_laplace_inverse_diagonal(op, s->real, cs.first_scale, b, d, cur);
    }
    for (int p = 0; p < cs.passes; p++) {
      hpmg_kernel_args a = {.mode = HPMG_KERNEL_SMOOTH, .x = cur, .y = other, .b = b, .d = d,
                            .c1 = cs.c1[p], .c2 = cs.c2[p]};
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
  HPMG_CHECK_ARG(degree >= 1 && degree <= HPMG_CHEBYSHEV_MAX_DEGREE, "Chebyshev degree must be in 1..%d (got %d)",
                 HPMG_CHEBYSHEV_MAX_DEGREE, degree);
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
  /* d starts at 0: a sweep on a nonzero x (post-smoothing, or FMG's first
   * cycle on a level) begins with c1 = 0, and 0 * (uninitialized NaN) is NaN */
  HPMG_CALL(hpmg_calloc(bytes, &s->work[0]));
  HPMG_CALL(hpmg_malloc(bytes, &s->work[1]));
  /* The estimate in float, whatever the smoother's precision: it is the
   * setup's largest cost (3D Q4 L6, Zen 5, 2 threads: 0.98 of 1.31 s in
   * double, 0.50 in float), and float moves it by 4e-8 relative (2.15498875
   * against 2.15498883), far inside its 1.2 margin and the error of 12
   * Lanczos steps. */
  double est;
  HPMG_CALL(hpmg_estimate_lambda_max(op, HPMG_REAL_FLOAT, eig_iters, &est));
  s->lambda_max = 1.2 * est;
  return HPMG_SUCCESS;
}
