/* Core services shared by every layer: error codes and messages, aligned
 * allocation with memory accounting, wall-clock timers. */
#ifndef HPMG_CORE_H
#define HPMG_CORE_H

#include <stddef.h>
#include <stdint.h>
#include "hpmg.h"

/* Storage precision of vectors and kernels. */
typedef enum { HPMG_REAL_DOUBLE = 0, HPMG_REAL_FLOAT = 1 } hpmg_real;
static inline size_t hpmg_real_size(hpmg_real r) { return r == HPMG_REAL_FLOAT ? 4 : 8; }

/* Record an error message (printf-style) for hpmg_last_error() and return code. */
hpmg_error hpmg_error_set(hpmg_error code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Propagate a failure: evaluate an hpmg_error expression, return it if non-zero. */
#define HPMG_CALL(expr)                                                        \
  do {                                                                         \
    hpmg_error hpmg_call_err_ = (expr);                                        \
    if (hpmg_call_err_ != HPMG_SUCCESS) return hpmg_call_err_;                 \
  } while (0)

/* Fail with an argument error unless cond holds. */
#define HPMG_CHECK_ARG(cond, ...)                                              \
  do {                                                                         \
    if (!(cond)) return hpmg_error_set(HPMG_ERR_ARG, __VA_ARGS__);             \
  } while (0)

/* 64-byte aligned allocation; on failure sets HPMG_ERR_MEMORY with the size.
 * From 8 MiB on, the whole 2 MiB pages inside are marked for transparent huge
 * pages (memory.c; HPMG_HUGE_PAGES=0 turns it off). */
hpmg_error hpmg_malloc(size_t bytes, void *ptr_out);
hpmg_error hpmg_calloc(size_t bytes, void *ptr_out);
void hpmg_free(void *ptr_in_out); /* takes a pointer to the pointer; sets it NULL */

/* Per-thread scratch kept across the calls of a CPU kernel, owned by the
 * object the kernel applies (an operator, a transfer, the FD line smoother):
 * one 64-byte aligned block per thread. Not a buffer allocated per call: a
 * malloc of more than glibc's trim threshold (128 KiB) grows the heap and
 * gives it back on free, so every call faults its pages in again (2D Q4 on
 * 0.07e6 unknowns, AVX-512: twice the time of the application on an AMD EPYC
 * (Zen 5) VM). */
typedef struct {
  void *p;
  size_t bytes; /* per thread, a multiple of 64 */
  int threads;
} hpmg_scratch;
/* At least `bytes` per thread for omp_get_max_threads() threads; a no-op when
 * s holds that already. Inside a parallel region it does nothing (s is a
 * cache of the object it belongs to, not thread-safe): every call then
 * allocates its own. HPMG_ERR_MEMORY only where the allocation failed (s
 * stays empty; kernels may go on, each call allocating its own). */
hpmg_error hpmg_scratch_reserve(hpmg_scratch *s, size_t bytes);
/* The calling thread's 64-byte aligned block of at least `bytes`, holding what
 * the last call left; where s has none for it (a thread beyond those
 * reserved, too few bytes, or a parallel region nested in another: the kernel
 * called from several threads of the caller's) a new allocation, also
 * returned in *own for the caller to free (*own is NULL otherwise: free(*own)
 * always). Never NULL: where that allocation fails, the process stops (a
 * message on stderr, then abort()), since the kernels that call it return no
 * error and the memory ran out in the middle of one. */
void *hpmg_scratch_thread(const hpmg_scratch *s, size_t bytes, void **own);
void hpmg_scratch_free(hpmg_scratch *s);

/* Bytes of memory the OS reports as available (MemAvailable), or 0 if unknown. */
uint64_t hpmg_memory_available(void);
/* Format a byte count as "12.3 GiB" into buf. */
const char *hpmg_format_bytes(double bytes, char *buf, size_t len);

double hpmg_wtime(void);

#endif
