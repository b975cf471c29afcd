/* The Kronecker-product transfer kernel (transfer_kernels.inc) in double and
 * float, compiled once per instruction set (core/isa.h). */
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "core/isa.h"
#include "core/simd.h"
#include "disc/qk/transfer.h"

#define REAL double
#define RSIZE 8
#define IREAL int64_t
#define SFX(name) name##_d
#define V val
#include "transfer_kernels.inc"
#define REAL float
#define RSIZE 4
#define IREAL int32_t
#define SFX(name) name##_f
#define V valf
#include "transfer_kernels.inc"

const hpmg_transfer_kernels HPMG_ISA_DEFINE(hpmg_transfer_kernels) = {.kron3 = {kron3_d, kron3_f}};
