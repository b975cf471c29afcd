/* What the environment asks of the unit tests' degree sweeps.
 * HPMG_TEST_MAX_DEGREE=K caps every sweep over the polynomial degree at K:
 * make test-arm runs the aarch64 unit tests under qemu-user, about 40 times
 * slower than natively, with K = 4 (every kernel path is reached from k = 1
 * on: vector chunks, their tails, lines shorter than a vector). */
#ifndef HPMG_TEST_ENV_H
#define HPMG_TEST_ENV_H
#include <stdlib.h>

static inline int test_max_degree(int kmax) {
  const char *s = getenv("HPMG_TEST_MAX_DEGREE");
  const int cap = s ? atoi(s) : 0;
  return cap > 0 && cap < kmax ? cap : kmax;
}

/* HPMG_TEST_EMULATED=1: the tests run under an emulator (make test-arm:
 * qemu-user), whose /proc/self/smaps is made up; the checks of what the
 * kernel did with the memory are skipped. */
static inline int test_emulated(void) {
  const char *s = getenv("HPMG_TEST_EMULATED");
  return s && atoi(s) > 0;
}

#endif
