/* The Q_k operator's CPU kernels (laplace_kernels.inc) in double and float,
 * compiled once per instruction set (core/isa.h). */
#include <stdlib.h>
#include <string.h>
#include "core/isa.h"
#include "core/simd.h"
#include "disc/qk/laplace.h"

/* vectors per register-blocked chunk of the z and y stages: 3 LAP_NB + 3
 * live vectors fit the register file (laplace_kernels.inc) */
#ifndef LAP_NB
#if HPMG_VREGS >= 32
#define LAP_NB 4
#else
#define LAP_NB 3
#endif
#endif
/* vectors of y-lines per x-stage group (laplace_kernels.inc) */
#ifndef LAP_XV
#define LAP_XV 4
#endif

#define REAL double
#define RSIZE 8 /* sizeof(REAL) for the preprocessor */
#define IREAL int64_t
#define SFX(name) name##_d
#define V val
#define DIA dia
#define DM dM
#define DK dK
#define SK sK
#define XC c
#include "laplace_kernels.inc"
#define REAL float
#define RSIZE 4
#define IREAL int32_t
#define SFX(name) name##_f
#define V valf
#define DIA diaf
#define DM dMf
#define DK dKf
#define SK sKf
#define XC cf
#include "laplace_kernels.inc"

const hpmg_laplace_kernels HPMG_ISA_DEFINE(hpmg_laplace_kernels) = {
    .kernel = {kernel_d, kernel_f},
    .inverse_diagonal = {dinv_d, dinv_f},
    .gauss_seidel = {gauss_seidel_d, gauss_seidel_f},
};
