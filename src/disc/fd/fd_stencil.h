/* Finite-difference 5-point (2D) / 7-point (3D) Poisson stencils on the unit
 * box, as in paper 002, and the table of kernels a backend provides.
 *
 * Layout: one level of n intervals per direction is a lexicographic array of
 * (n+1)^d values including the boundary (x fastest): index
 * i + (n+1)*(j + (n+1)*k). Boundary values are zero and are never written, so
 * whole-array BLAS-1 operations keep them zero. The operator is the unscaled
 * stencil A u = 2d u_c - sum(neighbours); right-hand sides are stored
 * h^2-scaled (f_stored = h^2 f), so A u = f_stored is the discrete problem.
 *
 * Every kernel exists for double and float: the CPU ones are written once in
 * fd_*.inc files and instantiated with suffixes _d and _f in
 * fd_cpu_kernels.c; backends expose them through fd_ops (one table per
 * backend and precision), which src/disc/fd/fd_mg.c puts behind the level slots
 * of the multigrid core (mg/mg.h). Memory, copies and vector operations are
 * the backend's (la/backend.h: hpmg_backend_host, hpmg_backend_cuda).
 */
#ifndef HPMG_FD_STENCIL_H
#define HPMG_FD_STENCIL_H

#include <stddef.h>
#include <stdint.h>
#include "core/core.h"
#include "core/isa.h"

typedef enum { FD_DOUBLE = 0, FD_FLOAT = 1 } fd_prec;
typedef enum { FD_SMOOTH_JACOBI = 0, FD_SMOOTH_RBGS = 1, FD_SMOOTH_MCGS = 2 } fd_smoother_kind;

static inline int64_t fd_points(int dim, int64_t n) {
  return dim == 2 ? (n + 1) * (n + 1) : (n + 1) * (n + 1) * (n + 1);
}
static inline size_t fd_prec_size(fd_prec p) { return p == FD_DOUBLE ? sizeof(double) : sizeof(float); }

/* Kernels of one backend in one precision. Pointers are host pointers for the
 * CPU backend and device pointers for the CUDA backend. n is the number of
 * intervals of the level the vectors live on (nf: of the fine level). */
typedef struct fd_ops {
  const char *name;
  fd_prec prec;
  /* r = f - A u */
  hpmg_error (*residual)(int dim, int64_t n, const void *u, const void *f, void *r);
  /* ||f - A u||_2 without storing the residual */
  hpmg_error (*residual_norm)(int dim, int64_t n, const void *u, const void *f, double *nrm);
  /* y = A u */
  hpmg_error (*apply)(int dim, int64_t n, const void *u, void *y);
  /* sweeps of the smoother; backward = reverse color order (post-smoothing).
   * omega: Jacobi's damping, or the Gauss-Seidel smoothers' over-relaxation
   * (SOR) weight, u = (1 - omega) u + omega (f + neighbours) / 2d; omega = 1
   * is bitwise plain GS. Jacobi needs *tmp and swaps the two pointers. */
  hpmg_error (*smooth)(int dim, int64_t n, fd_smoother_kind kind, double omega, int sweeps,
                       int backward, void **u, const void *f, void **tmp);
  /* fc = 4 R rf: the paper's restriction with the factor that makes it the
   * Galerkin right-hand side for h^2-scaled data (P^T in 2D, P^T/2 in 3D). */
  hpmg_error (*restrict_rhs)(int dim, int64_t nf, const void *rf, void *fc);
  /* fc = 4 R (f - A u) without storing the residual (optional, NULL: the
   * cycle calls residual, then restrict_rhs; same result to rounding) */
  hpmg_error (*residual_restrict)(int dim, int64_t nf, const void *u, const void *f, void *fc);
  /* fc -= 4 R A u, where fc holds 4 R f: residual_restrict's fc (to
   * rounding) without reading f (optional, NULL: the solver calls
   * residual_restrict). FMG's first V-cycle on a level uses it: that level's
   * coarse right-hand side still holds the restriction of f that FMG made. */
  hpmg_error (*restrict_update)(int dim, int64_t nf, const void *u, void *fc);
  /* uf (+)= P uc: linear interpolation on the Kuhn (Freudenthal) simplices */
  hpmg_error (*prolong)(int dim, int64_t nf, const void *uc, void *uf, int add);
  /* uf = Pc uc: tensor-product cubic interpolation (FMG's interpolation to a
   * new level; fd_prolong_cubic in src/disc/fd/fd_transfer.inc) */
  hpmg_error (*prolong_cubic)(int dim, int64_t nf, const void *uc, void *uf);
  /* u += P uc, then `sweeps` of the smoother as in smooth: the cycle's
   * coarse-grid correction and post-smoothing (optional, NULL: the cycle
   * calls prolong(add), then smooth; bitwise the same result). The CUDA
   * backend adds the correction inside its first 3D multicolor GS pass
   * (k_mcgs_march), which saves the prolongation's pass through u. */
  hpmg_error (*correct_smooth)(int dim, int64_t n, const void *uc, fd_smoother_kind kind, double omega, int sweeps,
                               int backward, void **u, const void *f, void **tmp);
  /* u = Pc uc, then `sweeps` forward sweeps of the smoother: FMG's
   * interpolation to a new level and the pre-smoothing of its V-cycle
   * (optional, NULL: the solver calls prolong_cubic, then smooth; bitwise
   * the same result). The CUDA backend computes the interpolation inside its
   * first 3D multicolor GS pass (k_mcgs_march), which then never reads u:
   * the interpolation's pass and the smoothing pass's read of u are saved. */
  hpmg_error (*interp_smooth)(int dim, int64_t n, const void *uc, fd_smoother_kind kind, double omega, int sweeps,
                              void **u, const void *f, void **tmp);
} fd_ops;

/* The CUDA backend: HPMG_ERR_BACKEND with a message when this build has no
 * CUDA or no GPU is visible. */
hpmg_error fd_ops_cuda(fd_prec prec, const fd_ops **ops);
/* Split-auto constants measured on the GPU (fd_split_calibrate): seconds per
 * kernel launch, streaming bandwidth (bytes/s), host<->device copy latency
 * (seconds) and bandwidth (bytes/s, pageable host memory as the split's
 * copies). */
hpmg_error fd_cuda_calibrate(double *launch_s, double *gpu_bw, double *link_latency_s, double *link_bw);
/* The 3D multicolor GS of the CUDA backend runs S = 2 (or 1) sweeps per pass
 * through memory (k_mcgs_march: z-marching, out of place, so it swaps u and
 * tmp) on levels with n >= this value (default 256, where it is faster on the
 * H200), and the row kernel (in place, 4 launches per sweep) below; both
 * give bitwise the strict color order. Returns the previous value; for tests
 * and benchmarks. Without CUDA: no-op. */
int64_t fd_cuda_set_gs_march_min(int64_t n);
/* Planes per z-chunk of that pass (0, the default: chosen per launch to fill
 * the GPU's last wave of blocks; a chunk recomputes 2S planes below it).
 * Returns the previous value; for tests. Without CUDA: no-op. */
int64_t fd_cuda_set_gs_march_zchunk(int64_t planes);

/* Levels below these sizes (intervals per direction) run the CPU kernels on
 * one thread: the barriers cost more than the work. */
#define FD_PAR_MIN 32     /* 3D */
#define FD_PAR_MIN_2D 192 /* 2D */

/* The OpenMP backend: one table per precision and instruction set
 * (fd_cpu_kernels.c, compiled once per instruction set; core/isa.h). */
typedef struct {
  fd_ops ops[2]; /* indexed by fd_prec */
} hpmg_fd_cpu_ops;
HPMG_ISA_TABLE(hpmg_fd_cpu_ops, hpmg_fd_cpu_ops)
static inline const fd_ops *fd_ops_cpu(fd_prec prec) { return &hpmg_fd_cpu_ops_select()->ops[prec]; }

#endif
