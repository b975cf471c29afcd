/* P1 on the GPU (p1_cuda.cu): numeric assembly, the CSR operator and the
 * Jacobi preconditioner on device vectors (the CUDA backend's hpmg_vec).
 *
 * Assembly: one thread per cell computes its (dim+1)^2 local entries into a
 * scratch array (entry-major, coalesced: scratch[e * ncells + c]); then one
 * thread per CSR entry sums its contributions in ascending cell order through
 * an entry -> contributions list built once from the symbolic phase. No
 * atomics: the result is the same run after run, and equals the CPU's
 * matrix up to the rounding of the local matrices (fused multiply-adds).
 * Boundary conditions (hpmg_p1_gpu_set_bc): the same operations as
 * hpmg_p1_apply_bc (assembly.h) after the gather, one thread per Robin
 * entry, then one per row for the Dirichlet elimination and its lift. */
#ifndef HPMG_P1_CUDA_H
#define HPMG_P1_CUDA_H

#include "disc/p1/assembly.h"
#include "la/krylov.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hpmg_p1_gpu_s *hpmg_p1_gpu;

#ifdef HPMG_HAVE_CUDA
/* Uploads the mesh (coordinates, cells), the pattern and the contribution
 * list; assemble = 0: the operator only (pattern, no assembly data). */
hpmg_error hpmg_p1_gpu_create(const hpmg_p1_mesh *m, const hpmg_p1_pattern *p, int assemble, hpmg_p1_gpu *g);
void hpmg_p1_gpu_destroy(hpmg_p1_gpu *g);
/* Device bytes hpmg_p1_gpu_create(assemble = 1) would allocate. */
double hpmg_p1_gpu_bytes(const hpmg_p1_pattern *p, int assemble, int sigma_comps);
/* Uploads the boundary conditions' data (assemble = 1 only): from then on
 * hpmg_p1_gpu_assemble applies them. */
hpmg_error hpmg_p1_gpu_set_bc(hpmg_p1_gpu g, const hpmg_p1_bc_data *bc);
/* Numeric phase on the GPU with the coefficients cf (sigma uploaded from the
 * host on each call, not timed), and the boundary conditions if set;
 * kernel_s: seconds of the kernels. HPMG_ERR_NUMERIC if a diagonal entry is
 * not positive. */
hpmg_error hpmg_p1_gpu_assemble(hpmg_p1_gpu g, const hpmg_p1_coef *cf, double *kernel_s);
/* the Dirichlet lift of the last assembly (n doubles; set_bc with Dirichlet nodes) */
hpmg_error hpmg_p1_gpu_get_lift(hpmg_p1_gpu g, double *lift);
/* the device matrix values <-> host (nnz doubles) */
hpmg_error hpmg_p1_gpu_get_values(hpmg_p1_gpu g, double *val);
hpmg_error hpmg_p1_gpu_set_values(hpmg_p1_gpu g, const double *val);
/* y = A x and z = D^-1 r on CUDA-backend double vectors (set_values or
 * assemble first; the Jacobi inverse diagonal is taken at set_values/assemble) */
hpmg_linop hpmg_p1_gpu_linop(hpmg_p1_gpu g);
hpmg_linop hpmg_p1_gpu_jacobi(hpmg_p1_gpu g);
#endif

#ifdef __cplusplus
}
#endif
#endif
