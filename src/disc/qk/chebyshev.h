/* The Chebyshev-Jacobi recurrence, shared by every backend (CPU smoother in
 * chebyshev.c, CUDA smoother in src/disc/qk/cuda/qk_levels.cu): each backend runs the
 * passes d = c1 d + c2 D^{-1}(b - Ax), x_new = x + d with its own fused kernel;
 * the coefficients and the placement of the pointwise first step come from
 * here, so the backends cannot drift apart. */
#ifndef HPMG_SMOOTHERS_CHEBYSHEV_H
#define HPMG_SMOOTHERS_CHEBYSHEV_H

#define HPMG_CHEBYSHEV_MAX_DEGREE 100

typedef struct {
  int passes;          /* fused operator passes in this step */
  double first_scale;  /* x_is_zero: the pointwise first step d = x = first_scale D^{-1} b */
  int first_to_x;      /* x_is_zero: write that first iterate into x, else into the scratch
                          vector, so that after the passes alternate buffers the result is in x */
  double c1[HPMG_CHEBYSHEV_MAX_DEGREE], c2[HPMG_CHEBYSHEV_MAX_DEGREE]; /* per pass */
} hpmg_chebyshev_schedule;

/* One smoothing step of degree m on [lambda_max/range, lambda_max] (Saad,
 * Iterative Methods, Alg. 12.1). x_is_zero: the first update needs no matvec. */
void hpmg_chebyshev_schedule_make(double lambda_max, double range, int m, int x_is_zero,
                                  hpmg_chebyshev_schedule *s);

#endif
