/* Point Gauss-Seidel in lexicographic order (sequential: the baseline smoother
 * of paper 000, Table 3). Pre-smoothing sweeps forward, post-smoothing
 * backward, so the V-cycle stays symmetric for CG; the symmetric variant does
 * forward+backward in every sweep. */
#include <stdlib.h>
#include "la/vec.h"
#include "smoother.h"

static hpmg_error gs_apply(hpmg_smoother *s, const void *b, void *x, int x_is_zero, int post, int sweeps) {
  if (x_is_zero) hpmg_vec_zero(s->real, s->op->g.N, x);
  for (int k = 0; k < sweeps; k++) {
    if (s->p[3] != 0) {
      hpmg_laplace_gauss_seidel(s->op, s->real, b, x, 0);
      hpmg_laplace_gauss_seidel(s->op, s->real, b, x, 1);
      s->matvecs += 2;
    } else {
      hpmg_laplace_gauss_seidel(s->op, s->real, b, x, post);
      s->matvecs++;
    }
  }
  return HPMG_SUCCESS;
}

hpmg_error hpmg_smoother_gauss_seidel(const hpmg_laplace *op, hpmg_real r, int symmetric,
                                      hpmg_smoother **out) {
  hpmg_smoother *s = calloc(1, sizeof *s);
  if (!s) return hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate smoother");
  s->name = symmetric ? "sgs" : "gs";
  s->apply = gs_apply;
  s->op = op;
  s->real = r;
  s->p[3] = symmetric;
  *out = s;
  return HPMG_SUCCESS;
}
