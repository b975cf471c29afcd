/* Peak double-precision throughput of one core for each instruction set
 * this processor runs: independent chains of vector multiply-adds (enough
 * of them to cover the FMA latency), counted as 2 flops each. The operator
 * benchmark (op_bench) sets its GFLOP/s against these figures. Second
 * figure: the same with one operand of every multiply-add loaded from L1
 * (gflops_l1_load), the bound of a kernel that loads a vector per
 * multiply-add.
 * usage: cpu_peak [REPEAT]   (run with one thread; prints isa=... gflops=... gflops_l1_load=...) */
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

/* The same chains, each multiply-add taking one vector loaded from an
 * 8 KiB buffer (in L1) as its operand: the rate a kernel with a load per
 * multiply-add (the operator's stages, laplace_kernels.inc) can reach at
 * best. n rounds over the buffer. */
#define LOAD_BODY(VB, NA)                                                 \
  typedef double v __attribute__((vector_size(VB)));                     \
  enum { NV = 8192 / VB };                                                \
  static v buf[NV];                                                       \
  for (int j = 0; j < NV; j++) buf[j] = (v){0} + 1e-9 * j;                \
  v a[NA], m = (v){0} + 1.0000001;                                        \
  for (int i = 0; i < NA; i++) a[i] = (v){0} + i;                         \
  for (long it = 0; it < n; it++) {                                       \
    for (int j = 0; j + NA <= NV; j += NA) {                              \
      _Pragma("GCC unroll 32") for (int i = 0; i < NA; i++) a[i] += m * buf[j + i]; \
    }                                                                     \
    __asm__("" ::: "memory");                                             \
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
  double (*ld)(long n); /* LOAD_BODY: rounds over 8 KiB */
} peak_case;

#if defined(__x86_64__)
__attribute__((target("avx512f"))) static double peak_avx512(long n) { PEAK_BODY(64, 24) }
__attribute__((target("avx2,fma"))) static double peak_avx2(long n) { PEAK_BODY(32, 12) }
static double peak_sse2(long n) { PEAK_BODY(16, 12) } /* no FMA: a multiply and an add */
__attribute__((target("avx512f"))) static double load_avx512(long n) { LOAD_BODY(64, 16) }
__attribute__((target("avx2,fma"))) static double load_avx2(long n) { LOAD_BODY(32, 8) }
static double load_sse2(long n) { LOAD_BODY(16, 8) }
#else
static double peak_base(long n) { PEAK_BODY(16, 24) } /* NEON: 32 registers */
static double load_base(long n) { LOAD_BODY(16, 16) }
#endif

/* the best GFLOP/s of rep calls fn(n), each n rounds of flops; the results summed into *sink */
static double best_gflops(double (*fn)(long), long n, double flops, int rep, double *sink) {
  double best = 0;
  for (int r = 0; r < rep; r++) {
    const double t = now();
    *sink += fn(n);
    const double gf = (double)n * flops / (now() - t) * 1e-9;
    if (gf > best) best = gf;
  }
  return best;
}

int main(int argc, char **argv) {
  const int rep = argc > 1 ? atoi(argv[1]) : 3;
#if defined(__x86_64__)
  __builtin_cpu_init();
  peak_case cases[] = {{"avx512", __builtin_cpu_supports("avx512f"), peak_avx512, 64, 24, load_avx512},
                       {"avx2", __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"), peak_avx2, 32, 12,
                        load_avx2},
                       {"sse2", 1, peak_sse2, 16, 12, load_sse2}};
#else
  peak_case cases[] = {{"neon", 1, peak_base, 16, 24, load_base}};
#endif
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    if (!cases[i].runs) continue;
    const long n = 400000000L / cases[i].vbytes * 8 / cases[i].chains;
    const int vecs = 8192 / cases[i].vbytes; /* LOAD_BODY's vectors per round */
    const long nl = n * cases[i].chains / vecs; /* the same multiply-adds, a loaded operand each */
    double sink = 0;
    const double best = best_gflops(cases[i].fn, n, (double)cases[i].chains * cases[i].vbytes / 4, rep, &sink);
    const double bestl = best_gflops(cases[i].ld, nl, (double)vecs * cases[i].vbytes / 4, rep, &sink);
    printf("isa=%s vector_bytes=%d gflops=%.1f gflops_l1_load=%.1f (checksum %.3g)\n", cases[i].isa, cases[i].vbytes,
           best, bestl, sink);
  }
  return 0;
}
