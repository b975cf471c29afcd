/* CUDA backend of the Q_k matrix-free multigrid solve (Chebyshev/Jacobi/vertex-patch
 * smoothing, PCG or V-cycle iteration), reached from C through these entry
 * points. CUDA C++ lives in src/disc/qk/cuda/qk_*.cu; see docs/cuda.md.
 *
 * Two layers:
 *  - kernels on device vectors (for tests and other backends): the level
 *    operator with the fused epilogues of hpmg_laplace_kernel, the inverse
 *    diagonal, Kronecker-product transfers, BLAS-1 with deterministic
 *    reductions. Every pointer handed to them is a device pointer.
 *  - the whole solve: hierarchy, smoothers, V-cycle, dense coarse solve and
 *    PCG on the GPU; only scalars cross to the host per iteration.
 *
 * Without a GPU (or without a CUDA build) every entry point returns
 * HPMG_ERR_BACKEND with a message saying why. */
#ifndef HPMG_CUDA_H
#define HPMG_CUDA_H

#include <stddef.h>
#include "hpmg.h"
#include "backends/cuda.h"
#include "disc/qk/transfer.h"
#include "disc/qk/laplace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ whole solve */

typedef struct hpmg_cuda_solver_s *hpmg_cuda_solver;

/* The largest degrees of the GPU's vertex-patch smoother (qk_patch.cu), in
 * every build: the solver's defaults (src/api/solver.c) read them. */
#define QK_PATCH_MAX_K2 10
#define QK_PATCH_MAX_K3 8

#ifdef HPMG_HAVE_CUDA
/* Supported on the GPU: solver CG, VCYCLE, GMRES (restarted, flexible
 * right preconditioning with one V-cycle, as krylov.c; the basis is
 * allocated on first use) and FMG (full multigrid start, then V-cycles, as
 * solver.c); smoother CHEBYSHEV, JACOBI or PATCH (local solver fdm; 2D k <= 10,
 * 3D k <= 8; AUTO means CHEBYSHEV as on the CPU); precision DOUBLE, FLOAT
 * (everything in float, the final residual check in double) or MIXED (float
 * V-cycle inside the double outer iteration).
 * Everything else is refused with HPMG_ERR_BACKEND and a message. Setup
 * (1D matrices, coarse Cholesky inverse) runs on the host, the Lanczos
 * lambda_max estimates on the GPU. */
hpmg_error hpmg_cuda_solver_create(const hpmg_problem_options *po, const hpmg_solver_options *so,
                                   hpmg_cuda_solver *s);
void hpmg_cuda_solver_destroy(hpmg_cuda_solver *s);
/* Solve A x = b. b == NULL: the built-in right-hand side. x: initial guess on
 * entry, solution on exit. device_ptrs = 0: b and x are host arrays of
 * hpmg_cuda_solver_num_dofs doubles; 1: they are device arrays (cudaMalloc),
 * and nothing of size N crosses the bus. Returns HPMG_ERR_NOT_CONVERGED as the
 * CPU solver does. */
hpmg_error hpmg_cuda_solver_solve(hpmg_cuda_solver s, const double *b, double *x, int device_ptrs);
void hpmg_cuda_solver_get_stats(hpmg_cuda_solver s, hpmg_stats *st);
/* Residual norm per outer iteration of the last solve (entry 0: the initial one,
 * as the CPU solver's history); returns the number of entries. */
int hpmg_cuda_solver_history(hpmg_cuda_solver s, const double **h);
int64_t hpmg_cuda_solver_num_dofs(hpmg_cuda_solver s);
/* lambda_max used by the Chebyshev smoother of level l (1 = coarsest smoothed
 * level, nlevels-1 = finest); 0 for levels without smoother. */
double hpmg_cuda_solver_lambda_max(hpmg_cuda_solver s, int level);
int hpmg_cuda_solver_num_levels(hpmg_cuda_solver s);
/* Time `reps` fused applications of the finest-level operator kernel in
 * precision r (mode APPLY or SMOOTH with d), on the solver's own vectors;
 * median seconds of one application. For benchmarks. */
hpmg_error hpmg_cuda_solver_time_operator(hpmg_cuda_solver s, hpmg_real r, hpmg_kernel_mode mode, int reps,
                                          double *seconds);
/* Device bytes hpmg_cuda_solver_create + solve allocate (without allocating). */
hpmg_error hpmg_cuda_memory_estimate(const hpmg_problem_options *po, const hpmg_solver_options *so, double *bytes);
/* One call: create, solve (host arrays; b may be NULL), stats, destroy. */
hpmg_error hpmg_cuda_solve(const hpmg_problem_options *po, const hpmg_solver_options *so, const double *b,
                           double *x, hpmg_stats *st);

/* ---------------------------------------------------- kernels (device data) */


/* Level operator: the 1D banded matrices of op (both precisions) on the device. */
typedef struct hpmg_cuda_op_s *hpmg_cuda_op;
hpmg_error hpmg_cuda_op_create(const hpmg_laplace *op, hpmg_cuda_op *dop);
void hpmg_cuda_op_destroy(hpmg_cuda_op *dop);
/* Same contract as hpmg_laplace_kernel; a's pointers are device pointers. */
hpmg_error hpmg_cuda_op_kernel(hpmg_cuda_op op, hpmg_real r, const hpmg_kernel_args *a);
/* out = c D^{-1} in, out2 = out if out2 != NULL (as hpmg_laplace_inverse_diagonal). */
hpmg_error hpmg_cuda_op_inverse_diagonal(hpmg_cuda_op op, hpmg_real r, double c, const void *in, void *out,
                                         void *out2);

/* Kronecker product of three 1D CSR factors (transfers). */
typedef struct hpmg_cuda_kron3_s *hpmg_cuda_kron3;
hpmg_error hpmg_cuda_kron3_create(const hpmg_kron3 *T, hpmg_cuda_kron3 *dT);
void hpmg_cuda_kron3_destroy(hpmg_cuda_kron3 *dT);
/* Device scratch the apply needs in precision r (bytes). */
size_t hpmg_cuda_kron3_scratch_bytes(hpmg_cuda_kron3 T, hpmg_real r);
/* out = (add ? out : 0) + (A2 (x) A1 (x) A0) in; scratch: scratch_bytes of
 * device memory, or NULL (allocated and freed inside). */
hpmg_error hpmg_cuda_kron3_apply(hpmg_cuda_kron3 T, hpmg_real r, const void *in, void *out, int add, void *scratch);

/* lambda_max of D^{-1}A by `iters` Jacobi-PCG/Lanczos steps on the GPU
 * (hpmg_lambda_max_cg on the CUDA backend from hpmg_estimate_lambda_max's
 * start vector, in float as the host's); work: 6 device vectors of at least n floats. */
hpmg_error hpmg_cuda_estimate_lambda_max(hpmg_cuda_op op, int iters, void *work[6], double *lmax);

/* Vertex-patch smoother of one level (src/disc/qk/cuda/qk_patch.cu; the algorithm of
 * src/disc/qk/patch.c with the fdm local solver). */
typedef struct hpmg_cuda_patch_s *hpmg_cuda_patch;
/* HPMG_SUCCESS if the combination runs on the GPU, else HPMG_ERR_BACKEND /
 * HPMG_ERR_ARG with a message. */
hpmg_error hpmg_cuda_patch_check(int dim, int k, hpmg_patch_mode mode, hpmg_local_solver local,
                                 hpmg_patch_kernel kernel);
/* Factors of the level of op (fdm.c on the host, uploaded in both
 * precisions); dop: the same level on the device (full residuals of the
 * global variant and the additive mode; kept, not owned). damping: additive
 * only, 0 = 1/2^dim. */
hpmg_error hpmg_cuda_patch_create(const hpmg_laplace *op, hpmg_cuda_op dop, hpmg_patch_mode mode,
                                  hpmg_local_solver local, double damping, hpmg_patch_kernel kernel,
                                  hpmg_cuda_patch *p);
void hpmg_cuda_patch_destroy(hpmg_cuda_patch *p);
/* 1 if apply needs a work vector (additive mode, separate and global variants). */
int hpmg_cuda_patch_needs_work(hpmg_cuda_patch p);
/* `sweeps` smoothing steps for A x = b on device vectors of precision r (as
 * the CPU smoother's apply): colors forward, or backward if reverse; x_is_zero:
 * x is set to 0 first. work: N entries of precision r, or NULL if not needed. */
hpmg_error hpmg_cuda_patch_apply(hpmg_cuda_patch p, hpmg_real r, const void *b, void *x, void *work, int x_is_zero,
                                 int reverse, int sweeps);
/* Full residuals computed so far (global variant, additive mode). */
int64_t hpmg_cuda_patch_matvecs(hpmg_cuda_patch p);
/* Median seconds of one smoothing step (colors alternating forward and
 * backward) over `reps` timed steps on the given device vectors. Benchmarks. */
hpmg_error hpmg_cuda_patch_time(hpmg_cuda_patch p, hpmg_real r, const void *b, void *x, void *work, int reps,
                                double *seconds);

#else /* no CUDA in this build: the whole-solve entry points say so */
#include "core/core.h"
static inline hpmg_error hpmg_cuda_no_build(void) {
  return hpmg_error_set(HPMG_ERR_BACKEND,
                        "--device cuda: this build of hpmg has no CUDA backend (nvcc was not found at configure time)");
}
static inline hpmg_error hpmg_cuda_solver_create(const hpmg_problem_options *po, const hpmg_solver_options *so,
                                                 hpmg_cuda_solver *s) {
  (void)po; (void)so; *s = NULL; return hpmg_cuda_no_build();
}
static inline void hpmg_cuda_solver_destroy(hpmg_cuda_solver *s) { *s = NULL; }
static inline hpmg_error hpmg_cuda_solver_solve(hpmg_cuda_solver s, const double *b, double *x, int dp) {
  (void)s; (void)b; (void)x; (void)dp; return hpmg_cuda_no_build();
}
static inline void hpmg_cuda_solver_get_stats(hpmg_cuda_solver s, hpmg_stats *st) { (void)s; (void)st; }
static inline int hpmg_cuda_solver_history(hpmg_cuda_solver s, const double **h) { (void)s; *h = NULL; return 0; }
static inline int64_t hpmg_cuda_solver_num_dofs(hpmg_cuda_solver s) { (void)s; return 0; }
static inline double hpmg_cuda_solver_lambda_max(hpmg_cuda_solver s, int l) { (void)s; (void)l; return 0; }
static inline int hpmg_cuda_solver_num_levels(hpmg_cuda_solver s) { (void)s; return 0; }
static inline hpmg_error hpmg_cuda_solver_time_operator(hpmg_cuda_solver s, hpmg_real r, hpmg_kernel_mode m,
                                                        int reps, double *t) {
  (void)s; (void)r; (void)m; (void)reps; (void)t; return hpmg_cuda_no_build();
}
static inline hpmg_error hpmg_cuda_memory_estimate(const hpmg_problem_options *po, const hpmg_solver_options *so,
                                                   double *bytes) {
  (void)po; (void)so; *bytes = 0; return hpmg_cuda_no_build();
}
static inline hpmg_error hpmg_cuda_solve(const hpmg_problem_options *po, const hpmg_solver_options *so,
                                         const double *b, double *x, hpmg_stats *st) {
  (void)po; (void)so; (void)b; (void)x; (void)st; return hpmg_cuda_no_build();
}
#endif

#ifdef __cplusplus
}
#endif
#endif
