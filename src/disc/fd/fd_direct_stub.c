/* Without CUDA in the build, the GPU direct solver's entry points say so. */
#ifndef HPMG_HAVE_CUDA
#include "disc/fd/fd_direct.h"

static hpmg_error no_cuda(void) {
  return hpmg_error_set(HPMG_ERR_BACKEND,
                        "fd: --device cuda: this build of hpmg has no CUDA backend (nvcc was not found at configure time)");
}
hpmg_error fd_cuda_direct_create(int dim, const fd_direct_dir *dirs, double lambda, void **handle) {
  (void)dim; (void)dirs; (void)lambda; *handle = NULL; return no_cuda();
}
hpmg_error fd_cuda_direct_solve(void *handle, const double *b, double *u, double *sum, double *abs) {
  (void)handle; (void)b; (void)u; (void)sum; (void)abs; return no_cuda();
}
void fd_cuda_direct_destroy(void *handle) { (void)handle; }
int fd_cuda_direct_fast(void *handle) { (void)handle; return 0; }
double fd_cuda_direct_bytes(int dim, const int64_t n[3]) { (void)dim; (void)n; return 0; }
int fd_cuda_direct_set_tri(int which) { (void)which; return 0; }
size_t fd_cuda_direct_set_chunk_bytes(size_t bytes) { (void)bytes; return 0; }
hpmg_error fd_cuda_periodic_reference(const int64_t cells[3], int reps, double *seconds) {
  (void)cells; (void)reps; (void)seconds; return no_cuda();
}
#else
typedef int fd_direct_stub_unused;
#endif
