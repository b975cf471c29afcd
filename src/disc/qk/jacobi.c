/* Damped point Jacobi: x += omega D^{-1} (b - A x), one fused matvec pass. */
#include <stdlib.h>
#include "la/vec.h"
#include "smoother.h"

static hpmg_error jacobi_apply(hpmg_smoother *s, const void *b, void *x, int x_is_zero, int post, int sweeps) {
  const hpmg_laplace *op = s->op;
  const int64_t n = op->g.N;
  const double omega = s->p[2];
  if (n == 0) return HPMG_SUCCESS;
  void *cur = x, *other = s->work[0];
  int k = 0;
  if (x_is_zero && sweeps > 0) {
    const int passes = sweeps - 1;
    void *dst = passes % 2 == 0 ? x : other;
    hpmg_laplace_inverse_diagonal(op, s->real, omega, b, dst, NULL);
    cur = dst;
    other = dst == x ? s->work[0] : x;
    k = 1;
  }
  for (; k < sweeps; k++) {
    hpmg_kernel_args a = {.mode = HPMG_KERNEL_SMOOTH, .x = cur, .y = other, .b = b, .d = NULL, .c2 = omega};
    hpmg_laplace_kernel(op, s->real, &a);
    s->matvecs++;
    void *t = cur;
    cur = other;
    other = t;
  }
  if (cur != x) hpmg_vec_copy(s->real, n, cur, x);
  return HPMG_SUCCESS;
}

hpmg_error hpmg_smoother_jacobi(const hpmg_laplace *op, hpmg_real r, double omega, hpmg_smoother **out) {
  HPMG_CHECK_ARG(omega > 0 && omega < 2, "Jacobi damping must be in (0,2) (got %g)", omega);
  hpmg_smoother *s = calloc(1, sizeof *s);
  if (!s) return hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate smoother");
  s->name = "jacobi";
  s->apply = jacobi_apply;
  s->op = op;
  s->real = r;
  s->p[2] = omega;
  *out = s;
  return hpmg_malloc((size_t)op->g.N * hpmg_real_size(r), &s->work[0]);
}
