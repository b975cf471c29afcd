/* Without CUDA in the build, the FD CUDA entry points say so. */
#ifndef HPMG_HAVE_CUDA
#include "disc/fd/fd_fft.h"
#include "disc/fd/fd_stencil.h"

static hpmg_error no_cuda(void) {
  return hpmg_error_set(HPMG_ERR_BACKEND,
                        "fd: --device cuda: this build of hpmg has no CUDA backend (nvcc was not found at configure time)");
}
hpmg_error fd_ops_cuda(fd_prec prec, const fd_ops **ops) { (void)prec; *ops = NULL; return no_cuda(); }
hpmg_error fd_cuda_calibrate(double *launch_s, double *gpu_bw, double *link_latency_s, double *link_bw) {
  (void)launch_s; (void)gpu_bw; (void)link_latency_s; (void)link_bw; return no_cuda();
}
hpmg_error fd_cuda_fft_create(int dim, int64_t n, fd_prec prec, void **h, void **b) {
  (void)dim; (void)n; (void)prec; *h = NULL; *b = NULL; return no_cuda();
}
hpmg_error fd_cuda_fft_execute(void *h) { (void)h; return no_cuda(); }
void fd_cuda_fft_destroy(void *h) { (void)h; }
int64_t fd_cuda_set_gs_march_min(int64_t n) { (void)n; return 0; }
int64_t fd_cuda_set_gs_march_zchunk(int64_t planes) { (void)planes; return 0; }
double fd_cuda_fft_bytes(int dim, int64_t n, fd_prec prec) { (void)dim; (void)n; (void)prec; return 0; }
#else
typedef int fd_cuda_stub_unused;
#endif
