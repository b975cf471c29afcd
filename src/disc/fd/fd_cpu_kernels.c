/* The OpenMP (host) backend of the FD kernel table: the stencil, smoother
 * and transfer kernels (fd_stencil.inc, fd_smoother.inc, fd_transfer.inc)
 * in double and float, compiled once per instruction set (core/isa.h). */
#include <math.h>
#include <omp.h>
#include "disc/fd/fd_stencil.h"

#define REAL double
#define FD_NAME(x) x##_d
#include "disc/fd/fd_stencil.inc"
#include "disc/fd/fd_smoother.inc"
#include "disc/fd/fd_transfer.inc"
#undef REAL
#undef FD_NAME
#define REAL float
#define FD_NAME(x) x##_f
#include "disc/fd/fd_stencil.inc"
#include "disc/fd/fd_smoother.inc"
#include "disc/fd/fd_transfer.inc"
#undef REAL
#undef FD_NAME

#define FD_CPU_OPS(S, REAL)                                                                     \
  static hpmg_error residual_##S(int dim, int64_t n, const void *u, const void *f, void *r) {    \
    fd_residual_##S(dim, n, (const REAL *)u, (const REAL *)f, (REAL *)r);                        \
    return HPMG_SUCCESS;                                                                         \
  }                                                                                              \
  static hpmg_error residual_norm_##S(int dim, int64_t n, const void *u, const void *f,          \
                                      double *nrm) {                                             \
    *nrm = fd_residual_norm_##S(dim, n, (const REAL *)u, (const REAL *)f);                       \
    return HPMG_SUCCESS;                                                                         \
  }                                                                                              \
  static hpmg_error apply_##S(int dim, int64_t n, const void *u, void *y) {                      \
    fd_apply_##S(dim, n, (const REAL *)u, (REAL *)y);                                            \
    return HPMG_SUCCESS;                                                                         \
  }                                                                                              \
  static hpmg_error smooth_##S(int dim, int64_t n, fd_smoother_kind kind, double omega,          \
                               int sweeps, int backward, void **u, const void *f, void **tmp) {  \
    for (int s = 0; s < sweeps; s++) {                                                           \
      switch (kind) {                                                                            \
      case FD_SMOOTH_JACOBI: {                                                                   \
        fd_jacobi_##S(dim, n, omega, (const REAL *)*u, (const REAL *)f, (REAL *)*tmp);           \
        void *t = *u; *u = *tmp; *tmp = t;                                                       \
      } break;                                                                                   \
      case FD_SMOOTH_RBGS: fd_rbgs_##S(dim, n, omega, backward, (REAL *)*u, (const REAL *)f); break;    \
      case FD_SMOOTH_MCGS: fd_mcgs_##S(dim, n, omega, backward, (REAL *)*u, (const REAL *)f); break;    \
      }                                                                                          \
    }                                                                                            \
    return HPMG_SUCCESS;                                                                         \
  }                                                                                              \
  static hpmg_error restrict_##S(int dim, int64_t nf, const void *rf, void *fc) {                \
    fd_restrict_##S(dim, nf, (const REAL *)rf, (REAL *)fc);                                      \
    return HPMG_SUCCESS;                                                                         \
  }                                                                                              \
  static hpmg_error prolong_##S(int dim, int64_t nf, const void *uc, void *uf, int add) {        \
    fd_prolong_##S(dim, nf, (const REAL *)uc, (REAL *)uf, add);                                  \
    return HPMG_SUCCESS;                                                                         \
  }                                                                                              \
  static hpmg_error prolong_cubic_##S(int dim, int64_t nf, const void *uc, void *uf) {          \
    fd_prolong_cubic_##S(dim, nf, (const REAL *)uc, (REAL *)uf);                                 \
    return HPMG_SUCCESS;                                                                         \
  }

#define FD_CPU_OPS_TABLE(S, PREC)                                                                \
  {"cpu", PREC, residual_##S, residual_norm_##S, apply_##S, smooth_##S, restrict_##S, NULL, NULL,  \
   prolong_##S, prolong_cubic_##S, NULL, NULL}

FD_CPU_OPS(d, double)
FD_CPU_OPS(f, float)

const hpmg_fd_cpu_ops HPMG_ISA_DEFINE(hpmg_fd_cpu_ops) = {
    {FD_CPU_OPS_TABLE(d, FD_DOUBLE), FD_CPU_OPS_TABLE(f, FD_FLOAT)}};
