/* GPU half of the direct box FD solver (src/disc/fd/fd_direct.h): the same
 * algorithm as fd_direct.c with cuFFT, which has no real-to-real transforms.
 *
 * Every FFTW r2r kind the solver uses is one batched cuFFT transform (D2Z,
 * Z2D or Z2Z) with O(n) pre-processing (gather: extension, sign, twiddle)
 * and post-processing (scatter: real/imaginary part, twiddle, reversal); the
 * per-kind formulas are in src/disc/fd/fd_direct_xform.h, shared with a host
 * test that checks them against FFTW's r2r kinds.
 * A direction's lines go through a staging
 * buffer in chunks of at most chunk_bytes; along x a line is contiguous
 * in the staging buffer, along y and z the line index is the fastest, so the
 * gather and scatter kernels read and write with unit stride across threads.
 * The tridiagonal direction: one thread per line, Thomas (cyclic:
 * Sherman-Morrison) with its modified upper diagonal in a scratch array laid
 * out like the data (coalesced for lines along y and z).
 * Every direction periodic and uniform (no tridiagonal direction):
 * the per-direction R2HC / HC2R pairs are the real and imaginary parts of one
 * multi-dimensional real DFT, so one cuFFT D2Z plan, one division kernel and
 * one Z2D plan replace the gather / FFT / scatter passes per direction (the
 * fast path; see Plan::fast). */
#include <cufft.h>
#include <cusparse.h>
#include "disc/fd/cuda/fd_cuda.h"
extern "C" {
#include "disc/fd/fd_direct.h"
}
#include "disc/fd/fd_direct_xform.h"

#define FDD_CUSPARSE(call)                                                                    \
  do {                                                                                        \
    cusparseStatus_t fdd_cs_e_ = (call);                                                      \
    if (fdd_cs_e_ != CUSPARSE_STATUS_SUCCESS)                                                 \
      return hpmg_error_set(HPMG_ERR_BACKEND, "cuSPARSE error %d in %s (%s:%d)", (int)fdd_cs_e_, \
                            #call, __FILE__, __LINE__);                                       \
  } while (0)

#define FDD_CUFFT(call)                                                                      \
  do {                                                                                       \
    cufftResult fdd_cf_e_ = (call);                                                          \
    if (fdd_cf_e_ != CUFFT_SUCCESS)                                                          \
      return hpmg_error_set(HPMG_ERR_BACKEND, "cuFFT error %d in %s (%s:%d)", (int)fdd_cf_e_, \
                            #call, __FILE__, __LINE__);                                      \
  } while (0)

namespace {

size_t chunk_bytes = (size_t)1 << 30; /* staging buffer per chunk of lines (complex, L per line) */
int tri_impl = 0;

struct Dir {
  int64_t n;
  int uniform, periodic, singular;
  fd_direct_kind kf, kb;
  double norm, h;
  int wconst;
  double *mu, *w, *lo, *di, *up; /* device */
};

struct XPlan { /* one transform kind along one direction */
  fd_direct_kind kind;
  cufftType type;
  int64_t L, in, out; /* FFT length, input and output entries per line */
  cufftHandle full, rem;
  int has_full, has_rem;
};

struct Plan {
  int dim, tri, singular;
  int64_t n[3], size, M[3], Mc[3];
  double lambda;
  Dir dir[3];
  XPlan xf[3], xb[3];
  void *A, *B, *work;       /* staging buffers, cuFFT work area */
  double *cp, *z;           /* tridiagonal scratch (z: periodic direction) */
  int tri_impl;             /* 0: own kernel; 1: cuSPARSE (non-periodic tridiagonal direction) */
  cusparseHandle_t sp;      /* cuSPARSE: handle, the three diagonals (laid out like the data), buffer */
  double *dl, *dd, *du;
  void *spbuf;
  double *red;              /* defect sums */
  /* fast path (every direction periodic and uniform): one D2Z of the compact array into
   * Z (n2 x n1 x (n0/2+1) complex, out of place: the caller's array has no
   * room for the padding of an in-place real-to-complex transform), one Z2D
   * back; fast = 0 elsewhere */
  int fast;
  cufftHandle pf, pb;
  int has_pf, has_pb;
  double2 *Z;
};

__device__ __forceinline__ int64_t gtid() {
  return blockIdx.x * (int64_t)blockDim.x + threadIdx.x + (int64_t)blockIdx.y * gridDim.x * blockDim.x;
}

__global__ void k_gather(fd_direct_kind kind, int a, int64_t n0, int64_t n1, int64_t n, int64_t m0, int64_t Mc,
                         const double *__restrict__ x, double *__restrict__ A, double *__restrict__ B) {
  fdd_gather_at(kind, a, n0, n1, n, m0, Mc, gtid(), x, A, B);
}

__global__ void k_scatter(fd_direct_kind kind, int a, int64_t n0, int64_t n1, int64_t n, int64_t m0, int64_t Mc,
                          const double *__restrict__ A, const double *__restrict__ B, double *__restrict__ x) {
  fdd_scatter_at(kind, a, n0, n1, n, m0, Mc, gtid(), A, B, x);
}

/* u = b / prod_{uniform d} w_d; sums of b and |b| into red (singular problems) */
__global__ void k_scale_in(int64_t n0, int64_t n1, int64_t size, int t, const double *__restrict__ w0,
                           const double *__restrict__ w1, const double *__restrict__ w2, const double *__restrict__ b,
                           double *__restrict__ u, double *red) {
  const int64_t c = gtid();
  double v = 0;
  if (c < size) {
    v = b[c];
    u[c] = fdd_scale_in(c, n0, n1, t, w0, w1, w2, v);
  }
  if (red) { /* every thread of the warp takes part in the shuffles */
    double s = v, s2 = fabs(v);
    for (int o = 16; o > 0; o >>= 1) {
      s += __shfl_down_sync(0xffffffffu, s, o);
      s2 += __shfl_down_sync(0xffffffffu, s2, o);
    }
    if ((threadIdx.x & 31) == 0) { atomicAdd(red, s); atomicAdd(red + 1, s2); }
  }
}

__global__ void k_divide(int64_t n0, int64_t n1, int64_t size, double lam, double scale, const double *__restrict__ m0,
                         const double *__restrict__ m1, const double *__restrict__ m2, double *__restrict__ u) {
  const int64_t c = gtid();
  if (c >= size) return;
  const double s = fdd_sigma(c, n0, n1, -1, lam, m0, m1, m2);
  u[c] = s > 0 ? u[c] * scale / s : 0; /* s == 0: the singular constant mode */
}

/* fast path: one thread per complex entry of the D2Z output */
__global__ void k_divide_fast(int64_t nh, int64_t n1, int64_t csize, double lam, double scale,
                              const double *__restrict__ m0, const double *__restrict__ m1,
                              const double *__restrict__ m2, double *__restrict__ Z) {
  const int64_t e = gtid();
  if (e < csize) fdd_divide_fast_at(e, nh, n1, lam, scale, m0, m1, m2, Z);
}

/* one thread per line along t */
__global__ void k_tri(int t, int64_t n0, int64_t n1, int64_t lines, int64_t N, int64_t st, double lam, double scale,
                      int singular, int periodic, const double *__restrict__ m0, const double *__restrict__ m1,
                      const double *__restrict__ m2, const double *__restrict__ lo, const double *__restrict__ di,
                      const double *__restrict__ up, const double *__restrict__ w, double *__restrict__ g,
                      double *__restrict__ cp, double *__restrict__ z) {
  const int64_t q = gtid();
  if (q >= lines) return;
  fdd_tri_line(q, t, n0, n1, N, st, lam, scale, singular, periodic, m0, m1, m2, lo, di, up, w, g, cp, z);
}

/* cuSPARSE path: the diagonals of (K + sigma W) per line, at the data's
 * indices (along x: strided batch; along y, z: interleaved), and g *= scale.
 * The constant mode's line of a singular problem is projected and its first
 * unknown pinned to 0 (row 0 = identity, row 1 decoupled from it). */
__global__ void k_tri_fill(int t, int64_t n0, int64_t n1, int64_t size, int64_t N, int64_t st, double lam,
                           double scale, const double *__restrict__ m0, const double *__restrict__ m1,
                           const double *__restrict__ m2, const double *__restrict__ lo, const double *__restrict__ di,
                           const double *__restrict__ up, const double *__restrict__ w, double *__restrict__ g,
                           double *__restrict__ dl, double *__restrict__ dd, double *__restrict__ du) {
  const int64_t c = gtid();
  if (c >= size) return;
  const int64_t j = (c / st) % N;
  const double sg = fdd_sigma(c, n0, n1, t, lam, m0, m1, m2);
  dl[c] = j > 0 ? -lo[j] : 0;
  du[c] = j < N - 1 ? -up[j] : 0;
  dd[c] = di[j] + sg * w[j];
  g[c] *= scale;
}
__global__ void k_tri_singular_pre(int64_t N, int64_t st, const double *__restrict__ w, double *__restrict__ g,
                                   double *__restrict__ dl, double *__restrict__ dd, double *__restrict__ du) {
  if (gtid() != 0) return;
  double sd = 0, sw = 0;
  for (int64_t j = 0; j < N; j++) { sd += g[j * st]; sw += w[j]; }
  for (int64_t j = 0; j < N; j++) g[j * st] -= w[j] * sd / sw;
  g[0] = 0; dd[0] = 1; du[0] = 0;
  if (N > 1) dl[st] = 0;
}
__global__ void k_tri_singular_post(int64_t N, int64_t st, const double *__restrict__ w, double *__restrict__ g) {
  if (gtid() != 0) return;
  double mw = 0, sw = 0;
  for (int64_t j = 0; j < N; j++) { mw += w[j] * g[j * st]; sw += w[j]; }
  for (int64_t j = 0; j < N; j++) g[j * st] -= mw / sw;
}

void blocks1d(int64_t N, dim3 *g, dim3 *b) {
  *b = dim3(256);
  const int64_t nb = (N + 255) / 256 > 0 ? (N + 255) / 256 : 1;
  const int64_t gx = nb < 65535 ? nb : 65535;
  *g = dim3((unsigned)gx, (unsigned)((nb + gx - 1) / gx));
}

hpmg_error make_xplan(Plan *p, int a, fd_direct_kind kind, XPlan *x, size_t *ws_max) {
  const int64_t n = p->n[a], M = p->M[a], Mc = p->Mc[a];
  const int fft = fdd_fft(kind);
  x->kind = kind;
  x->type = fft == FDD_D2Z ? CUFFT_D2Z : (fft == FDD_Z2D ? CUFFT_Z2D : CUFFT_Z2Z);
  x->L = fdd_len(kind, n);
  x->in = fdd_in_len(kind, n);
  x->out = fdd_out_len(kind, n);
  const int64_t counts[2] = {Mc, M % Mc};
  for (int r = 0; r < 2; r++) {
    const int64_t B = counts[r];
    if (B == 0) continue;
    cufftHandle *h = r ? &x->rem : &x->full;
    FDD_CUFFT(cufftCreate(h));
    if (r) x->has_rem = 1; else x->has_full = 1;
    FDD_CUFFT(cufftSetAutoAllocation(*h, 0));
    long long len = x->L, inembed = x->in, onembed = x->out;
    /* along x a line is contiguous in the staging buffer; along y, z the line index is the fastest */
    const long long is = a == 0 ? 1 : B, id = a == 0 ? x->in : 1;
    const long long os = a == 0 ? 1 : B, od = a == 0 ? x->out : 1;
    size_t ws = 0;
    FDD_CUFFT(cufftMakePlanMany64(*h, 1, &len, &inembed, is, id, &onembed, os, od, x->type, (long long)B, &ws));
    if (ws > *ws_max) *ws_max = ws;
  }
  return HPMG_SUCCESS;
}

hpmg_error transform(Plan *p, int a, XPlan *x, double *u) {
  const int64_t n = p->n[a], M = p->M[a], Mc = p->Mc[a];
  const int64_t n0 = p->n[0], n1 = p->n[1];
  for (int64_t m0 = 0; m0 < M; m0 += Mc) {
    const int64_t B = M - m0 < Mc ? M - m0 : Mc;
    const cufftHandle h = B == Mc ? x->full : x->rem;
    dim3 g, b;
    blocks1d(B * x->in, &g, &b);
    k_gather<<<g, b>>>(x->kind, a, n0, n1, n, m0, B, u, (double *)p->A, (double *)p->B);
    HPMG_CU_LAUNCH();
    if (x->type == CUFFT_D2Z) FDD_CUFFT(cufftExecD2Z(h, (cufftDoubleReal *)p->A, (cufftDoubleComplex *)p->B));
    else if (x->type == CUFFT_Z2D) FDD_CUFFT(cufftExecZ2D(h, (cufftDoubleComplex *)p->B, (cufftDoubleReal *)p->A));
    else FDD_CUFFT(cufftExecZ2Z(h, (cufftDoubleComplex *)p->A, (cufftDoubleComplex *)p->A, CUFFT_FORWARD));
    blocks1d(B * n, &g, &b);
    k_scatter<<<g, b>>>(x->kind, a, n0, n1, n, m0, B, (const double *)p->A, (const double *)p->B, u);
    HPMG_CU_LAUNCH();
  }
  return HPMG_SUCCESS;
}

void destroy(Plan *p) {
  if (!p) return;
  for (int d = 0; d < 3; d++) {
    XPlan *xs[2] = {&p->xf[d], &p->xb[d]};
    for (int r = 0; r < 2; r++) {
      if (xs[r]->has_full) cufftDestroy(xs[r]->full);
      if (xs[r]->has_rem) cufftDestroy(xs[r]->rem);
    }
    cudaFree(p->dir[d].mu); cudaFree(p->dir[d].w); cudaFree(p->dir[d].lo); cudaFree(p->dir[d].di);
    cudaFree(p->dir[d].up);
  }
  if (p->has_pf) cufftDestroy(p->pf);
  if (p->has_pb) cufftDestroy(p->pb);
  cudaFree(p->Z);
  cudaFree(p->A); cudaFree(p->B); cudaFree(p->work); cudaFree(p->cp); cudaFree(p->z); cudaFree(p->red);
  cudaFree(p->dl); cudaFree(p->dd); cudaFree(p->du); cudaFree(p->spbuf);
  if (p->sp) cusparseDestroy(p->sp);
  free(p);
}

hpmg_error upload(double **d, const double *h, int64_t n) {
  HPMG_CU(cudaMalloc(d, sizeof(double) * (size_t)n));
  HPMG_CU(cudaMemcpy(*d, h, sizeof(double) * (size_t)n, cudaMemcpyHostToDevice));
  return HPMG_SUCCESS;
}

/* the fast path's plans (rank dim, slowest direction first, compact real
 * array, compact complex array) sharing one work area, Z and the defect sums */
hpmg_error create_fast(Plan *p) {
  const int dim = p->dim;
  long long nn[3];
  for (int d = 0; d < dim; d++) nn[d] = p->n[dim - 1 - d];
  FDD_CUFFT(cufftCreate(&p->pf));
  p->has_pf = 1;
  FDD_CUFFT(cufftCreate(&p->pb));
  p->has_pb = 1;
  /* one work area for both plans instead of one each */
  FDD_CUFFT(cufftSetAutoAllocation(p->pf, 0));
  FDD_CUFFT(cufftSetAutoAllocation(p->pb, 0));
  size_t wf = 0, wb = 0;
  FDD_CUFFT(cufftMakePlanMany64(p->pf, dim, nn, nullptr, 1, 0, nullptr, 1, 0, CUFFT_D2Z, 1, &wf));
  FDD_CUFFT(cufftMakePlanMany64(p->pb, dim, nn, nullptr, 1, 0, nullptr, 1, 0, CUFFT_Z2D, 1, &wb));
  const size_t ws = wf > wb ? wf : wb;
  const size_t bytes = sizeof(double2) * (size_t)((p->n[0] / 2 + 1) * p->n[1] * p->n[2]);
  char buf[32];
  if (cudaMalloc(&p->Z, bytes) != cudaSuccess || (ws && cudaMalloc(&p->work, ws) != cudaSuccess) ||
      cudaMalloc(&p->red, 2 * sizeof(double)) != cudaSuccess)
    return hpmg_error_set(HPMG_ERR_MEMORY, "fd: direct solver: cannot allocate %s of FFT work arrays on the GPU",
                          hpmg_format_bytes((double)(bytes + ws), buf, sizeof buf));
  FDD_CUFFT(cufftSetWorkArea(p->pf, p->work));
  FDD_CUFFT(cufftSetWorkArea(p->pb, p->work));
  return HPMG_SUCCESS;
}

hpmg_error create(int dim, const fd_direct_dir *dirs, double lambda, Plan *p) {
  p->dim = dim;
  p->lambda = lambda;
  p->tri = -1;
  p->size = 1;
  int neumann_like = 1;
  for (int d = 0; d < 3; d++) {
    p->n[d] = d < dim ? dirs[d].n : 1;
    p->size *= p->n[d];
  }
  for (int d = 0; d < dim; d++) {
    Dir *D = &p->dir[d];
    D->n = dirs[d].n; D->uniform = dirs[d].uniform; D->periodic = dirs[d].periodic; D->singular = dirs[d].singular;
    D->kf = dirs[d].kf; D->kb = dirs[d].kb; D->norm = dirs[d].norm; D->h = dirs[d].h; D->wconst = dirs[d].wconst;
    if (!D->singular) neumann_like = 0;
    if (!D->uniform) p->tri = d;
    HPMG_CALL(upload(&D->mu, dirs[d].mu, D->n));
    HPMG_CALL(upload(&D->w, dirs[d].w, D->n));
    HPMG_CALL(upload(&D->lo, dirs[d].lo, D->n));
    HPMG_CALL(upload(&D->di, dirs[d].di, D->n));
    HPMG_CALL(upload(&D->up, dirs[d].up, D->n));
  }
  p->singular = neumann_like && lambda == 0;
  /* a stretched periodic direction is a cyclic tridiagonal one: general path */
  p->fast = p->tri < 0;
  for (int d = 0; d < dim; d++) p->fast = p->fast && p->dir[d].periodic;
  if (p->fast) return create_fast(p);
  size_t ws = 0, bytesA = 0, bytesB = 0;
  for (int d = 0; d < dim; d++) {
    if (d == p->tri) continue;
    p->M[d] = p->size / p->n[d];
    int64_t Lmax = fdd_len(p->dir[d].kf, p->n[d]);
    if (fdd_len(p->dir[d].kb, p->n[d]) > Lmax) Lmax = fdd_len(p->dir[d].kb, p->n[d]);
    const int64_t Mc = fdd_chunk_lines(Lmax, p->M[d], chunk_bytes);
    p->Mc[d] = Mc;
    HPMG_CALL(make_xplan(p, d, p->dir[d].kf, &p->xf[d], &ws));
    HPMG_CALL(make_xplan(p, d, p->dir[d].kb, &p->xb[d], &ws));
    const size_t a = 16 * (size_t)Mc * (size_t)Lmax, b = 16 * (size_t)Mc * (size_t)(Lmax / 2 + 1);
    if (a > bytesA) bytesA = a;
    if (b > bytesB) bytesB = b;
  }
  char buf[32];
  if (cudaMalloc(&p->A, bytesA) != cudaSuccess || cudaMalloc(&p->B, bytesB) != cudaSuccess ||
      (ws && cudaMalloc(&p->work, ws) != cudaSuccess) || cudaMalloc(&p->red, 2 * sizeof(double)) != cudaSuccess)
    return hpmg_error_set(HPMG_ERR_MEMORY, "fd: direct solver: cannot allocate %s of staging buffers on the GPU",
                          hpmg_format_bytes((double)(bytesA + bytesB + ws), buf, sizeof buf));
  for (int d = 0; d < dim; d++) {
    XPlan *xs[2] = {&p->xf[d], &p->xb[d]};
    for (int r = 0; r < 2; r++) {
      if (xs[r]->has_full) FDD_CUFFT(cufftSetWorkArea(xs[r]->full, p->work));
      if (xs[r]->has_rem) FDD_CUFFT(cufftSetWorkArea(xs[r]->rem, p->work));
    }
  }
  p->tri_impl = tri_impl;
  if (p->tri >= 0 && p->tri_impl == 1 && !p->dir[p->tri].periodic) {
    /* cuSPARSE: three diagonals like the data, and its buffer */
    const size_t bytes = sizeof(double) * (size_t)p->size;
    if (cudaMalloc(&p->dl, bytes) != cudaSuccess || cudaMalloc(&p->dd, bytes) != cudaSuccess ||
        cudaMalloc(&p->du, bytes) != cudaSuccess)
      return hpmg_error_set(HPMG_ERR_MEMORY, "fd: direct solver: cannot allocate 3 x %s of diagonals on the GPU",
                            hpmg_format_bytes((double)bytes, buf, sizeof buf));
    FDD_CUSPARSE(cusparseCreate(&p->sp));
    const int t = p->tri;
    const int64_t N = p->n[t], n0 = p->n[0], n1 = p->n[1];
    size_t sb = 0;
    if (t == 0)
      FDD_CUSPARSE(cusparseDgtsv2StridedBatch_bufferSizeExt(p->sp, (int)N, p->dl, p->dd, p->du, p->dd,
                                                           (int)(p->size / N), (int)N, &sb));
    else
      FDD_CUSPARSE(cusparseDgtsvInterleavedBatch_bufferSizeExt(p->sp, 0, (int)N, p->dl, p->dd, p->du, p->dd,
                                                              (int)(t == 1 ? n0 : n0 * n1), &sb));
    if (cudaMalloc(&p->spbuf, sb ? sb : 1) != cudaSuccess)
      return hpmg_error_set(HPMG_ERR_MEMORY, "fd: direct solver: cannot allocate cuSPARSE's buffer");
    return HPMG_SUCCESS;
  }
  if (p->tri >= 0) {
    p->tri_impl = 0; /* periodic: cuSPARSE has no cyclic solver */
    const size_t bytes = sizeof(double) * (size_t)p->size;
    if (cudaMalloc(&p->cp, bytes) != cudaSuccess || (p->dir[p->tri].periodic && cudaMalloc(&p->z, bytes) != cudaSuccess))
      return hpmg_error_set(HPMG_ERR_MEMORY, "fd: direct solver: cannot allocate the tridiagonal scratch (%s) on the GPU",
                            hpmg_format_bytes((double)bytes, buf, sizeof buf));
  }
  return HPMG_SUCCESS;
}

hpmg_error tri_cusparse(Plan *p, double *u, double scale) {
  const int t = p->tri;
  const Dir *T = &p->dir[t];
  const int64_t n0 = p->n[0], n1 = p->n[1], N = T->n, st = t == 0 ? 1 : (t == 1 ? n0 : n0 * n1);
  const double *m2 = p->dim == 3 ? p->dir[2].mu : nullptr;
  dim3 g, b;
  blocks1d(p->size, &g, &b);
  k_tri_fill<<<g, b>>>(t, n0, n1, p->size, N, st, p->lambda, scale, p->dir[0].mu, p->dir[1].mu, m2, T->lo, T->di,
                       T->up, T->w, u, p->dl, p->dd, p->du);
  HPMG_CU_LAUNCH();
  if (p->singular) {
    k_tri_singular_pre<<<1, 32>>>(N, st, T->w, u, p->dl, p->dd, p->du);
    HPMG_CU_LAUNCH();
  }
  if (t == 0)
    FDD_CUSPARSE(cusparseDgtsv2StridedBatch(p->sp, (int)N, p->dl, p->dd, p->du, u, (int)(p->size / N), (int)N,
                                            p->spbuf));
  else if (t == 2)
    FDD_CUSPARSE(cusparseDgtsvInterleavedBatch(p->sp, 0, (int)N, p->dl, p->dd, p->du, u, (int)(n0 * n1), p->spbuf));
  else /* along y: interleaved within each z-plane */
    for (int64_t k = 0; k < p->n[2]; k++) {
      const int64_t o = k * n0 * n1;
      FDD_CUSPARSE(cusparseDgtsvInterleavedBatch(p->sp, 0, (int)N, p->dl + o, p->dd + o, p->du + o, u + o, (int)n0,
                                                 p->spbuf));
    }
  if (p->singular) {
    k_tri_singular_post<<<1, 32>>>(N, st, T->w, u);
    HPMG_CU_LAUNCH();
  }
  return HPMG_SUCCESS;
}

/* the fast path: the same scaling, defect sums and skip rule as solve, the
 * transforms and division on Z */
hpmg_error solve_fast(Plan *p, const double *b, double *u, double *sum, double *abs) {
  const int64_t n0 = p->n[0], n1 = p->n[1], size = p->size, nh = n0 / 2 + 1, csize = nh * n1 * p->n[2];
  const double *w2 = p->dim == 3 ? p->dir[2].w : nullptr, *m2 = p->dim == 3 ? p->dir[2].mu : nullptr;
  dim3 g, bl;
  const int want = sum != nullptr && p->singular;
  /* periodic widths are all h (wconst): an in-place non-singular solve folds
   * W into the scale; otherwise b / W goes to u, which the D2Z then reads
   * (b itself is const and an out-of-place transform may overwrite its input) */
  const int skip = b == u && !p->singular;
  double norm = 1;
  if (skip)
    for (int d = 0; d < p->dim; d++) norm *= p->dir[d].h;
  else {
    if (want) HPMG_CU(cudaMemset(p->red, 0, 2 * sizeof(double)));
    blocks1d(size, &g, &bl);
    k_scale_in<<<g, bl>>>(n0, n1, size, -1, p->dir[0].w, p->dir[1].w, w2, b, u, want ? p->red : nullptr);
    HPMG_CU_LAUNCH();
  }
  for (int d = 0; d < p->dim; d++) norm *= p->dir[d].norm;
  FDD_CUFFT(cufftExecD2Z(p->pf, (cufftDoubleReal *)u, (cufftDoubleComplex *)p->Z));
  blocks1d(csize, &g, &bl);
  k_divide_fast<<<g, bl>>>(nh, n1, csize, p->lambda, 1 / norm, p->dir[0].mu, p->dir[1].mu, m2, (double *)p->Z);
  HPMG_CU_LAUNCH();
  FDD_CUFFT(cufftExecZ2D(p->pb, (cufftDoubleComplex *)p->Z, (cufftDoubleReal *)u));
  if (want) {
    double h[2];
    HPMG_CU(cudaMemcpy(h, p->red, sizeof h, cudaMemcpyDeviceToHost));
    *sum = h[0];
    *abs = h[1];
  }
  return HPMG_SUCCESS;
}

hpmg_error solve(Plan *p, const double *b, double *u, double *sum, double *abs) {
  if (p->fast) return solve_fast(p, b, u, sum, abs);
  const int64_t n0 = p->n[0], n1 = p->n[1], size = p->size;
  const int t = p->tri;
  const double *w2 = p->dim == 3 ? p->dir[2].w : nullptr, *m2 = p->dim == 3 ? p->dir[2].mu : nullptr;
  dim3 g, bl;
  blocks1d(size, &g, &bl);
  const int want = sum != nullptr && p->singular;
  /* an in-place solve of a non-singular problem whose transformed directions
   * all have the widths h: the division by W goes into the final scale */
  int skip = b == u && !p->singular;
  double hprod = 1;
  for (int d = 0; d < p->dim; d++)
    if (d != t) {
      skip = skip && p->dir[d].wconst;
      hprod *= p->dir[d].h;
    }
  if (!skip) {
    hprod = 1;
    if (want) HPMG_CU(cudaMemset(p->red, 0, 2 * sizeof(double)));
    k_scale_in<<<g, bl>>>(n0, n1, size, t, p->dir[0].w, p->dir[1].w, w2, b, u, want ? p->red : nullptr);
    HPMG_CU_LAUNCH();
  }
  double norm = hprod;
  for (int d = 0; d < p->dim; d++)
    if (d != t) {
      HPMG_CALL(transform(p, d, &p->xf[d], u));
      norm *= p->dir[d].norm;
    }
  if (t < 0) {
    k_divide<<<g, bl>>>(n0, n1, size, p->lambda, 1 / norm, p->dir[0].mu, p->dir[1].mu, m2, u);
    HPMG_CU_LAUNCH();
  } else {
    const Dir *T = &p->dir[t];
    const int64_t N = T->n, st = t == 0 ? 1 : (t == 1 ? n0 : n0 * n1), lines = size / N;
    if (p->tri_impl == 1) HPMG_CALL(tri_cusparse(p, u, 1 / norm));
    else {
    blocks1d(lines, &g, &bl);
    k_tri<<<g, bl>>>(t, n0, n1, lines, N, st, p->lambda, 1 / norm, p->singular, T->periodic, p->dir[0].mu,
                     p->dir[1].mu, m2, T->lo, T->di, T->up, T->w, u, p->cp, p->z);
    HPMG_CU_LAUNCH();
    }
  }
  for (int d = p->dim - 1; d >= 0; d--)
    if (d != t) HPMG_CALL(transform(p, d, &p->xb[d], u));
  if (want) {
    double h[2];
    HPMG_CU(cudaMemcpy(h, p->red, sizeof h, cudaMemcpyDeviceToHost));
    *sum = h[0];
    *abs = h[1];
  }
  return HPMG_SUCCESS;
}

__global__ void k_periodic_divide(int64_t n0, int64_t n1, int64_t n2, double2 *__restrict__ Z) {
  const int64_t nh = n0 / 2 + 1, e = gtid();
  if (e >= nh * n1 * n2) return;
  const int64_t i = e % nh, j = (e / nh) % n1, k = e / (nh * n1);
  double si = sinpi((double)i / (double)n0), sj = sinpi((double)j / (double)n1), sk = sinpi((double)k / (double)n2);
  const double lam = 4 * (si * si * n0 * n0 + sj * sj * n1 * n1 + sk * sk * n2 * n2);
  const double f = e == 0 ? 0 : 1 / (lam * (double)n0 * (double)n1 * (double)n2);
  Z[e].x *= f;
  Z[e].y *= f;
}

} // namespace

extern "C" hpmg_error fd_cuda_direct_create(int dim, const fd_direct_dir *dirs, double lambda, void **handle) {
  *handle = nullptr;
  HPMG_CALL(fd_cuda_check_device());
  Plan *p = (Plan *)calloc(1, sizeof(Plan));
  if (!p) return hpmg_error_set(HPMG_ERR_MEMORY, "fd: out of host memory");
  hpmg_error e = create(dim, dirs, lambda, p);
  if (e) { destroy(p); return e; }
  *handle = p;
  return HPMG_SUCCESS;
}

extern "C" hpmg_error fd_cuda_direct_solve(void *h, const double *b, double *u, double *sum, double *abs) {
  return solve((Plan *)h, b, u, sum, abs);
}

extern "C" void fd_cuda_direct_destroy(void *h) { destroy((Plan *)h); }

extern "C" int fd_cuda_direct_fast(void *h) { return h && ((Plan *)h)->fast; }

extern "C" double fd_cuda_direct_bytes(int dim, const int64_t n[3]) {
  double size = 1;
  for (int d = 0; d < dim; d++) size *= (double)n[d];
  /* staging A and B (1 GiB and about half), cuFFT work (about A), tridiagonal scratch;
   * or, every direction periodic (not known here: the larger of the two), the
   * complex array Z (n0/2+1 complex per x-line) and a cuFFT work area of
   * about Z's size */
  const double general = 2.5 * (double)chunk_bytes + 8 * size;
  const double fast = 2 * 16 * (size / (double)n[0]) * (double)(n[0] / 2 + 1);
  return general > fast ? general : fast;
}

extern "C" size_t fd_cuda_direct_set_chunk_bytes(size_t bytes) {
  const size_t old = chunk_bytes;
  if (bytes) chunk_bytes = bytes;
  return old;
}

extern "C" int fd_cuda_direct_set_tri(int which) {
  const int old = tri_impl;
  tri_impl = which;
  return old;
}

extern "C" hpmg_error fd_cuda_periodic_reference(const int64_t cells[3], int reps, double *seconds) {
  HPMG_CALL(fd_cuda_check_device());
  const int64_t n0 = cells[0], n1 = cells[1], n2 = cells[2], nh = n0 / 2 + 1;
  double2 *Z = nullptr;
  char buf[32];
  const size_t bytes = sizeof(double2) * (size_t)(nh * n1 * n2);
  if (cudaMalloc(&Z, bytes) != cudaSuccess)
    return hpmg_error_set(HPMG_ERR_MEMORY, "fd: cuFFT reference: cannot allocate %s",
                          hpmg_format_bytes((double)bytes, buf, sizeof buf));
  cudaMemset(Z, 0, bytes);
  cufftHandle f, bk;
  size_t ws;
  /* in place: the real array is padded to 2 (n0/2+1) in x */
  if (cufftCreate(&f) != CUFFT_SUCCESS || cufftCreate(&bk) != CUFFT_SUCCESS) {
    cudaFree(Z);
    return hpmg_error_set(HPMG_ERR_BACKEND, "fd: cuFFT reference: cufftCreate failed");
  }
  long long nn[3] = {n2, n1, n0}, re[3] = {n2, n1, 2 * nh}, ce[3] = {n2, n1, nh};
  hpmg_error e = HPMG_SUCCESS;
  /* one transform: the distances are the whole arrays (cuFFT refuses 0) */
  const long long rdist = n2 * n1 * 2 * nh, cdist = n2 * n1 * nh;
  const cufftResult rf = cufftMakePlanMany64(f, 3, nn, re, 1, rdist, ce, 1, cdist, CUFFT_D2Z, 1, &ws);
  const cufftResult rb = rf != CUFFT_SUCCESS ? rf : cufftMakePlanMany64(bk, 3, nn, ce, 1, cdist, re, 1, rdist, CUFFT_Z2D, 1, &ws);
  if (rf != CUFFT_SUCCESS || rb != CUFFT_SUCCESS)
    e = hpmg_error_set(HPMG_ERR_BACKEND, "fd: cuFFT reference: planning failed (cufftResult %d)", (int)(rf ? rf : rb));
  dim3 g, b;
  blocks1d(nh * n1 * n2, &g, &b);
  for (int r = -1; r < reps && !e; r++) {
    cudaDeviceSynchronize();
    const double t0 = hpmg_wtime();
    const cufftResult x1 = cufftExecD2Z(f, (cufftDoubleReal *)Z, Z);
    k_periodic_divide<<<g, b>>>(n0, n1, n2, Z);
    const cufftResult x2 = cufftExecZ2D(bk, Z, (cufftDoubleReal *)Z);
    if (x1 != CUFFT_SUCCESS || x2 != CUFFT_SUCCESS || cudaDeviceSynchronize() != cudaSuccess)
      e = hpmg_error_set(HPMG_ERR_BACKEND, "fd: cuFFT reference failed (cufftResult %d, %d)", (int)x1, (int)x2);
    if (r >= 0) seconds[r] = hpmg_wtime() - t0;
  }
  cufftDestroy(f);
  cufftDestroy(bk);
  cudaFree(Z);
  return e;
}
