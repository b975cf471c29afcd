/* FFT (sine transform) direct solver for the FD Poisson system. */
#include <math.h>
#include <omp.h>
#include <string.h>
#include "disc/fd/fd_fft.h"
#ifdef HPMG_HAVE_FFTW
#include <fftw3.h>
#endif

struct fd_fft_s {
  int dim, device;
  int64_t n;
  fd_prec prec;
  void *buf;          /* (n+1)^d work array */
  double plan_s;
  double *lam;        /* 1D eigenvalues 4 sin^2(pi k / 2n), k = 0..n */
#ifdef HPMG_HAVE_FFTW
  fftw_plan plan;
#endif
  void *cuda;         /* CUDA handle */
};

fd_prec fd_fft_prec(fd_fft f) { return f->prec; }
void *fd_fft_buffer(fd_fft f) { return f->buf; }
double fd_fft_plan_seconds(fd_fft f) { return f->plan_s; }

void fd_fft_destroy(fd_fft *fp) {
  if (!fp || !*fp) return;
  fd_fft f = *fp;
#ifdef HPMG_HAVE_FFTW
  if (f->plan) fftw_destroy_plan(f->plan);
#endif
  if (f->cuda) fd_cuda_fft_destroy(f->cuda);
  else hpmg_free(&f->buf);
  hpmg_free(&f->lam);
  hpmg_free(fp);
}

hpmg_error fd_fft_create(int dim, int64_t n, fd_prec prec, int device, int measure, fd_fft *fp) {
  HPMG_CHECK_ARG(fp, "fd_fft: NULL output");
  *fp = NULL;
  HPMG_CHECK_ARG(dim == 2 || dim == 3, "fd_fft: dim must be 2 or 3");
  HPMG_CHECK_ARG(n >= 2 && (n & (n - 1)) == 0, "fd_fft: n must be a power of two >= 2");
  fd_fft f;
  HPMG_CALL(hpmg_calloc(sizeof *f, &f));
  f->dim = dim;
  f->n = n;
  f->device = device;
  const double t0 = hpmg_wtime();
  if (device) {
    f->prec = prec;
    hpmg_error e = fd_cuda_fft_create(dim, n, prec, &f->cuda, &f->buf);
    if (e) { fd_fft_destroy(&f); return e; }
    f->plan_s = hpmg_wtime() - t0;
    *fp = f;
    return HPMG_SUCCESS;
  }
#ifndef HPMG_HAVE_FFTW
  (void)measure;
  fd_fft_destroy(&f);
  return hpmg_error_set(HPMG_ERR_BACKEND, "fd: --solver fft on the CPU needs FFTW (install libfftw3-dev and reconfigure)");
#else
  f->prec = FD_DOUBLE; /* only the double FFTW library is linked */
  hpmg_error e = hpmg_calloc(sizeof(double) * (size_t)fd_points(dim, n), &f->buf);
  if (!e) e = hpmg_malloc(sizeof(double) * (size_t)(n + 1), &f->lam);
  if (e) { fd_fft_destroy(&f); return e; }
  for (int64_t k = 0; k <= n; k++) {
    const double s = sin(3.14159265358979323846 * (double)k / (double)(2 * n));
    f->lam[k] = 4 * s * s;
  }
#ifdef HPMG_HAVE_FFTW_OMP
  static int threads_ready = 0;
  if (!threads_ready) { fftw_init_threads(); threads_ready = 1; }
  fftw_plan_with_nthreads(omp_get_max_threads());
#endif
  /* in place on the interior of the (n+1)^d array: dims slowest first */
  fftw_iodim dims[3];
  const int64_t s1 = n + 1, s2 = (n + 1) * (n + 1);
  fftw_r2r_kind kinds[3] = {FFTW_RODFT00, FFTW_RODFT00, FFTW_RODFT00};
  double *interior = (double *)f->buf + (dim == 2 ? s1 + 1 : s2 + s1 + 1);
  for (int d = 0; d < dim; d++) {
    const int64_t stride = d == dim - 1 ? 1 : (d == dim - 2 ? s1 : s2);
    dims[d].n = (int)(n - 1);
    dims[d].is = dims[d].os = (int)stride;
  }
  f->plan = fftw_plan_guru_r2r(dim, dims, 0, NULL, interior, interior, kinds,
                               measure ? FFTW_MEASURE : FFTW_ESTIMATE);
  if (!f->plan) { fd_fft_destroy(&f); return hpmg_error_set(HPMG_ERR_BACKEND, "fd_fft: FFTW planning failed"); }
  memset(f->buf, 0, sizeof(double) * (size_t)fd_points(dim, n)); /* MEASURE scribbles */
  f->plan_s = hpmg_wtime() - t0;
  *fp = f;
  return HPMG_SUCCESS;
#endif
}

hpmg_error fd_fft_execute(fd_fft f) {
  if (f->device) return fd_cuda_fft_execute(f->cuda);
#ifdef HPMG_HAVE_FFTW
  const int64_t n = f->n, s1 = n + 1, s2 = (n + 1) * (n + 1);
  double *u = (double *)f->buf;
  const double *lam = f->lam;
  fftw_execute(f->plan);
  const double norm = pow(2.0 * (double)n, f->dim);
  if (f->dim == 2) {
#pragma omp parallel for schedule(static)
    for (int64_t j = 1; j < n; j++)
      for (int64_t i = 1; i < n; i++) u[j * s1 + i] /= norm * (lam[i] + lam[j]);
  } else {
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t k = 1; k < n; k++)
      for (int64_t j = 1; j < n; j++)
        for (int64_t i = 1; i < n; i++) u[k * s2 + j * s1 + i] /= norm * (lam[i] + lam[j] + lam[k]);
  }
  fftw_execute(f->plan);
  return HPMG_SUCCESS;
#else
  return hpmg_error_set(HPMG_ERR_BACKEND, "fd_fft: FFTW not available");
#endif
}
