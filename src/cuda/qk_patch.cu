/* Vertex-patch Schwarz smoother on the GPU (paper 000 Sec. 3, Table 4): the
 * CPU algorithm of src/smoothers/patch.c with the fast-diagonalization local
 * solver of src/smoothers/fdm.c, on device vectors.
 *
 * One kernel template, qk_patch_kernel<R, DIM, K, RES, SOLVE>, serves the
 * three variants (--patch-kernel) and the additive mode:
 *   RES   gather the closed patch of x (0 on Dirichlet nodes) into shared
 *         memory and compute the localized residual r = R_j b - Abar_j x by
 *         sum factorization with the m x n rows of the 1D patch matrices;
 *   SOLVE dx = S D^{-1} S^T r by sum factorization, x_int += omega dx.
 *   fused    = RES + SOLVE, one launch per color;
 *   separate = RES (r_int written to a global work vector) then SOLVE
 *              (reading it), two launches per color;
 *   global   = full residual r = b - A x (operator kernel, qk_ops.cu) then
 *              SOLVE, per color (the paper's baseline);
 *   additive = one full residual per step, then SOLVE per color with
 *              omega = 1/2^d (colors only serialize the writes).
 * Patches of one color have disjoint interiors and read each other's
 * interiors never (closures meet on patch boundaries only), so a color is one
 * race-free launch without atomics.
 *
 * Layout (docs/cuda.md): blockDim = (Tp, P): P patches per block (several for
 * small k, one for k >= 5 in 3D), Tp threads per patch. Local arrays are
 * lexicographic with x fastest, in shared memory. Every contraction maps
 * consecutive threads to consecutive output entries of a plane (linear
 * indexing over the plane, idle threads only at the end):
 *   along x: thread (y, i), loop over z;   reads in[z][y][0..], coefficient
 *            rows A[i][0..] with odd stride (n or m): no bank conflicts;
 *   along y: thread (i, x), loop over z;   reads in[z][0..][x] contiguous;
 *   along z: thread (y, x) owns a z-column: the column is loaded into
 *            registers once, all outputs computed from it (3D only).
 * Writes always go to out[z][y][x] with x fastest across threads: conflict
 * free. The 1D factors (Mb, Kb, S, S^T per direction) are copied into shared
 * memory once per block; D^{-1} (m^d entries) is read from global memory
 * (L1/L2-resident) in the pattern of the data. */
#include <stdlib.h>
#include <string.h>
#include "qk_cuda.h"
extern "C" {
#include "smoothers/fdm.h"
}

template <typename R> struct qk_fdm_dev {
  const R *Mb[3], *Kb[3], *S[3], *ST[3], *dinv;
};

struct hpmg_cuda_patch_s {
  int dim, k;
  int64_t n[3], nv[3], N;
  hpmg_patch_mode mode;
  hpmg_patch_kernel kernel;
  double omega;
  hpmg_cuda_op dop; /* not owned: residual of the global variant and the additive mode */
  qk_fdm_dev<double> d;
  qk_fdm_dev<float> f;
  void *mem_d, *mem_f;
  int64_t matvecs;
};

/* one color of one level */
struct qk_patch_geo {
  int64_t n0, n1, n2;     /* free nodes per direction (n2 = 1 in 2D) */
  int64_t cnt0, cnt1;     /* patches of the color in x and y */
  int64_t total;          /* patches of the color */
  int par0, par1, par2;   /* color parity */
};

static constexpr int qk_cmax(int a, int b) { return a > b ? a : b; }
template <int DIM, int K> struct qk_patch_sizes {
  static constexpr int N = 2 * K + 1, M = 2 * K - 1;
  static constexpr int NZ = DIM == 3 ? N : 1, MZ = DIM == 3 ? M : 1;
  static constexpr int NCL = N * N * NZ, NLOC = M * M * MZ;
  /* RES temporaries: tM, tK (closed z, closed y, interior x); 3D: uM, w (closed z, interior y, x) */
  static constexpr int TSZ = NZ * N * M, USZ = N * M * M;
  static constexpr int B1 = qk_cmax(qk_cmax(NCL, DIM == 3 ? 2 * USZ : 0), NLOC); /* X, (uM, w), FDM */
  static constexpr int B2 = qk_cmax(2 * TSZ, NLOC);                            /* (tM, tK), FDM */
  static constexpr int PATCH = B1 + B2;                                      /* per patch */
  /* coefficients per block: [Mb|Kb] (m x n each) and [S|ST] (m x m each) per direction */
  static constexpr int CRES = 2 * DIM * M * N, CSOL = 2 * DIM * M * M;
  static constexpr int TP_RES = N * M, TP_SOL = M * M; /* largest plane of the steps */
};

/* Contraction along DIR of in (dims I0 x I1 x I2, x fastest) with O x NI
 * matrices P, Q (row-major, in shared memory), NI = I_DIR:
 *   a = P in1,   c = (DUAL ? Q in1 : 0) + (IN2 ? P in2 : 0);
 * epi(lin, o0, o1, o2, a, c) receives the output entry (o0, o1, o2) of dims
 * (DIR == 0 ? O : I0, DIR == 1 ? O : I1, DIR == 2 ? O : I2), lin its
 * lexicographic index. BAND (DIR == 2 only, where o is uniform across the
 * threads): skip the structural zeros of the m x n patch rows (interior row
 * i couples to the closed nodes of its cells only; fdm_kernels.inc). */
template <typename R, int DIR, int I0, int I1, int I2, int O, bool DUAL, bool IN2, bool BAND, class Epi>
__device__ __forceinline__ void qk_contract(const R *__restrict__ P, const R *__restrict__ Q, const R *in1,
                                            const R *in2, int tid, int nthr, Epi epi) {
  constexpr int NI = DIR == 0 ? I0 : DIR == 1 ? I1 : I2;
  constexpr int O0 = DIR == 0 ? O : I0, O1 = DIR == 1 ? O : I1;
  if constexpr (DIR < 2) {
    constexpr int PLANE = O0 * O1;
    for (int t = tid; t < PLANE; t += nthr) {
      const int o0 = t % O0, o1 = t / O0, o = DIR == 0 ? o0 : o1;
      /* the thread's coefficient rows in registers, reused for every z: one
       * shared load (data) per FMA instead of two */
      R prow[NI], qrow[DUAL ? NI : 1];
#pragma unroll
      for (int j = 0; j < NI; j++) {
        prow[j] = P[o * NI + j];
        if (DUAL) qrow[j] = Q[o * NI + j];
      }
      for (int z = 0; z < I2; z++) {
        R a = 0, c = 0;
#pragma unroll
        for (int j = 0; j < NI; j++) {
          const int src = DIR == 0 ? (z * I1 + o1) * I0 + j : (z * I1 + j) * I0 + o0;
          const R v = in1[src];
          a += prow[j] * v;
          if (DUAL) c += qrow[j] * v;
          if (IN2) c += prow[j] * in2[src];
        }
        epi((z * O1 + o1) * O0 + o0, o0, o1, z, a, c);
      }
    }
  } else {
    constexpr int PLANE = I0 * I1, K = (NI - 1) / 2;
    for (int t = tid; t < PLANE; t += nthr) {
      R v1[NI], v2[IN2 ? NI : 1];
#pragma unroll
      for (int j = 0; j < NI; j++) {
        v1[j] = in1[j * PLANE + t];
        if (IN2) v2[j] = in2[j * PLANE + t];
      }
#pragma unroll 1
      for (int o = 0; o < O; o++) {
        R a = 0, c = 0;
        const int lo = BAND ? (o < K ? 0 : K) : 0, hi = BAND ? (o >= K - 1 ? NI : K + 1) : NI;
#pragma unroll
        for (int j = 0; j < NI; j++) {
          if (j < lo || j >= hi) continue;
          a += P[o * NI + j] * v1[j];
          if (DUAL) c += Q[o * NI + j] * v1[j];
          if (IN2) c += P[o * NI + j] * v2[j];
        }
        epi(o * PLANE + t, t % I0, t / I0, o, a, c);
      }
    }
  }
}

/* RES: localized residual, SOLVE: local solve and update (see the top).
 * rin: interior right-hand side of SOLVE without RES (b, or the residual);
 * rout: interior residual of RES without SOLVE. */
#define QK_PATCH_MAX_THREADS 512 /* blocks are <= 399 threads (2D k = 10) */
template <typename R, int DIM, int K, bool RES, bool SOLVE>
__global__ void __launch_bounds__(QK_PATCH_MAX_THREADS) qk_patch_kernel(const qk_patch_geo g, const qk_fdm_dev<R> F, const R lam, const R omega,
                                const R *__restrict__ b, R *__restrict__ x, const R *__restrict__ rin,
                                R *__restrict__ rout) {
  using S = qk_patch_sizes<DIM, K>;
  constexpr int N = S::N, M = S::M, NZ = S::NZ, MZ = S::MZ;
  extern __shared__ __align__(16) unsigned char qk_smem[];
  R *coef = reinterpret_cast<R *>(qk_smem);
  R *cMb[3], *cKb[3], *cS[3], *cST[3];
  {
    R *c = coef;
    for (int d = 0; d < DIM; d++) {
      if (RES) { cMb[d] = c; c += M * N; cKb[d] = c; c += M * N; }
      if (SOLVE) { cS[d] = c; c += M * M; cST[d] = c; c += M * M; }
    }
  }
  const int ncoef = (RES ? S::CRES : 0) + (SOLVE ? S::CSOL : 0);
  const int tid = threadIdx.x, nthr = blockDim.x;
  const int btid = threadIdx.y * blockDim.x + threadIdx.x, bthr = blockDim.x * blockDim.y;
  for (int d = 0; d < DIM; d++) {
    if (RES)
      for (int e = btid; e < M * N; e += bthr) {
        cMb[d][e] = F.Mb[d][e];
        cKb[d][e] = F.Kb[d][e];
      }
    if (SOLVE)
      for (int e = btid; e < M * M; e += bthr) {
        cS[d][e] = F.S[d][e];
        cST[d][e] = F.ST[d][e];
      }
  }
  R *buf1 = coef + ncoef + (size_t)threadIdx.y * S::PATCH, *buf2 = buf1 + S::B1;

  const int64_t p = (int64_t)blockIdx.x * blockDim.y + threadIdx.y;
  const bool active = p < g.total;
  const int64_t pc = active ? p : 0;
  const int64_t v0 = 1 + g.par0 + 2 * (pc % g.cnt0), v1 = 1 + g.par1 + 2 * ((pc / g.cnt0) % g.cnt1),
                v2 = 1 + g.par2 + 2 * (pc / (g.cnt0 * g.cnt1));
  /* first interior node of the patch */
  const int64_t s0 = (v0 - 1) * K, s1 = (v1 - 1) * K, s2 = DIM == 3 ? (v2 - 1) * K : 0;
  const int64_t n0 = g.n0, n1 = g.n1;
  auto gidx = [&](int o0, int o1, int o2) -> int64_t { return (s0 + o0) + n0 * ((s1 + o1) + n1 * (s2 + o2)); };
  R *rbuf = DIM == 3 ? buf2 : buf1; /* where RES leaves r / SOLVE starts */

  if (RES) {
    R *X = buf1;
    if (active)
      for (int e = tid; e < S::NCL; e += nthr) {
        const int j0 = e % N, j1 = (e / N) % N, j2 = e / (N * N);
        const int64_t i0 = s0 - 1 + j0, i1 = s1 - 1 + j1, i2 = DIM == 3 ? s2 - 1 + j2 : 0;
        const bool ok = i0 >= 0 && i0 < n0 && i1 >= 0 && i1 < n1 && (DIM == 2 || (i2 >= 0 && i2 < g.n2));
        X[e] = ok ? x[i0 + n0 * (i1 + n1 * i2)] : R(0);
      }
    __syncthreads();
    /* along x: tM = Mb0 X, tK = Kb0 X (+ lam tM in 2D) */
    R *tM = buf2, *tK = buf2 + S::TSZ;
    if (active)
      qk_contract<R, 0, N, N, NZ, M, true, false, false>(cMb[0], cKb[0], X, nullptr, tid, nthr,
                                                         [&](int l, int, int, int, R a, R c) {
                                                           tM[l] = a;
                                                           tK[l] = DIM == 2 ? c + lam * a : c;
                                                         });
    __syncthreads();
    if constexpr (DIM == 3) {
      /* along y: uM = Mb1 tM, w = Kb1 tM + Mb1 tK + lam uM */
      R *uM = buf1, *w = buf1 + S::USZ;
      if (active)
        qk_contract<R, 1, M, N, N, M, true, true, false>(cMb[1], cKb[1], tM, tK, tid, nthr,
                                                         [&](int l, int, int, int, R a, R c) {
                                                           uM[l] = a;
                                                           w[l] = c + lam * a;
                                                         });
      __syncthreads();
      /* along z: r = b - (Kb2 uM + Mb2 w) */
      if (active)
        qk_contract<R, 2, M, M, N, M, true, true, true>(cMb[2], cKb[2], uM, w, tid, nthr,
                                                         [&](int l, int o0, int o1, int o2, R, R c) {
                                                           const int64_t gi = gidx(o0, o1, o2);
                                                           const R r = b[gi] - c;
                                                           if (SOLVE) rbuf[l] = r;
                                                           else rout[gi] = r;
                                                         });
    } else {
      /* along y: r = b - (Kb1 tM + Mb1 tK) */
      if (active)
        qk_contract<R, 1, M, N, 1, M, true, true, false>(cMb[1], cKb[1], tM, tK, tid, nthr,
                                                          [&](int l, int o0, int o1, int o2, R, R c) {
                                                            const int64_t gi = gidx(o0, o1, o2);
                                                            const R r = b[gi] - c;
                                                            if (SOLVE) rbuf[l] = r;
                                                            else rout[gi] = r;
                                                          });
    }
    __syncthreads();
  }
  if (!SOLVE) return;
  if (!RES) {
    if (active)
      for (int e = tid; e < S::NLOC; e += nthr) {
        const int o0 = e % M, o1 = (e / M) % M, o2 = e / (M * M);
        rbuf[e] = rin[gidx(o0, o1, o2)];
      }
    __syncthreads();
  }
  /* y = S D^{-1} S^T r, x_int += omega y; ping-pong between rbuf and the other buffer */
  R *u = rbuf, *t = rbuf == buf1 ? buf2 : buf1;
  const R *dinv = F.dinv;
  auto store = [&](R *dst) { return [=](int l, int, int, int, R a, R) { dst[l] = a; }; };
  if constexpr (DIM == 3) {
    if (active) qk_contract<R, 0, M, M, M, M, false, false, false>(cST[0], nullptr, u, nullptr, tid, nthr, store(t));
    __syncthreads();
    if (active) qk_contract<R, 1, M, M, M, M, false, false, false>(cST[1], nullptr, t, nullptr, tid, nthr, store(u));
    __syncthreads();
    if (active)
      qk_contract<R, 2, M, M, M, M, false, false, false>(cST[2], nullptr, u, nullptr, tid, nthr,
                                                         [&](int l, int, int, int, R a, R) { t[l] = a * dinv[l]; });
    __syncthreads();
    if (active) qk_contract<R, 0, M, M, M, M, false, false, false>(cS[0], nullptr, t, nullptr, tid, nthr, store(u));
    __syncthreads();
    if (active) qk_contract<R, 1, M, M, M, M, false, false, false>(cS[1], nullptr, u, nullptr, tid, nthr, store(t));
    __syncthreads();
    if (active)
      qk_contract<R, 2, M, M, M, M, false, false, false>(cS[2], nullptr, t, nullptr, tid, nthr,
                                                         [&](int, int o0, int o1, int o2, R a, R) {
                                                           x[gidx(o0, o1, o2)] += omega * a;
                                                         });
  } else {
    if (active) qk_contract<R, 0, M, M, 1, M, false, false, false>(cST[0], nullptr, u, nullptr, tid, nthr, store(t));
    __syncthreads();
    if (active)
      qk_contract<R, 1, M, M, 1, M, false, false, false>(cST[1], nullptr, t, nullptr, tid, nthr,
                                                         [&](int l, int, int, int, R a, R) { u[l] = a * dinv[l]; });
    __syncthreads();
    if (active) qk_contract<R, 0, M, M, 1, M, false, false, false>(cS[0], nullptr, u, nullptr, tid, nthr, store(t));
    __syncthreads();
    if (active)
      qk_contract<R, 1, M, M, 1, M, false, false, false>(cS[1], nullptr, t, nullptr, tid, nthr,
                                                         [&](int, int o0, int o1, int o2, R a, R) {
                                                           x[gidx(o0, o1, o2)] += omega * a;
                                                         });
  }
  (void)MZ;
}

/* ------------------------------------------------------------ launching */

enum { QK_PATCH_FUSED = 0, QK_PATCH_RES = 1, QK_PATCH_SOLVE = 2 };

template <typename R, int DIM, int K, bool RES, bool SOLVE>
static hpmg_error launch_one(const qk_patch_geo &g, const qk_fdm_dev<R> &F, R lam, R omega, const R *b, R *x,
                             const R *rin, R *rout) {
  using S = qk_patch_sizes<DIM, K>;
  const int tp = RES ? S::TP_RES : S::TP_SOL;
  const size_t coef = (size_t)((RES ? S::CRES : 0) + (SOLVE ? S::CSOL : 0)) * sizeof(R);
  const size_t per = (size_t)S::PATCH * sizeof(R);
  /* patches per block: ~128+ threads, at most 96 KB of shared memory */
  int P = tp >= 128 ? 1 : (128 + tp - 1) / tp;
  while (P > 1 && coef + P * per > 96 * 1024) P--;
  const size_t smem = coef + P * per;
  static size_t attr_set = 0; /* per instantiation */
  if (smem > 48 * 1024 && smem > attr_set) {
    QK_CU(cudaFuncSetAttribute(qk_patch_kernel<R, DIM, K, RES, SOLVE>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               (int)smem));
    attr_set = smem;
  }
  const int64_t blocks = (g.total + P - 1) / P;
  if (blocks > 0x7fffffff) return hpmg_error_set(HPMG_ERR_BACKEND, "patch smoother: %lld blocks", (long long)blocks);
  qk_patch_kernel<R, DIM, K, RES, SOLVE><<<(unsigned)blocks, dim3(tp, P), smem>>>(g, F, lam, omega, b, x, rin, rout);
  QK_LAUNCH();
  return HPMG_SUCCESS;
}

template <typename R, int DIM, int K>
static hpmg_error launch_k(int which, const qk_patch_geo &g, const qk_fdm_dev<R> &F, R lam, R omega, const R *b,
                           R *x, const R *rin, R *rout) {
  switch (which) {
  case QK_PATCH_FUSED: return launch_one<R, DIM, K, true, true>(g, F, lam, omega, b, x, rin, rout);
  case QK_PATCH_RES: return launch_one<R, DIM, K, true, false>(g, F, lam, omega, b, x, rin, rout);
  default: return launch_one<R, DIM, K, false, true>(g, F, lam, omega, b, x, rin, rout);
  }
}

template <typename R>
static hpmg_error launch(const hpmg_cuda_patch p, int which, const qk_patch_geo &g, const qk_fdm_dev<R> &F, R omega,
                         const R *b, R *x, const R *rin, R *rout) {
  const R lam = (R)(p->dop ? p->dop->lambda : 0.0);
#define QK_PCASE(D, KK) \
  case KK: return launch_k<R, D, KK>(which, g, F, lam, omega, b, x, rin, rout);
  if (p->dim == 2) {
    switch (p->k) {
      QK_PCASE(2, 1) QK_PCASE(2, 2) QK_PCASE(2, 3) QK_PCASE(2, 4) QK_PCASE(2, 5)
      QK_PCASE(2, 6) QK_PCASE(2, 7) QK_PCASE(2, 8) QK_PCASE(2, 9) QK_PCASE(2, 10)
    }
  } else {
    switch (p->k) {
      QK_PCASE(3, 1) QK_PCASE(3, 2) QK_PCASE(3, 3) QK_PCASE(3, 4)
      QK_PCASE(3, 5) QK_PCASE(3, 6) QK_PCASE(3, 7) QK_PCASE(3, 8)
    }
  }
#undef QK_PCASE
  return hpmg_error_set(HPMG_ERR_ARG, "patch smoother: no GPU kernel for degree %d in %dD", p->k, p->dim);
}

/* ------------------------------------------------------------ entry points */

extern "C" hpmg_error hpmg_cuda_patch_check(int dim, int k, hpmg_patch_mode mode, hpmg_local_solver local,
                                            hpmg_patch_kernel kernel) {
  HPMG_CHECK_ARG(kernel == HPMG_PATCH_KERNEL_FUSED || kernel == HPMG_PATCH_KERNEL_SEPARATE ||
                     kernel == HPMG_PATCH_KERNEL_GLOBAL,
                 "unknown --patch-kernel %d", (int)kernel);
  HPMG_CHECK_ARG(mode == HPMG_PATCH_MULTIPLICATIVE || mode == HPMG_PATCH_ADDITIVE, "unknown --patch-mode %d",
                 (int)mode);
  if (local != HPMG_LOCAL_FDM)
    return hpmg_error_set(HPMG_ERR_BACKEND,
                          "--device cuda: --local-solver dense is a CPU reference only; the GPU patch smoother "
                          "uses --local-solver fdm");
  if (!((dim == 2 && k >= 1 && k <= QK_PATCH_MAX_K2) || (dim == 3 && k >= 1 && k <= QK_PATCH_MAX_K3)))
    return hpmg_error_set(HPMG_ERR_BACKEND,
                          "--device cuda: the GPU patch smoother supports degree 1..%d in 2D and 1..%d in 3D "
                          "(got %d in %dD; a 3D patch of higher degree does not fit in shared memory)",
                          QK_PATCH_MAX_K2, QK_PATCH_MAX_K3, k, dim);
  return HPMG_SUCCESS;
}

extern "C" void hpmg_cuda_patch_destroy(hpmg_cuda_patch *pp) {
  hpmg_cuda_patch p = *pp;
  if (!p) return;
  hpmg_cuda_free(p->mem_d);
  hpmg_cuda_free(p->mem_f);
  free(p);
  *pp = NULL;
}

extern "C" hpmg_error hpmg_cuda_patch_create(const hpmg_laplace *op, hpmg_cuda_op dop, hpmg_patch_mode mode,
                                             hpmg_local_solver local, double damping, hpmg_patch_kernel kernel,
                                             hpmg_cuda_patch *out) {
  *out = NULL;
  const hpmg_grid *g = &op->g;
  HPMG_CALL(hpmg_cuda_patch_check(g->dim, g->k, mode, local, kernel));
  HPMG_CHECK_ARG(damping >= 0 && damping <= 1, "--patch-damping must be in (0,1] (0: default)");
  HPMG_CHECK_ARG(dop != NULL, "patch smoother: the level operator is NULL");
  HPMG_CALL(hpmg_cuda_check());
  hpmg_cuda_patch p = (hpmg_cuda_patch)calloc(1, sizeof *p);
  if (!p) return hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate the patch smoother");
  p->dim = g->dim;
  p->k = g->k;
  p->N = g->N;
  p->mode = mode;
  p->kernel = kernel;
  p->dop = dop;
  p->omega = mode == HPMG_PATCH_ADDITIVE ? (damping > 0 ? damping : 1.0 / (1 << g->dim)) : 1.0;
  for (int d = 0; d < 3; d++) {
    p->n[d] = g->n[d];
    p->nv[d] = d < g->dim ? g->cells[d] - 1 : 1;
  }
  /* factors on the host (fdm.c), both precisions, one transfer each */
  hpmg_fdm fdm;
  hpmg_error e = hpmg_fdm_setup(g->dim, g->k, g->h, op->lambda, &fdm);
  if (e) {
    free(p);
    return e;
  }
  e = hpmg_cuda_malloc(fdm.block_len * sizeof(double), &p->mem_d);
  if (!e) e = hpmg_cuda_malloc(fdm.block_len * sizeof(float), &p->mem_f);
  if (!e) e = hpmg_cuda_upload(p->mem_d, fdm.block_d, fdm.block_len * sizeof(double));
  if (!e) e = hpmg_cuda_upload(p->mem_f, fdm.block_f, fdm.block_len * sizeof(float));
  if (!e) {
    const double *bd = (const double *)p->mem_d;
    const float *bf = (const float *)p->mem_f;
#define QK_REBASE(field) \
  p->d.field = bd + (fdm.dbl.field - fdm.block_d); \
  p->f.field = bf + (fdm.flt.field - fdm.block_f);
    for (int d = 0; d < g->dim; d++) {
      QK_REBASE(Mb[d]) QK_REBASE(Kb[d]) QK_REBASE(S[d]) QK_REBASE(ST[d])
    }
    QK_REBASE(dinv)
#undef QK_REBASE
  }
  hpmg_fdm_free(&fdm);
  if (e) {
    hpmg_cuda_patch_destroy(&p);
    return e;
  }
  *out = p;
  return HPMG_SUCCESS;
}

extern "C" int hpmg_cuda_patch_needs_work(hpmg_cuda_patch p) {
  return p->mode == HPMG_PATCH_ADDITIVE || p->kernel != HPMG_PATCH_KERNEL_FUSED;
}

static hpmg_error full_residual(hpmg_cuda_patch p, hpmg_real r, const void *b, const void *x, void *res) {
  const hpmg_kernel_args a = qk_kargs(HPMG_KERNEL_RESIDUAL, x, res, b);
  p->matvecs++;
  return hpmg_cuda_op_kernel(p->dop, r, &a);
}

template <typename R>
static hpmg_error patch_apply(hpmg_cuda_patch p, const qk_fdm_dev<R> &F, hpmg_real real, const R *b, R *x, R *work,
                              int x_is_zero, int reverse, int sweeps) {
  const int ncol = 1 << p->dim;
  if (x_is_zero) QK_CU(cudaMemsetAsync(x, 0, (size_t)p->N * sizeof(R)));
  const int add = p->mode == HPMG_PATCH_ADDITIVE;
  if ((add || p->kernel != HPMG_PATCH_KERNEL_FUSED) && !work)
    return hpmg_error_set(HPMG_ERR_ARG, "patch smoother: this variant needs a work vector");
  for (int sw = 0; sw < sweeps; sw++) {
    const int zero = x_is_zero && sw == 0;
    const R *radd = b; /* additive: the residual of this step */
    if (add && !zero) {
      HPMG_CALL(full_residual(p, real, b, x, work));
      radd = work;
    }
    for (int cc = 0; cc < ncol; cc++) {
      const int c = reverse ? ncol - 1 - cc : cc;
      qk_patch_geo g;
      g.n0 = p->n[0];
      g.n1 = p->n[1];
      g.n2 = p->n[2];
      g.par0 = c & 1;
      g.par1 = (c >> 1) & 1;
      g.par2 = (c >> 2) & 1;
      const int par[3] = {g.par0, g.par1, g.par2};
      int64_t cnt[3];
      for (int d = 0; d < 3; d++) cnt[d] = p->nv[d] > par[d] ? (p->nv[d] - par[d] + 1) / 2 : 0;
      g.cnt0 = cnt[0];
      g.cnt1 = cnt[1];
      g.total = cnt[0] * cnt[1] * cnt[2];
      if (g.total == 0) continue;
      if (add) {
        HPMG_CALL(launch<R>(p, QK_PATCH_SOLVE, g, F, (R)p->omega, b, x, radd, nullptr));
      } else if (zero && cc == 0) { /* x = 0: the local residual is R_j b */
        HPMG_CALL(launch<R>(p, QK_PATCH_SOLVE, g, F, (R)1, b, x, b, nullptr));
      } else if (p->kernel == HPMG_PATCH_KERNEL_FUSED) {
        HPMG_CALL(launch<R>(p, QK_PATCH_FUSED, g, F, (R)1, b, x, nullptr, nullptr));
      } else if (p->kernel == HPMG_PATCH_KERNEL_SEPARATE) {
        HPMG_CALL(launch<R>(p, QK_PATCH_RES, g, F, (R)1, b, x, nullptr, work));
        HPMG_CALL(launch<R>(p, QK_PATCH_SOLVE, g, F, (R)1, b, x, work, nullptr));
      } else {
        HPMG_CALL(full_residual(p, real, b, x, work));
        HPMG_CALL(launch<R>(p, QK_PATCH_SOLVE, g, F, (R)1, b, x, work, nullptr));
      }
    }
  }
  return HPMG_SUCCESS;
}

extern "C" hpmg_error hpmg_cuda_patch_apply(hpmg_cuda_patch p, hpmg_real r, const void *b, void *x, void *work,
                                            int x_is_zero, int reverse, int sweeps) {
  HPMG_CHECK_ARG(p && b && x, "patch smoother: NULL argument");
  if (p->N == 0) return HPMG_SUCCESS;
  if (r == HPMG_REAL_DOUBLE)
    return patch_apply<double>(p, p->d, r, (const double *)b, (double *)x, (double *)work, x_is_zero, reverse, sweeps);
  return patch_apply<float>(p, p->f, r, (const float *)b, (float *)x, (float *)work, x_is_zero, reverse, sweeps);
}

extern "C" int64_t hpmg_cuda_patch_matvecs(hpmg_cuda_patch p) { return p->matvecs; }

extern "C" hpmg_error hpmg_cuda_patch_time(hpmg_cuda_patch p, hpmg_real r, const void *b, void *x, void *work,
                                           int reps, double *seconds) {
  return qk_time_median(
      reps, [&](int i) { return hpmg_cuda_patch_apply(p, r, b, x, work, 0, i & 1, 1); }, seconds);
}
