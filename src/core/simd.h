/* SIMD width and register file of the instruction set a kernel source is
 * compiled for. Kernel sources (*_kernels.c, compiled once per instruction
 * set; see core/isa.h) size their explicit vector types and their register
 * blocking from these, so one source serves every processor:
 *   AVX-512:        64-byte vectors, 32 vector registers
 *   AVX/AVX2:       32-byte vectors, 16 registers
 *   NEON (aarch64): 16-byte vectors, 32 registers
 *   SSE2, other:    16-byte vectors, 16 registers */
#ifndef HPMG_CORE_SIMD_H
#define HPMG_CORE_SIMD_H

#if defined(__AVX512F__)
#define HPMG_VBYTES 64
#define HPMG_VREGS 32
#elif defined(__AVX__)
#define HPMG_VBYTES 32
#define HPMG_VREGS 16
#elif defined(__aarch64__)
#define HPMG_VBYTES 16
#define HPMG_VREGS 32
#else
#define HPMG_VBYTES 16
#define HPMG_VREGS 16
#endif

/* Whether the compiler fuses a * b + c into one rounding here: the target
 * has FMA and the code is optimized (contraction is an optimization pass;
 * an unoptimized build rounds the product and the sum separately). */
#if (defined(__FMA__) || defined(__aarch64__)) && defined(__OPTIMIZE__)
#define HPMG_HAS_FMA 1
#else
#define HPMG_HAS_FMA 0
#endif

/* a * b + c for scalars, as one fused multiply-add where the target has
 * one. Vector code's a * b + c contracts into the same instruction (one
 * product per sum, -ffp-contract=fast), but what the compiler fuses in
 * scalar loops (tails, one-patch paths) depends on how it unrolls and peels
 * them; kernels write their scalar sums with HPMG_FMA so that every path
 * and every variant computes bitwise the same. */
static inline double hpmg_fma_d(double a, double b, double c) { return HPMG_HAS_FMA ? __builtin_fma(a, b, c) : a * b + c; }
static inline float hpmg_fma_f(float a, float b, float c) { return HPMG_HAS_FMA ? __builtin_fmaf(a, b, c) : a * b + c; }
#define HPMG_FMA(a, b, c) _Generic((c), float: hpmg_fma_f, default: hpmg_fma_d)((a), (b), (c))

/* Widest vector of any variant: buffers shared by the variants (the patch
 * smoother's interleaved lanes) are laid out with this stride. */
#define HPMG_VBYTES_MAX 64

/* The name of the instruction-set level the compiler targets, for reports. */
#if defined(__AVX512F__)
#define HPMG_ISA_LEVEL "avx512"
#elif defined(__AVX2__)
#define HPMG_ISA_LEVEL "avx2"
#elif defined(__AVX__)
#define HPMG_ISA_LEVEL "avx"
#elif defined(__aarch64__)
#define HPMG_ISA_LEVEL "neon"
#elif defined(__SSE2__)
#define HPMG_ISA_LEVEL "sse2"
#else
#define HPMG_ISA_LEVEL "generic"
#endif

#endif
