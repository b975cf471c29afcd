/* Grid transfer between nested Cartesian levels. The embedding of the coarse
 * Q_k space is the tensor product of 1D interpolation matrices,
 * P = Pz (x) Py (x) Px; restriction is its exact transpose (built from the
 * transposed 1D factors). Both are applied by one kernel for any Kronecker
 * product of three sparse 1D matrices. */
#ifndef HPMG_MG_TRANSFER_H
#define HPMG_MG_TRANSFER_H

#include "disc/qk/laplace.h"

typedef struct {
  hpmg_sp1d A[3]; /* factor per direction, x first; 1x1 identity in z for 2D */
  /* the kernel's per-thread planes and lines, allocated by the first
   * hpmg_kron3_apply for omp_get_max_threads() threads (a thread beyond them
   * allocates its own): not per call, where a plane-sized malloc makes the
   * heap grow and shrink, page faults included, on every transfer */
  hpmg_scratch scratch;
} hpmg_kron3;

/* Allocates T's per-thread scratch now (the first apply does otherwise: a
 * solver reserves it at setup, out of the timed solve). */
void hpmg_kron3_reserve(hpmg_kron3 *T);
/* out = (add ? out : 0) + (A2 (x) A1 (x) A0) in */
void hpmg_kron3_apply(const hpmg_kron3 *T, hpmg_real r, const void *in, void *out, int add);
void hpmg_kron3_destroy(hpmg_kron3 *T);

/* The CPU kernel behind hpmg_kron3_apply, one table per instruction set
 * (transfer_kernels.c), indexed by hpmg_real. */
typedef struct {
  void (*kron3[2])(const hpmg_kron3 *T, const void *in, void *out, int add);
} hpmg_transfer_kernels;
HPMG_ISA_TABLE(hpmg_transfer_kernels, hpmg_transfer_kernels)

/* Prolongation from the level `coarse` (cells c) to `fine` (cells 2c, same k)
 * and its transpose. */
hpmg_error hpmg_transfer_create(const hpmg_grid *coarse, hpmg_kron3 *P, hpmg_kron3 *R);
/* The same between any two levels of a general box (hpmg_grid_coarsen):
 * per direction the BC-aware interpolation on the coarse cells
 * (hpmg_prolongation_1d_dir) where coarsened, the identity elsewhere. */
hpmg_error hpmg_transfer_create_grids(const hpmg_grid *coarse, const hpmg_grid *fine, hpmg_kron3 *P, hpmg_kron3 *R);

#endif
