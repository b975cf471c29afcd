/* Peak double-precision throughput of one core for each instruction set
 * this processor runs: independent chains of vector multiply-adds (enough
 * of them to cover the FMA latency), counted as 2 flops each. The operator
 * benchmark (op_bench) sets its GFLOP/s against these figures.
 * usage: cpu_peak [REPEAT]   (run with one thread; prints isa=... gflops=...) */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* NA accumulators of VB-byte vectors, n rounds of a = a * m + c each */
#define PEAK_BODY(VB, NA)                                                 \
  typedef double v __attribute__((vector_size(VB)));                     \
  v a[NA], m = (v){0} + 1.0000001, c = (v){0} + 1e-9;                     \
  for (int i = 0; i < NA; i++) a[i] = (v){0} + i;                         \
  for (long it = 0; it < n; it++) {                                       \
    _Pragma("GCC unroll 32") for (int i = 0; i < NA; i++) a[i] = a[i] * m + c; \
  }                                                                       \
  double s = 0;                                                           \
  for (int i = 0; i < NA; i++)                                            \
    for (int j = 0; j < VB / 8; j++) s += a[i][j];                        \
  return s;

typedef struct {
  const char *isa;
  int runs;
  double (*fn)(long n);
  int vbytes, chains;
} peak_case;

#if defined(__x86_64__)
__attribute__((target("avx512f"))) static double peak_avx512(long n) { PEAK_BODY(64, 24) }
__attribute__((target("avx2,fma"))) static double peak_avx2(long n) { PEAK_BODY(32, 12) }
static double peak_sse2(long n) { PEAK_BODY(16, 12) } /* no FMA: a multiply and an add */
#else
static double peak_base(long n) { PEAK_BODY(16, 24) } /* NEON: 32 registers */
#endif

int main(int argc, char **argv) {
  const int rep = argc > 1 ? atoi(argv[1]) : 3;
#if defined(__x86_64__)
  __builtin_cpu_init();
  peak_case cases[] = {{"avx512", __builtin_cpu_supports("avx512f"), peak_avx512, 64, 24},
                       {"avx2", __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"), peak_avx2, 32, 12},
                       {"sse2", 1, peak_sse2, 16, 12}};
#else
  peak_case cases[] = {{"neon", 1, peak_base, 16, 24}};
#endif
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    if (!cases[i].runs) continue;
    const long n = 400000000L / cases[i].vbytes * 8 / cases[i].chains;
    double best = 0, sink = 0;
    for (int r = 0; r < rep; r++) {
      const double t = now();
      sink += cases[i].fn(n);
      const double gf = (double)n * cases[i].chains * (cases[i].vbytes / 8) * 2 / (now() - t) * 1e-9;
      if (gf > best) best = gf;
    }
    printf("isa=%s vector_bytes=%d gflops=%.1f (checksum %.3g)\n", cases[i].isa, cases[i].vbytes, best, sink);
  }
  return 0;
}
