/* Direct (fast transform + tridiagonal) solver of the finite-difference
 * operator of a box (src/grid/box.h): A u = b exactly (to round-off), for any
 * cells per direction, any lengths, Dirichlet / Neumann / periodic faces,
 * vertex or cell unknowns, and at most one non-uniform direction.
 *
 * Method (docs/fd.md, "Direct solvers"). A = W (sum_d M_d + lambda), with
 * M_d = W_d^{-1} K_d acting along direction d. On a uniform direction M_d is
 * diagonalized by a real trigonometric transform, M_d = B_d diag(mu_d) F_d
 * with F_d = B_d^{-1} (table in fd_direct.c, checked by tests/test_fd_direct.c).
 * The solve is: g = b / prod_{uniform d} w_d; g = F g over the uniform
 * directions; then either g /= (lambda + sum mu) pointwise, or, along the one
 * non-uniform direction t, (K_t + sigma W_t) v = g per line (tridiagonal,
 * cyclic when t is periodic) with sigma = lambda + sum mu of the line's
 * spectral index; u = B v.
 * Singular case (no Dirichlet face, lambda = 0): the constant mode gets 0,
 * which is the solution for the projected right-hand side
 * b - W 1 (1^T b)/(1^T W 1); the solution has zero W-weighted mean. The
 * removed amount 1^T b is reported (fd_direct_defect).
 *
 * Arrays: the compact array of unknowns, hpmg_box_n(box, d) per direction,
 * x fastest: index i + n0 (j + n1 k). CPU: FFTW r2r plans (threads with
 * fftw3_omp); GPU: cuFFT with pre/post-processing kernels and batched
 * tridiagonal solves (src/disc/fd/cuda/fd_direct.cu). */
#ifndef HPMG_FD_DIRECT_H
#define HPMG_FD_DIRECT_H

#include <stdint.h>
#include "core/core.h"
#include "grid/box.h"

/* The real transforms, named after FFTW's r2r kinds (same definitions and
 * normalization: none). */
typedef enum {
  FDX_R2HC = 0, FDX_HC2R, /* periodic: real DFT, halfcomplex order */
  FDX_DST1,               /* RODFT00 */
  FDX_DCT1,               /* REDFT00 */
  FDX_DCT2, FDX_DCT3,     /* REDFT10, REDFT01 */
  FDX_DST2, FDX_DST3,     /* RODFT10, RODFT01 */
  FDX_DCT4, FDX_DST4      /* REDFT11, RODFT11 */
} fd_direct_kind;

/* One direction of the solver (host arrays). */
typedef struct {
  int64_t n;             /* unknowns */
  int uniform;           /* 1: transformed; 0: the tridiagonal direction */
  int periodic;          /* both faces periodic */
  int singular;          /* K_d has the constants as null space (no Dirichlet face) */
  fd_direct_kind kf, kb; /* forward (F) and backward (B) transforms */
  double norm;           /* B F = norm I for the unnormalized transforms */
  double h;              /* the uniform spacing len / cells */
  int wconst;            /* uniform and every dual width is h (no vertex-layout Neumann end) */
  double *mu;            /* n eigenvalues of W_d^{-1} K_d in the transform's order */
  double *w;             /* n dual widths (the diagonal of W_d) */
  double *lo, *di, *up;  /* K_d: row i couples to i-1 by -lo[i], to i+1 by -up[i]; diagonal di[i].
                            periodic: lo[0] couples to n-1, up[n-1] to 0; else lo[0] = up[n-1] = 0 */
} fd_direct_dir;

/* The 1D data of direction d of box (all of mu, w, lo, di, up filled; mu only
 * meaningful where the direction is uniform). Free with fd_direct_dir_free. */
hpmg_error fd_direct_dir_init(const hpmg_box *box, int d, fd_direct_dir *dir);
void fd_direct_dir_free(fd_direct_dir *dir);

typedef struct fd_direct_s *fd_direct;

/* device: 0 = CPU (FFTW, double), 1 = CUDA (cuFFT, double). lambda >= 0.
 * measure: FFTW_MEASURE instead of FFTW_ESTIMATE (CPU). The solver owns its
 * work arrays; the box is copied (its coordinate arrays are not kept). */
hpmg_error fd_direct_create(const hpmg_box *box, double lambda, int device, int measure, fd_direct *s);
/* CPU, uniform directions only: the unknowns live inside the caller's
 * array at array[i + stride[1] j + stride[2] k] (stride[0] = 1), e.g. the
 * interior of a boundary-inclusive grid array; the plans are made on array
 * (FFTW_MEASURE overwrites it) and fd_direct_solve(s, array, array) solves in
 * place there. */
hpmg_error fd_direct_create_embedded(const hpmg_box *box, double lambda, int measure, double *array,
                                     const int64_t stride[3], fd_direct *s);
void fd_direct_destroy(fd_direct *s);
/* Solve A u = b; b and u are host arrays (device 0) or device arrays
 * (device 1) of fd_direct_size values; b == u is allowed. */
hpmg_error fd_direct_solve(fd_direct s, const double *b, double *u);
int64_t fd_direct_size(fd_direct s);
/* singular problems: 1^T b of the last solve (the amount projected away) and
 * |1^T b| / ||b||_1; 0 for non-singular problems */
void fd_direct_defect(fd_direct s, double *sum, double *relative);
double fd_direct_plan_seconds(fd_direct s);
/* the direction solved by tridiagonal systems, or -1 */
int fd_direct_tri_dir(fd_direct s);
/* 1 when the solve takes the GPU fast path (every direction periodic and
 * uniform: one multi-dimensional cuFFT D2Z / Z2D pair instead of the
 * per-direction transforms), else 0 (the CPU, a non-periodic or a stretched
 * direction) */
int fd_direct_gpu_fast(fd_direct s);

/* CUDA half (src/disc/fd/cuda/fd_direct.cu; stubs without CUDA). dirs: the
 * box's directions (copied to the device). */
hpmg_error fd_cuda_direct_create(int dim, const fd_direct_dir *dirs, double lambda, void **handle);
hpmg_error fd_cuda_direct_solve(void *handle, const double *b, double *u, double *defect_sum, double *defect_abs);
void fd_cuda_direct_destroy(void *handle);
/* 1 when the handle's solves take the fast path (fd_direct_gpu_fast) */
int fd_cuda_direct_fast(void *handle);
/* device bytes the CUDA solver allocates (estimate, cuFFT work included; the
 * larger of the general and the all-periodic fast path's, which are not told
 * apart by the sizes alone) */
double fd_cuda_direct_bytes(int dim, const int64_t n[3]);
/* which batched tridiagonal solver GPU solvers created from now on use:
 * 0 = one thread per line (own kernel, the default), 1 = cuSPARSE
 * (gtsv2StridedBatch along x, gtsvInterleavedBatch along y and z; a periodic
 * direction keeps the own kernel: cuSPARSE has no cyclic solver); returns the
 * previous value */
int fd_cuda_direct_set_tri(int which);
/* staging buffer size per transform chunk (tests: small values exercise the
 * chunk loop); returns the previous value; 0 keeps it */
size_t fd_cuda_direct_set_chunk_bytes(size_t bytes);
/* benchmark reference: the plain cuFFT periodic Poisson solve on a cells[0] x
 * cells[1] x cells[2] unit box (D2Z, divide by the eigenvalues, Z2D, in
 * place), timed reps times after a warm-up (seconds[reps]) */
hpmg_error fd_cuda_periodic_reference(const int64_t cells[3], int reps, double *seconds);

#endif
