/* FFT (sine transform) direct solver for the FD Poisson system of the unit
 * box. CPU: the box solver of src/disc/fd/fd_direct.c on the interior of the
 * (n+1)^d array, the box scaled to h = 1 so that its operator is the
 * h^-2-scaled stencil itself (A = h^(d-2) T on the unit box). GPU: the DST-I
 * through cuFFT of src/disc/fd/cuda/fd_cufft.cu. */
#include <math.h>
#include <string.h>
#include "disc/fd/fd_direct.h"
#include "disc/fd/fd_fft.h"

struct fd_fft_s {
  int dim, device;
  int64_t n;
  fd_prec prec;
  void *buf;          /* (n+1)^d work array */
  double plan_s;
  fd_direct direct;   /* CPU */
  void *cuda;         /* CUDA handle */
};

fd_prec fd_fft_prec(fd_fft f) { return f->prec; }
void *fd_fft_buffer(fd_fft f) { return f->buf; }
double fd_fft_plan_seconds(fd_fft f) { return f->plan_s; }

void fd_fft_destroy(fd_fft *fp) {
  if (!fp || !*fp) return;
  fd_fft f = *fp;
  fd_direct_destroy(&f->direct);
  if (f->cuda) fd_cuda_fft_destroy(f->cuda);
  else hpmg_free(&f->buf);
  hpmg_free(fp);
}

static double *interior(fd_fft f) {
  const int64_t s1 = f->n + 1;
  return (double *)f->buf + (f->dim == 2 ? s1 + 1 : s1 * s1 + s1 + 1);
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
  f->prec = FD_DOUBLE; /* only the double FFTW library is linked */
  hpmg_error e = hpmg_calloc(sizeof(double) * (size_t)fd_points(dim, n), &f->buf);
  if (e) { fd_fft_destroy(&f); return e; }
  /* [0, n]^d with unit cells, homogeneous Dirichlet faces, vertex unknowns */
  hpmg_box box;
  memset(&box, 0, sizeof box);
  box.dim = dim;
  box.layout = HPMG_FD_VERTEX;
  double *x = NULL;
  e = hpmg_malloc(sizeof(double) * (size_t)(n + 1), &x);
  if (e) { fd_fft_destroy(&f); return e; }
  for (int64_t i = 0; i <= n; i++) x[i] = (double)i;
  for (int d = 0; d < 3; d++) {
    box.cells[d] = d < dim ? n : 1;
    box.len[d] = d < dim ? (double)n : 1;
    box.x[d] = d < dim ? x : NULL;
    box.uniform[d] = 1;
    box.bc[2 * d] = box.bc[2 * d + 1] = HPMG_BC_DIRICHLET;
  }
  const int64_t s1 = n + 1, stride[3] = {1, s1, s1 * s1};
  e = fd_direct_create_embedded(&box, 0.0, measure, interior(f), stride, &f->direct);
  hpmg_free(&x);
  if (e) { fd_fft_destroy(&f); return e; }
  memset(f->buf, 0, sizeof(double) * (size_t)fd_points(dim, n)); /* FFTW_MEASURE scribbles */
  f->plan_s = hpmg_wtime() - t0;
  *fp = f;
  return HPMG_SUCCESS;
}

hpmg_error fd_fft_execute(fd_fft f) {
  if (f->device) return fd_cuda_fft_execute(f->cuda);
  double *u = interior(f);
  return fd_direct_solve(f->direct, u, u);
}
