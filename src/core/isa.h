/* CPU kernels per instruction set, chosen at run time.
 *
 * Every source file named *_kernels.c holds CPU kernels only and is compiled
 * once per instruction set of the build (HPMG_ISAS in CMakeLists.txt; x86-64:
 * avx512 = x86-64-v4, avx2 = x86-64-v3, sse2 = x86-64, plus native with
 * HPMG_NATIVE; aarch64: neon), with HPMG_ISA defined to that name. Each such
 * compilation exports its kernel tables under the name's suffix
 * (HPMG_ISA_DEFINE), sized by core/simd.h for that instruction set. Callers
 * take the table of the instruction set chosen once at library start
 * (name_select() from HPMG_ISA_TABLE): the best one this processor runs,
 * or the one the environment variable HPMG_ISA or hpmg_set_cpu_isa() names.
 */
#ifndef HPMG_CORE_ISA_H
#define HPMG_CORE_ISA_H

#include "core/core.h"
#include "hpmg_isa_list.h" /* generated: HPMG_ISA_COUNT, HPMG_ISA_FOREACH(M, ...) */

#ifdef __cplusplus
extern "C" {
#endif

/* What a compiled variant is (src/core/isa_kernels.c, one per variant). */
typedef struct {
  const char *name;  /* the variant: native, avx512, avx2, sse2, neon, generic */
  const char *level; /* the instruction set the compiler targeted (native: what it found) */
  int vbytes;        /* bytes per explicit SIMD vector */
  int vregs;         /* vector registers the blocking is fitted to */
  int fma;           /* fused multiply-add: -ffp-contract=fast contracts a*b+c */
} hpmg_isa_info;

/* Index of the variant in use (0 .. HPMG_ISA_COUNT-1). */
int hpmg_isa_index(void);
/* Variant i's description, and whether this processor can run it. */
const hpmg_isa_info *hpmg_isa_get(int i);
int hpmg_isa_runs(int i);
/* Select a variant by name ("auto": the best this processor runs). For
 * tests and benchmarks; not while kernels run. */
hpmg_error hpmg_isa_select(const char *name);
/* An invalid HPMG_ISA found at library start, as an error (entry points
 * call this before any work); HPMG_SUCCESS otherwise. */
hpmg_error hpmg_isa_check_env(void);

#ifdef __cplusplus
}
#define HPMG_ISA_LINKAGE_ extern "C"
#else
#define HPMG_ISA_LINKAGE_ extern
#endif

#define HPMG_ISA_CAT_(a, b) a##_##b
#define HPMG_ISA_CAT(a, b) HPMG_ISA_CAT_(a, b)
#define HPMG_ISA_EXTERN_(isa, type, name) HPMG_ISA_LINKAGE_ const type name##_##isa;
#define HPMG_ISA_ADDR_(isa, type, name) &name##_##isa,

/* Declares `const type name_<isa>` of every variant and
 *   const type *name_select(void)  the table of the variant in use
 *   const type *name_of(int i)     variant i's table (tests) */
#define HPMG_ISA_TABLE(type, name)                                                        \
  HPMG_ISA_FOREACH(HPMG_ISA_EXTERN_, type, name)                                          \
  static inline const type *name##_of(int i) {                                            \
    static const type *const tables_[HPMG_ISA_COUNT] = {                                  \
        HPMG_ISA_FOREACH(HPMG_ISA_ADDR_, type, name)};                                    \
    return tables_[i];                                                                    \
  }                                                                                       \
  static inline const type *name##_select(void) { return name##_of(hpmg_isa_index()); }

/* In a kernel source: the definition of this variant's table `name`. */
#ifdef HPMG_ISA
#define HPMG_ISA_DEFINE(name) HPMG_ISA_CAT(name, HPMG_ISA)
#endif

#endif
