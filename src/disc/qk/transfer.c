#include <stdlib.h>
#include <string.h>
#include "core/simd.h"
#include "transfer.h"

/* the most the kernel takes per thread (doubles; float needs less): a
 * z-combined input plane, its x-expanded lines and one output line, or a
 * group of lines; each with a transposed group of lines (a vector's lanes
 * per position, at most HPMG_VBYTES_MAX bytes) and 64-byte alignment */
void hpmg_kron3_reserve(hpmg_kron3 *T) {
  const int64_t ni0 = T->A[0].ncols, ni1 = T->A[1].ncols, no0 = T->A[0].nrows;
  /* without it every call allocates its own */
  (void)hpmg_scratch_reserve(&T->scratch,
                             sizeof(double) * (size_t)(ni0 * ni1 + no0 * ni1 + no0) + 2 * HPMG_VBYTES_MAX * (size_t)ni0 + 4 * 64);
}

void hpmg_kron3_apply(const hpmg_kron3 *T, hpmg_real r, const void *in, void *out, int add) {
  if (T->A[0].nrows == 0 || T->A[1].nrows == 0 || T->A[2].nrows == 0) return;
  if (T->A[0].ncols == 0 || T->A[1].ncols == 0 || T->A[2].ncols == 0) {
    if (!add) { /* empty input space: the product is zero */
      size_t n = (size_t)T->A[0].nrows * T->A[1].nrows * T->A[2].nrows;
      memset(out, 0, n * hpmg_real_size(r));
    }
    return;
  }
  hpmg_kron3_reserve((hpmg_kron3 *)T); /* on first use (a no-op after): a cache, not the value */
  hpmg_transfer_kernels_select()->kron3[r](T, in, out, add);
}

void hpmg_kron3_destroy(hpmg_kron3 *T) {
  for (int d = 0; d < 3; d++) hpmg_sp1d_free(&T->A[d]);
  hpmg_scratch_free(&T->scratch);
}

hpmg_error hpmg_transfer_create_grids(const hpmg_grid *coarse, const hpmg_grid *fine, hpmg_kron3 *P, hpmg_kron3 *R) {
  memset(P, 0, sizeof *P);
  memset(R, 0, sizeof *R);
  for (int d = 0; d < 3; d++) {
    if (d < coarse->dim && fine->cells[d] != coarse->cells[d]) {
      const hpmg_dir1d C = hpmg_grid_dir(coarse, d), F = hpmg_grid_dir(fine, d);
      HPMG_CALL(hpmg_prolongation_1d_dir(&C, &F, &P->A[d]));
    } else { /* not coarsened (2D: z): the identity */
      HPMG_CALL(hpmg_sp1d_identity((int)fine->n[d], &P->A[d]));
    }
    HPMG_CALL(hpmg_sp1d_transpose(&P->A[d], &R->A[d]));
  }
  return HPMG_SUCCESS;
}

hpmg_error hpmg_transfer_create(const hpmg_grid *coarse, hpmg_kron3 *P, hpmg_kron3 *R) {
  HPMG_CHECK_ARG(hpmg_grid_is_plain(coarse), "hpmg_transfer_create: a plain grid is needed (else hpmg_transfer_create_grids)");
  hpmg_grid fine = *coarse;
  for (int d = 0; d < coarse->dim; d++) fine.cells[d] *= 2, fine.h[d] /= 2, fine.n[d] = fine.k * fine.cells[d] - 1;
  return hpmg_transfer_create_grids(coarse, &fine, P, R);
}
