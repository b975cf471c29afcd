/* The vertex-patch smoother's sweeps (patch_kernels.inc) with their local
 * solvers (fdm_kernels.inc) in double and float, compiled once per
 * instruction set (core/isa.h). The local solvers exist twice per
 * precision: on one patch (scalar data) and on HPMG_VBYTES / sizeof(REAL)
 * patches at once, one per SIMD lane (paper 004 Sec. 4: the data arrays of
 * the patches interleaved lane by lane, [node][lane], so every contraction
 * is a full-width vector operation whatever the degree). */
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include "core/simd.h"
#include "disc/qk/patch_impl.h"

typedef double patch_vd __attribute__((vector_size(HPMG_VBYTES)));
typedef float patch_vf __attribute__((vector_size(HPMG_VBYTES)));
#define PATCH_VL_D ((int)(HPMG_VBYTES / sizeof(double)))
#define PATCH_VL_F ((int)(HPMG_VBYTES / sizeof(float)))

#define PATCH_CAT(a, b) PATCH_CAT_(a, b)
#define PATCH_CAT_(a, b) a##_##b
#define FDM_CAT(a, b) FDM_CAT_(a, b)
#define FDM_CAT_(a, b) a##_##b
#define FDM_API static __attribute__((unused))

/* General boxes: the factors of PATCH_VL different patches interleaved lane
 * by lane, and the shape fields the fdm kernels read. */
typedef struct { HPMG_FDM_DATA_FIELDS(patch_vd) } patch_lanes_vd;
typedef struct { HPMG_FDM_DATA_FIELDS(patch_vf) } patch_lanes_vf;
typedef struct {
  int dim, k, m, n, nloc, nclosed;
  double lambda;
  patch_lanes_vd lanes;
} patch_fdm_lanes_d;
typedef struct {
  int dim, k, m, n, nloc, nclosed;
  double lambda;
  patch_lanes_vf lanes;
} patch_fdm_lanes_f;

/* fdm kernels: d1/f1 one patch, dv/fv one patch per lane (shared factors),
 * dl/fl one patch per lane with its own factors */
#define REAL double
#define FDM_DATA dbl
#define FDM_DATA_T hpmg_fdm_data_d
#define FDM_SFX d1
#include "fdm_kernels.inc"
#undef FDM_SFX
#define VAL patch_vd
#define FDM_SFX dv
#include "fdm_kernels.inc"
#undef FDM_SFX
#undef FDM_DATA
#undef FDM_DATA_T
#define FAC patch_vd
#define FDM_T patch_fdm_lanes_d
#define FDM_DATA lanes
#define FDM_DATA_T patch_lanes_vd
#define FDM_SFX dl
#include "fdm_kernels.inc"
#undef FAC
#undef FDM_T
#undef VAL
#undef FDM_SFX
#undef REAL
#undef FDM_DATA
#undef FDM_DATA_T
#define REAL float
#define FDM_DATA flt
#define FDM_DATA_T hpmg_fdm_data_f
#define FDM_SFX f1
#include "fdm_kernels.inc"
#undef FDM_SFX
#define VAL patch_vf
#define FDM_SFX fv
#include "fdm_kernels.inc"
#undef FDM_SFX
#undef FDM_DATA
#undef FDM_DATA_T
#define FAC patch_vf
#define FDM_T patch_fdm_lanes_f
#define FDM_DATA lanes
#define FDM_DATA_T patch_lanes_vf
#define FDM_SFX fl
#include "fdm_kernels.inc"
#undef FAC
#undef FDM_T
#undef VAL
#undef FDM_SFX
#undef REAL
#undef FDM_DATA
#undef FDM_DATA_T

#define REAL double
#define PATCH_SFX d
#define PATCH_INV inv_d
#define PATCH_VEC patch_vd
#define PATCH_VL PATCH_VL_D
#define PATCH_VFN(name) name##_dv
#define PATCH_SFN(name) name##_d1
#define PATCH_DINV(f, bd, dinv) hpmg_fdm_view_dinv_d((f), (dinv))
#define PATCH_LFN(name) name##_dl
#define PATCH_LANES_T patch_fdm_lanes_d
#define PATCH_FAC fac_d
#define PATCH_FDM_DATA_T hpmg_fdm_data_d
#include "patch_kernels.inc"

#define REAL float
#define PATCH_SFX f
#define PATCH_INV inv_f
#define PATCH_VEC patch_vf
#define PATCH_VL PATCH_VL_F
#define PATCH_VFN(name) name##_fv
#define PATCH_SFN(name) name##_f1
#define PATCH_DINV(f, bd, dinv) hpmg_fdm_view_dinv_f((f), (bd), (dinv))
#define PATCH_LFN(name) name##_fl
#define PATCH_LANES_T patch_fdm_lanes_f
#define PATCH_FAC fac_f
#define PATCH_FDM_DATA_T hpmg_fdm_data_f
#include "patch_kernels.inc"

const hpmg_patch_kernels HPMG_ISA_DEFINE(hpmg_patch_kernels) = {
    .sweep = {patch_sweep_d, patch_sweep_f},
    .box_sweep = {box_sweep_d, box_sweep_f},
    .local_residual = {patch_local_residual_d, patch_local_residual_f},
    .local_correction = {patch_local_correction_d, patch_local_correction_f},
    .vl = {PATCH_VL_D, PATCH_VL_F},
};
