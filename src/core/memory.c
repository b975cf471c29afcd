#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <omp.h>
#include <sys/mman.h>
#include "core.h"

/* The whole 2 MiB pages inside a block of at least HPMG_HUGE_MIN bytes (a
 * solver's vectors, an operator's tables) are marked for transparent huge
 * pages (Linux; in its madvise mode, the default of Debian and Ubuntu, only
 * marked memory gets them): a page fault per 2 MiB instead of per 4 KiB
 * where the memory is first touched. The block keeps its address: placed on
 * 2 MiB boundaries (presumably every vector's element i then falls in the
 * same cache sets), the solves on the 16-core Sapphire Rapids host took up
 * to 1.24x longer (docs/design-decisions.md). `hpmg solve`'s setup on 1.7e7
 * unknowns: 0.41-0.43x the time on an AMD EPYC (Zen 5) VM (2 threads),
 * 0.85-0.90x on that host (16 threads); the solves 1.01-1.12x and 0.96-1.05x
 * (bench/results/huge-pages). HPMG_HUGE_PAGES=0 in the environment turns it
 * off. */
#define HPMG_HUGE_PAGE ((uintptr_t)2 << 20)
#define HPMG_HUGE_MIN ((size_t)8 << 20)
static void advise_huge(void *p, size_t bytes) {
#ifdef MADV_HUGEPAGE
  if (bytes < HPMG_HUGE_MIN) return;
  const char *env = getenv("HPMG_HUGE_PAGES");
  if (env && !strcmp(env, "0")) return;
  const uintptr_t a = ((uintptr_t)p + HPMG_HUGE_PAGE - 1) / HPMG_HUGE_PAGE * HPMG_HUGE_PAGE,
                  e = ((uintptr_t)p + bytes) / HPMG_HUGE_PAGE * HPMG_HUGE_PAGE;
  if (e > a) (void)madvise((void *)a, e - a, MADV_HUGEPAGE); /* advice: where refused, 4 KiB pages as before */
#else
  (void)p, (void)bytes;
#endif
}

hpmg_error hpmg_malloc(size_t bytes, void *ptr_out) {
  void **p = (void **)ptr_out;
  *p = NULL;
  if (bytes == 0) bytes = 64;
  size_t rounded = (bytes + 63) / 64 * 64;
  if (rounded < bytes) return hpmg_error_set(HPMG_ERR_MEMORY, "allocation size overflow");
  *p = aligned_alloc(64, rounded);
  if (!*p) {
    char buf[32];
    return hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate %s",
                          hpmg_format_bytes((double)bytes, buf, sizeof buf));
  }
  advise_huge(*p, rounded);
  return HPMG_SUCCESS;
}

/* Zeroed by all threads, in the static blocks the vector loops use (1 MiB
 * chunks, contiguous per thread): the pages are faulted in in parallel and, on
 * several sockets, placed where they are used. A serial memset faulted every
 * page of a solver's vectors in one thread (2D Q4, 1.7e7 unknowns, 16 threads:
 * setup 1.8 s). */
hpmg_error hpmg_calloc(size_t bytes, void *ptr_out) {
  HPMG_CALL(hpmg_malloc(bytes, ptr_out));
  char *p = *(char **)ptr_out;
  const size_t chunk = (size_t)1 << 20;
  if (bytes < 4 * chunk) {
    memset(p, 0, bytes);
    return HPMG_SUCCESS;
  }
  const int64_t nc = (int64_t)((bytes + chunk - 1) / chunk);
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < nc; c++) {
    const size_t o = (size_t)c * chunk;
    memset(p + o, 0, o + chunk <= bytes ? chunk : bytes - o);
  }
  return HPMG_SUCCESS;
}

void hpmg_free(void *ptr_in_out) {
  void **p = (void **)ptr_in_out;
  free(*p);
  *p = NULL;
}

hpmg_error hpmg_scratch_reserve(hpmg_scratch *s, size_t bytes) {
  if (omp_get_level() > 0) return HPMG_SUCCESS; /* called from a caller's threads: s is not theirs to change */
  const int threads = omp_get_max_threads();
  bytes = (bytes + 63) / 64 * 64;
  if (s->p && s->bytes >= bytes && s->threads >= threads) return HPMG_SUCCESS;
  if (s->p && s->bytes > bytes) bytes = s->bytes;
  hpmg_scratch_free(s);
  if (bytes <= SIZE_MAX / (size_t)threads) s->p = aligned_alloc(64, bytes * (size_t)threads);
  if (!s->p) {
    char buf[32];
    return hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate per-thread scratch: %s for each of %d threads",
                          hpmg_format_bytes((double)bytes, buf, sizeof buf), threads);
  }
  s->bytes = bytes;
  s->threads = threads;
  return HPMG_SUCCESS;
}

void *hpmg_scratch_thread(const hpmg_scratch *s, size_t bytes, void **own) {
  const int t = omp_get_thread_num();
  *own = NULL;
  /* inside a caller's parallel region, thread t of several teams: not shared */
  if (s->p && t < s->threads && bytes <= s->bytes && omp_get_level() <= 1) return (char *)s->p + (size_t)t * s->bytes;
  *own = bytes <= SIZE_MAX - 63 ? aligned_alloc(64, bytes > 0 ? (bytes + 63) / 64 * 64 : 64) : NULL;
  if (!*own) { /* the kernels return no error: stop here with the reason, not at a NULL dereference */
    char buf[32];
    fprintf(stderr, "hpmg: out of memory in a CPU kernel: cannot allocate %s of per-thread scratch (thread %d)\n",
            hpmg_format_bytes((double)bytes, buf, sizeof buf), t);
    abort();
  }
  return *own;
}

void hpmg_scratch_free(hpmg_scratch *s) {
  free(s->p);
  s->p = NULL;
  s->bytes = 0;
  s->threads = 0;
}

uint64_t hpmg_memory_available(void) {
  FILE *f = fopen("/proc/meminfo", "r");
  if (!f) return 0;
  char line[256];
  uint64_t kb = 0;
  while (fgets(line, sizeof line, f)) {
    if (sscanf(line, "MemAvailable: %lu kB", (unsigned long *)&kb) == 1) break;
  }
  fclose(f);
  return kb * 1024;
}

const char *hpmg_format_bytes(double b, char *buf, size_t len) {
  const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int i = 0;
  while (b >= 1024 && i < 5) { b /= 1024; i++; }
  snprintf(buf, len, "%.1f %s", b, u[i]);
  return buf;
}
