/* The real trigonometric transforms of the direct FD solver through complex
 * FFTs (cuFFT has no r2r kinds): per kind, which FFT of which length, and the
 * O(n) pre-processing (gather one staging entry from a line) and
 * post-processing (one output value from the FFT's result). Shared by the
 * CUDA kernels (src/disc/fd/cuda/fd_direct.cu) and a host test that runs the
 * same formulas with FFTW's complex FFTs (tests/test_fd_direct.c), so the
 * arithmetic the GPU does is checked where no GPU is present.
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

#endif
