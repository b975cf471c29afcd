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

/* 64-byte aligned allocation; on failure sets HPMG_ERR_MEMORY with the size. */
hpmg_error hpmg_malloc(size_t bytes, void *ptr_out);
hpmg_error hpmg_calloc(size_t bytes, void *ptr_out);
void hpmg_free(void *ptr_in_out); /* takes a pointer to the pointer; sets it NULL */

/* Bytes of memory the OS reports as available (MemAvailable), or 0 if unknown. */
uint64_t hpmg_memory_available(void);
/* Format a byte count as "12.3 GiB" into buf. */
const char *hpmg_format_bytes(double bytes, char *buf, size_t len);

double hpmg_wtime(void);

#endif
