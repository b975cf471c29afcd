/* P1 on the GPU: numeric assembly (local matrices + per-entry gather), CSR
 * SpMV and Jacobi (p1_cuda.h). */
#include <cuda_runtime.h>
#include "backends/cuda_check.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
extern "C" {
#include "backends/cuda.h"
#include "disc/p1/cuda/p1_cuda.h"
}


struct hpmg_p1_gpu_s {
  int dim, nv, nloc; /* nloc: the local matrix's upper triangle, nv (nv + 1) / 2 */
  int64_t n, nc, nnz;
  int64_t *rowptr, *diagpos;
  int32_t *col;
  double *val, *invdiag;
  /* assembly */
  int assemble;
  double *x[3];
  int32_t *cells;    /* nv * nc, node k of cell c at [k * nc + c] */
  double *sigma;     /* comps * nc, per cell (allocated on first use) */
  int sigma_comps;
  double *scratch;   /* nloc * nc: upper-triangle entry e of cell c at [e * nc + c] */
  uint32_t *cptr;    /* nnz + 1 */
  uint32_t *cidx;    /* contributions of each entry (scratch indices), ascending cell */
  /* boundary conditions (hpmg_p1_bc_data) */
  int bc;
  int64_t ndir, nrob;
  uint8_t *dir;
  double *gd, *lift, *rob_w;
  int64_t *rob_ptr, *rob_pos;
  unsigned long long *bad; /* non-positive diagonal entries */
};

extern "C" double hpmg_p1_gpu_bytes(const hpmg_p1_pattern *p, int assemble, int sigma_comps) {
  const double nc = (double)p->ncells, nnz = (double)p->nnz, n = (double)p->n, nv = p->nv;
  double b = 8.0 * (n + 1) + 8.0 * n + 4.0 * nnz + 8.0 * nnz + 8.0 * n;
  if (assemble) b += 8.0 * p->dim * n + 4.0 * nv * nc + 8.0 * sigma_comps * nc + 8.0 * nv * (nv + 1) / 2 * nc +
                     4.0 * (nnz + 1) + 4.0 * nv * nv * nc;
  return b;
}

extern "C" void hpmg_p1_gpu_destroy(hpmg_p1_gpu *gp) {
  hpmg_p1_gpu g = *gp;
  if (!g) return;
  void *ptrs[] = {g->rowptr, g->diagpos, g->col, g->val, g->invdiag, g->x[0], g->x[1], g->x[2], g->cells, g->sigma,
                  g->scratch, g->cptr, g->cidx, g->dir, g->gd, g->lift, g->rob_w, g->rob_ptr, g->rob_pos, g->bad};
  for (size_t i = 0; i < sizeof ptrs / sizeof ptrs[0]; i++) hpmg_cuda_free(ptrs[i]);
  free(g);
  *gp = NULL;
}

template <typename T> static hpmg_error dev_copy(T **d, const T *h, size_t count) {
  HPMG_CALL(hpmg_cuda_malloc(sizeof(T) * count, (void **)d));
  if (h) HPMG_CALL(hpmg_cuda_upload(*d, h, sizeof(T) * count));
  return HPMG_SUCCESS;
}

extern "C" hpmg_error hpmg_p1_gpu_create(const hpmg_p1_mesh *m, const hpmg_p1_pattern *p, int assemble, hpmg_p1_gpu *out) {
  *out = NULL;
  HPMG_CALL(hpmg_cuda_check());
  const int nv = p->nv;
  if (assemble) {
    if ((double)p->ncells * nv * nv >= 4294967295.0)
      return hpmg_error_set(HPMG_ERR_ARG, "P1 GPU assembly: %lld cells exceed its 32-bit lists",
                            (long long)p->ncells);
  }
  hpmg_p1_gpu g = (hpmg_p1_gpu)calloc(1, sizeof *g);
  if (!g) return hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate the P1 GPU operator");
  g->dim = p->dim, g->nv = nv, g->nloc = nv * (nv + 1) / 2, g->n = p->n, g->nc = p->ncells, g->nnz = p->nnz;
  g->assemble = assemble;
  hpmg_error e = dev_copy(&g->rowptr, p->rowptr, (size_t)(p->n + 1));
  if (!e) e = dev_copy(&g->diagpos, p->diag, (size_t)p->n);
  if (!e) e = dev_copy(&g->col, p->col, (size_t)p->nnz);
  if (!e) e = dev_copy(&g->val, (const double *)NULL, (size_t)p->nnz);
  if (!e) e = dev_copy(&g->invdiag, (const double *)NULL, (size_t)p->n);
  if (!e) e = dev_copy(&g->bad, (const unsigned long long *)NULL, 1);
  if (!e && assemble) {
    for (int d = 0; d < p->dim && !e; d++) e = dev_copy(&g->x[d], m->x[d], (size_t)p->n);
    int32_t *cells = NULL;
    if (!e) e = hpmg_p1_cells_soa(m, &cells);
    if (!e) e = dev_copy(&g->cells, cells, (size_t)(nv * p->ncells));
    hpmg_free(&cells);
    if (!e) e = dev_copy(&g->scratch, (const double *)NULL, (size_t)(g->nloc * p->ncells));
    uint32_t *cptr = NULL, *cidx = NULL;
    if (!e) e = hpmg_p1_contributions(p, &cptr, &cidx);
    if (!e) e = dev_copy(&g->cptr, cptr, (size_t)(p->nnz + 1));
    if (!e) e = dev_copy(&g->cidx, cidx, (size_t)(p->ncells * nv * nv));
    hpmg_free(&cptr);
    hpmg_free(&cidx);
  }
  if (e) {
    hpmg_p1_gpu_destroy(&g);
    return e;
  }
  *out = g;
  return HPMG_SUCCESS;
}

/* ------------------------------------------------------------- kernels */

/* the same arithmetic as hpmg_p1_local_matrix (assembly.c), upper triangle */
template <int DIM>
__global__ void local_kernel(int64_t nc, const int32_t *__restrict__ cells, const double *__restrict__ x0,
                             const double *__restrict__ x1, const double *__restrict__ x2,
                             const double *__restrict__ sigma, int comps, double lambda, double *__restrict__ out) {
  const int64_t c = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= nc) return;
  constexpr int NV = DIM + 1;
  int v[NV];
#pragma unroll
  for (int k = 0; k < NV; k++) v[k] = __ldg(cells + k * nc + c);
  double g[NV][DIM], meas;
  if constexpr (DIM == 3) {
    double a[3][3];
    const double p0[3] = {__ldg(x0 + v[0]), __ldg(x1 + v[0]), __ldg(x2 + v[0])};
#pragma unroll
    for (int k = 0; k < 3; k++) {
      a[k][0] = __ldg(x0 + v[k + 1]) - p0[0];
      a[k][1] = __ldg(x1 + v[k + 1]) - p0[1];
      a[k][2] = __ldg(x2 + v[k + 1]) - p0[2];
    }
    double cr[3][3];
#pragma unroll
    for (int k = 0; k < 3; k++) {
      const double *p = a[(k + 1) % 3], *q = a[(k + 2) % 3];
      cr[k][0] = p[1] * q[2] - p[2] * q[1];
      cr[k][1] = p[2] * q[0] - p[0] * q[2];
      cr[k][2] = p[0] * q[1] - p[1] * q[0];
    }
    const double det = a[0][0] * cr[0][0] + a[0][1] * cr[0][1] + a[0][2] * cr[0][2], inv = 1.0 / det;
    meas = det / 6.0;
#pragma unroll
    for (int d = 0; d < DIM; d++) {
      g[1][d] = cr[0][d] * inv;
      g[2][d] = cr[1][d] * inv;
      g[3][d] = cr[2][d] * inv;
      g[0][d] = -(g[1][d] + g[2][d] + g[3][d]);
    }
  } else {
    const double ax = __ldg(x0 + v[1]) - __ldg(x0 + v[0]), ay = __ldg(x1 + v[1]) - __ldg(x1 + v[0]);
    const double bx = __ldg(x0 + v[2]) - __ldg(x0 + v[0]), by = __ldg(x1 + v[2]) - __ldg(x1 + v[0]);
    const double det = ax * by - ay * bx, inv = 1.0 / det;
    meas = det / 2.0;
    g[1][0] = by * inv, g[1][1] = -bx * inv;
    g[2][0] = -ay * inv, g[2][1] = ax * inv;
    g[0][0] = -(g[1][0] + g[2][0]), g[0][1] = -(g[1][1] + g[2][1]);
  }
  double sg[NV][DIM];
#pragma unroll
  for (int l = 0; l < NV; l++) {
    if (!sigma || comps == 1) {
      const double sc = sigma ? sigma[c] : 1.0;
#pragma unroll
      for (int d = 0; d < DIM; d++) sg[l][d] = sc * g[l][d];
    } else {
      if constexpr (DIM == 3) { /* xx yy zz xy xz yz */
        const double *s = sigma + c * 6;
        sg[l][0] = s[0] * g[l][0] + s[3] * g[l][1] + s[4] * g[l][2];
        sg[l][1] = s[3] * g[l][0] + s[1] * g[l][1] + s[5] * g[l][2];
        sg[l][2] = s[4] * g[l][0] + s[5] * g[l][1] + s[2] * g[l][2];
      } else { /* xx yy xy */
        const double *s = sigma + c * 3;
        sg[l][0] = s[0] * g[l][0] + s[2] * g[l][1];
        sg[l][1] = s[2] * g[l][0] + s[1] * g[l][1];
      }
    }
  }
  const double mass = lambda * meas / (DIM == 3 ? 20.0 : 12.0);
  int e = 0;
#pragma unroll
  for (int k = 0; k < NV; k++)
#pragma unroll
    for (int l = k; l < NV; l++) {
      double d = 0.0;
#pragma unroll
      for (int q = 0; q < DIM; q++) d += g[k][q] * sg[l][q];
      out[(int64_t)(e++) * nc + c] = meas * d + mass * (k == l ? 2.0 : 1.0);
    }
}

__global__ void gather_kernel(int64_t nnz, const uint32_t *__restrict__ cptr, const uint32_t *__restrict__ cidx,
                              const double *__restrict__ scratch, double *__restrict__ val) {
  const int64_t q = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (q >= nnz) return;
  double s = 0.0;
  const uint32_t t1 = cptr[q + 1];
  for (uint32_t t = cptr[q]; t < t1; t++) s += __ldg(scratch + cidx[t]);
  val[q] = s;
}

/* hpmg_p1_apply_bc (assembly.c), step 1: the Robin terms of one entry in facet order */
__global__ void robin_kernel(int64_t nrob, const int64_t *__restrict__ ptr, const int64_t *__restrict__ pos,
                             const double *__restrict__ w, double *__restrict__ val) {
  const int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= nrob) return;
  double v = val[pos[r]];
  for (int64_t t = ptr[r]; t < ptr[r + 1]; t++) v += w[t];
  val[pos[r]] = v;
}

/* step 2: the symmetric Dirichlet elimination of row i and its lift */
__global__ void dirichlet_kernel(int64_t n, const int64_t *__restrict__ rowptr, const int32_t *__restrict__ col,
                                 const uint8_t *__restrict__ dir, const double *__restrict__ gd,
                                 double *__restrict__ val, double *__restrict__ lift) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double s = 0.0;
  if (dir[i]) {
    for (int64_t q = rowptr[i]; q < rowptr[i + 1]; q++) val[q] = col[q] == i ? 1.0 : 0.0;
  } else {
    for (int64_t q = rowptr[i]; q < rowptr[i + 1]; q++) {
      const int32_t j = col[q];
      if (dir[j]) {
        s += val[q] * gd[j];
        val[q] = 0.0;
      }
    }
  }
  lift[i] = s;
}

__global__ void invdiag_kernel(int64_t n, const int64_t *__restrict__ diagpos, const double *__restrict__ val,
                               double *__restrict__ invdiag, unsigned long long *__restrict__ bad) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const double d = val[diagpos[i]];
  if (!(d > 0)) atomicAdd(bad, 1ULL); /* a count: the same whatever the order */
  invdiag[i] = 1.0 / d;
}

__global__ void spmv_kernel(int64_t n, const int64_t *__restrict__ rowptr, const int32_t *__restrict__ col,
                            const double *__restrict__ val, const double *__restrict__ x, double *__restrict__ y) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double s = 0.0;
  for (int64_t q = rowptr[i]; q < rowptr[i + 1]; q++) s += val[q] * __ldg(x + col[q]);
  y[i] = s;
}

__global__ void jacobi_kernel(int64_t n, const double *__restrict__ d, const double *__restrict__ r, double *__restrict__ z) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) z[i] = d[i] * r[i];
}

static unsigned blocks(int64_t n, int t) { return (unsigned)((n + t - 1) / t); }

static hpmg_error update_invdiag(hpmg_p1_gpu g) {
  HPMG_CU(cudaMemset(g->bad, 0, sizeof *g->bad));
  invdiag_kernel<<<blocks(g->n, 256), 256>>>(g->n, g->diagpos, g->val, g->invdiag, g->bad);
  HPMG_CU_LAUNCH();
  unsigned long long bad = 0;
  HPMG_CALL(hpmg_cuda_download(&bad, g->bad, sizeof bad));
  if (bad)
    return hpmg_error_set(HPMG_ERR_NUMERIC, "P1 matrix on the GPU: %llu diagonal entries are not positive", bad);
  return HPMG_SUCCESS;
}

extern "C" hpmg_error hpmg_p1_gpu_set_bc(hpmg_p1_gpu g, const hpmg_p1_bc_data *bc) {
  HPMG_CHECK_ARG(g->assemble, "P1 GPU: boundary conditions need the assembly data (create with assemble = 1)");
  HPMG_CHECK_ARG(bc->n == g->n, "P1 GPU: boundary data for %lld nodes, operator has %lld", (long long)bc->n,
                 (long long)g->n);
  void *old[] = {g->dir, g->gd, g->lift, g->rob_w, g->rob_ptr, g->rob_pos};
  for (size_t i = 0; i < sizeof old / sizeof old[0]; i++) hpmg_cuda_free(old[i]);
  g->dir = NULL, g->gd = NULL, g->lift = NULL, g->rob_w = NULL, g->rob_ptr = NULL, g->rob_pos = NULL;
  g->bc = 0, g->ndir = bc->ndir, g->nrob = bc->nrob;
  if (bc->ndir) {
    HPMG_CALL(dev_copy(&g->dir, bc->dir, (size_t)g->n));
    HPMG_CALL(dev_copy(&g->gd, bc->gd, (size_t)g->n));
    HPMG_CALL(dev_copy(&g->lift, (const double *)NULL, (size_t)g->n));
  }
  if (bc->nrob) {
    HPMG_CALL(dev_copy(&g->rob_ptr, bc->rob_ptr, (size_t)(bc->nrob + 1)));
    HPMG_CALL(dev_copy(&g->rob_pos, bc->rob_pos, (size_t)bc->nrob));
    HPMG_CALL(dev_copy(&g->rob_w, bc->rob_w, (size_t)bc->rob_ptr[bc->nrob]));
  }
  g->bc = 1;
  return HPMG_SUCCESS;
}

extern "C" hpmg_error hpmg_p1_gpu_get_lift(hpmg_p1_gpu g, double *lift) {
  HPMG_CHECK_ARG(g->bc && g->ndir, "P1 GPU: no Dirichlet nodes were set (hpmg_p1_gpu_set_bc)");
  return hpmg_cuda_download(lift, g->lift, sizeof(double) * (size_t)g->n);
}

extern "C" hpmg_error hpmg_p1_gpu_assemble(hpmg_p1_gpu g, const hpmg_p1_coef *cf, double *kernel_s) {
  HPMG_CHECK_ARG(g->assemble, "P1 GPU: this operator was created without the assembly data");
  const double *sig = NULL;
  if (cf->sigma) {
    if (!g->sigma || g->sigma_comps != cf->comps) {
      hpmg_cuda_free(g->sigma);
      g->sigma = NULL;
      HPMG_CALL(hpmg_cuda_malloc(sizeof(double) * (size_t)(cf->comps * g->nc), (void **)&g->sigma));
      g->sigma_comps = cf->comps;
    }
    HPMG_CALL(hpmg_cuda_upload(g->sigma, cf->sigma, sizeof(double) * (size_t)(cf->comps * g->nc)));
    sig = g->sigma;
  }
  cudaEvent_t e0, e1;
  HPMG_CU(cudaEventCreate(&e0));
  HPMG_CU(cudaEventCreate(&e1));
  HPMG_CU(cudaEventRecord(e0));
  if (g->dim == 3)
    local_kernel<3><<<blocks(g->nc, 128), 128>>>(g->nc, g->cells, g->x[0], g->x[1], g->x[2], sig, cf->comps, cf->lambda,
                                                 g->scratch);
  else
    local_kernel<2><<<blocks(g->nc, 128), 128>>>(g->nc, g->cells, g->x[0], g->x[1], g->x[1], sig, cf->comps, cf->lambda,
                                                 g->scratch);
  HPMG_CU_LAUNCH();
  gather_kernel<<<blocks(g->nnz, 256), 256>>>(g->nnz, g->cptr, g->cidx, g->scratch, g->val);
  HPMG_CU_LAUNCH();
  if (g->bc && g->nrob) {
    robin_kernel<<<blocks(g->nrob, 256), 256>>>(g->nrob, g->rob_ptr, g->rob_pos, g->rob_w, g->val);
    HPMG_CU_LAUNCH();
  }
  if (g->bc && g->ndir) {
    dirichlet_kernel<<<blocks(g->n, 128), 128>>>(g->n, g->rowptr, g->col, g->dir, g->gd, g->val, g->lift);
    HPMG_CU_LAUNCH();
  }
  HPMG_CU(cudaEventRecord(e1));
  HPMG_CU(cudaEventSynchronize(e1));
  float ms = 0;
  HPMG_CU(cudaEventElapsedTime(&ms, e0, e1));
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  if (kernel_s) *kernel_s = 1e-3 * ms;
  return update_invdiag(g);
}

extern "C" hpmg_error hpmg_p1_gpu_get_values(hpmg_p1_gpu g, double *val) {
  return hpmg_cuda_download(val, g->val, sizeof(double) * (size_t)g->nnz);
}
extern "C" hpmg_error hpmg_p1_gpu_set_values(hpmg_p1_gpu g, const double *val) {
  HPMG_CALL(hpmg_cuda_upload(g->val, val, sizeof(double) * (size_t)g->nnz));
  return update_invdiag(g);
}

static hpmg_error gpu_apply(void *ctx, const hpmg_vec *x, hpmg_vec *y) {
  hpmg_p1_gpu g = (hpmg_p1_gpu)ctx;
  spmv_kernel<<<blocks(g->n, 128), 128>>>(g->n, g->rowptr, g->col, g->val, (const double *)x->data, (double *)y->data);
  HPMG_CU_LAUNCH();
  return HPMG_SUCCESS;
}
static hpmg_error gpu_jacobi(void *ctx, const hpmg_vec *r, hpmg_vec *z) {
  hpmg_p1_gpu g = (hpmg_p1_gpu)ctx;
  jacobi_kernel<<<blocks(g->n, 256), 256>>>(g->n, g->invdiag, (const double *)r->data, (double *)z->data);
  HPMG_CU_LAUNCH();
  return HPMG_SUCCESS;
}
extern "C" hpmg_linop hpmg_p1_gpu_linop(hpmg_p1_gpu g) {
  hpmg_linop A = {g, gpu_apply, NULL, NULL};
  return A;
}
extern "C" hpmg_linop hpmg_p1_gpu_jacobi(hpmg_p1_gpu g) {
  hpmg_linop M = {g, gpu_jacobi, NULL, NULL};
  return M;
}
