/* Minimal assertion helpers for hpmg tests: count failures, print context. */
#ifndef HPMG_TEST_CHECK_H
#define HPMG_TEST_CHECK_H
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int check_failures = 0, check_count = 0;

#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    check_count++;                                                             \
    if (!(cond)) {                                                             \
      check_failures++;                                                        \
      printf("FAIL %s:%d: ", __FILE__, __LINE__);                              \
      printf(__VA_ARGS__);                                                     \
      printf("\n");                                                            \
    }                                                                          \
  } while (0)

#define CHECK_OK(expr)                                                         \
  do {                                                                         \
    hpmg_error e_ = (expr);                                                    \
    CHECK(e_ == HPMG_SUCCESS, "%s failed: %s", #expr, hpmg_last_error());     \
    if (e_) return check_report();                                             \
  } while (0)

/* |a-b| <= tol * max(1, scale) */
#define CHECK_CLOSE(a, b, tol, scale, what)                                    \
  CHECK(fabs((a) - (b)) <= (tol) * fmax(1.0, (scale)), "%s: %.17g vs %.17g (diff %.3g, tol %.3g)", what, \
        (double)(a), (double)(b), fabs((a) - (b)), (tol) * fmax(1.0, (scale)))

static inline int check_report(void) {
  printf("%d checks, %d failed\n", check_count, check_failures);
  return check_failures ? 1 : 0;
}

/* deterministic random numbers in [-1,1) */
static unsigned long long check_rng = 12345;
static inline double check_rand(void) {
  check_rng = check_rng * 6364136223846793005ull + 1442695040888963407ull;
  return 2.0 * (double)(check_rng >> 11) / 9007199254740992.0 - 1.0;
}
#endif
