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
/* vectors of y-lines per x-stage group (laplace_kernels.inc): 2 with 32-
 * and 64-byte vectors, 4 with 16-byte ones. One thread, best of interleaved
 * runs on the AVX-512 Xeon (2026-11-26): AVX-512 double 2D Q4 L6 0.217 ms
 * at 4 against 0.169 at 2, 2D Q8 L5 0.264 / 0.213, 3D 0.95-1.01x; AVX2
 * double 2D Q4 L6 0.200 / 0.178, 3D 0.97-1.03x; SSE2 1.01-1.04x slower at 2.
 * (A group of 4 64-byte vectors is 32 lines, a 2D tile 16: half of every
 * transposed row unused, three such arrays of 196 KB at 2D Q4 L6.) */
#ifndef LAP_XV
#if HPMG_VBYTES >= 32
#define LAP_XV 2
#else
#define LAP_XV 4
#endif
#endif

/* vectors of lines per x-block pass (laplace_kernels.inc: xblock) and the
 * most block rows per pass: LAP_XMR LAP_XNR accumulators, LAP_XNR
 * references, LAP_XNR loaded vectors and a broadcast coefficient fit the
 * register file (5 rows with 16 registers, 12 with 32) */
#ifndef LAP_XNR
#define LAP_XNR (LAP_XV < 2 ? LAP_XV : 2)
#endif
#ifndef LAP_XMR
#define LAP_XMR ((HPMG_VREGS - 2 * LAP_XNR - 1) / LAP_XNR < 12 ? (HPMG_VREGS - 2 * LAP_XNR - 1) / LAP_XNR : 12)
#endif

/* lines per y-stage block in 3D (laplace_kernels.inc: contract_yb): 3 LAP_YG
 * vectors, two loaded sources and two broadcast coefficients fit the register
 * file (3 lines with 16 registers, 8 with 32) */
#ifndef LAP_YG
#define LAP_YG ((HPMG_VREGS - 6) / 3 < 8 ? (HPMG_VREGS - 6) / 3 : 8)
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
