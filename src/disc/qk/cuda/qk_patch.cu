/* Vertex-patch Schwarz smoother on the GPU (paper 000 Sec. 3, Table 4): the
 * CPU algorithm of src/disc/qk/patch.c with the fast-diagonalization local
 * solver of src/disc/qk/fdm.c, on device vectors.
 *
 * One kernel template, qk_lines_kernel<R, DIM, K, RES, SOLVE, CS>, serves the
 * three variants (--patch-kernel) and the additive mode:
 *   RES   gather the closed patch of x (0 on Dirichlet nodes) into shared
 *         memory and compute the localized residual r = R_j b - Abar_j x by
 *         sum factorization with the interior rows of the 1D patch matrices;
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
 * Design (docs/cuda.md, "The patch kernel"): one thread per line of every
 * contraction, in registers, with the 1D coefficients at compile-time
 * indices (float: FFMA immediates from the generated qk_coef.h; double:
 * constant bank, Mr, Kr from a per-block shared copy at k >= 6); every
 * contraction in place, two shared regions per patch; persistent
 * blocks that copy the next patches' closures (cp.async) during the current
 * local solve.
 * In double at 3D k >= 7 the contractions run on the FP64 tensor cores
 * instead (TC, mma.sync: one warp per 16 lines; 5fc27f7, dbf12b1).
 * A kernel with one thread per output entry, the coefficient rows in
 * registers and ping-pong buffers was 1.4-2.6x slower (26ea9bd).
 * General boxes (stretched cells, Neumann and periodic ends; docs/bc.md,
 * "Q_k on a box on the GPU"): the same kernel with BOX set, each patch's 1D
 * factors and index maps from the CPU smoother's setup (hpmg_patch_box,
 * box_create below). */
#include <stdlib.h>
#include <string.h>
#include <mutex>
#include <type_traits>
#include "qk_cuda.h"
#include "qk_coef.h"
extern "C" {
#include "disc/qk/fdm.h"
#include "disc/qk/patch.h"
}

/* the cell sizes of the level: h, 1/h per direction, lambda, 1/(h0 h1 (h2)) */
template <typename R> struct qk_hscale {
  R h[3], ih[3], lam, sfac;
};

/* A general box (docs/bc.md, "Q_k on a box on the GPU"): the CPU smoother's
 * local problems (hpmg_patch_box, patch.h) on the device. Per direction d:
 * the 1D factor blocks of the vertices (fac: hpmg_fdm_1d_len(k) entries each,
 * fdm.h's layout, in the kernel's precision; facd: the same in double, whose
 * eigenvalues give D^{-1} in hpmg_fdm_setup's order, as the CPU forms it),
 * vertex v's block vtype[d][v], and the closed-patch index map gmap[d][v (2k+1)
 * + j] (free node index, periodic ends wrapped; -1: none, gathered as 0 and
 * never written). The cell widths are in the factors, so the level's scalars
 * (qk_hscale) are 1 but for lambda. */
template <typename R> struct qk_boxf {
  const R *fac[3];
  const double *facd[3];
  const int *vtype[3], *gmap[3];
  double lam;
};
/* entries of one 1D block and the offsets in it (fdm.h, HPMG_FDM_LAYOUT_1D):
 * M, K (m x m), Mb, Kb, MbT, KbT (m x n), S, ST (m x m), eig (m) */
__host__ __device__ constexpr int qk_box_len(int k) {
  return 4 * (2 * k - 1) * (2 * k - 1) + 4 * (2 * k - 1) * (2 * k + 1) + (2 * k - 1);
}
__host__ __device__ constexpr int qk_box_eig(int k) { return 4 * (2 * k - 1) * (2 * k - 1) + 4 * (2 * k - 1) * (2 * k + 1); }

struct hpmg_cuda_patch_s {
  int dim, k;
  int64_t n[3], nv[3], N;
  hpmg_patch_mode mode;
  hpmg_patch_kernel kernel;
  double omega;
  hpmg_cuda_op dop; /* not owned: residual of the global variant and the additive mode */
  qk_hscale<double> hs_d;
  qk_hscale<float> hs_f;
  void *dinv_d, *dinv_f; /* D^{-1} of the level's fast diagonalization (fdm.c), m^d entries */
  int64_t matvecs;
  /* patch vertices vmin[d] .. vmin[d]+nv[d]-1 and colors per direction, ncol
   * in all (plain grid: 1, 2 colors per direction) */
  int64_t vmin[3];
  int ncd[3], ncol;
  int box;             /* general box: the factors per vertex (qk_boxf) */
  void *boxmem;        /* their device block */
  qk_boxf<double> bx_d;
  qk_boxf<float> bx_f;
};

/* one color of one level */
struct qk_patch_geo {
  int64_t n0, n1, n2;     /* free nodes per direction (n2 = 1 in 2D) */
  int64_t cnt0, cnt1;     /* patches of the color in x and y */
  int64_t total;          /* patches of the color */
  int64_t s0, s1, s2;     /* the color's first patch vertex per direction (its vertices: s + 2 i) */
};

template <int DIM, int K> struct qk_patch_sizes {
  static constexpr int N = 2 * K + 1, M = 2 * K - 1;
  static constexpr int NZ = DIM == 3 ? N : 1, MZ = DIM == 3 ? M : 1;
  static constexpr int NCL = N * N * NZ, NLOC = M * M * MZ; /* closed patch, interior */
  static constexpr int TSZ = NZ * N * M;                    /* (M, N, NZ): one x contraction of the closure */
};

/* ------------------------------------------- line-per-thread kernel (lines) */
/* Every contraction of the smoother is a small matrix (O x NI) times many
 * lines of NI values. Here one thread owns one line: it loads the line from
 * shared memory into registers, forms all O outputs with the loops over o and
 * j unrolled, and stores them. The matrices are the h = 1 reference factors
 * of the degree (Mr, Kr: interior rows x closed columns of the 1D patch mass
 * and stiffness; Sr: the M-orthonormal eigenvectors), read through
 * compile-time indices. Float: compile-time constants (qk_coef_f, from the
 * generated qk_coef.h), so that every FFMA carries its coefficient as an
 * immediate operand and no instruction loads one (1.1-1.5x faster steps
 * from k = 5 on than the constant-bank / shared-copy forms; 3ab99ac).
 * Double (DFMA takes no 64-bit immediate): with CS = 0 all from the
 * constant bank (a ULDC into a uniform register per FMA operand in SASS, no
 * per-thread load); with CS = 1, Mr and Kr from a shared copy by columns
 * (one vector load, the same address across the warp, per 2 FMAs) and Sr
 * from the constant bank. The constant cache misses once a degree's factors
 * outgrow it, so CS = 1 above k = 5 (qk_lines_cs). The cells' sizes enter
 * as scalars: Mb = h Mr, Kb = Kr / h, S = Sr / sqrt(h) (the same generalized
 * eigenvectors), so the local solve carries 1 / (h0 h1 h2) and D^{-1} is the
 * level's. The structural zeros of Mr and Kr (an interior row couples to the
 * nodes of its own cells only) are skipped at compile time in every
 * direction. Shared memory per thread-line access: a line along x has odd
 * stride (N or M) across threads, along y and z consecutive threads read
 * consecutive words of one plane, but a warp spans several planes of M
 * lines each, which can meet in a bank (ncu, 3D k = 5 double: 37% of the
 * shared wavefronts are conflicts; k = 8: 11%). */
__host__ __device__ constexpr int qk_ref_len(int k) { return 2 * (2 * k - 1) * (2 * k + 1) + (2 * k - 1) * (2 * k - 1); }
__host__ __device__ constexpr int qk_ref_off(int k) { return k <= 1 ? 0 : qk_ref_off(k - 1) + qk_ref_len(k - 1); }
constexpr int QK_REF_LEN = qk_ref_off(QK_PATCH_MAX_K2 + 1);
__constant__ double qk_ref_d[QK_REF_LEN];
/* the same factors as compile-time constants for the float kernel (read with
 * indices that are constant after unrolling, they fold into the FFMAs);
 * test_fdm checks qk_coef.h against hpmg_fdm_setup */
static_assert(QK_COEF_MAX_K == QK_PATCH_MAX_K2 && QK_COEF_LEN == QK_REF_LEN, "regenerate src/disc/qk/cuda/qk_coef.h");
static __device__ const float qk_coef_f[QK_REF_LEN] = QK_COEF_TABLE;

enum { QK_MR = 0, QK_KR = 1, QK_SR = 2, QK_SRT = 3 };
/* entry (o, j) of matrix mat in degree k's block [Mr (m x n) | Kr (m x n) | Sr (m x m)], row-major;
 * Sr^T reads Sr transposed */
__host__ __device__ constexpr int qk_ref_idx(int k, int mat, int o, int j) {
  return mat == QK_MR ? o * (2 * k + 1) + j
         : mat == QK_KR ? (2 * k - 1) * (2 * k + 1) + o * (2 * k + 1) + j
         : mat == QK_SR ? 2 * (2 * k - 1) * (2 * k + 1) + o * (2 * k - 1) + j
                        : 2 * (2 * k - 1) * (2 * k + 1) + j * (2 * k - 1) + o;
}
template <int K, int MAT> struct qk_refmat {
  static constexpr int M = 2 * K - 1, N = 2 * K + 1, NI = MAT < QK_SR ? N : M;
  /* structural nonzero: interior row o < K-1 lies in cell 0 (closed nodes
   * 0..K), row K-1 is the middle vertex (all), rows > K-1 in cell 1 (K..2K) */
  __host__ __device__ static constexpr bool nz(int o, int j) { return MAT >= QK_SR || (o < K - 1 ? j <= K : (o == K - 1 || j >= K)); }
  __host__ __device__ static constexpr int idx(int o, int j) { return qk_ref_idx(K, MAT, o, j); }
};

/* The block's shared copy of degree K's Mr and Kr (CS = 1; CS = 2: also Sr
 * and Sr^T): by columns, so that for one input j the outputs' coefficients
 * are consecutive (vector loads, the same address across the warp), column
 * stride padded to 16 bytes: Mr, Kr (N columns each), Sr, Sr^T (M each). */
template <typename R, int K, int CS> struct qk_scoef {
  static constexpr int M = 2 * K - 1, N = 2 * K + 1, CSTR = (M + 16 / (int)sizeof(R) - 1) / (16 / (int)sizeof(R)) * (16 / (int)sizeof(R));
  static constexpr int LEN = (CS == 2 ? 2 * N + 2 * M : 2 * N) * CSTR;
  /* first column of matrix mat */
  __host__ __device__ static constexpr int col0(int mat) {
    return mat == QK_MR ? 0 : mat == QK_KR ? N : mat == QK_SR ? 2 * N : 2 * N + M;
  }
  __host__ __device__ static constexpr int idx(int mat, int o, int j) { return (col0(mat) + j) * CSTR + o; }
  /* fill from the constant bank (double only: float reads compile-time constants) */
  __device__ static void fill(R *sc, int tid, int nthr) {
    static_assert(sizeof(R) == 8, "the shared coefficient copy serves the double kernel");
    for (int e = tid; e < LEN; e += nthr) {
      const int col = e / CSTR, o = e - col * CSTR;
      const int mat = col < N ? QK_MR : col < 2 * N ? QK_KR : col < 2 * N + M ? QK_SR : QK_SRT, j = col - col0(mat);
      R v = 0;
      if (o < M) {
        const int ri = qk_ref_idx(K, mat, o, j);
        v = qk_ref_d[qk_ref_off(K) + ri];
      }
      sc[e] = v;
    }
  }
};

/* coefficient (o, j) of matrix MAT of degree K: float, a compile-time
 * constant; double, the block's shared copy (CS = 1, Mr and Kr) or the
 * constant bank */
template <typename R, int K, int MAT, int CS> __device__ __forceinline__ R qk_rc(const R *sc, int o, int j) {
  if constexpr (sizeof(R) == 4) return qk_coef_f[qk_ref_off(K) + qk_refmat<K, MAT>::idx(o, j)];
  else if constexpr (CS == 2 || (CS == 1 && MAT < QK_SR)) return sc[qk_scoef<R, K, CS>::idx(MAT, o, j)];
  else return qk_ref_d[qk_ref_off(K) + qk_refmat<K, MAT>::idx(o, j)];
}

/* a[o] = sum_j Mat[o][j] v[j] over the structural nonzeros of the
 * reference rows, entry (o, j) = coef(o, j) (unrolled; j outer, so the M
 * accumulators are independent chains) */
template <typename R, int K, int MAT, typename C>
__device__ __forceinline__ void qk_mv_by(const C &coef, const R *v, R *a) {
  using A = qk_refmat<K, MAT>;
#pragma unroll
  for (int o = 0; o < A::M; o++) a[o] = 0;
#pragma unroll
  for (int j = 0; j < A::NI; j++)
#pragma unroll
    for (int o = 0; o < A::M; o++)
      if (A::nz(o, j)) a[o] = fma(coef(o, j), v[j], a[o]);
}
/* the level's coefficients (qk_rc) */
template <typename R, int K, int MAT, int CS>
__device__ __forceinline__ void qk_mv(const R *sc, const R *v, R *a) {
  qk_mv_by<R, K, MAT>([sc](int o, int j) { return qk_rc<R, K, MAT, CS>(sc, o, j); }, v, a);
}

/* The same product on a general box with the patch's own 1D block f
 * (qk_boxf: global memory, read through the L1 cache; the structural zeros
 * of Mb and Kb are those of the reference rows, and a half patch's
 * placeholder rows are zero) */
__host__ __device__ constexpr int qk_box_idx(int k, int mat, int o, int j) {
  return mat == QK_MR ? 2 * (2 * k - 1) * (2 * k - 1) + o * (2 * k + 1) + j
         : mat == QK_KR ? 2 * (2 * k - 1) * (2 * k - 1) + (2 * k - 1) * (2 * k + 1) + o * (2 * k + 1) + j
         : mat == QK_SR ? 2 * (2 * k - 1) * (2 * k - 1) + 4 * (2 * k - 1) * (2 * k + 1) + o * (2 * k - 1) + j
                        : 2 * (2 * k - 1) * (2 * k - 1) + 4 * (2 * k - 1) * (2 * k + 1) + j * (2 * k - 1) + o;
}
template <typename R, int K, int MAT>
__device__ __forceinline__ void qk_mv_box(const R *__restrict__ f, const R *v, R *a) {
  qk_mv_by<R, K, MAT>([f](int o, int j) { return __ldg(f + qk_box_idx(K, MAT, o, j)); }, v, a);
}

/* Every line along DIR of the boxes I0 x I1 x I2 (x fastest) of the block's P
 * patches, one per thread in turn: f(pp, i0, i1, i2), the DIR coordinate 0.
 * Consecutive threads take consecutive lines, the first other dimension
 * fastest. */
template <int DIR, int I0, int I1, int I2, int P, int T, class F>
__device__ __forceinline__ void qk_each_line(F f) {
  constexpr int A = DIR == 0 ? I1 : I0, B = DIR == 2 ? I1 : I2, LINES = A * B;
  for (int it = threadIdx.x; it < P * LINES; it += T) {
    const int pp = it / LINES, l = it - pp * LINES, a = l % A, b = l / A;
    if constexpr (DIR == 0) f(pp, 0, a, b);
    else if constexpr (DIR == 1) f(pp, a, 0, b);
    else f(pp, a, b, 0);
  }
}

/* ------------------------------------------ FP64 tensor-core contractions */
/* With TC (double, 3D, k >= 7; qk_lines_tc), every contraction is a warp-level GEMM
 * on the FP64 tensor cores (mma.sync m16n8k8 / m16n8k4, sm_90): a warp takes
 * 16 lines at a time, the MMA's rows; the outputs o are its columns (n, 8 per
 * tile) and the inputs j its reduction (k, chunks of 8, the remainder <= 4 in
 * one k4 chunk):
 *   D[line][o] = sum_j In[line][j] Coef[o][j],  A = In (16 x 8), B = Coef^T.
 * Fragments (g = lane / 4, t = lane % 4): A a0 = (g, t), a1 = (g + 8, t),
 * a2 = (g, t + 4), a3 = (g + 8, t + 4); B b0 = (t, g), b1 = (t + 4, g); D
 * d0 = (g, 2t), d1 = (g, 2t + 1), d2 = (g + 8, 2t), d3 = (g + 8, 2t + 1);
 * k4: a0 = (g, t), a1 = (g + 8, t), b0 = (t, g). So a lane holds two lines
 * (slots 0, 1 = g, g + 8) and, per n tile, two outputs of each; in a chunk
 * of 8 its k slots t, t + 4 take the inputs 2t, 2t + 1 (qk_tc_load). The B
 * fragments (zero-padded; qk_tcfrag) are a per-block shared copy in fragment
 * order, which the lanes load into registers (16-byte loads, conflict free)
 * once per residual step or set of local-solve steps. One warp instruction
 * does 1024 FMAs where the CUDA-core form needs 32 DFMA and as many ULDC.
 * The shared accesses are conflict-free (row order of qk_each_tile, input
 * order above, padded rows) and the scalars are folded into the fragments:
 * at k = 8 18.2 ms per fused step against 20.7 without both (770d514), 46%
 * of the FP64 peak. What remains is latency (4 warps per scheduler at k = 8: stalls on
 * global loads, fixed-latency dependencies, barriers, the tensor pipe 41%
 * busy), not the shared-memory pipe. With 2 blocks per SM (128 registers
 * per thread; qk_lines_minb) the tensor cores are faster than the CUDA-core
 * kernel at k = 7 (109 against 148 ms) and 8 (18.2 against 24.2), and
 * slower at k = 4, 5, 6 (15.8 against 13.8 with 3 blocks per SM, 37.4
 * against 32.2, 70.1 against 69.0; dbf12b1). */
template <int NI> struct qk_tcin {
  static constexpr int C8 = NI / 8 + (NI % 8 > 4 ? 1 : 0), C4 = (NI % 8 >= 1 && NI % 8 <= 4) ? 1 : 0;
  static constexpr int NA = 4 * C8 + 2 * C4; /* A-fragment doubles per lane */
  static constexpr int BLK = 64 * C8 + 32 * C4; /* B-fragment doubles of one n tile */
};
/* The block's B fragments: Mr, Kr (N inputs), Sr^T, Sr (M inputs), in
 * fragment order, with the level's scalars folded in, so that no epilogue
 * rescales the accumulators: one copy per set, h0 Mr, Kr / h0 (x step);
 * h1 Mr, Kr / h1 (y); -h2 Mr, -Kr / h2 (z, accumulating onto b); Sr^T; Sr;
 * omega / (h0 h1 h2) Sr (the last step, accumulating onto x). The unfolded
 * form (one unscaled copy per matrix, scaling epilogues; removed in
 * 14c99ce) took, at 2 blocks per SM, k = 7 124 ms against 109 and k = 8
 * 18.2 against 18.2 (k = 4 15.8 against 16.3, but the CUDA-core kernel's
 * 13.8 beats both there; dbf12b1). */
enum { QK_TMX = 0, QK_TKX, QK_TMY, QK_TKY, QK_TMZ, QK_TKZ, QK_TST, QK_TS, QK_TSU, QK_TSETS };
template <int K> struct qk_tcfrag {
  static constexpr int M = 2 * K - 1, N = 2 * K + 1, NT = (M + 7) / 8;
  static constexpr int SZN = NT * qk_tcin<N>::BLK, SZM = NT * qk_tcin<M>::BLK;
  static constexpr int NSN = 6, NSM = 3; /* stored copies */
  /* offset of stored copy st (N-input copies first) */
  __host__ __device__ static constexpr int soff(int st) { return st < NSN ? st * SZN : NSN * SZN + (st - NSN) * SZM; }
  /* offset of the copy that serves set */
  __host__ __device__ static constexpr int off(int set) { return set < QK_TST ? soff(set) : soff(NSN + set - QK_TST); }
  static constexpr int LEN = soff(NSN + NSM);
  /* fill from the constant bank (double) */
  __device__ static void fill(double *fr, int tid, int nthr, const qk_hscale<double> &hs, double omega) {
    for (int e = tid; e < LEN; e += nthr) {
      int st = 0;
#pragma unroll
      for (int q = 1; q < NSN + NSM; q++) st += e >= soff(q);
      const int set = st < NSN ? st : QK_TST + st - NSN;
      const int mat = set < QK_TST ? (set & 1 ? QK_KR : QK_MR) : set == QK_TST ? QK_SRT : QK_SR;
      const int d = set >> 1;
      /* no dynamic index into hs (it would copy the parameters to local memory) */
      const double hd = d == 0 ? hs.h[0] : d == 1 ? hs.h[1] : -hs.h[2],
                   ihd = d == 0 ? hs.ih[0] : d == 1 ? hs.ih[1] : -hs.ih[2];
      const double scale = set < QK_TST ? (set & 1 ? ihd : hd) : set == QK_TSU ? omega * hs.sfac : 1.0;
      const int ni = mat < QK_SR ? N : M, c8 = mat < QK_SR ? qk_tcin<N>::C8 : qk_tcin<M>::C8,
                blk = mat < QK_SR ? qk_tcin<N>::BLK : qk_tcin<M>::BLK;
      const int rem = e - soff(st), nt = rem / blk, r2 = rem - nt * blk;
      int lane, j;
      if (r2 < 64 * c8) {
        const int kc = r2 / 64, r3 = r2 - 64 * kc;
        lane = r3 / 2;
        j = 8 * kc + 2 * (lane & 3) + (r3 & 1); /* k slots t, t + 4 <-> inputs 2t, 2t + 1 */
      } else {
        lane = r2 - 64 * c8;
        j = 8 * c8 + (lane & 3);
      }
      const int o = 8 * nt + (lane >> 2);
      fr[e] = o < M && j < ni ? scale * qk_ref_d[qk_ref_off(K) + qk_ref_idx(K, mat, o, j)] : 0.0;
    }
  }
};
template <int K> using qk_tcf = qk_tcfrag<K>; /* degree K's fragments */

__device__ __forceinline__ void qk_mma884(double (&d)[4], double a0, double a1, double a2, double a3, double b0,
                                          double b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
      : "d"(a0), "d"(a1), "d"(a2), "d"(a3), "d"(b0), "d"(b1));
#else
  __trap(); /* launched only on sm_90 and newer (qk_tc_on) */
#endif
}
__device__ __forceinline__ void qk_mma844(double (&d)[4], double a0, double a1, double b0) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};\n"
      : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
      : "d"(a0), "d"(a1), "d"(b0));
#else
  __trap();
#endif
}

/* A fragments of the lane's two lines p0, p1 (entry j at p[j IST]); 0 past NI
 * and on invalid lines (v: no load, so a padding row costs no wavefront).
 * In a chunk of 8 the k slots t, t + 4 take the inputs 2t, 2t + 1 (the
 * order of the reduction is free; B is filled to match), so loads and
 * stores both touch entries 2t + e of the half-warp's lines (qk_each_tile). */
template <int NI, int IST>
__device__ __forceinline__ void qk_tc_load(double (&a)[qk_tcin<NI>::NA], const double *p0, const double *p1, int t,
                                           const bool (&v)[2]) {
  using I = qk_tcin<NI>;
#pragma unroll
  for (int kc = 0; kc < I::C8; kc++) {
    const int j = 8 * kc + 2 * t;
    const bool lo = j < NI, hi = j + 1 < NI;
    a[4 * kc] = lo && v[0] ? p0[j * IST] : 0.0;
    a[4 * kc + 1] = lo && v[1] ? p1[j * IST] : 0.0;
    a[4 * kc + 2] = hi && v[0] ? p0[(j + 1) * IST] : 0.0;
    a[4 * kc + 3] = hi && v[1] ? p1[(j + 1) * IST] : 0.0;
  }
  if constexpr (I::C4) {
    const int j = 8 * I::C8 + t;
    const bool ok = j < NI;
    a[4 * I::C8] = ok && v[0] ? p0[j * IST] : 0.0;
    a[4 * I::C8 + 1] = ok && v[1] ? p1[j * IST] : 0.0;
  }
}

/* the B fragments of one matrix in registers (loaded once per step or
 * phase: reloading them per tile was a third of the shared-memory
 * wavefronts, and the kernel is bound by the shared-memory pipe) */
template <int NI, int NT> struct qk_tcb {
  using I = qk_tcin<NI>;
  double2 b8[NT][I::C8 ? I::C8 : 1];
  double b4[NT];
  __device__ __forceinline__ void load(const double *frag, int lane) {
#pragma unroll
    for (int nt = 0; nt < NT; nt++) {
#pragma unroll
      for (int kc = 0; kc < I::C8; kc++) b8[nt][kc] = reinterpret_cast<const double2 *>(frag + nt * I::BLK + 64 * kc)[lane];
      b4[nt] = I::C4 ? frag[nt * I::BLK + 64 * I::C8 + lane] : 0.0;
    }
  }
};

/* d[nt][] = In Coef^T for the NT = ceil(NO / 8) n tiles (ACC: d += In Coef^T) */
template <int NI, int NT, bool ACC = false>
__device__ __forceinline__ void qk_tc_mm(double (&d)[NT][4], const double (&a)[qk_tcin<NI>::NA],
                                         const qk_tcb<NI, NT> &bf) {
  using I = qk_tcin<NI>;
#pragma unroll
  for (int nt = 0; nt < NT; nt++) {
    if constexpr (!ACC) d[nt][0] = d[nt][1] = d[nt][2] = d[nt][3] = 0.0;
#pragma unroll
    for (int kc = 0; kc < I::C8; kc++)
      qk_mma884(d[nt], a[4 * kc], a[4 * kc + 1], a[4 * kc + 2], a[4 * kc + 3], bf.b8[nt][kc].x, bf.b8[nt][kc].y);
    if constexpr (I::C4) qk_mma844(d[nt], a[4 * I::C8], a[4 * I::C8 + 1], bf.b4[nt]);
  }
}

/* dm = h Mr In, dk = Kr In / h for the tile's A fragments a (h is in the
 * fragments BM, BK); the first two residual steps */
template <int NI, int NT>
__device__ __forceinline__ void qk_tc_mk(double (&dm)[NT][4], double (&dk)[NT][4], const double (&a)[qk_tcin<NI>::NA],
                                         const qk_tcb<NI, NT> &BM, const qk_tcb<NI, NT> &BK) {
  qk_tc_mm<NI, NT>(dm, a, BM);
  qk_tc_mm<NI, NT>(dk, a, BK);
}

/* f(nt, e, s, o, ok) for every accumulator entry d[nt][e] of the lane: output
 * o of its line s (slot 0, 1), ok if the line is valid (v[s]) and o < M */
template <int NT, int M, class F> __device__ __forceinline__ void qk_tc_outs(int t, const bool (&v)[2], F f) {
#pragma unroll
  for (int nt = 0; nt < NT; nt++)
#pragma unroll
    for (int e = 0; e < 4; e++) {
      const int s = e >> 1, o = 8 * nt + 2 * t + (e & 1);
      f(nt, e, s, o, v[s] && o < M);
    }
}

/* The lines along DIR of the boxes I0 x I1 x I2 of the block's P patches
 * (numbered as in qk_each_line), 16 per warp at a time: f(pp[2], c[2][3],
 * v[2]) with the lane's two lines, v: the line exists and its patch is
 * present (org >= 0); an invalid line's coordinates are clamped to a valid
 * line (its loads are skipped, qk_tc_load). f must __syncwarp() between its
 * loads and its in-place stores (the lanes read each other's lines).
 * MMA row r = 4m + i (i < 4) takes line 2m + (i & 1) + 8 (i >> 1) of the
 * tile, so a half-warp (rows 4m..4m + 3 of one slot) holds lines
 * l, l + 1, l + 8, l + 9, and its loads and stores touch their entries
 * 2t + e (t = 0..3; qk_tc_load). With odd line and entry strides (all of
 * them here) those 16 words fall in 16 distinct 8-byte banks: the even
 * pair of lines takes half the banks and the odd pair the other half.
 * (Lines l, l + 4, l + 8, l + 12 with entries t give conflict-free loads,
 * but every store, entries 2t, meets 2-way conflicts.) That holds while
 * the tile's lines have equidistant bases, i.e. lie in one row of the box; a
 * tile across two rows of A < 16 lines has conflicts, so rows of A < 16
 * lines are padded to 16 (one row per tile, padding rows invalid) where that
 * adds at most one tile in 16 (AP; where it adds more, as for the y step
 * at k = 7, 13 -> 15 tiles, the extra tiles cost more than the conflicts,
 * 770d514). */
template <int DIR, int I0, int I1, int I2, int P, int T, class F>
__device__ __forceinline__ void qk_each_tile(const int64_t *org, F f) {
  constexpr int A = DIR == 0 ? I1 : I0, B = DIR == 2 ? I1 : I2;
  constexpr int TU = (P * A * B + 15) / 16, TP = P * B; /* tiles unpadded, padded */
  constexpr bool PAD = A < 16 && 16 * TP <= 17 * TU;
  constexpr int AP = PAD ? 16 : A, LINES = AP * B, TOT = P * LINES, TILES = (TOT + 15) / 16;
  const int g = (threadIdx.x & 31) >> 2;
  for (int tile = threadIdx.x >> 5; tile < TILES; tile += T / 32) {
    int pp[2], c[2][3];
    bool v[2];
#pragma unroll
    for (int s = 0; s < 2; s++) {
      const int r = g + 8 * s, it0 = 16 * tile + 2 * (r >> 2) + (r & 1) + 8 * ((r >> 1) & 1);
      const bool ok = it0 < TOT;
      const int it = ok ? it0 : TOT - 1;
      pp[s] = it / LINES;
      const int l = it - pp[s] * LINES, a0 = l % AP, a = a0 < A ? a0 : A - 1, b = l / AP;
      c[s][0] = DIR == 0 ? 0 : a;
      c[s][1] = DIR == 0 ? a : DIR == 1 ? 0 : b;
      c[s][2] = DIR == 2 ? 0 : b;
      v[s] = ok && a0 < A && org[pp[s]] >= 0;
    }
    f(pp, c, v);
  }
}

/* patches per block P and threads per block T (the lines of the local-solve
 * steps, P M^(d-1), fill the warps), and the blocks per SM that the
 * registers must allow, double / float (B8, B4: shared memory permits that
 * many; docs/cuda.md). Measured over 1..4 for every 3D degree (c6ec1d2):
 * only 3D k = 4 double differs, 3 blocks (85 registers) instead of 4 (64
 * registers with spills): 13.8 against 17.2 ms per step. In 2D, over 1..6
 * (639bf07), double at k = 6, 7, 9 takes 4 blocks and k = 8 3 (no cap:
 * 8.44, 3.17, 7.90, 5.02 ms; with them 7.99, 3.07, 7.61, 4.56 ms); float and
 * the other degrees within 1% */
template <int DIM, int K> struct qk_lines_cfg;
#define QK_LCFG(D, KK, PP, TT, BB8, BB4) \
  template <> struct qk_lines_cfg<D, KK> { static constexpr int P = PP, T = TT, B8 = BB8, B4 = BB4; };
QK_LCFG(3, 1, 64, 64, 1, 1) QK_LCFG(3, 2, 14, 128, 8, 8) QK_LCFG(3, 3, 5, 128, 8, 8) QK_LCFG(3, 4, 5, 256, 3, 4)
QK_LCFG(3, 5, 3, 256, 3, 4) QK_LCFG(3, 6, 1, 128, 4, 8) QK_LCFG(3, 7, 1, 192, 4, 4) QK_LCFG(3, 8, 1, 256, 2, 4)
QK_LCFG(2, 1, 128, 128, 1, 1) QK_LCFG(2, 2, 42, 128, 1, 1) QK_LCFG(2, 3, 25, 128, 1, 1) QK_LCFG(2, 4, 18, 128, 1, 1)
QK_LCFG(2, 5, 14, 128, 1, 1) QK_LCFG(2, 6, 11, 128, 4, 1) QK_LCFG(2, 7, 9, 128, 4, 1) QK_LCFG(2, 8, 8, 128, 3, 1)
QK_LCFG(2, 9, 7, 128, 4, 1) QK_LCFG(2, 10, 6, 128, 1, 1)
#undef QK_LCFG

/* Shared memory of qk_lines_kernel, per patch: two regions, every
 * contraction in place (a thread reads its whole line into registers before
 * it writes the outputs to the same line, and no other thread touches it):
 *   A (N^d, x fastest): the closed patch X; tM over X (x step); 3D: uM over
 *     tM (y step);
 *   B (M, N, NZ) compact: tK (x step); 3D: w over tK (y step); r over w (z
 *     step; 2D: y step; float fused: Sr^T r along that direction), then
 *     the local solve in place.
 * So A is free during the local solve, and the closure of the block's next
 * patches is copied into it (cp.async) meanwhile. */
template <int DIM, int K> struct qk_lines_layout {
  using S = qk_patch_sizes<DIM, K>;
  static constexpr int N = S::N, M = S::M;
  static constexpr int ASZ = S::NCL, BOFF = ASZ, PATCH = ASZ + S::TSZ;
  /* B strides of the local box (x, y, z) */
  static constexpr int BS1 = M, BS2 = M * N;
};

/* header: patch origins for two groups of P patches (int64 global index of
 * the first interior node, -1 for none; int first interior node per
 * direction), then the CS = 1 coefficient copy, then the P patch buffers */
__host__ __device__ constexpr size_t qk_lines_hdr(int P) { return ((size_t)2 * P * 20 + 15) / 16 * 16; }

__device__ __forceinline__ void qk_cp_async8(void *sdst, const void *gsrc, bool ok) {
  const unsigned s = (unsigned)__cvta_generic_to_shared(sdst);
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(s), "l"(gsrc), "r"(ok ? 8 : 0) : "memory");
}
__device__ __forceinline__ void qk_cp_async4(void *sdst, const void *gsrc, bool ok) {
  const unsigned s = (unsigned)__cvta_generic_to_shared(sdst);
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(gsrc), "r"(ok ? 4 : 0) : "memory");
}

/* dynamic shared memory of qk_lines_kernel, and the blocks per SM the
 * registers must allow: the configuration's B8 / B4 (TC: 2, so that the
 * tensor-core kernel has 128 registers per thread and does not spill), or
 * fewer where shared memory (228 KiB per SM, 1 KiB reserved per block)
 * allows fewer anyway */
template <typename R, int DIM, int K, int CS, int TC> constexpr size_t qk_lines_smem() {
  return qk_lines_hdr(qk_lines_cfg<DIM, K>::P) +
         ((TC ? qk_tcf<K>::LEN : CS ? qk_scoef<R, K, CS>::LEN : 0) +
          (size_t)qk_lines_cfg<DIM, K>::P * qk_lines_layout<DIM, K>::PATCH) *
             sizeof(R);
}
template <typename R, int DIM, int K, int CS, int TC> constexpr int qk_lines_minb() {
  constexpr int b = TC ? 2 : sizeof(R) == 8 ? qk_lines_cfg<DIM, K>::B8 : qk_lines_cfg<DIM, K>::B4;
  constexpr int s = (int)(228 * 1024 / (qk_lines_smem<R, DIM, K, CS, TC>() + 1024));
  return s < 1 ? 1 : s < b ? s : b;
}

/* Persistent: block i takes the patch groups i, i + gridDim.x, ... of P
 * patches each. Patches of one color never write what another patch of the
 * color reads (closures meet on patch boundaries, which are not written), so
 * the next group's closure can be read while the current group updates x. */
/* y = Mat v along direction D for patch PP of the current set: the
 * degree's reference coefficients (qk_mv) or, on a box, the patch's own */
#define QK_MV(MAT, D, PP, V, A)                                      \
  do {                                                               \
    if constexpr (BOX) qk_mv_box<R, K, MAT>(fac(bi, PP, D), V, A);   \
    else qk_mv<R, K, MAT, CS>(sc, V, A);                             \
  } while (0)

/* BOX: a general box (qk_boxf): each patch's 1D factors from its vertices'
 * blocks in global memory (QK_MV), D^{-1} from their eigenvalues, and every
 * access to x, b, rin, rout through the index maps (periodic wrap, half
 * patches, Dirichlet ends); the vertices of the color come from g as on the
 * plain grid. The contractions, the shared layout and the pipelining are the
 * plain kernel's (CS = TC = 0). */
template <typename R, int DIM, int K, bool RES, bool SOLVE, int CS, int TC, bool BOX>
__global__ void __launch_bounds__(qk_lines_cfg<DIM, K>::T, (qk_lines_minb<R, DIM, K, CS, TC>()))
    qk_lines_kernel(const qk_patch_geo g, const R *__restrict__ dinv, const qk_hscale<R> hs, const R omega,
                    const R *__restrict__ b, R *__restrict__ x, const R *__restrict__ rin, R *__restrict__ rout,
                    const qk_boxf<R> bx) {
  using S = qk_patch_sizes<DIM, K>;
  using Lay = qk_lines_layout<DIM, K>;
  constexpr int N = S::N, M = S::M, NZ = S::NZ, MZ = S::MZ, P = qk_lines_cfg<DIM, K>::P,
                T = qk_lines_cfg<DIM, K>::T, PATCH = Lay::PATCH, NCL = S::NCL, NLOC = S::NLOC, BOFF = Lay::BOFF,
                BS1 = Lay::BS1, BS2 = Lay::BS2;
  extern __shared__ __align__(16) unsigned char qk_smem[];
  int64_t *orgs = reinterpret_cast<int64_t *>(qk_smem);
  int *oris = reinterpret_cast<int *>(orgs + 2 * P);
  R *sc = reinterpret_cast<R *>(qk_smem + qk_lines_hdr(P));
  using TF = qk_tcf<K>; /* TC: the B fragments */
  R *pb = sc + (TC ? TF::LEN : CS ? qk_scoef<R, K, CS>::LEN : 0);
  const int tid = threadIdx.x;
  const int lane = tid & 31, tq = lane & 3; /* TC: the lane's k / n index in its MMA fragments */
  constexpr int NT = TF::NT;        /* TC: n tiles of M outputs */
  const double *fr = reinterpret_cast<const double *>(sc); /* TC: the B fragments */
  static_assert(!TC || (sizeof(R) == 8 && DIM == 3), "tensor-core contractions: double, 3D");
  static_assert(!BOX || (!TC && !CS), "a general box reads each patch's factors from global memory");
  const int64_t n0 = g.n0, n1 = g.n1, gs2 = n0 * n1;
  constexpr int LAST = DIM - 1; /* z in 3D, y in 2D */
  /* fused, float: the residual's last step applies the local solve's first
   * contraction too (1-3.5% faster; 5-9% slower in double at k = 5, 6, 8:
   * 6c1864b) */
  constexpr bool FZ = RES && SOLVE && sizeof(R) == 4;
  const int64_t glast = DIM == 3 ? gs2 : n0, gstride = (int64_t)gridDim.x * P;
  if constexpr (TC) TF::fill(reinterpret_cast<double *>(sc), tid, T, hs, omega);
  else if constexpr (CS) qk_scoef<R, K, CS>::fill(sc, tid, T);
  /* origins of group p0 into set bi (threads 0..P-1) */
  auto origins = [&](int64_t p0, int bi) {
    if (tid < P) {
      const int64_t p = p0 + tid;
      if (p < g.total) {
        const int64_t v0 = g.s0 + 2 * (p % g.cnt0), v1 = g.s1 + 2 * ((p / g.cnt0) % g.cnt1),
                      v2 = g.s2 + 2 * (p / (g.cnt0 * g.cnt1));
        if constexpr (BOX) { /* the vertex: its maps and factors */
          orgs[bi * P + tid] = 0;
          oris[3 * (bi * P + tid)] = (int)v0;
          oris[3 * (bi * P + tid) + 1] = (int)v1;
          oris[3 * (bi * P + tid) + 2] = (int)v2;
        } else {
          const int64_t s0 = (v0 - 1) * K, s1 = (v1 - 1) * K, s2 = DIM == 3 ? (v2 - 1) * K : 0;
          orgs[bi * P + tid] = s0 + n0 * (s1 + n1 * s2);
          oris[3 * (bi * P + tid)] = (int)s0;
          oris[3 * (bi * P + tid) + 1] = (int)s1;
          oris[3 * (bi * P + tid) + 2] = (int)s2;
        }
      } else {
        orgs[bi * P + tid] = -1;
      }
    }
  };
  /* BOX: the free index of closed position (j0, j1, j2) of patch pp of set
   * si, -1 if there is none; the factor block of its vertex in direction d */
  [[maybe_unused]] auto gidx = [&](int si, int pp, int j0, int j1, int j2) -> int64_t {
    const int *vi = oris + 3 * (si * P + pp);
    const int a0 = bx.gmap[0][vi[0] * N + j0], a1 = bx.gmap[1][vi[1] * N + j1],
              a2 = DIM == 3 ? bx.gmap[2][vi[2] * N + j2] : 0;
    return a0 < 0 || a1 < 0 || a2 < 0 ? (int64_t)-1 : a0 + n0 * (a1 + n1 * (int64_t)a2);
  };
  [[maybe_unused]] auto fac = [&](int si, int pp, int d) -> const R * {
    return bx.fac[d] + (size_t)bx.vtype[d][oris[3 * (si * P + pp) + d]] * qk_box_len(K);
  };
  [[maybe_unused]] auto eigd = [&](int si, int pp, int d) -> const double * {
    return bx.facd[d] + (size_t)bx.vtype[d][oris[3 * (si * P + pp) + d]] * qk_box_len(K) + qk_box_eig(K);
  };
  /* closures of set bi into the A regions, 0 on Dirichlet nodes (async).
   * One thread per column along the last direction (consecutive threads,
   * consecutive x: coalesced): the column's offsets and range test once, then
   * N copies at compile-time shared offsets and a running global address;
   * only the column's two end nodes can leave the mesh along it. (One thread
   * per node, as before, spent ~70 instructions per node on index
   * arithmetic, as many as the contractions' FMAs at k = 4.) */
  auto gather = [&](int bi) {
    if constexpr (BOX) { /* one thread per node, through the maps */
      for (int it = tid; it < P * NCL; it += T) {
        const int pp = it / NCL, c = it - pp * NCL;
        if (orgs[bi * P + pp] < 0) continue;
        const int64_t gi = gidx(bi, pp, c % N, (c / N) % N, DIM == 3 ? c / (N * N) : 0);
        if constexpr (sizeof(R) == 8) qk_cp_async8(pb + pp * PATCH + c, gi >= 0 ? x + gi : x, gi >= 0);
        else qk_cp_async4(pb + pp * PATCH + c, gi >= 0 ? x + gi : x, gi >= 0);
      }
      asm volatile("cp.async.commit_group;\n" ::: "memory");
      return;
    }
    constexpr int NC = NCL / N; /* columns per patch; also the shared stride along the last direction */
    const int64_t nl = DIM == 3 ? g.n2 : n1;
    for (int it = tid; it < P * NC; it += T) {
      const int pp = it / NC, c = it - pp * NC;
      const int64_t o = orgs[bi * P + pp];
      if (o < 0) continue;
      const int *oi = oris + 3 * (bi * P + pp);
      const int j0 = DIM == 3 ? c % N : c, j1 = DIM == 3 ? c / N : 0;
      const int i0 = oi[0] - 1 + j0, i1 = oi[1] - 1 + j1, l0 = oi[LAST] - 1;
      const bool cok = i0 >= 0 && i0 < n0 && (DIM == 2 || (i1 >= 0 && i1 < n1));
      /* the column's node 1 (in the mesh if the column is); x itself if not */
      const R *p = x + (cok ? o + (j0 - 1) + (DIM == 3 ? n0 * (j1 - 1) : 0) : 0);
      const int64_t st = cok ? glast : 0;
      R *dst = pb + pp * PATCH + c;
#pragma unroll
      for (int t = 0; t < N; t++) {
        const bool ok = cok && (t > 0 || l0 >= 0) && (t < N - 1 || l0 + N - 1 < nl);
        const R *src = t == 0 ? (ok ? p - st : x) : t == N - 1 ? (ok ? p + st : x) : p;
        if constexpr (sizeof(R) == 8) qk_cp_async8(dst + t * NC, src, ok);
        else qk_cp_async4(dst + t * NC, src, ok);
        if (t > 0 && t < N - 2) p += st; /* p: node t + 1, up to node N - 2 */
      }
    }
    asm volatile("cp.async.commit_group;\n" ::: "memory");
  };

  int bi = 0;
  origins((int64_t)blockIdx.x * P, 0);
  __syncthreads();
  if constexpr (RES) gather(0);
  for (int64_t p0 = (int64_t)blockIdx.x * P; p0 < g.total; p0 += gstride, bi ^= 1) {
    const int64_t *org = orgs + bi * P;
    const bool next = p0 + gstride < g.total;
    if constexpr (RES) asm volatile("cp.async.wait_all;\n" ::: "memory");
    __syncthreads(); /* X of this group complete; the last group's local solve done */
    if (next) origins(p0 + gstride, bi ^ 1);

    if constexpr (RES) {
      /* TC: the B fragments of Mr and Kr (scaled, per step) */
      [[maybe_unused]] qk_tcb<N, TC ? NT : 1> BM, BK;
      /* along x: tM = h0 Mr X (in place in A), tK = Kr X / h0 (+ lam tM in 2D) into B */
      if constexpr (TC) {
        BM.load(fr + TF::off(QK_TMX), lane);
        BK.load(fr + TF::off(QK_TKX), lane);
        qk_each_tile<0, N, N, NZ, P, T>(org, [&](auto &pp, auto &c, auto &v) {
          double *X[2], *tK[2];
#pragma unroll
          for (int s = 0; s < 2; s++) {
            X[s] = pb + pp[s] * PATCH + (c[s][2] * N + c[s][1]) * N;
            tK[s] = pb + pp[s] * PATCH + BOFF + (c[s][2] * N + c[s][1]) * M;
          }
          double a[qk_tcin<N>::NA], dm[NT][4], dk[NT][4];
          qk_tc_load<N, 1>(a, X[0], X[1], tq, v);
          qk_tc_mk<N, NT>(dm, dk, a, BM, BK);
          __syncwarp(); /* the lanes read each other's lines: all loads before the in-place stores */
          qk_tc_outs<NT, M>(tq, v, [&](int nt, int e, int s, int o, bool ok) {
            if (ok) {
              X[s][o] = dm[nt][e];
              tK[s][o] = dk[nt][e];
            }
          });
        });
      } else
      qk_each_line<0, N, N, NZ, P, T>([&](int pp, int, int i1, int i2) {
        if (org[pp] < 0) return;
        R *X = pb + pp * PATCH + (i2 * N + i1) * N;
        R v[N], a[M], c[M];
#pragma unroll
        for (int j = 0; j < N; j++) v[j] = X[j];
        QK_MV(QK_MR, 0, pp, v, a);
        QK_MV(QK_KR, 0, pp, v, c);
        R *tK = pb + pp * PATCH + BOFF + (i2 * N + i1) * M;
#pragma unroll
        for (int o = 0; o < M; o++) {
          const R am = hs.h[0] * a[o];
          X[o] = am;
          tK[o] = DIM == 2 ? hs.ih[0] * c[o] + hs.lam * am : hs.ih[0] * c[o];
        }
      });
      __syncthreads();
      if constexpr (DIM == 3) {
        /* along y: uM = h1 Mr tM (in place in A), w = Kr tM / h1 + h1 Mr tK + lam uM (in place in B) */
        if constexpr (TC) {
          BM.load(fr + TF::off(QK_TMY), lane);
          BK.load(fr + TF::off(QK_TKY), lane);
          qk_each_tile<1, M, N, N, P, T>(org, [&](auto &pp, auto &c, auto &v) {
            double *tM[2], *tK[2];
#pragma unroll
            for (int s = 0; s < 2; s++) {
              tM[s] = pb + pp[s] * PATCH + c[s][2] * N * N + c[s][0];
              tK[s] = pb + pp[s] * PATCH + BOFF + c[s][2] * N * M + c[s][0];
            }
            double a[qk_tcin<N>::NA], dm[NT][4], dk[NT][4];
            qk_tc_load<N, N>(a, tM[0], tM[1], tq, v);
            qk_tc_mk<N, NT>(dm, dk, a, BM, BK);
            qk_tc_outs<NT, M>(tq, v, [&](int nt, int e, int, int, bool) { dk[nt][e] = fma(hs.lam, dm[nt][e], dk[nt][e]); });
            __syncwarp(); /* the lanes read each other's lines: all loads before the in-place stores */
            qk_tc_outs<NT, M>(tq, v, [&](int nt, int e, int s, int o, bool ok) {
              if (ok) tM[s][o * N] = dm[nt][e];
            });
            qk_tc_load<N, M>(a, tK[0], tK[1], tq, v);
            qk_tc_mm<N, NT, true>(dk, a, BM);
            __syncwarp(); /* the lanes read each other's lines: all loads before the in-place stores */
            qk_tc_outs<NT, M>(tq, v, [&](int nt, int e, int s, int o, bool ok) {
              if (ok) tK[s][o * M] = dk[nt][e];
            });
          });
        } else
        qk_each_line<1, M, N, N, P, T>([&](int pp, int i0, int, int i2) {
          if (org[pp] < 0) return;
          R *tM = pb + pp * PATCH + i2 * N * N + i0, *tK = pb + pp * PATCH + BOFF + i2 * N * M + i0;
          R v[N], a[M], c[M];
#pragma unroll
          for (int j = 0; j < N; j++) v[j] = tM[j * N];
          QK_MV(QK_MR, 1, pp, v, a);
          QK_MV(QK_KR, 1, pp, v, c);
#pragma unroll
          for (int o = 0; o < M; o++) {
            const R um = hs.h[1] * a[o];
            tM[o * N] = um;
            c[o] = hs.ih[1] * c[o] + hs.lam * um;
          }
#pragma unroll
          for (int j = 0; j < N; j++) v[j] = tK[j * M];
          QK_MV(QK_MR, 1, pp, v, a);
#pragma unroll
          for (int o = 0; o < M; o++) tK[o * M] = fma(hs.h[1], a[o], c[o]);
        });
        __syncthreads();
      }
      /* along the last direction L (z in 3D, y in 2D): r = b - (Kr u / h_L + h_L Mr w)
       * with u = uM, w (3D) or tM, tK (2D), in place of w in B, or to rout,
       * or (FZ) the local solve's first step on the line in registers: Sr^T r
       * along L in place of w (one pass over B and one barrier fewer) */
      constexpr int AST = DIM == 3 ? N * N : N, BST = DIM == 3 ? BS2 : BS1;
      if constexpr (TC) {
        BM.load(fr + TF::off(QK_TMZ), lane);
        BK.load(fr + TF::off(QK_TKZ), lane);
        qk_each_tile<LAST, M, M, N, P, T>(org, [&](auto &pp, auto &c, auto &v) {
          const double *u[2];
          double *w[2];
          int64_t gi[2];
#pragma unroll
          for (int s = 0; s < 2; s++) {
            u[s] = pb + pp[s] * PATCH + c[s][1] * N + c[s][0];
            w[s] = pb + pp[s] * PATCH + BOFF + c[s][1] * M + c[s][0];
            gi[s] = v[s] ? org[pp[s]] + c[s][0] + n0 * c[s][1] : 0;
          }
          /* r = b - Kr u / h2 - h2 Mr w: the MMAs accumulate onto b (negated fragments) */
          double dm[NT][4];
          qk_tc_outs<NT, M>(tq, v, [&](int nt, int e, int s, int o, bool ok) { dm[nt][e] = ok ? b[gi[s] + o * glast] : 0.0; });
          double a[qk_tcin<N>::NA];
          qk_tc_load<N, AST>(a, u[0], u[1], tq, v);
          qk_tc_mm<N, NT, true>(dm, a, BK);
          qk_tc_load<N, BST>(a, w[0], w[1], tq, v);
          qk_tc_mm<N, NT, true>(dm, a, BM);
          if constexpr (SOLVE) {
            __syncwarp(); /* the lanes read each other's lines: all loads before the in-place stores */
            qk_tc_outs<NT, M>(tq, v, [&](int nt, int e, int s, int o, bool ok) {
              if (ok) w[s][o * BST] = dm[nt][e];
            });
          } else {
            qk_tc_outs<NT, M>(tq, v, [&](int nt, int e, int s, int o, bool ok) {
              if (ok) rout[gi[s] + o * glast] = dm[nt][e];
            });
          }
        });
      } else
      qk_each_line<LAST, M, DIM == 3 ? M : N, DIM == 3 ? N : 1, P, T>([&](int pp, int i0, int i1, int) {
        if (org[pp] < 0) return;
        const int64_t gi = org[pp] + i0 + n0 * i1;
        R bv[M];
        /* BOX: interior node o of the line, closed position o + 1 along L */
        [[maybe_unused]] auto gl = [&](int o) {
          return DIM == 3 ? gidx(bi, pp, i0 + 1, i1 + 1, o + 1) : gidx(bi, pp, i0 + 1, o + 1, 0);
        };
        if constexpr (BOX) {
#pragma unroll
          for (int o = 0; o < M; o++) {
            const int64_t q = gl(o);
            bv[o] = q >= 0 ? b[q] : (R)0;
          }
        } else {
#pragma unroll
          for (int o = 0; o < M; o++) bv[o] = b[gi + o * glast];
        }
        const R *u = pb + pp * PATCH + i1 * N + i0;
        R *w = pb + pp * PATCH + BOFF + i1 * M + i0;
        R v[N], a[M], c[M];
#pragma unroll
        for (int j = 0; j < N; j++) v[j] = u[j * AST];
        QK_MV(QK_KR, LAST, pp, v, c);
#pragma unroll
        for (int j = 0; j < N; j++) v[j] = w[j * BST];
        QK_MV(QK_MR, LAST, pp, v, a);
#pragma unroll
        for (int o = 0; o < M; o++) a[o] = bv[o] - (hs.ih[LAST] * c[o] + hs.h[LAST] * a[o]);
        if constexpr (FZ) {
          QK_MV(QK_SRT, LAST, pp, a, c);
#pragma unroll
          for (int o = 0; o < M; o++) w[o * BST] = c[o];
        } else if constexpr (SOLVE) {
#pragma unroll
          for (int o = 0; o < M; o++) w[o * BST] = a[o];
        } else if constexpr (BOX) {
#pragma unroll
          for (int o = 0; o < M; o++) {
            const int64_t q = gl(o);
            if (q >= 0) rout[q] = a[o];
          }
        } else {
#pragma unroll
          for (int o = 0; o < M; o++) rout[gi + o * glast] = a[o];
        }
      });
      __syncthreads(); /* A is free: the next group's closure */
      if (next) gather(bi ^ 1);
    } else {
      for (int it = tid; it < P * NLOC; it += T) {
        const int pp = it / NLOC, e = it - pp * NLOC;
        if (org[pp] < 0) continue;
        const int o0 = e % M, o1 = (e / M) % M, o2 = e / (M * M);
        if constexpr (BOX) {
          const int64_t q = gidx(bi, pp, o0 + 1, o1 + 1, o2 + 1);
          pb[pp * PATCH + BOFF + o0 + BS1 * o1 + BS2 * o2] = q >= 0 ? rin[q] : (R)0;
        } else {
          pb[pp * PATCH + BOFF + o0 + BS1 * o1 + BS2 * o2] = rin[org[pp] + o0 + n0 * (o1 + n1 * o2)];
        }
      }
      __syncthreads();
    }
    if constexpr (SOLVE) {
      /* y = (prod_d 1/h_d) Sr D^{-1} Sr^T r by directions, in place in B;
       * x_int += omega y */
      /* MODE 0: plain; 1: times D^{-1} / prod h (the last step of S^T);
       * 2: x_int += omega y (last direction of S) */
      auto step = [&](auto dirc, auto matc, auto modec, [[maybe_unused]] const auto &BS) {
        [[maybe_unused]] constexpr int DIR = decltype(dirc)::value, MAT = decltype(matc)::value, MODE = decltype(modec)::value;
        constexpr int ST = DIR == 0 ? 1 : DIR == 1 ? BS1 : BS2;
        constexpr int DST = DIR == 0 ? 1 : DIR == 1 ? M : M * M;
        if constexpr (TC) {
          qk_each_tile<DIR, M, M, MZ, P, T>(org, [&](auto &pp, auto &c, auto &v) {
            double *line[2];
            int64_t gi[2];
#pragma unroll
            for (int s = 0; s < 2; s++) {
              line[s] = pb + pp[s] * PATCH + BOFF + c[s][0] + BS1 * c[s][1] + BS2 * c[s][2];
              gi[s] = MODE == 2 && v[s] ? org[pp[s]] + c[s][0] + n0 * (c[s][1] + n1 * c[s][2]) : 0;
            }
            [[maybe_unused]] double e2[NT][4];
            if constexpr (MODE) {
              qk_tc_outs<NT, M>(tq, v, [&](int nt, int e, int s, int o, bool ok) {
                if constexpr (MODE == 1)
                  e2[nt][e] = ok ? dinv[c[s][0] + M * (c[s][1] + M * c[s][2]) + o * DST] : 0.0;
                else
                  e2[nt][e] = ok ? x[gi[s] + o * glast] : 0.0;
              });
            }
            double a[qk_tcin<M>::NA];
            [[maybe_unused]] double d[NT][4];
            qk_tc_load<M, ST>(a, line[0], line[1], tq, v);
            if constexpr (MODE == 2) {
              /* x += omega / (h0 h1 h2) Sr line: the MMAs accumulate onto x (scaled fragments) */
              qk_tc_mm<M, NT, true>(e2, a, BS);
              qk_tc_outs<NT, M>(tq, v, [&](int nt, int e, int s, int o, bool ok) {
                if (ok) x[gi[s] + o * glast] = e2[nt][e];
              });
            } else {
              qk_tc_mm<M, NT>(d, a, BS);
              if constexpr (MODE == 1) /* 1 / (h0 h1 h2) is in the last step's fragments */
                qk_tc_outs<NT, M>(tq, v, [&](int nt, int e, int, int, bool) { d[nt][e] *= e2[nt][e]; });
              __syncwarp(); /* the lanes read each other's lines: all loads before the in-place stores */
              qk_tc_outs<NT, M>(tq, v, [&](int nt, int e, int s, int o, bool ok) {
                if (ok) line[s][o * ST] = d[nt][e];
              });
            }
          });
        } else
        qk_each_line<DIR, M, M, MZ, P, T>([&](int pp, int i0, int i1, int i2) {
          if (org[pp] < 0) return;
          R e[MODE ? M : 1];
          int64_t gi = 0;
          /* BOX: the line's interior node o, closed position + 1 */
          [[maybe_unused]] auto gl = [&](int o) {
            return gidx(bi, pp, i0 + 1 + (DIR == 0 ? o : 0), i1 + 1 + (DIR == 1 ? o : 0), i2 + 1 + (DIR == 2 ? o : 0));
          };
          if constexpr (MODE == 1 && BOX) {
            /* D^{-1} from the directions' double eigenvalues, in hpmg_fdm_setup's order */
            const double *e0 = eigd(bi, pp, 0), *e1 = eigd(bi, pp, 1), *e2 = DIM == 3 ? eigd(bi, pp, 2) : e0;
#pragma unroll
            for (int o = 0; o < M; o++) {
              double sum = bx.lam + __ldg(e0 + i0 + (DIR == 0 ? o : 0)) + __ldg(e1 + i1 + (DIR == 1 ? o : 0));
              if constexpr (DIM == 3) sum += __ldg(e2 + i2 + (DIR == 2 ? o : 0));
              e[o] = (R)(1.0 / sum);
            }
          } else if constexpr (MODE == 1) {
#pragma unroll
            for (int o = 0; o < M; o++) e[o] = dinv[i0 + M * (i1 + M * i2) + o * DST];
          } else if constexpr (MODE == 2 && BOX) {
#pragma unroll
            for (int o = 0; o < M; o++) {
              const int64_t q = gl(o);
              e[o] = q >= 0 ? x[q] : (R)0;
            }
          } else if constexpr (MODE == 2) {
            gi = org[pp] + i0 + n0 * (i1 + n1 * i2);
#pragma unroll
            for (int o = 0; o < M; o++) e[o] = x[gi + o * glast];
          }
          R *line = pb + pp * PATCH + BOFF + i0 + BS1 * i1 + BS2 * i2;
          R v[M], a[M];
#pragma unroll
          for (int j = 0; j < M; j++) v[j] = line[j * ST];
          QK_MV(MAT, DIR, pp, v, a);
#pragma unroll
          for (int o = 0; o < M; o++) {
            if constexpr (MODE == 0) line[o * ST] = a[o];
            else if constexpr (MODE == 1) line[o * ST] = a[o] * hs.sfac * e[o];
            else if constexpr (BOX) {
              const int64_t q = gl(o);
              if (q >= 0) x[q] = e[o] + omega * a[o];
            } else x[gi + o * glast] = e[o] + omega * a[o];
          }
        });
      };
      using D0 = std::integral_constant<int, 0>;
      using D1 = std::integral_constant<int, 1>;
      using D2 = std::integral_constant<int, 2>;
      using DL = std::integral_constant<int, LAST>;
      using MS = std::integral_constant<int, QK_SR>;
      using MT = std::integral_constant<int, QK_SRT>;
      using PLAIN = std::integral_constant<int, 0>;
      using UPD = std::integral_constant<int, 2>;
      /* Sr^T along directions 0..NTD-1 (FZ: the last direction's was done
       * with the residual), D^{-1} in the last of them */
      constexpr int NTD = FZ ? DIM - 1 : DIM;
      /* TC: the B fragments of Sr^T, then Sr, in registers for their steps */
      [[maybe_unused]] qk_tcb<M, TC ? NT : 1> BS;
      if constexpr (TC) BS.load(fr + TF::off(QK_TST), lane);
      step(D0(), MT(), std::integral_constant<int, NTD == 1 ? 1 : 0>(), BS);
      __syncthreads();
      if constexpr (NTD >= 2) {
        step(D1(), MT(), std::integral_constant<int, NTD == 2 ? 1 : 0>(), BS);
        __syncthreads();
      }
      if constexpr (NTD == 3) {
        step(D2(), MT(), std::integral_constant<int, 1>(), BS);
        __syncthreads();
      }
      if constexpr (TC) BS.load(fr + TF::off(QK_TS), lane);
      step(D0(), MS(), PLAIN(), BS);
      __syncthreads();
      if constexpr (DIM == 3) {
        step(D1(), MS(), PLAIN(), BS);
        __syncthreads();
      }
      if constexpr (TC) BS.load(fr + TF::off(QK_TSU), lane);
      step(DL(), MS(), UPD(), BS);
    }
  }
  (void)NZ;
}

/* ------------------------------------------------------------ launching */

enum { QK_PATCH_FUSED = 0, QK_PATCH_RES = 1, QK_PATCH_SOLVE = 2 };

template <typename R, int DIM, int K, bool RES, bool SOLVE, int CS, int TC, bool BOX>
static hpmg_error launch_lines(const qk_patch_geo &g, const R *dinv, const qk_hscale<R> &hs, R omega, const R *b,
                               R *x, const R *rin, R *rout, const qk_boxf<R> &bx) {
  using S = qk_patch_sizes<DIM, K>;
  using C = qk_lines_cfg<DIM, K>;
  const size_t smem = qk_lines_smem<R, DIM, K, CS, TC>();
  static int resident = 0; /* blocks per device that run at once (per instantiation) */
  if (!resident) {
    auto kern = qk_lines_kernel<R, DIM, K, RES, SOLVE, CS, TC, BOX>;
    if (smem > 48 * 1024)
      HPMG_CU(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    int per_sm = 0, dev = 0, sms = 0;
    HPMG_CU(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, C::T, smem));
    HPMG_CU(cudaGetDevice(&dev));
    HPMG_CU(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    if (per_sm < 1) return hpmg_error_set(HPMG_ERR_BACKEND, "patch smoother: kernel does not fit on an SM");
    resident = per_sm * sms;
  }
  const int64_t groups = (g.total + C::P - 1) / C::P;
  const int64_t blocks = groups < resident ? groups : resident;
  qk_lines_kernel<R, DIM, K, RES, SOLVE, CS, TC, BOX><<<(unsigned)blocks, C::T, smem>>>(g, dinv, hs, omega, b, x, rin, rout,
                                                                                         bx);
  HPMG_CU_LAUNCH();
  return HPMG_SUCCESS;
}

template <typename R, int DIM, int K, int CS, int TC, bool BOX = false>
static hpmg_error launch_lines_k(int which, const qk_patch_geo &g, const R *dinv, const qk_hscale<R> &hs, R omega,
                                 const R *b, R *x, const R *rin, R *rout, const qk_boxf<R> &bx) {
  switch (which) {
  case QK_PATCH_FUSED: return launch_lines<R, DIM, K, true, true, CS, TC, BOX>(g, dinv, hs, omega, b, x, rin, rout, bx);
  case QK_PATCH_RES: return launch_lines<R, DIM, K, true, false, CS, TC, BOX>(g, dinv, hs, omega, b, x, rin, rout, bx);
  default: return launch_lines<R, DIM, K, false, true, CS, TC, BOX>(g, dinv, hs, omega, b, x, rin, rout, bx);
  }
}

/* FP64 tensor cores for the contractions: double, 3D, k >= 7 (measured
 * faster there and slower below: 5fc27f7, dbf12b1), on
 * sm_90 or newer; HPMG_PATCH_TC=0 in the environment selects
 * the CUDA-core kernel (for comparisons) */
static bool qk_tc_on() {
  static int on = -1;
  if (on < 0) {
    int dev = 0, major = 0;
    const char *env = getenv("HPMG_PATCH_TC");
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess)
      major = 0;
    on = major >= 9 && !(env && env[0] == '0');
  }
  return on;
}
template <typename R, int DIM, int K> constexpr bool qk_lines_tc() { return sizeof(R) == 8 && DIM == 3 && K >= 7; }

template <typename R, int DIM, int K, int CS>
static hpmg_error launch_deg(int which, const qk_patch_geo &g, const R *dinv, const qk_hscale<R> &hs, R omega,
                             const R *b, R *x, const R *rin, R *rout, const qk_boxf<R> &bx) {
  if constexpr (qk_lines_tc<R, DIM, K>())
    if (qk_tc_on()) return launch_lines_k<R, DIM, K, 0, 1>(which, g, dinv, hs, omega, b, x, rin, rout, bx);
  return launch_lines_k<R, DIM, K, CS, 0>(which, g, dinv, hs, omega, b, x, rin, rout, bx);
}

/* double: coefficients from the constant bank up to k = 5; above, Mr and Kr
 * from the shared copy and Sr from the constant bank (CS = 1). All of them
 * in the constant bank miss its cache there (3D: 1.7-2.5x slower, 6c1864b;
 * 2D: 1.3-1.5x at k = 6..10, 3ab99ac). Sr from the shared copy too (CS = 2) was
 * 1.2-1.4x slower in 3D and 1.1-1.4x slower in 2D up to k = 8, but 1.05x
 * faster at 2D k = 9 and 1.6x at k = 10 (6c1864b, 8b466d6,
 * docs/design-decisions.md). float: compile-time constants (qk_rc), no copy. */
template <typename R, int DIM, int K> constexpr int qk_lines_cs() {
  return sizeof(R) == 4 || K < 6 ? 0 : DIM == 2 && K >= 9 ? 2 : 1;
}

template <typename R> static const qk_hscale<R> &hscale(const hpmg_cuda_patch p);
template <> const qk_hscale<double> &hscale<double>(const hpmg_cuda_patch p) { return p->hs_d; }
template <> const qk_hscale<float> &hscale<float>(const hpmg_cuda_patch p) { return p->hs_f; }
template <typename R> static const qk_boxf<R> &boxf(const hpmg_cuda_patch p);
template <> const qk_boxf<double> &boxf<double>(const hpmg_cuda_patch p) { return p->bx_d; }
template <> const qk_boxf<float> &boxf<float>(const hpmg_cuda_patch p) { return p->bx_f; }

template <typename R>
static hpmg_error launch(const hpmg_cuda_patch p, int which, const qk_patch_geo &g, R omega, const R *b, R *x,
                         const R *rin, R *rout) {
  const qk_hscale<R> &hs = hscale<R>(p);
  const R *dinv = (const R *)(sizeof(R) == 8 ? p->dinv_d : p->dinv_f);
  const qk_boxf<R> &bx = boxf<R>(p);
  /* a general box: the same kernel reading each patch's factors (BOX; no
   * coefficient copy, no tensor cores) */
#define QK_PCASE(D, KK)                                                                                        \
  case KK:                                                                                                     \
    return p->box ? launch_lines_k<R, D, KK, 0, 0, true>(which, g, dinv, hs, omega, b, x, rin, rout, bx)       \
                  : launch_deg<R, D, KK, qk_lines_cs<R, D, KK>()>(which, g, dinv, hs, omega, b, x, rin, rout, bx);
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

/* The h = 1 reference factors of degree k into the constant bank, once per
 * process (they depend on k only). */
static hpmg_error upload_ref(int k) {
  static std::mutex mu;
  static bool done[QK_PATCH_MAX_K2 + 1];
  std::lock_guard<std::mutex> lock(mu);
  if (done[k]) return HPMG_SUCCESS;
  const double one[3] = {1.0, 1.0, 1.0};
  hpmg_fdm fdm;
  HPMG_CALL(hpmg_fdm_setup(2, k, one, 0.0, &fdm));
  const int m = 2 * k - 1, n = 2 * k + 1, len = qk_ref_len(k);
  double rd[qk_ref_len(QK_PATCH_MAX_K2)];
  for (int i = 0; i < m * n; i++) {
    rd[i] = fdm.dbl.Mb[0][i];
    rd[m * n + i] = fdm.dbl.Kb[0][i];
  }
  for (int i = 0; i < m * m; i++) rd[2 * m * n + i] = fdm.dbl.S[0][i];
  hpmg_fdm_free(&fdm);
  HPMG_CU(cudaMemcpyToSymbol(qk_ref_d, rd, len * sizeof(double), qk_ref_off(k) * sizeof(double)));
  done[k] = true;
  return HPMG_SUCCESS;
}

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
  hpmg_cuda_free(p->dinv_d);
  hpmg_cuda_free(p->dinv_f);
  hpmg_cuda_free(p->boxmem);
  free(p);
  *pp = NULL;
}

/* A general box (stretched cells, Neumann or periodic ends): the CPU
 * smoother's local problems (hpmg_patch_box_create: patch vertices, colors,
 * the 1D factors per vertex, the closed-patch index maps) copied to the
 * device in one block; the kernels are the plain grid's with BOX set. */
/* the level and options both kinds of level keep (box_create, the plain grid) */
static void patch_init(hpmg_cuda_patch p, const hpmg_grid *g, hpmg_cuda_op dop, hpmg_patch_mode mode, double damping,
                       hpmg_patch_kernel kernel) {
  p->dim = g->dim;
  p->k = g->k;
  p->N = g->N;
  p->mode = mode;
  p->kernel = kernel;
  p->dop = dop;
  p->omega = mode == HPMG_PATCH_ADDITIVE ? (damping > 0 ? damping : 1.0 / (1 << g->dim)) : 1.0;
}

static hpmg_error box_create(const hpmg_laplace *op, hpmg_cuda_op dop, hpmg_patch_mode mode, double damping,
                             hpmg_patch_kernel kernel, hpmg_cuda_patch *out) {
  const hpmg_grid *g = &op->g;
  const int k = g->k, n = 2 * k + 1;
  const size_t l1 = hpmg_fdm_1d_len(k);
  if (l1 != (size_t)qk_box_len(k))
    return hpmg_error_set(HPMG_ERR_BACKEND, "patch smoother: the 1D factor layout of fdm.h changed (%zu entries, "
                                             "the GPU kernel reads %d)", l1, qk_box_len(k));
  for (int d = 0; d < g->dim; d++)
    HPMG_CHECK_ARG(g->n[d] < INT32_MAX && (g->cells[d] + 1) * n < INT32_MAX,
                   "patch smoother: direction %d has too many nodes for the GPU index maps", d);
  hpmg_patch_box pb;
  HPMG_CALL(hpmg_patch_box_create(g, &pb));
  /* the device block: per direction fac_d, fac_f, vtype, gmap (16-byte aligned pieces) */
  size_t off[3][4], bytes = 0;
  auto piece = [&](size_t b) {
    const size_t o = bytes;
    bytes += (b + 15) / 16 * 16;
    return o;
  };
  for (int d = 0; d < g->dim; d++) {
    const size_t nt = (size_t)pb.ntype[d], nv1 = (size_t)g->cells[d] + 1;
    off[d][0] = piece(nt * l1 * sizeof(double));
    off[d][1] = piece(nt * l1 * sizeof(float));
    off[d][2] = piece(nv1 * sizeof(int));
    off[d][3] = piece(nv1 * n * sizeof(int));
  }
  unsigned char *h = (unsigned char *)calloc(bytes, 1);
  hpmg_cuda_patch p = (hpmg_cuda_patch)calloc(1, sizeof *p);
  hpmg_error e = h && p ? HPMG_SUCCESS : hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate the patch smoother");
  if (!e) {
    for (int d = 0; d < g->dim; d++) {
      const size_t nt = (size_t)pb.ntype[d], nv1 = (size_t)g->cells[d] + 1;
      memcpy(h + off[d][0], pb.fac_d[d], nt * l1 * sizeof(double));
      memcpy(h + off[d][1], pb.fac_f[d], nt * l1 * sizeof(float));
      int *vt = (int *)(h + off[d][2]), *gm = (int *)(h + off[d][3]);
      for (size_t v = 0; v < nv1; v++) vt[v] = pb.vtype[d][v];
      for (size_t i = 0; i < nv1 * n; i++) gm[i] = (int)pb.gmap[d][i];
    }
    e = hpmg_cuda_malloc(bytes, &p->boxmem);
  }
  if (!e) e = hpmg_cuda_upload(p->boxmem, h, bytes);
  free(h);
  if (e) {
    hpmg_patch_box_destroy(&pb);
    hpmg_cuda_patch_destroy(&p);
    return e;
  }
  patch_init(p, g, dop, mode, damping, kernel);
  p->box = 1;
  p->ncol = pb.ncol;
  unsigned char *dm = (unsigned char *)p->boxmem;
  for (int d = 0; d < 3; d++) {
    p->n[d] = g->n[d];
    p->nv[d] = pb.nv[d];
    p->vmin[d] = pb.vmin[d];
    p->ncd[d] = pb.ncd[d];
    /* the cell widths are in the factors */
    p->hs_d.h[d] = p->hs_d.ih[d] = 1.0;
    p->hs_f.h[d] = p->hs_f.ih[d] = 1.0f;
    if (d < g->dim) {
      p->bx_d.fac[d] = (const double *)(dm + off[d][0]);
      p->bx_f.fac[d] = (const float *)(dm + off[d][1]);
      p->bx_d.facd[d] = p->bx_f.facd[d] = (const double *)(dm + off[d][0]);
      p->bx_d.vtype[d] = p->bx_f.vtype[d] = (const int *)(dm + off[d][2]);
      p->bx_d.gmap[d] = p->bx_f.gmap[d] = (const int *)(dm + off[d][3]);
    }
  }
  p->hs_d.lam = op->lambda;
  p->hs_f.lam = (float)op->lambda;
  p->hs_d.sfac = 1.0;
  p->hs_f.sfac = 1.0f;
  p->bx_d.lam = p->bx_f.lam = op->lambda;
  hpmg_patch_box_destroy(&pb);
  *out = p;
  return HPMG_SUCCESS;
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
  if (!hpmg_grid_is_plain(g)) return box_create(op, dop, mode, damping, kernel, out);
  hpmg_cuda_patch p = (hpmg_cuda_patch)calloc(1, sizeof *p);
  if (!p) return hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate the patch smoother");
  patch_init(p, g, dop, mode, damping, kernel);
  p->ncol = 1;
  for (int d = 0; d < 3; d++) {
    p->n[d] = g->n[d];
    p->nv[d] = d < g->dim ? g->cells[d] - 1 : 1;
    p->vmin[d] = d < g->dim ? 1 : 0;
    p->ncd[d] = d < g->dim ? 2 : 1;
    p->ncol *= p->ncd[d];
  }
  double sf = 1.0;
  for (int d = 0; d < 3; d++) {
    const double h = d < g->dim ? g->h[d] : 1.0;
    p->hs_d.h[d] = h;
    p->hs_d.ih[d] = 1.0 / h;
    p->hs_f.h[d] = (float)h;
    p->hs_f.ih[d] = (float)(1.0 / h);
    sf /= h;
  }
  p->hs_d.lam = op->lambda;
  p->hs_f.lam = (float)op->lambda;
  p->hs_d.sfac = sf;
  p->hs_f.sfac = (float)sf;
  /* the level's D^{-1} (fdm.c) in both precisions; the 1D factors are the
   * degree's reference ones in the constant bank */
  hpmg_fdm fdm;
  hpmg_error e = upload_ref(g->k);
  if (!e) e = hpmg_fdm_setup(g->dim, g->k, g->h, op->lambda, &fdm);
  if (e) {
    free(p);
    return e;
  }
  size_t nloc = 1;
  for (int d = 0; d < g->dim; d++) nloc *= (size_t)(2 * g->k - 1);
  e = hpmg_cuda_malloc(nloc * sizeof(double), &p->dinv_d);
  if (!e) e = hpmg_cuda_malloc(nloc * sizeof(float), &p->dinv_f);
  if (!e) e = hpmg_cuda_upload(p->dinv_d, fdm.dbl.dinv, nloc * sizeof(double));
  if (!e) e = hpmg_cuda_upload(p->dinv_f, fdm.flt.dinv, nloc * sizeof(float));
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
static hpmg_error patch_apply(hpmg_cuda_patch p, hpmg_real real, const R *b, R *x, R *work,
                              int x_is_zero, int reverse, int sweeps) {
  const int ncol = p->ncol;
  if (x_is_zero) HPMG_CU(cudaMemsetAsync(x, 0, (size_t)p->N * sizeof(R)));
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
      /* color c = c0 + ncd0 (c1 + ncd1 c2) (patch.c): per direction the
       * patches p = v - vmin of parity cd, and with 3 colors (an odd periodic
       * count) the last patch alone in color 2 */
      const int cdir[3] = {c % p->ncd[0], (c / p->ncd[0]) % p->ncd[1], c / (p->ncd[0] * p->ncd[1])};
      int64_t cnt[3], s0[3];
      for (int d = 0; d < 3; d++) {
        const int cd = cdir[d];
        const int64_t nv = p->nv[d];
        s0[d] = p->vmin[d] + (p->ncd[d] == 3 && cd == 2 ? nv - 1 : cd);
        cnt[d] = p->ncd[d] == 3 ? (cd == 2 ? 1 : (nv - cd) / 2) : nv > cd ? (nv - cd + 1) / 2 : 0;
      }
      g.s0 = s0[0];
      g.s1 = s0[1];
      g.s2 = s0[2];
      g.cnt0 = cnt[0];
      g.cnt1 = cnt[1];
      g.total = cnt[0] * cnt[1] * cnt[2];
      if (g.total == 0) continue;
      if (add) {
        HPMG_CALL(launch<R>(p, QK_PATCH_SOLVE, g, (R)p->omega, b, x, radd, nullptr));
      } else if (zero && cc == 0) { /* x = 0: the local residual is R_j b */
        HPMG_CALL(launch<R>(p, QK_PATCH_SOLVE, g, (R)1, b, x, b, nullptr));
      } else if (p->kernel == HPMG_PATCH_KERNEL_FUSED) {
        HPMG_CALL(launch<R>(p, QK_PATCH_FUSED, g, (R)1, b, x, nullptr, nullptr));
      } else if (p->kernel == HPMG_PATCH_KERNEL_SEPARATE) {
        HPMG_CALL(launch<R>(p, QK_PATCH_RES, g, (R)1, b, x, nullptr, work));
        HPMG_CALL(launch<R>(p, QK_PATCH_SOLVE, g, (R)1, b, x, work, nullptr));
      } else {
        HPMG_CALL(full_residual(p, real, b, x, work));
        HPMG_CALL(launch<R>(p, QK_PATCH_SOLVE, g, (R)1, b, x, work, nullptr));
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
    return patch_apply<double>(p, r, (const double *)b, (double *)x, (double *)work, x_is_zero, reverse, sweeps);
  return patch_apply<float>(p, r, (const float *)b, (float *)x, (float *)work, x_is_zero, reverse, sweeps);
}

extern "C" int64_t hpmg_cuda_patch_matvecs(hpmg_cuda_patch p) { return p->matvecs; }

extern "C" hpmg_error hpmg_cuda_patch_time(hpmg_cuda_patch p, hpmg_real r, const void *b, void *x, void *work,
                                           int reps, double *seconds) {
  return qk_time_median(
      reps, [&](int i) { return hpmg_cuda_patch_apply(p, r, b, x, work, 0, i & 1, 1); }, seconds);
}
