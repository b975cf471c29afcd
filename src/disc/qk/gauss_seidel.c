/* Point Gauss-Seidel (sequential: the baseline smoother of paper 000, Table 3),
 * sweeping the free nodes lexicographically or in deal.II's cellwise level
 * numbering (hpmg_grid_cellwise_order). With the symmetric cycle (CG) pre-
 * smoothing sweeps forward and post-smoothing backward; otherwise both sweep
 * forward. The symmetric variant (sgs) does forward+backward in every sweep. */
#include <stdlib.h>
#include "la/vec.h"
#include "smoother.h"

typedef struct {
  hpmg_smoother base; /* first: the interface frees the struct through it */
  int64_t *order;     /* sweep order, NULL = lexicographic */
} gs_smoother;

static hpmg_error gs_apply(hpmg_smoother *s, const void *b, void *x, int x_is_zero, int post, int sweeps) {
  const int64_t *ord = ((const gs_smoother *)s)->order;
  if (x_is_zero) hpmg_vec_zero(s->real, s->op->g.N, x);
  for (int k = 0; k < sweeps; k++) {
    if (s->p[3] != 0) {
      hpmg_laplace_gauss_seidel(s->op, s->real, b, x, ord, 0);
      hpmg_laplace_gauss_seidel(s->op, s->real, b, x, ord, 1);
      s->matvecs += 2;
    } else {
      hpmg_laplace_gauss_seidel(s->op, s->real, b, x, ord, post);
      s->matvecs++;
    }
  }
  return HPMG_SUCCESS;
}

static void gs_destroy(hpmg_smoother *s) { hpmg_free(&((gs_smoother *)s)->order); }

hpmg_error hpmg_smoother_gauss_seidel(const hpmg_laplace *op, hpmg_real r, int symmetric, hpmg_gs_order order,
                                      int64_t coarse, hpmg_smoother **out) {
  HPMG_CHECK_ARG(order == HPMG_GS_ORDER_LEXICOGRAPHIC || order == HPMG_GS_ORDER_CELLWISE,
                 "unknown Gauss-Seidel order %d", (int)order);
  gs_smoother *G = calloc(1, sizeof *G);
  if (!G) return hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate smoother");
  hpmg_smoother *s = &G->base;
  s->name = symmetric ? "sgs" : "gs";
  s->apply = gs_apply;
  s->destroy = gs_destroy;
  s->op = op;
  s->real = r;
  s->p[3] = symmetric;
  *out = s;
  if (order == HPMG_GS_ORDER_CELLWISE) {
    HPMG_CALL(hpmg_malloc(sizeof(int64_t) * (size_t)(op->g.N > 0 ? op->g.N : 1), &G->order));
    HPMG_CALL(hpmg_grid_cellwise_order(&op->g, coarse, G->order));
  }
  return HPMG_SUCCESS;
}
