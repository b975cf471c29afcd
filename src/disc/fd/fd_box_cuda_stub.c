/* Without CUDA in the build, the GPU kernels of the box multigrid say so. */
#ifndef HPMG_HAVE_CUDA
#include "disc/fd/fd_box_cuda.h"

static hpmg_error no_cuda(void) {
  return hpmg_error_set(HPMG_ERR_BACKEND,
                        "fd box: --device cuda: this build of hpmg has no CUDA backend (nvcc was not found at configure time)");
}
int64_t fdb_cuda_red_len(const fdb_geom *g) { (void)g; return 0; }
hpmg_error fdb_cuda_apply(const fdb_geom *g, const double *x, const double *b, double *y) {
  (void)g; (void)x; (void)b; (void)y; return no_cuda();
}
hpmg_error fdb_cuda_residual_norm(const fdb_geom *g, const double *x, const double *b, double *red, double *nrm) {
  (void)g; (void)x; (void)b; (void)red; *nrm = 0; return no_cuda();
}
hpmg_error fdb_cuda_gs_sweep(const fdb_geom *g, const int per[3], double omega, int backward, double *x, const double *b) {
  (void)g; (void)per; (void)omega; (void)backward; (void)x; (void)b; return no_cuda();
}
hpmg_error fdb_cuda_line_sweep(const fdb_geom *g, const int per[3], int dl, int checker, int backward, double *x, const double *b,
                               const double *tab, double *cp, double *dp) {
  (void)g; (void)per; (void)dl; (void)backward; (void)x; (void)b; (void)tab; (void)cp; (void)dp; return no_cuda();
}
hpmg_error fdb_cuda_apply1d(int d, const int64_t nin[3], const fdb_csr *M, const double *x, double *y, int add) {
  (void)d; (void)nin; (void)M; (void)x; (void)y; (void)add; return no_cuda();
}
hpmg_error fdb_cuda_mean_remove(int64_t n, double *x, double *red) { (void)n; (void)x; (void)red; return no_cuda(); }
#else
typedef int fd_box_cuda_stub_unused;
#endif
