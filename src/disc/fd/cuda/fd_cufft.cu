/* FD Poisson direct solver on the GPU: DST-I through cuFFT real FFTs.
 *
 * cuFFT has no sine transform. A DST-I of length N = n-1 (FFTW's RODFT00,
 * Y_k = 2 sum_{j=1}^{n-1} x_j sin(pi j k / n), k = 1..n-1, indices are grid
 * indices) is obtained from one real-to-complex FFT of length 2n of the odd
 * extension z = (0, x_1..x_{n-1}, 0, -x_{n-1}..-x_1):
 *     Z_k = sum_m z_m e^{-i pi m k / n} = -2i sum_j x_j sin(pi j k / n),
 * so Y_k = -Im Z_k. Pre-processing = building the extension (one kernel),
 * post-processing = taking -Im (one kernel). Each direction is a batch of
 * (n-1)^(d-1) such transforms; the extension buffer is laid out so that every
 * kernel reads and writes with unit stride across threads: along x the lines
 * are contiguous (istride 1, idist 2n), along y and z the line index is the
 * fastest (istride = lines, idist 1). The solve is
 *     u = S_d..S_1 ( S_1..S_d f / ((2n)^d lambda) ),
 * lambda_k = sum_i 4 sin^2(pi k_i / 2n), since S^2 = 2n I per direction.
 * Memory: the (n+1)^d work array, the extension (2n per line) and the
 * half spectrum (n+1 complex per line): about 5 arrays, plus cuFFT's work. */
#include <cufft.h>
#include "disc/fd/cuda/fd_cuda.h"

#define FD_CUFFT(call)                                                                      \
  do {                                                                                      \
    cufftResult fd_cf_e_ = (call);                                                          \
    if (fd_cf_e_ != CUFFT_SUCCESS)                                                          \
      return hpmg_error_set(HPMG_ERR_BACKEND, "cuFFT error %d in %s (%s:%d)", (int)fd_cf_e_, \
                            #call, __FILE__, __LINE__);                                     \
  } while (0)

namespace {

template <typename T> struct Cplx;
template <> struct Cplx<double> { typedef cufftDoubleComplex type; };
template <> struct Cplx<float> { typedef cufftComplex type; };

/* grid index of line m, position t along direction a */
__device__ __forceinline__ int64_t gidx(int dim, int64_t n, int a, int64_t m, int64_t t) {
  const int64_t s1 = n + 1, s2 = s1 * s1, M1 = n - 1;
  const int64_t p = 1 + m % M1, q = dim == 3 ? 1 + m / M1 : 0; /* the other two coordinates */
  if (a == 0) return t + p * s1 + q * s2;
  if (a == 1) return p + t * s1 + q * s2;
  return p + q * s1 + t * s2;
}

/* ext <- odd extension of u along a; thread x: fast index (t for a=0, m else) */
template <typename T> __global__ void k_extend(int dim, int64_t n, int a, int64_t M, const T *__restrict__ u,
                                               T *__restrict__ ext) {
  const int64_t L = 2 * n;
  const int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x + (int64_t)blockIdx.y * gridDim.x * blockDim.x;
  if (e >= L * M) return;
  int64_t t, m;
  if (a == 0) { t = e % L; m = e / L; } else { m = e % M; t = e / M; }
  T v = 0;
  if (t > 0 && t < n) v = u[gidx(dim, n, a, m, t)];
  else if (t > n) v = -u[gidx(dim, n, a, m, L - t)];
  ext[e] = v;
}

/* u <- -Im(spec) at k = 1..n-1, times scale */
template <typename T> __global__ void k_extract(int dim, int64_t n, int a, int64_t M,
                                                const typename Cplx<T>::type *__restrict__ spec, T *__restrict__ u) {
  const int64_t K = n + 1;
  const int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x + (int64_t)blockIdx.y * gridDim.x * blockDim.x;
  if (e >= K * M) return;
  int64_t k, m;
  if (a == 0) { k = e % K; m = e / K; } else { m = e % M; k = e / M; }
  if (k == 0 || k == n) return;
  u[gidx(dim, n, a, m, k)] = -spec[e].y;
}

template <typename T> __global__ void k_scale(int dim, int64_t n, const double *__restrict__ lam, double norm,
                                              T *__restrict__ u) {
  const int64_t i = 1 + blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  const int64_t j = 1 + blockIdx.y * (int64_t)blockDim.y + threadIdx.y;
  const int64_t k = dim == 3 ? 1 + (int64_t)blockIdx.z : 0;
  if (i >= n || j >= n) return;
  const int64_t s1 = n + 1, c = k * s1 * s1 + j * s1 + i;
  const double l = lam[i] + lam[j] + (dim == 3 ? lam[k] : 0.0);
  u[c] = (T)((double)u[c] / (norm * l));
}

struct Plan {
  int dim;
  int64_t n, M;
  fd_prec prec;
  void *u, *ext, *spec;
  double *lam;
  cufftHandle plan[3];
  int nplans;
};

void blocks1d(int64_t N, dim3 *g, dim3 *b) {
  *b = dim3(256);
  const int64_t nb = (N + 255) / 256;
  const int64_t gx = nb < 65535 ? nb : 65535;
  *g = dim3((unsigned)gx, (unsigned)((nb + gx - 1) / gx));
}

template <typename T> hpmg_error transform(Plan *p) {
  typedef typename Cplx<T>::type C;
  const int64_t n = p->n, M = p->M;
  dim3 g, b;
  for (int a = 0; a < p->dim; a++) {
    blocks1d(2 * n * M, &g, &b);
    k_extend<T><<<g, b>>>(p->dim, n, a, M, (const T *)p->u, (T *)p->ext);
    HPMG_CU_LAUNCH();
    if (sizeof(T) == sizeof(double))
      FD_CUFFT(cufftExecD2Z(p->plan[a], (cufftDoubleReal *)p->ext, (cufftDoubleComplex *)p->spec));
    else
      FD_CUFFT(cufftExecR2C(p->plan[a], (cufftReal *)p->ext, (cufftComplex *)p->spec));
    blocks1d((n + 1) * M, &g, &b);
    k_extract<T><<<g, b>>>(p->dim, n, a, M, (const C *)p->spec, (T *)p->u);
    HPMG_CU_LAUNCH();
  }
  return HPMG_SUCCESS;
}

template <typename T> hpmg_error solve(Plan *p) {
  HPMG_CALL(transform<T>(p));
  dim3 g, b;
  fd_grid3(p->n - 1, p->n - 1, p->dim == 3 ? p->n - 1 : 1, &g, &b);
  k_scale<T><<<g, b>>>(p->dim, p->n, p->lam, pow(2.0 * (double)p->n, p->dim), (T *)p->u);
  HPMG_CU_LAUNCH();
  return transform<T>(p);
}

void destroy(Plan *p) {
  if (!p) return;
  for (int a = 0; a < p->nplans; a++) cufftDestroy(p->plan[a]);
  cudaFree(p->u);
  cudaFree(p->ext);
  cudaFree(p->spec);
  cudaFree(p->lam);
  free(p);
}

hpmg_error create(int dim, int64_t n, fd_prec prec, Plan *p) {
  const size_t sz = prec == FD_DOUBLE ? sizeof(double) : sizeof(float);
  const int64_t M = dim == 2 ? n - 1 : (n - 1) * (n - 1);
  p->dim = dim; p->n = n; p->M = M; p->prec = prec;
  char buf[32];
  const size_t bu = sz * (size_t)fd_points(dim, n), be = sz * (size_t)(2 * n * M), bs = 2 * sz * (size_t)((n + 1) * M);
  if (cudaMalloc(&p->u, bu) != cudaSuccess || cudaMalloc(&p->ext, be) != cudaSuccess ||
      cudaMalloc(&p->spec, bs) != cudaSuccess || cudaMalloc(&p->lam, sizeof(double) * (size_t)(n + 1)) != cudaSuccess)
    return hpmg_error_set(HPMG_ERR_MEMORY, "fd: cuFFT solver: cannot allocate %s on the GPU",
                          hpmg_format_bytes((double)(bu + be + bs), buf, sizeof buf));
  HPMG_CU(cudaMemset(p->u, 0, bu));
  double *lam = (double *)malloc(sizeof(double) * (size_t)(n + 1));
  for (int64_t k = 0; k <= n; k++) {
    const double s = sin(3.14159265358979323846 * (double)k / (double)(2 * n));
    lam[k] = 4 * s * s;
  }
  cudaError_t e = cudaMemcpy(p->lam, lam, sizeof(double) * (size_t)(n + 1), cudaMemcpyHostToDevice);
  free(lam);
  HPMG_CU(e);
  const cufftType type = prec == FD_DOUBLE ? CUFFT_D2Z : CUFFT_R2C;
  for (int a = 0; a < dim; a++) {
    long long len = 2 * n, inembed = 2 * n, onembed = n + 1;
    const long long istride = a == 0 ? 1 : M, idist = a == 0 ? 2 * n : 1;
    const long long ostride = a == 0 ? 1 : M, odist = a == 0 ? n + 1 : 1;
    FD_CUFFT(cufftCreate(&p->plan[a]));
    p->nplans = a + 1;
    size_t ws = 0;
    FD_CUFFT(cufftMakePlanMany64(p->plan[a], 1, &len, &inembed, istride, idist, &onembed, ostride, odist, type,
                                 (long long)M, &ws));
  }
  return HPMG_SUCCESS;
}

} // namespace

extern "C" double fd_cuda_fft_bytes(int dim, int64_t n, fd_prec prec) {
  const double sz = prec == FD_DOUBLE ? 8 : 4, M = dim == 2 ? (double)(n - 1) : (double)(n - 1) * (double)(n - 1);
  /* work array + extension + spectrum + cuFFT work area (about one extension) */
  return sz * ((double)fd_points(dim, n) + 2.0 * (double)n * M * 2 + 2.0 * (double)(n + 1) * M);
}

extern "C" hpmg_error fd_cuda_fft_create(int dim, int64_t n, fd_prec prec, void **handle, void **dbuf) {
  *handle = nullptr;
  *dbuf = nullptr;
  HPMG_CALL(fd_cuda_check_device());
  Plan *p = (Plan *)calloc(1, sizeof(Plan));
  if (!p) return hpmg_error_set(HPMG_ERR_MEMORY, "fd: out of host memory");
  hpmg_error e = create(dim, n, prec, p);
  if (e) { destroy(p); return e; }
  *handle = p;
  *dbuf = p->u;
  return HPMG_SUCCESS;
}

extern "C" hpmg_error fd_cuda_fft_execute(void *h) {
  Plan *p = (Plan *)h;
  return p->prec == FD_DOUBLE ? solve<double>(p) : solve<float>(p);
}

extern "C" void fd_cuda_fft_destroy(void *h) { destroy((Plan *)h); }
