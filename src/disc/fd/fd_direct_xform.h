/* The per-thread work of the GPU direct FD solver, written once for the CUDA
 * kernels (src/disc/fd/cuda/fd_direct.cu) and for a host emulation of the
 * GPU solve in tests/test_fd_direct.c (FFTW's complex FFTs with cuFFT's
 * layouts in place of cuFFT), so the arithmetic and indexing the GPU does are
 * checked where no GPU is present:
 *  - the real trigonometric transforms through complex FFTs (cuFFT has no r2r
 *    kinds): per kind, which FFT of which length, the O(n) pre-processing
 *    (gather one staging entry from a line) and post-processing (one output
 *    value from the FFT's result);
 *  - the staging layout of a chunk of lines, the pointwise scaling and
 *    division (and the all-periodic fast path's division of the
 *    multi-dimensional D2Z output), and the tridiagonal solve of one line.
 *
 * FFT conventions (cuFFT = FFTW): forward e^{-2 pi i jk/L}, unnormalized;
 * Z2D (c2r) takes L/2+1 complex values, e^{+2 pi i jk/L}.
 *   kind  FFT  L       pre (staging entry t)                    post (output k)
 *   R2HC  D2Z  n       x_t                                      Re Z_k (2k <= n), Im Z_{n-k}
 *   HC2R  Z2D  n       r_t + i i_t (halfcomplex: i_t = x_{n-t})  y_k
 *   DST1  D2Z  2(n+1)  0, x_0..x_{n-1}, 0, -x_{n-1}..-x_0       -Im Z_{k+1}
 *   DCT1  D2Z  2(n-1)  x_0..x_{n-1}, x_{n-2}..x_1               Re Z_k
 *   DCT2  D2Z  2n      x_0..x_{n-1}, x_{n-1}..x_0               Re(e^{-i pi k/2n} Z_k)
 *   DST2  D2Z  2n      the same of (-1)^j x_j                   DCT2 value at n-1-k
 *   DCT3  Z2D  2n      x_t e^{i pi t/2n} (t < n), 0 (t = n)     y_k
 *   DST3  Z2D  2n      the same of x reversed                   (-1)^k y_k
 *   DCT4  Z2Z  2n      x_t e^{-i pi t/2n} (t < n), 0            2 Re(e^{-i pi (2k+1)/4n} Z_k)
 *   DST4  Z2Z  2n      the same of x reversed                   (-1)^k DCT4 value
 * (DST2/3/4 from DCT2/3/4: sin(pi (2j+1)(k+1)/2n) = (-1)^j cos(pi (2j+1)(n-1-k)/2n),
 * sin(pi (j+1)(2k+1)/2n) = (-1)^k cos(pi (n-1-j)(2k+1)/2n), and likewise for type 4.) */
#ifndef HPMG_FD_DIRECT_XFORM_H
#define HPMG_FD_DIRECT_XFORM_H

#include <math.h>
#include <stdint.h>
#include "disc/fd/fd_direct.h"

#ifdef __CUDACC__
#define FDD_HD static __host__ __device__ inline
#else
#define FDD_HD static inline
#endif

enum { FDD_D2Z = 0, FDD_Z2D = 1, FDD_Z2Z = 2 };

FDD_HD void fdd_sincospi(double x, double *s, double *c) {
#ifdef __CUDA_ARCH__
  sincospi(x, s, c);
#else
  *s = sin(3.14159265358979323846 * x);
  *c = cos(3.14159265358979323846 * x);
#endif
}

/* FFT length */
FDD_HD int64_t fdd_len(fd_direct_kind k, int64_t n) {
  switch (k) {
  case FDX_R2HC: case FDX_HC2R: return n;
  case FDX_DST1: return 2 * (n + 1);
  case FDX_DCT1: return 2 * (n - 1);
  default: return 2 * n;
  }
}
FDD_HD int fdd_fft(fd_direct_kind k) {
  switch (k) {
  case FDX_HC2R: case FDX_DCT3: case FDX_DST3: return FDD_Z2D;
  case FDX_DCT4: case FDX_DST4: return FDD_Z2Z;
  default: return FDD_D2Z;
  }
}
/* staging entries per line: the FFT's input length (real or complex) */
FDD_HD int64_t fdd_in_len(fd_direct_kind k, int64_t n) {
  const int64_t L = fdd_len(k, n);
  return fdd_fft(k) == FDD_Z2D ? L / 2 + 1 : L;
}
/* the FFT's output length (D2Z: L/2+1 complex; Z2D: L real; Z2Z: L complex) */
FDD_HD int64_t fdd_out_len(fd_direct_kind k, int64_t n) {
  const int64_t L = fdd_len(k, n);
  return fdd_fft(k) == FDD_D2Z ? L / 2 + 1 : L;
}

/* staging entry t (< fdd_in_len) of the line x[j * xs], j = 0..n-1:
 * *re (and *im for complex staging) */
FDD_HD void fdd_gather(fd_direct_kind kind, int64_t n, int64_t t, const double *x, int64_t xs, double *re,
                       double *im) {
  const int64_t L = fdd_len(kind, n);
  *re = 0;
  *im = 0;
  switch (kind) {
  case FDX_R2HC: *re = x[t * xs]; return;
  case FDX_DST1:
    if (t >= 1 && t <= n) *re = x[(t - 1) * xs];
    else if (t > n + 1) *re = -x[(L - t - 1) * xs];
    return;
  case FDX_DCT1: *re = x[(t < n ? t : L - t) * xs]; return;
  case FDX_DCT2: case FDX_DST2: {
    const int64_t j = t < n ? t : L - 1 - t;
    *re = x[j * xs];
    if (kind == FDX_DST2 && (j & 1)) *re = -*re;
    return;
  }
  case FDX_HC2R:
    *re = x[t * xs];
    if (t > 0 && 2 * t < n) *im = x[(n - t) * xs];
    return;
  case FDX_DCT3: case FDX_DST3: case FDX_DCT4: case FDX_DST4: {
    if (t >= n) return;
    const int rev = kind == FDX_DST3 || kind == FDX_DST4;
    const double v = x[(rev ? n - 1 - t : t) * xs];
    double s, c;
    fdd_sincospi((double)t / (double)(2 * n), &s, &c);
    *re = v * c;
    *im = kind == FDX_DCT3 || kind == FDX_DST3 ? v * s : -v * s;
    return;
  }
  }
}

/* output k (< n) from the FFT result: y real (Z2D) or Z complex as pairs
 * (D2Z, Z2Z), entry p at y[p * ys] / Z[2 p * ys], Z[2 p * ys + 1] */
FDD_HD double fdd_scatter(fd_direct_kind kind, int64_t n, int64_t k, const double *y, const double *Z, int64_t ys) {
#define FDD_ZR(p) Z[2 * (p) * ys]
#define FDD_ZI(p) Z[2 * (p) * ys + 1]
  switch (kind) {
  case FDX_R2HC: return 2 * k <= n ? FDD_ZR(k) : FDD_ZI(n - k);
  case FDX_DST1: return -FDD_ZI(k + 1);
  case FDX_DCT1: return FDD_ZR(k);
  case FDX_DCT2: case FDX_DST2: {
    const int64_t q = kind == FDX_DST2 ? n - 1 - k : k;
    double s, c;
    fdd_sincospi((double)q / (double)(2 * n), &s, &c);
    return c * FDD_ZR(q) + s * FDD_ZI(q);
  }
  case FDX_HC2R: return y[k * ys];
  case FDX_DCT3: return y[k * ys];
  case FDX_DST3: return (k & 1) ? -y[k * ys] : y[k * ys];
  case FDX_DCT4: case FDX_DST4: {
    double s, c;
    fdd_sincospi((double)(2 * k + 1) / (double)(4 * n), &s, &c);
    const double v = 2 * (c * FDD_ZR(k) + s * FDD_ZI(k));
    return kind == FDX_DST4 && (k & 1) ? -v : v;
  }
  }
  return 0;
#undef FDD_ZR
#undef FDD_ZI
}


/* ---- lines of direction a in the compact array (x fastest) and the staging buffer */

/* data index of position t on line m of direction a; lines enumerate the
 * other indices, the lower fastest */
FDD_HD int64_t fdd_lidx(int a, int64_t n0, int64_t n1, int64_t m, int64_t t) {
  if (a == 0) return t + n0 * m;
  if (a == 1) return (m % n0) + n0 * (t + n1 * (m / n0));
  return m + n0 * n1 * t;
}
FDD_HD int64_t fdd_lstride(int a, int64_t n0, int64_t n1) { return a == 0 ? 1 : (a == 1 ? n0 : n0 * n1); }

/* thread e over (line mm < Mc of the chunk, position p < P): along x the
 * position is the fastest (a line is contiguous in the staging buffer), along
 * y and z the line (the staging buffer is then line-fastest, and so are the
 * data: unit stride across threads both sides) */
FDD_HD int fdd_split(int a, int64_t e, int64_t Mc, int64_t P, int64_t *mm, int64_t *p) {
  if (e >= Mc * P) return 0;
  if (a == 0) { *p = e % P; *mm = e / P; } else { *mm = e % Mc; *p = e / Mc; }
  return 1;
}
/* staging index of entry p of line mm; cuFFT's advanced layout: along x
 * stride 1, distance P; along y, z stride Mc, distance 1 */
FDD_HD int64_t fdd_sidx(int a, int64_t mm, int64_t p, int64_t Mc, int64_t P) { return a == 0 ? p + P * mm : mm + Mc * p; }

/* staging entry e of the chunk of lines m0..m0+Mc-1: real into A (D2Z),
 * complex pairs into B (Z2D) or into A (Z2Z) */
FDD_HD void fdd_gather_at(fd_direct_kind kind, int a, int64_t n0, int64_t n1, int64_t n, int64_t m0, int64_t Mc,
                          int64_t e, const double *x, double *A, double *B) {
  const int64_t P = fdd_in_len(kind, n);
  int64_t mm, t;
  if (!fdd_split(a, e, Mc, P, &mm, &t)) return;
  double re, im;
  fdd_gather(kind, n, t, x + fdd_lidx(a, n0, n1, m0 + mm, 0), fdd_lstride(a, n0, n1), &re, &im);
  const int64_t i = fdd_sidx(a, mm, t, Mc, P);
  const int fft = fdd_fft(kind);
  if (fft == FDD_D2Z) A[i] = re;
  else {
    double *C = fft == FDD_Z2D ? B : A;
    C[2 * i] = re;
    C[2 * i + 1] = im;
  }
}

/* output e (line mm, position k < n) from the FFT's output: real in A
 * (Z2D), complex pairs in B (D2Z) or in A (Z2Z) */
FDD_HD void fdd_scatter_at(fd_direct_kind kind, int a, int64_t n0, int64_t n1, int64_t n, int64_t m0, int64_t Mc,
                           int64_t e, const double *A, const double *B, double *x) {
  int64_t mm, k;
  if (!fdd_split(a, e, Mc, n, &mm, &k)) return;
  const int64_t Q = fdd_out_len(kind, n), ys = a == 0 ? 1 : Mc, off = a == 0 ? mm * Q : mm;
  const int fft = fdd_fft(kind);
  const double *Z = fft == FDD_D2Z ? B + 2 * off : A + 2 * off;
  x[fdd_lidx(a, n0, n1, m0 + mm, k)] = fdd_scatter(kind, n, k, A + off, Z, ys);
}

/* lines per chunk: the staging buffer holds chunk_bytes of complex values,
 * Lmax per line */
FDD_HD int64_t fdd_chunk_lines(int64_t Lmax, int64_t M, size_t chunk_bytes) {
  int64_t Mc = (int64_t)(chunk_bytes / (16 * (size_t)Lmax));
  if (Mc < 1) Mc = 1;
  return Mc > M ? M : Mc;
}

/* lambda + the eigenvalues of the transformed directions at index c (t: the
 * tridiagonal direction, or -1; m2 NULL in 2D) */
FDD_HD double fdd_sigma(int64_t c, int64_t n0, int64_t n1, int t, double lam, const double *m0, const double *m1,
                        const double *m2) {
  const int64_t i = c % n0, j = (c / n0) % n1, k = c / (n0 * n1);
  return lam + (t == 0 ? 0 : m0[i]) + (t == 1 ? 0 : m1[j]) + (t == 2 || !m2 ? 0 : m2[k]);
}

/* all-periodic fast path: entry e of the multi-dimensional D2Z output
 * (n2 x n1 x nh complex pairs, nh = n0/2+1, x fastest) times scale / (lambda +
 * sum_d mu_d) at its frequency (x: 0..n0/2, y, z: 0..n-1). The R2HC
 * eigenvalues mu_d[k] = s sin^2(pi k/n) are those of frequency k in either
 * halfcomplex half, so the same tables read at the full frequency (fdd_sigma
 * with the x extent nh) are the eigenvalues; sigma = 0 (the singular
 * constant mode) gets 0. */
FDD_HD void fdd_divide_fast_at(int64_t e, int64_t nh, int64_t n1, double lam, double scale, const double *m0,
                               const double *m1, const double *m2, double *Z) {
  const double s = fdd_sigma(e, nh, n1, -1, lam, m0, m1, m2);
  const double f = s > 0 ? scale / s : 0;
  Z[2 * e] *= f;
  Z[2 * e + 1] *= f;
}

/* u_c = b_c / prod_{d != t} w_d */
FDD_HD double fdd_scale_in(int64_t c, int64_t n0, int64_t n1, int t, const double *w0, const double *w1,
                           const double *w2, double b) {
  const int64_t i = c % n0, j = (c / n0) % n1, k = c / (n0 * n1);
  return b / ((t == 0 ? 1.0 : w0[i]) * (t == 1 ? 1.0 : w1[j]) * (t == 2 || !w2 ? 1.0 : w2[k]));
}

/* first index of line q along t (q enumerates the other indices, the lower fastest) */
FDD_HD int64_t fdd_tri_base(int t, int64_t n0, int64_t N, int64_t q) {
  return t == 0 ? q * N : (t == 1 ? (q % n0) + n0 * N * (q / n0) : q);
}

/* line q along t: (K + sigma W) v = scale g in place, g[base + j st]; cp (and
 * z, periodic) scratch laid out like g. K: -lo[j] v_{j-1} + di[j] v_j -
 * up[j] v_{j+1}, periodic wraps in lo[0] and up[N-1]. singular and q == 0:
 * the constant mode's line (sigma = 0, K singular): the right-hand side is
 * projected (minus w times its sum over sum w), v_0 pinned to 0 and the
 * W-mean removed afterwards. */
FDD_HD void fdd_tri_line(int64_t q, int t, int64_t n0, int64_t n1, int64_t N, int64_t st, double lam, double scale,
                         int singular, int periodic, const double *m0, const double *m1, const double *m2,
                         const double *lo, const double *di, const double *up, const double *w, double *g, double *cp,
                         double *z) {
  const int64_t base = fdd_tri_base(t, n0, N, q);
  const double sg = fdd_sigma(base, n0, n1, t, lam, m0, m1, m2);
  if (singular && q == 0) {
    double sd = 0, sw = 0;
    for (int64_t j = 0; j < N; j++) { sd += scale * g[base + j * st]; sw += w[j]; }
    for (int64_t j = 0; j < N; j++) g[base + j * st] = scale * g[base + j * st] - w[j] * sd / sw;
    g[base] = 0;
    double cprev = 0, dprev = 0;
    for (int64_t j = 1; j < N; j++) {
      const double aa = j > 1 ? -lo[j] : 0, cc = j < N - 1 ? -up[j] : 0;
      const double den = di[j] - aa * cprev;
      cprev = cc / den;
      dprev = (g[base + j * st] - aa * dprev) / den;
      cp[base + j * st] = cprev;
      g[base + j * st] = dprev;
    }
    for (int64_t j = N - 2; j >= 1; j--) g[base + j * st] -= cp[base + j * st] * g[base + (j + 1) * st];
    double mw = 0;
    for (int64_t j = 0; j < N; j++) mw += w[j] * g[base + j * st];
    for (int64_t j = 0; j < N; j++) g[base + j * st] -= mw / sw;
    return;
  }
  if (!periodic) {
    double den = di[0] + sg * w[0];
    double cprev = -up[0] / den, dprev = scale * g[base] / den;
    cp[base] = cprev;
    g[base] = dprev;
    for (int64_t j = 1; j < N; j++) {
      const int64_t c = base + j * st;
      den = di[j] + sg * w[j] + lo[j] * cprev;
      cprev = -up[j] / den;
      dprev = (scale * g[c] + lo[j] * dprev) / den;
      cp[c] = cprev;
      g[c] = dprev;
    }
    for (int64_t j = N - 2; j >= 0; j--) {
      const int64_t c = base + j * st;
      g[c] -= cp[c] * g[c + st];
    }
    return;
  }
  /* cyclic: Sherman-Morrison with gamma = -b_0 (see fd_direct.c) */
  const double a0 = -lo[0], cN = -up[N - 1], b0 = di[0] + sg * w[0], gam = -b0;
  double den = b0 - gam;
  double cprev = -up[0] / den, dprev = scale * g[base] / den, zprev = gam / den;
  cp[base] = cprev; g[base] = dprev; z[base] = zprev;
  for (int64_t j = 1; j < N; j++) {
    const int64_t c = base + j * st;
    double bj = di[j] + sg * w[j];
    if (j == N - 1) bj -= a0 * cN / gam;
    den = bj + lo[j] * cprev;
    cprev = j == N - 1 ? 0 : -up[j] / den;
    dprev = (scale * g[c] + lo[j] * dprev) / den;
    zprev = ((j == N - 1 ? cN : 0) + lo[j] * zprev) / den;
    cp[c] = cprev; g[c] = dprev; z[c] = zprev;
  }
  for (int64_t j = N - 2; j >= 0; j--) {
    const int64_t c = base + j * st;
    g[c] -= cp[c] * g[c + st];
    z[c] -= cp[c] * z[c + st];
  }
  const int64_t l = base + (N - 1) * st;
  const double f = (g[base] + a0 * g[l] / gam) / (1 + z[base] + a0 * z[l] / gam);
  for (int64_t j = 0; j < N; j++) g[base + j * st] -= f * z[base + j * st];
}

#endif
