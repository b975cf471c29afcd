/* The condensed element operator vectorized over elements (sem_kernels.h),
 * compiled once per instruction set (core/isa.h): sem_condensed.inc, the
 * source of the single-element operator of sem_element.c, instantiated with
 * every scalar of an element replaced by a vector of `lanes` elements (the
 * same operations in the same order), and the p-multigrid's face transfer. */
#include <string.h>
#include "core/isa.h"
#include "core/simd.h"
#include "disc/sem/sem_kernels.h"

#define W (HPMG_VBYTES / 8)
/* unaligned-tolerant: callers may pass malloc memory (the kernels index whole vectors only) */
typedef double vd __attribute__((vector_size(HPMG_VBYTES), aligned(8), may_alias));

/* any lane nonzero */
static inline int vd_nonzero(const vd x) {
  int r = 0;
  for (int l = 0; l < W; l++) r |= x[l] != 0.0;
  return r;
}

#define SEM_T vd
#define SEM_FN(name) name##_v
#define SEM_DIM(el) 3
#define SEM_ZERO ((vd){0})
#define SEM_NONZERO(x) vd_nonzero(x)
#include "sem_condensed.inc"

#define CASE(M)                                       \
  case M:                                             \
    condensed_apply_v(el, M, d, uB, yB, work);        \
    return;

static void condensed_apply_batch(const hpmg_sem_element *el, const double *d, const double *uB, double *yB,
                                  double *work) {
  switch (el->m) { /* p = 2, 4, 6, 8, 12, 16, 24, 32 */
    CASE(1)
    CASE(3)
    CASE(5)
    CASE(7)
    CASE(11)
    CASE(15)
    CASE(23)
    CASE(31)
  default:
    condensed_apply_v(el, el->m, d, uB, yB, work);
    return;
  }
}
#undef CASE

/* face_apply of sem_pmg.c (a 2D transform of one face), lanes interleaved */
static inline __attribute__((always_inline)) void face_apply_v(const double *B, const int rows, const int cols,
                                                               const vd *restrict in, vd *restrict out,
                                                               vd *restrict tmp) {
  for (int r = 0; r < cols; r++) /* tmp[r][b] = sum_a in[r][a] B[b][a] */
    for (int b = 0; b < rows; b++) {
      vd s = {0};
      for (int a = 0; a < cols; a++) s += B[b * cols + a] * in[r * cols + a];
      tmp[r * rows + b] = s;
    }
  for (int b2 = 0; b2 < rows; b2++) { /* out[b2][b] = sum_r B[b2][r] tmp[r][b] */
    vd *o = out + b2 * rows;
    for (int b = 0; b < rows; b++) o[b] = (vd){0};
    for (int r = 0; r < cols; r++) {
      const double w = B[b2 * cols + r];
      const vd *t = tmp + r * rows;
      for (int b = 0; b < rows; b++) o[b] += w * t[b];
    }
  }
}

#define FCASE(R, C)                                                                \
  if (rows == R && cols == C) {                                                    \
    face_apply_v(B, R, C, (const vd *)in, (vd *)out, (vd *)tmp);                   \
    return;                                                                        \
  }

static void face_apply_batch(const double *B, int rows, int cols, const double *in, double *out, double *tmp) {
  /* prolongation and restriction between p = 2, 4, 8 (n = 3, 5, 9) */
  FCASE(5, 3)
  FCASE(3, 5)
  FCASE(9, 5)
  FCASE(5, 9)
  face_apply_v(B, rows, cols, (const vd *)in, (vd *)out, (vd *)tmp);
}
#undef FCASE

const hpmg_sem_kernels HPMG_ISA_DEFINE(hpmg_sem_kernels) = {
    .lanes = W, .condensed_apply = condensed_apply_batch, .face_apply = face_apply_batch};
