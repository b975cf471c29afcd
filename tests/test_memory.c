/* The core's allocations (core.h): the whole 2 MiB pages of large blocks
 * marked for transparent huge pages, and their switch; the kernels' per-thread
 * scratch where its own allocation fails (scratch-abort). */
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include "check.h"
#include "core/core.h"
#include "test_env.h"

#ifdef __linux__
/* what /proc/self/smaps says of the mappings that hold [p, p + bytes): the
 * kB of huge pages backing them (*kb), and whether all are marked for them
 * (VmFlags "hg", madvise(MADV_HUGEPAGE)); 0 where it cannot be read */
static int smaps_of(const void *p, size_t bytes, long *kb, int *marked) {
  FILE *f = fopen("/proc/self/smaps", "r");
  if (!f) return 0;
  char line[512];
  int in = 0, seen = 0;
  *kb = 0;
  *marked = 1;
  const uintptr_t a = (uintptr_t)p, e = a + bytes;
  while (fgets(line, sizeof line, f)) {
    unsigned long lo, hi;
    long v;
    if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
      in = lo < e && hi > a;
      seen |= in;
    } else if (in && sscanf(line, "AnonHugePages: %ld kB", &v) == 1) {
      *kb += v;
    } else if (in && !strncmp(line, "VmFlags:", 8)) {
      *marked &= strstr(line, " hg") != NULL;
    }
  }
  fclose(f);
  return seen;
}

/* whether the kernel gives marked memory huge pages at its first touch */
static int thp_marked(void) {
  char en[128] = {0}, df[128] = {0};
  FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
  if (!f) return 0;
  if (!fgets(en, sizeof en, f)) en[0] = 0;
  fclose(f);
  f = fopen("/sys/kernel/mm/transparent_hugepage/defrag", "r");
  if (f) {
    if (!fgets(df, sizeof df, f)) df[0] = 0;
    fclose(f);
  }
  /* enabled: madvise or always; defrag: a fault in marked memory compacts if it must */
  return (strstr(en, "[madvise]") || strstr(en, "[always]")) &&
         (strstr(df, "[madvise]") || strstr(df, "[always]") || strstr(df, "[defer+madvise]"));
}

#endif

#ifdef __linux__
/* the whole 2 MiB pages inside [p, p + bytes) */
static int interior(const void *p, size_t bytes, const void **a, size_t *len) {
  const uintptr_t h = (uintptr_t)2 << 20, lo = ((uintptr_t)p + h - 1) / h * h, hi = ((uintptr_t)p + bytes) / h * h;
  *a = (const void *)lo;
  *len = hi > lo ? hi - lo : 0;
  return hi > lo;
}
#endif

/* hpmg_malloc(bytes) zeroed by hpmg_calloc and writable to its end; on Linux
 * (not emulated) its whole 2 MiB pages marked for huge pages or not, and, if
 * fresh (pages never touched before: a range freed and handed out again
 * keeps its small pages), backed by them where the kernel gives marked
 * memory huge pages */
static void check_block(size_t bytes, int want_marked, int fresh, const char *what) {
  unsigned char *p = NULL;
  CHECK(hpmg_calloc(bytes, &p) == HPMG_SUCCESS && p && (uintptr_t)p % 64 == 0, "%s: hpmg_calloc(%zu)", what, bytes);
  if (!p) return;
  size_t nz = 0;
  for (size_t j = 0; j < bytes; j++) nz += p[j] != 0;
  CHECK(nz == 0, "%s: hpmg_calloc(%zu): %zu nonzero bytes", what, bytes, nz);
  memset(p, 0x5a, bytes);
#ifdef __linux__
  const void *a;
  size_t len;
  long kb = 0;
  int marked = 0;
  if (test_emulated()) {
    printf("note: emulated (HPMG_TEST_EMULATED): %s: the kernel's view of the memory not checked\n", what);
  } else if (interior(p, bytes, &a, &len) && smaps_of(a, len, &kb, &marked)) {
    CHECK(marked == want_marked, "%s: the %zu MiB of whole 2 MiB pages %s VmFlags hg (madvise MADV_HUGEPAGE)", what,
          len >> 20, marked ? "carry" : "lack");
    if (fresh && want_marked && thp_marked())
      CHECK(kb >= 2048, "%s: no huge page after the first touch (AnonHugePages %ld kB), though transparent huge "
            "pages are on for marked memory", what, kb);
  } else if (bytes >= ((size_t)4 << 20)) {
    printf("note: %s: /proc/self/smaps unread: huge pages not checked\n", what);
  }
#endif
  hpmg_free(&p);
  CHECK(p == NULL, "%s: hpmg_free leaves the pointer set", what);
}

static void huge_pages(void) {
  const size_t mib = (size_t)1 << 20;
  /* below 8 MiB, and with HPMG_HUGE_PAGES=0, not marked; from 8 MiB on,
   * marked (the unmarked before the marked: a freed block's range keeps its
   * mark, and the allocator hands it out again). The first marked block, 4
   * times larger than any before it, gets fresh pages. */
  check_block(1000, 0, 0, "1000 B");
  check_block(8 * mib - 64, 0, 0, "8 MiB - 64");
  setenv("HPMG_HUGE_PAGES", "0", 1);
  check_block(16 * mib, 0, 0, "16 MiB with HPMG_HUGE_PAGES=0");
  unsetenv("HPMG_HUGE_PAGES");
  check_block(64 * mib + 64, 1, 1, "64 MiB + 64");
  check_block(8 * mib, 1, 0, "8 MiB");
  check_block(8 * mib + 8, 1, 0, "8 MiB + 8");
  check_block(37 * mib + 4096 + 64, 1, 0, "37 MiB + 4160");
  check_block(16 * mib, 1, 0, "16 MiB after it");
}

/* `test_memory scratch-abort`: hpmg_scratch_thread where its own allocation
 * fails (core.h) stops the process with a message (abort), where a NULL
 * would crash the kernel later; ctest (test_memory_scratch_abort) passes on
 * the message. A process of its own, not a fork: qemu-user hangs in the
 * child of a fork. */
static int scratch_abort(void) {
  const struct rlimit none = {0, 0}; /* no core file of the abort */
  setrlimit(RLIMIT_CORE, &none);
  hpmg_scratch s = {0};
  void *own = NULL;
  void *p = hpmg_scratch_thread(&s, (size_t)1 << 63, &own); /* above PTRDIFF_MAX: malloc refuses it at once */
  printf("hpmg_scratch_thread returned %s\n", p ? "a block" : "NULL");
  return 1;
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "scratch-abort")) return scratch_abort();
  huge_pages();
  return check_report();
}
