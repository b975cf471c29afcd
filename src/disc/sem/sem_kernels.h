/* Spectral-element kernels vectorized over elements (issue 34; docs/sem.md,
 * "Time and memory"), compiled once per instruction set (core/isa.h,
 * src/disc/sem/sem_kernels.c).
 *
 * A batch is `lanes` elements (the doubles of one SIMD vector: 8 with
 * AVX-512, 4 with AVX2, 2 with SSE2/NEON) whose element vectors are
 * interleaved: value k of lane l at k * lanes + l. Every operation of the
 * single-element kernel (sem_condensed.inc, included by sem_element.c)
 * becomes one vector operation over
 * the lanes, in the same order, so the contractions run full-width whatever
 * the degree (at small p one element's lines of m = p - 1 values fill a
 * fraction of a vector) with compile-time loop bounds for the common
 * degrees. */
#ifndef HPMG_SEM_KERNELS_H
#define HPMG_SEM_KERNELS_H

#include "core/isa.h"
#include "disc/sem/sem_element.h"

typedef struct {
  int lanes; /* elements per batch */
  /* yB = Hhat_e uB (hpmg_sem_condensed_apply) for the `lanes` elements of a
   * batch, 3D: uB, yB nb * lanes values, d (dim + 1) * lanes coefficients
   * (coefficient j of lane l at j * lanes + l), all interleaved; work
   * hpmg_sem_batch_work_size doubles (any alignment of doubles). */
  void (*condensed_apply)(const hpmg_sem_element *el, const double *d, const double *uB, double *yB, double *work);
  /* out (rows x rows per lane) = B in B^T for a face in (cols x cols per
   * lane), B rows x cols row-major: the p-multigrid's face transfer
   * (sem_pmg.c); tmp cols * rows * lanes doubles */
  void (*face_apply)(const double *B, int rows, int cols, const double *in, double *out, double *tmp);
} hpmg_sem_kernels;

HPMG_ISA_TABLE(hpmg_sem_kernels, hpmg_sem_kernels)

/* Doubles of scratch one batched call takes (lanes elements). */
static inline size_t hpmg_sem_batch_work_size(const hpmg_sem_element *el, int lanes) {
  const size_t mf = (size_t)el->m * el->m;
  return (size_t)lanes * (2 * (size_t)el->nloc + (size_t)el->ni + 3 * mf);
}

#endif
