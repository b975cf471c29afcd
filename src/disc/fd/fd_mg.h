/* Finite-difference geometric multigrid for -Laplace u = f on (0,1)^d with
 * homogeneous Dirichlet boundaries (paper 002): 5-point (2D) / 7-point (3D)
 * stencil on 2^L intervals per direction, L levels (level 0 finest, level
 * L-1 = 2 intervals = one unknown, solved exactly), V-cycle (Algorithm 3.1),
 * FMG (Algorithm 3.2), CG preconditioned by one V-cycle, and the FFT direct
 * solver; on the CPU, the GPU, or split (Algorithm 3.3: the finest `split`
 * levels on the GPU, the rest on the CPU, one residual copied down and one
 * correction copied up per cycle).
 *
 * Vectors exchanged with the caller are double, over all (n+1)^d grid points
 * (boundary included, zero), x fastest; right-hand sides are h^2-scaled. */
#ifndef HPMG_FD_MG_H
#define HPMG_FD_MG_H

#include "disc/fd/fd_stencil.h"

typedef enum { FD_SOLVER_VCYCLE = 0, FD_SOLVER_FMG, FD_SOLVER_CG, FD_SOLVER_FFT } fd_solver_kind;
typedef enum { FD_DEVICE_CPU = 0, FD_DEVICE_CUDA = 1 } fd_device;
/* FMG's interpolation of a level's solution to the next finer level:
 * cubic (default; fourth order, docs/fd.md) or the cycle's linear P (paper 002). */
typedef enum { FD_FMG_LINEAR = 0, FD_FMG_CUBIC = 1 } fd_fmg_interp;
#define FD_SPLIT_AUTO (-1)
#define FD_SWEEPS_DEFAULT (-1) /* pre/post: the solver's default (fd_config_resolve) */
#define FD_SOR_DEFAULT (-1.0)  /* sor: the solver's default (fd_config_resolve) */
#define FD_MAX_REFINE_2D HPMG_FD_MAX_REFINE_2D
#define FD_MAX_REFINE_3D HPMG_FD_MAX_REFINE_3D

/* after iteration it: its residual norm and the initial one */
typedef void (*fd_monitor_fn)(void *ctx, int it, double res, double res0);

typedef struct {
  int dim;                  /* 2 or 3 */
  int refine;               /* L: 2^L intervals per direction, L levels; 1..15 (2D), 1..10 (3D) */
  fd_smoother_kind smoother;/* default multicolor GS */
  double omega;             /* Jacobi weight (default 0.8) */
  double sor;               /* Gauss-Seidel (mcgs, rbgs) over-relaxation weight in (0,2);
                               FD_SOR_DEFAULT (the default): 1, but 1.3 for FMG in 3D with
                               the cubic interpolation and mcgs (docs/fd.md) */
  fd_solver_kind solver;    /* default V-cycle */
  int pre, post;            /* sweeps; FD_SWEEPS_DEFAULT (the default): 1, 1, but FMG in 3D
                               2, 2, and 2, 1 with the cubic interpolation and mcgs (with
                               sor 1.3: the discretization error, docs/fd.md) */
  fd_fmg_interp fmg_interp; /* FMG's interpolation to each new level (default cubic) */
  double tol;               /* relative residual (default 1e-6, as in paper 002) */
  int maxit;                /* default 100 */
  int threads;              /* OpenMP threads, 0: runtime default */
  fd_prec prec;             /* default double */
  fd_device device;         /* default CPU */
  int split;                /* GPU levels for device CUDA: 1..L, FD_SPLIT_AUTO (default) */
  int fft_measure;          /* FFTW_MEASURE planning (default 0: FFTW_ESTIMATE) */
  int profile;              /* synchronize the GPU around each phase to time it (default 0) */
  fd_monitor_fn monitor;    /* called after every iteration (NULL: silent) */
  void *monitor_ctx;
} fd_config;

/* Machine constants of the split-auto cost model (fd_split_model). */
typedef struct {
  double gpu_launch_s;   /* one kernel launch (seconds) */
  double gpu_bw;         /* GPU streaming bandwidth (bytes/s) */
  double cpu_bw;         /* CPU streaming bandwidth, all threads (bytes/s) */
  double cpu_barrier_s;  /* one OpenMP parallel loop's fork/join (seconds) */
  double link_latency_s; /* one host<->device copy, fixed part (seconds) */
  double link_bw;        /* host<->device bandwidth (bytes/s) */
  int measured;          /* 1: measured by fd_split_calibrate, 0: defaults */
} fd_split_costs;

typedef struct {
  int64_t unknowns;         /* (2^L - 1)^d */
  int levels, split;        /* split: levels on the GPU */
  fd_split_costs split_costs; /* --split auto on CUDA: the measured constants (measured = 1);
                                 kept across solves, like the fields above */
  int iterations, converged;
  double res0, res, rate;   /* 2-norms of the h^2-scaled residual; average reduction */
  double t_setup, t_solve;  /* seconds; t_solve = time to solution (no setup, no output copy) */
  /* seconds per phase, from the hierarchy's timers (mg/mg.h): smoothing
   * (with the fused correction or interpolation), residuals (with the fused
   * residual + restriction), transfers, the coarsest solve, copies across the
   * split; the outer residual norms; t_krylov: CG's time outside the cycles
   * and norms (operator, vector work), 0 for the V-cycle iteration and FMG */
  double t_smooth, t_residual, t_transfer, t_coarse, t_comm, t_norm, t_krylov, t_fft, t_plan;
  double bytes_host, bytes_device;
} fd_stats;

typedef struct fd_solver_s *fd_solver;

void fd_config_default(fd_config *cfg);
/* Replaces FD_SWEEPS_DEFAULT in pre/post and FD_SOR_DEFAULT in sor with the solver's defaults. */
void fd_config_resolve(fd_config *cfg);
/* Checks every field; HPMG_ERR_ARG with a message naming the field otherwise. */
hpmg_error fd_config_check(const fd_config *cfg);
/* Bytes the solver would allocate on the host and on the device. */
hpmg_error fd_memory_estimate(const fd_config *cfg, double *host_bytes, double *device_bytes);
/* The split `auto` picks (documented in docs/fd.md): the level split that
 * minimizes a per-visit cost model with the constants of fd_split_costs.
 * fd_split_costs_default: order-of-magnitude constants of an H100/H200 node. */
void fd_split_costs_default(fd_split_costs *c);
/* Measures the constants on this machine (GPU parts: fd_cuda_calibrate);
 * about 0.1 s. Without a GPU, HPMG_ERR_BACKEND. */
hpmg_error fd_split_calibrate(fd_split_costs *c);
int fd_split_model(int dim, int refine, const fd_split_costs *c);
/* fd_split_model with the default constants (memory estimates). */
int fd_split_auto(int dim, int refine);
hpmg_error fd_solver_create(const fd_config *cfg, fd_solver *s);
void fd_solver_destroy(fd_solver *s);
/* b: h^2-scaled right-hand side over (n+1)^d points, NULL = the built-in one
 * (exact solution prod sin(pi x_i)); x: solution out. Zero initial guess.
 * Returns HPMG_ERR_NOT_CONVERGED (x = last iterate) if tol is not reached in
 * maxit iterations (FMG and FFT never return it). */
hpmg_error fd_solver_solve(fd_solver s, const double *b, double *x);
void fd_solver_get_stats(fd_solver s, fd_stats *st);

/* The built-in right-hand side h^2 d pi^2 prod sin(pi x_i), in double. */
void fd_rhs_sine(int dim, int64_t n, double *b);
/* Errors of x against prod sin(pi x_i): l2h = sqrt(h^d sum e^2) (discrete L2,
 * the paper's FFT column), rms = sqrt(sum e^2 / (n+1)^d) (its FMG columns),
 * maxerr = max |e|. */
void fd_error_norms(int dim, int64_t n, const double *x, double *l2h, double *rms, double *maxerr);
/* The same for x over the (n-1)^d interior points only (the public API's layout). */
void fd_error_norms_interior(int dim, int64_t n, const double *x, double *l2h, double *rms, double *maxerr);
/* ||b - A x||_2 in double (x, b as above). */
double fd_residual_norm_host(int dim, int64_t n, const double *x, const double *b);

#endif
