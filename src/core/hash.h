#ifndef HPMG_CORE_HASH_H
#define HPMG_CORE_HASH_H
/* A pseudo-random number in [-1, 1) that is a function of a point and a seed
 * (a splitmix-style mix of the coordinates' bits): data that do not depend on
 * the order in which threads visit the points (a generator drawn from inside a
 * parallel loop does). Used for the CLI's --rhs random (seed 0) and the
 * tests' random right-hand sides. */
#include <string.h>

static inline double hpmg_hash_uniform(const double x[3], unsigned long long seed) {
  unsigned long long h = seed ^ 0x9E3779B97F4A7C15ull;
  for (int d = 0; d < 3; d++) {
    unsigned long long v;
    memcpy(&v, &x[d], sizeof v);
    h = (h ^ v) * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 31;
  }
  h *= 0x94D049BB133111EBull;
  h ^= h >> 29;
  return 2.0 * (double)(h >> 11) / 9007199254740992.0 - 1.0;
}
#endif
