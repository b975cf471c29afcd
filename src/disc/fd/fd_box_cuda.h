/* The GPU kernels of the general-box FD multigrid (src/disc/fd/cuda/fd_box.cu):
 * the same operations as the CPU table fdb_kernels (fd_box.h) on an fdb_geom
 * and fdb_csr whose arrays are device memory, each returning an hpmg_error
 * (HPMG_ERR_BACKEND in a build without CUDA: fd_box_cuda_stub.c). Launches
 * go to the default stream; the reductions are deterministic. */
#ifndef HPMG_FD_BOX_CUDA_H
#define HPMG_FD_BOX_CUDA_H

#include "disc/fd/fd_box.h"

/* blocks of the reductions' first pass */
#define FDB_RED_BLOCKS 1024

/* doubles of the reduction scratch fdb_cuda_residual_norm and
 * fdb_cuda_mean_remove take for a level of geometry g */
int64_t fdb_cuda_red_len(const fdb_geom *g);
/* y = A x (b NULL) or y = b - A x */
hpmg_error fdb_cuda_apply(const fdb_geom *g, const double *x, const double *b, double *y);
/* ||b - A x||_2 (red: fdb_cuda_red_len doubles of device scratch) */
hpmg_error fdb_cuda_residual_norm(const fdb_geom *g, const double *x, const double *b, double *red, double *nrm);
/* one multicolour point GS sweep (fdb_kernels.gs_sweep) */
hpmg_error fdb_cuda_gs_sweep(const fdb_geom *g, const int per[3], double omega, int backward, double *x, const double *b);
/* one line GS sweep along dl (fdb_kernels.line_sweep, the same colours); cp, dp: device
 * vectors of the level's length (the recursion's scratch), cp twice that
 * along a periodic dl (fdb_cuda_line_cp_len); tab: NULL, or (device) the
 * coefficients of fd_box_line_table, the same for every line (cp unused) */
hpmg_error fdb_cuda_line_sweep(const fdb_geom *g, const int per[3], int dl, int checker, int backward, double *x, const double *b,
                               const double *tab, double *cp, double *dp);
static inline int64_t fdb_cuda_line_cp_len(int64_t n, int periodic) { return periodic ? 2 * n : n; }
/* y (+)= M x along direction d (fdb_kernels.apply1d) */
hpmg_error fdb_cuda_apply1d(int d, const int64_t nin[3], const fdb_csr *M, const double *x, double *y, int add);
/* x -= mean(x), the mean by a deterministic sum (red: FDB_RED_BLOCKS + 8 doubles) */
hpmg_error fdb_cuda_mean_remove(int64_t n, double *x, double *red);

#endif
