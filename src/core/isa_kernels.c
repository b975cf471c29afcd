/* The description of one compiled variant of the CPU kernels (core/isa.h). */
#include "core/isa.h"
#include "core/simd.h"

#define HPMG_STR_(x) #x
#define HPMG_STR(x) HPMG_STR_(x)

const hpmg_isa_info HPMG_ISA_DEFINE(hpmg_isa_info) = {
    .name = HPMG_STR(HPMG_ISA), .level = HPMG_ISA_LEVEL, .vbytes = HPMG_VBYTES, .vregs = HPMG_VREGS,
    .fma = HPMG_HAS_FMA};
