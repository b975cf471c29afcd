/* CUDA backend of the FD kernel table (fd_ops): the same stencils as the
 * OpenMP kernels in src/disc/fd (fd_*.inc), templated on
 * the precision, one thread per grid point. Paper 002 launches one kernel
 * per color of the multicolor Gauss-Seidel sweep (4 in 2D, 8 in 3D, reverse
 * order on post-smoothing); here the two colors that share rows go in one
 * launch (k_mcgs_rows): 2 launches per sweep in 2D, 4 in 3D, same result;
 * in 3D from n = 256 on, the pre- and post-smoothing pairs of sweeps run as
 * one pass through memory each (k_mcgs_march, temporal blocking).
 * Red-black GS: two launches. Results equal the CPU kernels up to rounding (tests/test_fd_gpu.c). Reductions accumulate in
 * double with one atomicAdd per block. Memory, copies and the vector
 * operations of the solver are the CUDA hpmg_backend's (backend_cuda.cu). */
#include <stdlib.h>
#include <string.h>
#include <cuda_pipeline.h>
#include "disc/fd/cuda/fd_cuda.h"
#include "disc/qk/cuda/qk_cuda.h" /* qk_time_median */

namespace {

template <typename T> __device__ __forceinline__ T lap(const T *__restrict__ u, int64_t c, int64_t s1, int64_t s2, int dim) {
  T a = (T)(2 * dim) * u[c] - u[c - 1] - u[c + 1] - u[c - s1] - u[c + s1];
  if (dim == 3) a = a - u[c - s2] - u[c + s2];
  return a;
}
/* The Gauss-Seidel sum f + the 2d neighbours, in the order of every GS
 * kernel here (so that they agree bitwise): ((f + z-) + z+) + (y- + y+),
 * then + (x- + x+). The first part is known before a point's x- and
 * y-neighbours of its own sweep are: k_mcgs_march computes it ahead of the
 * exchange barrier and the shuffles, which shortens the chain of dependent
 * adds after them (the CPU kernels sum left to right; results agree to
 * rounding). */
template <typename T> __device__ __forceinline__ T gs_fz(T f, T zm, T zp, int dim) { return dim == 3 ? (f + zm) + zp : f; }
template <typename T> __device__ __forceinline__ T gs_fin(T fz, T ym, T yp, T xs) { return (fz + (ym + yp)) + xs; }
template <typename T> __device__ __forceinline__ T gs_sum(T fz, T ym, T yp, T xm, T xp) { return gs_fin(fz, ym, yp, xm + xp); }
/* one rounding each, never contracted into an FMA: the prolongation's
 * correction u + 0.5 (a + b) is computed so in k_prolong and in the
 * correction fused into k_mcgs_march, which therefore agree bitwise */
__device__ __forceinline__ double add_rn(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ float add_rn(float a, float b) { return __fadd_rn(a, b); }
template <typename T> __device__ __forceinline__ T mid_rn(T a, T b) { return (T)0.5 * add_rn(a, b); }
__device__ __forceinline__ double mul_rn(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float mul_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double fma_rn(double a, double b, double c) { return __fma_rn(a, b, c); }
__device__ __forceinline__ float fma_rn(float a, float b, float c) { return __fmaf_rn(a, b, c); }
/* Gauss-Seidel with over-relaxation weight omega: (1 - omega) u + omega / 2d
 * * sum = w (sum + kw u), w = omega / 2d, kw = (1 - omega) / w. Every GS
 * kernel adds kw u to the first part of the sum (gs_fz's, known before a
 * point's x- and y-neighbours of its sweep), fma(kw, u, fz), and multiplies
 * by w last, as plain GS does: no operation is added to the chain after the
 * neighbours arrive. At omega = 1, kw = 0 and the update is bitwise plain GS
 * (fma(0, u, fz) = fz). (w sum + (1 - omega) u as the last operation made the
 * 3D passes 7-13% slower than plain GS.) */
template <typename T> __device__ __forceinline__ T gs_keep(T kw, T old, T fz) { return fma_rn(kw, old, fz); }
/* the weights (kw, w) of gs_keep for the kernels' arguments */
template <typename T> struct gs_weights {
  T kw, w;
  gs_weights(int dim, double omega) : kw((T)((1 - omega) * 2 * dim / omega)), w((T)(omega / (2 * dim))) {}
};
/* the GS sum at point c, with the SOR term kw u[c] */
template <typename T> __device__ __forceinline__ T nbsum(const T *__restrict__ u, const T *__restrict__ f, int64_t c,
                                                       int64_t s1, int64_t s2, int dim, T kw) {
  const T fz = gs_keep(kw, u[c], dim == 3 ? gs_fz(f[c], u[c - s2], u[c + s2], 3) : f[c]);
  return gs_sum(fz, u[c - s1], u[c + s1], u[c - 1], u[c + 1]);
}
/* the cubic midpoint (-v0 + 9 v1 + 9 v2 - v3) / 16 in one fixed sequence of
 * roundings: k_prolong_cubic and the interpolation fused into k_mcgs_march
 * (M = 2) agree bitwise */
template <typename T> __device__ __forceinline__ T cub_fin(T s03, T s12) {
  return fma_rn((T)(9.0 / 16), s12, mul_rn((T)(-1.0 / 16), s03));
}
template <typename T> __device__ __forceinline__ T cub(T v0, T v1, T v2, T v3) { return cub_fin(add_rn(v0, v3), add_rn(v1, v2)); }
/* a coarse index of the cubic interpolation after the odd reflection at the
 * boundary (-c below 0, 2 nc - c above nc: the value there is minus the
 * mirrored one); *flip toggles where it reflects */
template <typename I> __device__ __forceinline__ I cubic_reflect(I c, I nc, bool *flip) {
  if (c < 0) { *flip = !*flip; return -c; }
  if (c > nc) { *flip = !*flip; return 2 * nc - c; }
  return c;
}

/* interior point of this thread: i, j, k in 1..n-1 (k = 0 in 2D). In 3D the
 * grid (interior_grid) visits the box in slabs of gridDim.y blocks of rows,
 * slab after slab, each plane by plane: blockIdx.z = slab * (n - 1) + k - 1.
 * The blocks resident at one time then cover a few neighbouring planes of
 * one slab, whose stencil neighbours stay in L2; plane by plane over the
 * whole box, a stencil's planes at 1024^3 (8 MB each) fell out of L2
 * between uses (residual + restriction: 45% of the copy rate). */
__device__ __forceinline__ bool point(int64_t n, int dim, int64_t *i, int64_t *j, int64_t *k) {
  *i = 1 + blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (dim == 3) {
    const int64_t planes = n - 1, z = blockIdx.z, slab = z / planes;
    *k = 1 + z - slab * planes;
    *j = 1 + (slab * gridDim.y + blockIdx.y) * (int64_t)blockDim.y + threadIdx.y;
  } else {
    *j = 1 + blockIdx.y * (int64_t)blockDim.y + threadIdx.y;
    *k = 0;
  }
  return *i < n && *j < n;
}

/* mode 0: r = f - A u; mode 1: r = A u; mode 2: r = u + w (f - A u) (Jacobi) */
template <typename T> __global__ void k_stencil(int dim, int64_t n, int mode, T w, const T *__restrict__ u,
                                                const T *__restrict__ f, T *__restrict__ r) {
  int64_t i, j, k;
  if (!point(n, dim, &i, &j, &k)) return;
  const int64_t s1 = n + 1, s2 = s1 * s1, c = k * s2 + j * s1 + i;
  const T a = lap(u, c, s1, s2, dim);
  r[c] = mode == 0 ? f[c] - a : mode == 1 ? a : u[c] + w * (f[c] - a);
}

__device__ __forceinline__ void block_add(double v, double *out) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  __shared__ double warp[32];
  const int lane = (threadIdx.x + threadIdx.y * blockDim.x) & 31, wid = (threadIdx.x + threadIdx.y * blockDim.x) >> 5;
  if (lane == 0) warp[wid] = v;
  __syncthreads();
  if (wid == 0) {
    const int nw = (blockDim.x * blockDim.y + 31) / 32;
    v = lane < nw ? warp[lane] : 0.0;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if (lane == 0) atomicAdd(out, v);
  }
}

/* ||f - A u||^2 over the interior: the 32 x 8 point tiles of k_stencil, each
 * block taking a contiguous chunk of row tiles (2D) or of planes (3D), so
 * that the grid has at most tens of thousands of blocks, one atomicAdd each
 * (one block per tile of every plane made a million atomics on one address
 * at 1024^3), and a block's next plane is the neighbour plane it has just
 * read (strided planes read each plane three times from DRAM). */
constexpr unsigned FD_REDUCE_ROWS = 64, FD_REDUCE_PLANES = 16;
/* __launch_bounds__: with 88 registers, 2 blocks fitted on an SM, and the
 * kernel ran latency-bound at 25% warp occupancy (ncu, 3D n = 512); at 64,
 * 4 blocks: 1024^3 9.5 -> 6.2 ms. */
template <typename T> __global__ void __launch_bounds__(256, 4) k_resnorm(int dim, int64_t n, const T *__restrict__ u, const T *__restrict__ f,
                                                double *out) {
  const int64_t s1 = n + 1, s2 = s1 * s1;
  const int64_t i = 1 + blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  double v = 0;
  if (i < n) {
    const int64_t nk = dim == 3 ? n - 1 : 1, kc = (nk + gridDim.z - 1) / gridDim.z;
    const int64_t k0 = (dim == 3 ? 1 : 0) + blockIdx.z * kc, k1 = k0 + kc < (dim == 3 ? n : 1) ? k0 + kc : (dim == 3 ? n : 1);
    const int64_t tiles = (n - 1 + blockDim.y - 1) / blockDim.y, tc = (tiles + gridDim.y - 1) / gridDim.y;
    const int64_t jt0 = blockIdx.y * tc, jt1 = jt0 + tc < tiles ? jt0 + tc : tiles;
    for (int64_t k = k0; k < k1; k++)
      for (int64_t jt = jt0; jt < jt1; jt++) {
        const int64_t j = 1 + jt * blockDim.y + threadIdx.y;
        if (j >= n) continue;
        const int64_t c = k * s2 + j * s1 + i;
        const double e = (double)(f[c] - lap(u, c, s1, s2, dim));
        v += e * e;
      }
  }
  block_add(v, out);
}

/* Two colors of the multicolor GS at once: the colors (0,cj,ck) and (1,cj,ck)
 * share rows, and a row of them reads only itself and rows of other colors,
 * so one block owns one row and updates first one color, then the other:
 * bitwise the strict color order (paper 002's colors) with 2 (2D) / 4 (3D)
 * launches per sweep instead of 4 / 8, and contiguous accesses: thread t of
 * a chunk of W = blockDim.x points holds point i = x0 + t
 * (x0 = 1 + cW) of both colors. It loads f, the four neighbour rows (read
 * only in this launch) and its own u once, coalesced; the first color is
 * computed on its lanes with the row neighbours from shared memory, the
 * second from the new first-color values, and the chunk is stored in one
 * contiguous store. One thread per point of one color touched each line
 * twice, once per color, with stride-2 loads and stores (twice the L2
 * requests per byte), and reloaded the row after its first-color stores. Forward, a chunk
 * starts with a second-color point (odd i) and ends with a first-color one,
 * so the chunks go in ascending order; backward (first color odd i) they go
 * in descending order; the value at each chunk edge is then new or old as
 * the strict color order requires. A stride-2 kernel (one thread per point
 * of one color) took 13.0 / 13.9 ms per sweep at 1024^3 against 10.6 ms for
 * this one (docs/design-decisions.md). */
template <typename T> __global__ void k_mcgs_rows(int dim, int64_t n, int cj, int ck, int backward, T kw, T w,
                                                   T *__restrict__ u, const T *__restrict__ f) {
  extern __shared__ __align__(16) unsigned char fd_smem[];
  T *s_old = (T *)fd_smem + 1, *s_new = s_old + blockDim.x + 2; /* [-1 .. W] each */
  const int64_t j = (cj ? 1 : 2) + 2 * (int64_t)blockIdx.x;
  const int64_t k = dim == 3 ? (ck ? 1 : 2) + 2 * (int64_t)blockIdx.y : 0;
  if (j >= n || (dim == 3 && k >= n)) return; /* uniform across the block */
  const int64_t s1 = n + 1, s2 = s1 * s1, base = k * s2 + j * s1;
  const int W = blockDim.x, t = threadIdx.x;
  const int64_t C = (n - 1 + W - 1) / W;
  const int pa = backward ? 1 : 0; /* parity of i of the first color */
  for (int64_t cc = 0; cc < C; cc++) {
    const int64_t c = backward ? C - 1 - cc : cc, x0 = 1 + c * W, i = x0 + t;
    const bool in = i <= n - 1;
    T fv = 0, uo = 0, n1 = 0, n2 = 0, n3 = 0, n4 = 0;
    if (in) {
      const int64_t q = base + i;
      fv = f[q];
      uo = u[q];
      n1 = u[q - s1];
      n2 = u[q + s1];
      if (dim == 3) { n3 = u[q - s2]; n4 = u[q + s2]; }
    }
    /* the sum in nbsum's order (gs_sum) */
#define FD_ROWSUM(l, r) gs_sum(gs_keep(kw, uo, gs_fz(fv, n3, n4, dim)), n1, n2, (l), (r))
    s_old[t] = uo;
    if (t == 0) s_old[-1] = u[base + x0 - 1];
    if (t == W - 1) s_old[W] = x0 + W <= n ? u[base + x0 + W] : (T)0;
    __syncthreads();
    const bool first = (int)(i & 1) == pa;
    T v = uo;
    if (in && first) v = w * FD_ROWSUM(s_old[t - 1], s_old[t + 1]);
    s_new[t] = v;
    if (t == 0) s_new[-1] = s_old[-1];
    if (t == W - 1) s_new[W] = s_old[W];
    __syncthreads();
    if (in && !first) v = w * FD_ROWSUM(s_new[t - 1], s_new[t + 1]);
    if (in) u[base + i] = v;
    __syncthreads();
  }
#undef FD_ROWSUM
}

/* 3D multicolor GS, S = 1 or 2 sweeps fused in one pass through memory,
 * out of place (uin -> uout; the caller swaps): temporal blocking by
 * z-marching. A block owns an OX x OY column of the grid and marches up
 * in k over its tile of TX x TY points (the owned part plus a ring of
 * R = 2S points, recomputed by both neighbours). In 3D the colors are
 * (i%2, j%2, k%2); planes of the first parity P (A) read only planes of
 * the other (B) and themselves, so at step k (an A plane) the block updates
 * A_s(k - 2s) and then B_s(k - 2s - 1) for s = 0..S-1: every input of each
 * update is already at the state the strict color order gives it. Within a
 * plane, the first rows and then the second rows are updated. A warp holds
 * two neighbouring rows (tile rows 2b, 2b + 1; a thread two points of each,
 * odd i0 and even i0 + 1): both colors of a row go through shuffles, the
 * other row of the pair is in the thread's registers, and the row of the
 * neighbouring warp comes through a shared exchange row (the second rows
 * before the first rows' update, the first rows after it), so that every
 * warp works in both halves of a phase. Each thread keeps its points of
 * the 2S + 2 planes k + 1 .. k - 2S in registers; the next step's u planes
 * and the f of the planes being updated come through shared memory by
 * cp.async, issued one step ahead, and the finished planes leave through
 * shared memory, so that copies and stores are contiguous. uin and f are
 * read once and uout written once for S sweeps: 3 vectors per S sweeps
 * instead of about 5 per sweep (k_mcgs_rows, 4 launches). Points of the
 * tile's outer layer are never updated; their error reaches 2S points
 * inward in S sweeps, no further (a CPU model of this kernel,
 * bench/results/fd-gpu-march-ring-model/march_model.c, finds R = 2S
 * minimal), so the owned points are bitwise those of the strict color order
 * (test_fd_gpu). Timings: docs/fd.md. */
/* dynamic shared memory of k_mcgs_march<T, S, TY, M>: the exchange rows xa, xb
 * [TY/2][2][32] each, the f ring fr[2S+2][2][TY][32], the u stages
 * us[2][2][2][TY][32] and, for M = 2, the coarse tiles ct[2][TY/2 + 3][35] */
template <int TY> __host__ __device__ constexpr int march_ct() { return (64 / 2 + 3) * (TY / 2 + 3); }
template <typename T, int S, int TY, int M> constexpr size_t march_smem() {
  return sizeof(T) * (32 * TY * (2 + 2 * (2 * S + 2) + 8) + (M == 2 ? 2 * march_ct<TY>() : 0));
}
/* M: what enters the pass. 0: u (uin); 1: u + P uc, the cycle's coarse-grid
 * correction (COR); 2: Pc uc, FMG's cubic interpolation (CUB, forward only;
 * uin is not read). */
template <typename T, int S, int TY, int M, int P>
__global__ void __launch_bounds__(16 * TY, 512 / (16 * TY))
    k_mcgs_march(int64_t n, int cz, T kw, T w, const T *__restrict__ uin, const T *__restrict__ f, T *__restrict__ uout,
                 const T *__restrict__ uc) {
  constexpr bool COR = M == 1, CUB = M == 2;
  static_assert(!CUB || P == 0, "the interpolation enters forward passes only");
  /* NP = 2S + 2 planes in flight: the register window k + 1 .. k - 2S of u,
   * and the f ring (the 2S planes being updated and the 2 being copied) */
  constexpr int R = 2 * S, TX = 64, OX = TX - 2 * R, OY = TY - 2 * R, NP = 2 * S + 2, NW = TY / 2;
  constexpr int PL = 2 * TY * 32; /* one tile plane: [point 0 / 1][row][lane] */
  /* y0 is odd (R and OY are even), so the warp's row 0 (odd j) is the first
   * row of a plane (color order) for P = 1 and row 1 for P = 0 */
  static_assert(R % 2 == 0 && OY % 2 == 0, "tile rows must pair as (odd j, even j)");
  constexpr int RF = P == 1 ? 0 : 1, RS = 1 - RF;
  extern __shared__ __align__(16) unsigned char fd_smem[];
  T *xa = (T *)fd_smem, *xb = xa + 64 * NW, *fr = xb + 64 * NW, *us = fr + NP * PL; /* us: [stage][plane] */
  const unsigned FULL = 0xffffffffu;
  const int tx = threadIdx.x, b = threadIdx.y, ni = (int)n;
  const int x0 = 1 + (int)blockIdx.x * OX - R, y0 = 1 + (int)blockIdx.y * OY - R;
  const int i0 = x0 + 2 * tx, i1 = i0 + 1, s1 = ni + 1;
  const int64_t s2 = (int64_t)s1 * s1;
  /* row r of this warp: tile row 2b + r, grid row jr[r]; e(r, pt) its
   * thread's point pt in a tile plane; xe its point 0 in an exchange row */
  int jr[2];
  bool rowupd[2], upd0[2], upd1[2];
#pragma unroll
  for (int r = 0; r < 2; r++) {
    jr[r] = y0 + 2 * b + r;
    rowupd[r] = 2 * b + r >= 1 && 2 * b + r <= TY - 2 && jr[r] >= 1 && jr[r] <= ni - 1; /* warp-uniform */
    upd0[r] = rowupd[r] && tx >= 1 && i0 >= 1 && i0 <= ni - 1;
    upd1[r] = rowupd[r] && tx <= 30 && i1 >= 1 && i1 <= ni - 1;
  }
  auto e = [&](int r, int pt) { return (pt * TY + 2 * b + r) * 32 + tx; };
  const int xe = b * 64 + tx;
  /* copies and stores are contiguous: thread tx moves the tile points
   * a = tx and tx + 32 of its rows, stored at ca[r][h] in a tile plane;
   * ga[r][h] is the point's offset in a grid plane (0 outside the box).
   * Bits of msk, at 4r + h: in the box (copied); at 8 + 4r + h: interior
   * (f copied); at 16 + 4r + h: owned (stored). */
  int ca[2][2], ga[2][2];
  unsigned msk = 0;
#pragma unroll
  for (int r = 0; r < 2; r++)
#pragma unroll
    for (int h = 0; h < 2; h++) {
      const int a = tx + 32 * h, i = x0 + a, j = jr[r], bt = 2 * b + r;
      const bool cu = j >= 0 && j <= ni && i >= 0 && i <= ni, cf = j >= 1 && j <= ni - 1 && i >= 1 && i <= ni - 1;
      ca[r][h] = ((a & 1) * TY + bt) * 32 + (a >> 1);
      ga[r][h] = cu ? j * s1 + i : 0;
      msk |= (cu ? 1u : 0u) << (4 * r + h) | (cf ? 1u : 0u) << (8 + 4 * r + h) |
             (cf && a >= R && a < TX - R && bt >= R && bt < TY - R ? 1u : 0u) << (16 + 4 * r + h);
    }
  /* the stages start zero: points outside the box are never copied, so they
   * stay zero (their values enter the row updates of the box's edge points
   * as the boundary's zeros); the f ring too, for tidiness (read only at
   * interior points) */
  for (int q = b * 32 + tx; q < (NP + 4) * PL; q += 16 * TY) fr[q] = (T)0;
  /* the copies for step k, asynchronous (cp.async): u of planes k + 1, k
   * into stage st, f of planes k, k - 1 into the f ring slots fs0, fs1.
   * Planes above the box (q > n) are not copied: they are never read by an
   * update (plane n is the boundary), nor is f off the interior planes. */
  auto issue = [&](int k, T *st, int fs0, int fs1) {
#pragma unroll
    for (int c = 0; c < 2; c++) {
      const int q = k + 1 - c, qf = k - c;
      if (!CUB && q <= ni) {
        const T *gu = uin + q * s2;
#pragma unroll
        for (int r = 0; r < 2; r++)
#pragma unroll
          for (int h = 0; h < 2; h++)
            if (msk & (1u << (4 * r + h))) __pipeline_memcpy_async(st + c * PL + ca[r][h], gu + ga[r][h], sizeof(T));
      }
      if (qf >= 1 && qf <= ni - 1) {
        const T *gf = f + qf * s2;
        T *df = fr + (c ? fs1 : fs0) * PL;
#pragma unroll
        for (int r = 0; r < 2; r++)
#pragma unroll
          for (int h = 0; h < 2; h++)
            if (msk & (1u << (8 + 4 * r + h))) __pipeline_memcpy_async(df + ca[r][h], gf + ga[r][h], sizeof(T));
      }
    }
    __pipeline_commit();
  };
  /* COR: the coarse-grid correction u += P uc (k_prolong's P) is added to
   * the u planes as they enter the register window, so that the
   * prolongation costs no pass of its own. This thread's points (odd i0 =
   * 2I - 1, even i1 = 2I) of row j, plane q take 0.5 (uc[I-1, J, K] +
   * uc[C]) and uc[I, J, K] (or 0.5 (uc[I, J, K] + uc[C]) off the even rows
   * and planes), J = j/2, K = q/2, C = (I, J + j%2, K + q%2). uc[I-1, J, K]
   * is the left lane's uc[I, J, K]; lane 0 loads its own: its point 0, the
   * tile's outer layer, is read by its point 1 before that layer's
   * staleness could matter, so it must be right (a shortcut there failed
   * the forward sweeps of test_fd_gpu). The loads are issued at the top of
   * the step, before the wait for the step's copies (prefetching them a
   * step ahead into registers or shared memory was slower,
   * docs/design-decisions.md). */
  const int I = i1 >> 1;
  const int64_t c1 = ni / 2 + 1, c2 = c1 * c1;
  bool in0[2], in1[2];
#pragma unroll
  for (int r = 0; r < 2; r++) {
    in0[r] = jr[r] >= 1 && jr[r] <= ni - 1 && i0 >= 1 && i0 <= ni - 1;
    in1[r] = jr[r] >= 1 && jr[r] <= ni - 1 && i1 >= 1 && i1 <= ni - 1;
  }
  T cl[2][2], cb[2][2], cc[2][2]; /* [row][slot]: uc[I-1, J, K] (lane 0), uc[I, J, K], uc[C] of two planes */
  auto cload = [&](int c, int q) { /* plane q's coarse values into slot c */
#pragma unroll
    for (int r = 0; r < 2; r++) {
      cl[r][c] = cb[r][c] = cc[r][c] = (T)0;
      if (q >= 1 && q <= ni - 1 && (in0[r] || in1[r])) {
        const int J = jr[r] >> 1, bj = jr[r] & 1;
        const int64_t b0 = J * c1 + (q >> 1) * c2 + I, b1 = (J + bj) * c1 + ((q >> 1) + (q & 1)) * c2 + I;
        cb[r][c] = uc[b0];
        cc[r][c] = uc[b1];
        if (tx == 0 && in0[r]) cl[r][c] = uc[b0 - 1];
      }
    }
  };
  auto cadd = [&](int c, int q, T (&v)[4]) { /* v += P uc at this thread's points of plane q (slot c) */
#pragma unroll
    for (int r = 0; r < 2; r++) {
      const T B = cb[r][c], C = cc[r][c], Al = __shfl_up_sync(FULL, B, 1), A = tx == 0 ? cl[r][c] : Al;
      if (q >= 1 && q <= ni - 1) {
        if (in0[r]) v[2 * r] = add_rn(v[2 * r], mid_rn(A, C));
        if (in1[r]) v[2 * r + 1] = add_rn(v[2 * r + 1], ((jr[r] & 1) | (q & 1)) ? mid_rn(B, C) : B);
      }
    }
  };
  /* CUB: u = Pc uc (k_prolong_cubic's interpolation, bitwise) is computed
   * as the planes enter the window, so that u is never read and the
   * interpolation costs no pass of its own. Coarse plane K goes through
   * shared memory as the tile ct of coarse points cx .. cx + 34 (x) by
   * cy .. cy + TY/2 + 2 (y), with the odd reflection at the boundary
   * (index -c or 2 nc - c, sign flipped) applied as it is stored; thread
   * (tx, b) interpolates in x from tile columns tx .. tx + 3, then in y from
   * tile rows b .. b + 3 (X[K], its four points), and in z the window takes
   * plane 2K = X[K] and plane 2K + 1 = cub(X[K - 1], X[K], X[K + 1], X[K + 2]).
   * Each step needs one new X; the coarse plane for the next step is loaded
   * into registers at the top of the step and stored at its end. */
  constexpr int CW = TX / 2 + 3, CT = march_ct<TY>(), NT = 16 * TY;
  T *ct = us + 4 * PL;
  const int nc = ni / 2, lid = b * 32 + tx;
  auto refl = [&](int c, bool &neg) { /* clamped: tiles reach past the mirror only off the box */
    c = cubic_reflect(c, nc, &neg);
    return c < 0 ? 0 : (c > nc ? nc : c);
  };
  int coff[2] = {0, 0};
  bool cneg[2] = {false, false};
  if (CUB)
#pragma unroll
    for (int e = 0; e < 2; e++) {
      const int q = lid + e * NT, gx = (x0 - 1) / 2 - 1 + q % CW, gy = (y0 - 1) / 2 - 1 + q / CW;
      const int rx = refl(gx, cneg[e]), ry = refl(gy, cneg[e]);
      coff[e] = ry * (int)c1 + rx;
    }
  auto ctload = [&](int K, T (&v)[2]) { /* this thread's points of tile K */
    bool nz = false;
    const T *base = uc + refl(K, nz) * c2;
#pragma unroll
    for (int e = 0; e < 2; e++) {
      v[e] = (T)0;
      if (lid + e * NT < CT) v[e] = base[coff[e]];
      if (nz != cneg[e]) v[e] = -v[e];
    }
  };
  auto ctstore = [&](int buf, const T (&v)[2]) {
#pragma unroll
    for (int e = 0; e < 2; e++)
      if (lid + e * NT < CT) ct[buf * CT + lid + e * NT] = v[e];
  };
  auto xy = [&](int buf, T (&o)[4]) { /* X of the tile in buffer buf at this thread's points */
    const T *cb = ct + buf * CT + b * CW + tx;
    T rx[4][2];
#pragma unroll
    for (int y = 0; y < 4; y++) {
      const T v0 = cb[y * CW], v1 = cb[y * CW + 1], v2 = cb[y * CW + 2], v3 = cb[y * CW + 3];
      rx[y][0] = cub(v0, v1, v2, v3); /* odd i0 */
      rx[y][1] = v2;                  /* even i1 = 2 (I' + 1) */
    }
    o[0] = cub(rx[0][0], rx[1][0], rx[2][0], rx[3][0]); /* odd row */
    o[1] = cub(rx[0][1], rx[1][1], rx[2][1], rx[3][1]);
    o[2] = rx[2][0]; /* even row */
    o[3] = rx[2][1];
  };
  /* a plane q of X values into the window, zero off the interior */
  auto cset = [&](int q, const T (&v)[4], T (&w)[4]) {
    const bool qi = q >= 1 && q <= ni - 1;
#pragma unroll
    for (int r = 0; r < 2; r++) {
      w[2 * r] = qi && in0[r] ? v[2 * r] : (T)0;
      w[2 * r + 1] = qi && in1[r] ? v[2 * r + 1] : (T)0;
    }
  };
  T X0[4], X1[4], X2[4], cn[2]; /* X[K - 1], X[K], X[K + 1] at step k = 2K; the next tile */
  /* z-chunks: block z stores the planes z0 .. z1 - 1 (cz of them). Past the
   * first chunk it starts 2S planes lower (its z-ring, recomputed; those
   * planes and the plane below, ks - 1, enter with their values before the
   * pass and planes below ks are never updated, the z-analogue of the
   * tile's outer layer) and marches until plane z1 - 1 is final. */
  const int z0 = 1 + (int)blockIdx.z * cz, z1 = min(z0 + cz, ni);
  int ks = z0 - 2 * S, qlo;
  if ((ks & 1) != P) ks--;
  if (ks >= 2) {
    qlo = ks;
  } else { /* the ring reaches the bottom: start as the first chunk */
    ks = P;
    qlo = 1;
  }
  int kmax = z1 + 2 * S - 2;
  if ((kmax & 1) != P) kmax++;
  /* The register window: U[(m - 2 t) mod NP] holds window plane m (plane
   * k + 1 - m) at step t = (k - ks) / 2, so that the window moves by
   * renaming (the k loop is unrolled NP / 2 times) instead of by copies;
   * the f ring holds plane q in slot (q - ks) mod NP. U[.][2r + pt]: row r,
   * point pt. */
  T U[NP][4];
#pragma unroll
  for (int m = 0; m < NP; m++)
#pragma unroll
    for (int v = 0; v < 4; v++) U[m][v] = (T)0;
  __syncthreads(); /* the zeroed buffers, before the first copies */
  if (CUB) { /* X[Ks - 1 .. Ks + 1] (Ks = ks / 2), plane ks - 1 if needed, tile Ks + 2 */
    const int Ks = ks / 2;
    auto stage_xy = [&](int K, T (&o)[4]) {
      ctload(K, cn);
      ctstore(0, cn);
      __syncthreads();
      xy(0, o);
      __syncthreads();
    };
    if (qlo > 1) {
      T Xm[4], v[4];
      stage_xy(Ks - 2, Xm);
      stage_xy(Ks - 1, X0);
      stage_xy(Ks, X1);
      stage_xy(Ks + 1, X2);
#pragma unroll
      for (int c = 0; c < 4; c++) v[c] = cub(Xm[c], X0[c], X1[c], X2[c]);
      cset(ks - 1, v, U[2]);
    } else {
      stage_xy(Ks - 1, X0);
      stage_xy(Ks, X1);
      stage_xy(Ks + 1, X2);
    }
    ctload(Ks + 2, cn);
    ctstore(0, cn); /* published by step 0's barrier */
  } else if (qlo > 1) { /* plane ks - 1 (interior: ks >= 2), window plane 2 at step 0 */
    const int q = ks - 1;
#pragma unroll
    for (int r = 0; r < 2; r++) {
      const int j = jr[r];
      const T *gu = uin + q * s2 + j * s1;
      if (j >= 0 && j <= ni && i0 >= 0 && i0 <= ni) U[2][2 * r] = gu[i0];
      if (j >= 0 && j <= ni && i1 >= 0 && i1 <= ni) U[2][2 * r + 1] = gu[i1];
    }
    if (COR) {
      cload(0, q);
      cadd(0, q, U[2]);
    }
  }
  issue(ks, us, 0, NP - 1);
  for (int k0 = ks, t0 = 0; k0 <= kmax; k0 += NP, t0 += NP / 2) {
#pragma unroll
    for (int rr = 0; rr < NP / 2; rr++) {
      const int k = k0 + 2 * rr, t = t0 + rr;
      if (k > kmax) break;
#define FD_W(m) U[((m) - 2 * rr + 2 * NP) % NP] /* window plane m at this step */
      T *st = us + (t & 1) * 2 * PL;
      if (COR) { /* planes k + 1, k: in flight during the wait */
        cload(0, k + 1);
        cload(1, k);
      }
      if (CUB) ctload(k / 2 + 3, cn); /* stored at the end of the step */
      __pipeline_wait_prior(0); /* this step's copies, issued one step ago */
      __syncthreads();          /* ... by every thread of the block */
      if (!CUB)
#pragma unroll
        for (int c = 0; c < 2; c++)
#pragma unroll
          for (int r = 0; r < 2; r++) {
            FD_W(c)[2 * r] = st[c * PL + e(r, 0)];
            FD_W(c)[2 * r + 1] = st[c * PL + e(r, 1)];
          }
      if (COR)
#pragma unroll
        for (int c = 0; c < 2; c++) cadd(c, k + 1 - c, FD_W(c));
      if (CUB) { /* planes k + 1 = 2K + 1 and k = 2K */
        T N[4], v[4];
        xy(t & 1, N);
#pragma unroll
        for (int c = 0; c < 4; c++) v[c] = cub(X0[c], X1[c], X2[c], N[c]);
        cset(k + 1, v, FD_W(0));
        cset(k, X1, FD_W(1));
#pragma unroll
        for (int c = 0; c < 4; c++) {
          X0[c] = X1[c];
          X1[c] = X2[c];
          X2[c] = N[c];
        }
      }
      if (k + 2 <= kmax) /* in flight during this step's phases */
        issue(k + 2, us + ((t + 1) & 1) * 2 * PL, (2 * rr + 2) % NP, (2 * rr + 1) % NP);
#pragma unroll
      for (int ph = 0; ph < 2 * S; ph++) {
        const int m = 1 + ph; /* plane q = k - ph: A_{ph/2} for even ph, B_{ph/2} for odd */
        const int q = k - ph;
        const bool qin = q >= qlo && q <= ni - 1;
        const T *fq = fr + ((2 * rr - ph + 2 * NP) % NP) * PL;
        /* row r of this warp, its y-neighbours yl (row below), yh (row above) */
        /* the parts of the sums known before the phase's barriers (gs_sum's
         * order): f + z of every point of both rows, and the x-sum of each
         * row's point updated first (its x-neighbours are of the other color;
         * the second rows are not changed by the first rows' update) */
        T fz[2][2], xf[2];
#pragma unroll
        for (int r = 0; r < 2; r++) {
#pragma unroll
          for (int pt = 0; pt < 2; pt++)
            fz[r][pt] = gs_keep(kw, FD_W(m)[2 * r + pt], gs_fz(fq[e(r, pt)], FD_W(m + 1)[2 * r + pt], FD_W(m - 1)[2 * r + pt], 3));
          const T v0 = FD_W(m)[2 * r], v1 = FD_W(m)[2 * r + 1];
          xf[r] = P == 0 ? v0 + __shfl_down_sync(FULL, v0, 1) : __shfl_up_sync(FULL, v1, 1) + v1;
        }
        auto update = [&](int r, const T *yl, const T *yh) {
          T v0 = FD_W(m)[2 * r], v1 = FD_W(m)[2 * r + 1];
          if (P == 0) { /* even i (point 1) first: x- = v0, x+ = the right lane's v0 */
            if (upd1[r]) v1 = w * gs_fin(fz[r][1], yl[1], yh[1], xf[r]);
            const T lt = __shfl_up_sync(FULL, v1, 1);
            if (upd0[r]) v0 = w * gs_fin(fz[r][0], yl[0], yh[0], lt + v1);
          } else { /* odd i (point 0) first: x- = the left lane's v1, x+ = v1 */
            if (upd0[r]) v0 = w * gs_fin(fz[r][0], yl[0], yh[0], xf[r]);
            const T rt = __shfl_down_sync(FULL, v0, 1);
            if (upd1[r]) v1 = w * gs_fin(fz[r][1], yl[1], yh[1], v0 + rt);
          }
          FD_W(m)[2 * r] = v0;
          FD_W(m)[2 * r + 1] = v1;
        };
        /* half 0 updates the first rows, half 1 the second rows: the other
         * row of the pair (the second rows before their update, the first
         * rows after theirs) goes to the half's exchange row, and the row
         * being updated takes it from registers and from the neighbouring
         * warp's exchange row */
#pragma unroll
        for (int hf = 0; hf < 2; hf++) {
          const int ru = hf ? RS : RF, ro = 1 - ru; /* the row updated now, the other row of the pair */
          T *x = hf ? xb : xa;
          x[xe] = FD_W(m)[2 * ro];
          x[xe + 32] = FD_W(m)[2 * ro + 1];
          __syncthreads();
          if (qin && rowupd[ru]) {
            const int nb = ru == 0 ? xe - 64 : xe + 64;
            const T own[2] = {FD_W(m)[2 * ro], FD_W(m)[2 * ro + 1]}, oth[2] = {x[nb], x[nb + 32]};
            if (ru == 0) update(ru, oth, own); else update(ru, own, oth);
          }
        }
      }
      if (CUB) ctstore((t + 1) & 1, cn);
      /* planes k - 2S (final since step k - 2) and k - 2S + 1 (final now),
       * through the consumed stage buffer to contiguous stores */
#pragma unroll
      for (int c = 0; c < 2; c++)
#pragma unroll
        for (int r = 0; r < 2; r++) {
          st[c * PL + e(r, 0)] = FD_W(NP - 1 - c)[2 * r];
          st[c * PL + e(r, 1)] = FD_W(NP - 1 - c)[2 * r + 1];
        }
      __syncthreads();
#pragma unroll
      for (int c = 0; c < 2; c++) {
        const int q = k - 2 * S + c;
        if (q >= z0 && q < z1) {
          T *go = uout + q * s2;
#pragma unroll
          for (int r = 0; r < 2; r++)
#pragma unroll
            for (int h = 0; h < 2; h++)
              if (msk & (1u << (16 + 4 * r + h))) go[ga[r][h]] = st[c * PL + ca[r][h]];
        }
      }
#undef FD_W
    }
  }
}

/* one color of red-black GS: (i + j + k) % 2 == color */
template <typename T> __global__ void k_redblack(int dim, int64_t n, int color, T kw, T w, T *__restrict__ u, const T *__restrict__ f) {
  const int64_t j = 1 + blockIdx.y * (int64_t)blockDim.y + threadIdx.y;
  const int64_t k = dim == 3 ? 1 + (int64_t)blockIdx.z : 0;
  const int64_t i = 1 + ((j + k + 1 + color) & 1) + 2 * (blockIdx.x * (int64_t)blockDim.x + threadIdx.x);
  if (i >= n || j >= n) return;
  const int64_t s1 = n + 1, s2 = s1 * s1, c = k * s2 + j * s1 + i;
  u[c] = w * nbsum(u, f, c, s1, s2, dim, kw);
}

/* fc = 4 R rf (M = 0, a = rf), fc = 4 R (f - A u) without storing the
 * residual (M = 1, a = f: each fine residual computed where it is needed;
 * the fine points 2I + {-1,0,1}^d of an interior coarse point are interior,
 * so no boundary test), or fc += 4 R (-A u) (M = 2, a unread: fc holds 4 R f,
 * restrict_update). One thread per coarse interior point. In 3D, M = 1, 2
 * go to k_resrestrict3. */
template <typename T, int M>
__global__ void k_restrict(int dim, int64_t nf, const T *__restrict__ a, const T *__restrict__ u, T *__restrict__ fc) {
  const int64_t nc = nf / 2;
  int64_t I, J, K;
  if (!point(nc, dim, &I, &J, &K)) return;
  const int64_t f1 = nf + 1, f2 = f1 * f1, c1 = nc + 1, c2 = c1 * c1;
  const int64_t c = 2 * I + 2 * J * f1 + 2 * K * f2;
  auto v = [&](int64_t o) -> T {
    return M == 0 ? a[c + o] : M == 1 ? a[c + o] - lap(u, c + o, f1, f2, dim) : -lap(u, c + o, f1, f2, dim);
  };
  const int64_t co = dim == 2 ? I + J * c1 : I + J * c1 + K * c2;
  T r;
  if (dim == 2) {
    r = v(0) + (T)0.5 * (v(-1) + v(1) + v(-f1) + v(f1) + v(-1 - f1) + v(1 + f1));
  } else {
    const T s = v(-1) + v(1) + v(-f1) + v(f1) + v(-f2) + v(f2) + v(-1 - f1) + v(1 + f1) + v(-1 - f2) + v(1 + f2) +
                v(-f1 - f2) + v(f1 + f2) + v(-1 - f1 - f2) + v(1 + f1 + f2);
    r = (T)0.5 * v(0) + (T)0.25 * s;
  }
  fc[co] = M == 2 ? fc[co] + r : r;
}

template <typename T> struct vec2_of;
template <> struct vec2_of<double> { typedef double2 t; };
template <> struct vec2_of<float> { typedef float2 t; };
/* 3D residual + restriction with R A as one stencil on u: 4 R (f - A u) =
 * 0.5 f(0) + 0.25 (f over R's 14 other points - Q), Q = 4 R A u = sum of
 * a_p u(2I + p) over 51 points p with integer weights a_p (-1 at 30, 3 at 8,
 * 2 at 6, -2 at 6, 6 at p = 0; they sum to 0). k_restrict<T, 1> computes
 * the 15 fine residuals of R's points from 7 loads each: 120 stride-2 loads
 * per coarse point, and at 1024^3 the kernel was bound by L1 wavefronts
 * (4 per stride-2 warp load: 7.4 ms, 58% of the copy rate); this takes 66
 * (k_restrict<T, 1> stays for 2D).
 * UPD: fc holds 4 R f already (FMG's first V-cycle on a level: its coarse
 * right-hand side is still the restriction of f), fc -= 0.25 Q, f unread.
 * V: u is read in aligned pairs (16 bytes in double). With nf even, the
 * point (2I + x, 2J + y, 2K + z) has the parity of x + y + z in memory, so
 * which x start an aligned pair is known per row at compile time; a warp's
 * pair load moves 512 contiguous bytes in 4 wavefronts for two values, where
 * a stride-2 load of one value took 4: 34 loads of u instead of 51. */
template <typename T, bool UPD, bool V>
__global__ void k_resrestrict3(int64_t nf, const T *__restrict__ f, const T *__restrict__ u, T *__restrict__ fc) {
  const int64_t nc = nf / 2;
  int64_t I, J, K;
  if (!point(nc, 3, &I, &J, &K)) return;
  const int64_t f1 = nf + 1, f2 = f1 * f1, c = 2 * I + 2 * J * f1 + 2 * K * f2, co = I + J * (nc + 1) + K * (nc + 1) * (nc + 1);
  T rw[5][5][7]; /* [z + 2][y + 2][x + 3]: the loaded u, the entries the stencil uses */
  auto row = [&](int y, int z, int xlo, int xhi) {
    const T *p = u + c + y * f1 + z * f2;
    if (V) {
      for (int x = ((xlo + y + z) & 1) ? xlo - 1 : xlo; x <= xhi; x += 2) {
        const typename vec2_of<T>::t q = *(const typename vec2_of<T>::t *)(p + x);
        rw[z + 2][y + 2][x + 3] = q.x;
        rw[z + 2][y + 2][x + 4] = q.y;
      }
    } else {
      for (int x = xlo; x <= xhi; x++) rw[z + 2][y + 2][x + 3] = p[x];
    }
  };
  row(-1, -2, -1, 0); row(0, -2, -1, 0); row(-2, -1, -1, 0); row(-1, -1, -2, 1); row(0, -1, -2, 1); row(1, -1, -1, 1);
  row(-2, 0, -1, 0); row(-1, 0, -2, 1); row(0, 0, -2, 2); row(1, 0, -1, 2); row(2, 0, 0, 1); row(-1, 1, -1, 1);
  row(0, 1, -1, 2); row(1, 1, -1, 2); row(2, 1, 0, 1); row(0, 2, 0, 1); row(1, 2, 0, 1);
#define FD_U(x, y, z) rw[(z) + 2][(y) + 2][(x) + 3]
  const T m1 = ((FD_U(-1, -1, -2) + FD_U(0, -1, -2)) + (FD_U(-1, 0, -2) + FD_U(0, 0, -2))) +
               ((FD_U(-1, -2, -1) + FD_U(0, -2, -1)) + (FD_U(-2, -1, -1) + FD_U(1, -1, -1))) +
               ((FD_U(-2, 0, -1) + FD_U(-1, 1, -1)) + (FD_U(1, 1, -1) + FD_U(-1, -2, 0))) +
               ((FD_U(0, -2, 0) + FD_U(-2, -1, 0)) + (FD_U(-2, 0, 0) + FD_U(2, 0, 0))) +
               ((FD_U(2, 1, 0) + FD_U(0, 2, 0)) + (FD_U(1, 2, 0) + FD_U(-1, -1, 1))) +
               ((FD_U(1, -1, 1) + FD_U(2, 0, 1)) + (FD_U(-1, 1, 1) + FD_U(2, 1, 1))) +
               ((FD_U(0, 2, 1) + FD_U(1, 2, 1)) + (FD_U(0, 0, 2) + FD_U(1, 0, 2))) + (FD_U(0, 1, 2) + FD_U(1, 1, 2));
  const T p3 = ((FD_U(-1, -1, -1) + FD_U(0, -1, -1)) + (FD_U(-1, 0, -1) + FD_U(-1, -1, 0))) +
               ((FD_U(1, 1, 0) + FD_U(1, 0, 1)) + (FD_U(0, 1, 1) + FD_U(1, 1, 1)));
  const T p2 = (FD_U(0, 0, -1) + FD_U(0, -1, 0)) + (FD_U(-1, 0, 0) + FD_U(1, 0, 0)) + (FD_U(0, 1, 0) + FD_U(0, 0, 1));
  const T n2 = (FD_U(1, 0, -1) + FD_U(0, 1, -1)) + (FD_U(1, -1, 0) + FD_U(-1, 1, 0)) + (FD_U(0, -1, 1) + FD_U(-1, 0, 1));
  const T q = ((T)6 * FD_U(0, 0, 0) + (T)3 * p3) + ((T)2 * (p2 - n2) - m1);
#undef FD_U
  if (UPD) {
    fc[co] = fc[co] - (T)0.25 * q;
  } else {
    auto g = [&](int64_t o) { return f[c + o]; };
    const T s = g(-1) + g(1) + g(-f1) + g(f1) + g(-f2) + g(f2) + g(-1 - f1) + g(1 + f1) + g(-1 - f2) + g(1 + f2) +
                g(-f1 - f2) + g(f1 + f2) + g(-1 - f1 - f2) + g(1 + f1 + f2);
    fc[co] = (T)0.5 * g(0) + (T)0.25 * (s - q);
  }
}

/* uf (+)= P uc, one thread per fine interior point */
template <typename T> __global__ void k_prolong(int dim, int64_t nf, const T *__restrict__ uc, T *__restrict__ uf, int add) {
  int64_t i, j, k;
  if (!point(nf, dim, &i, &j, &k)) return;
  const int64_t nc = nf / 2, f1 = nf + 1, f2 = f1 * f1, c1 = nc + 1, c2 = c1 * c1;
  const int64_t I = i >> 1, J = j >> 1, K = k >> 1, a = i & 1, b = j & 1, cc = k & 1;
  const int64_t c0 = I + J * c1 + K * c2, cs = (I + a) + (J + b) * c1 + (K + cc) * c2;
  const T v = (a | b | cc) ? mid_rn(uc[c0], uc[cs]) : uc[c0];
  const int64_t p = i + j * f1 + k * f2;
  uf[p] = add ? add_rn(uf[p], v) : v;
}

/* uf = Pc uc (tensor-product cubic, fd_prolong_cubic): one thread per
 * coarse cell (I, J[, K]) writes the 2^d fine points 2I + s, s in {0,1}^d,
 * interior only, from the 4^d coarse values I-1..I+2 (odd reflection at the
 * boundary), contracting one direction at a time in registers: an even fine
 * index takes the coarse value I, an odd one (-1, 9, 9, -1)/16. The tap
 * offsets and reflection signs are computed once per direction (cubic_taps):
 * per-load index arithmetic made the kernel instruction-bound. */
/* coarse index I - 1 + x (x = 0..3) after the odd reflection at the
 * boundary (-1 -> 1, nc + 1 -> nc - 1, sign flipped), times the stride */
__device__ __forceinline__ void cubic_taps(int64_t I, int64_t nc, int64_t stride, int64_t off[4], float sg[4]) {
#pragma unroll
  for (int x = 0; x < 4; x++) {
    bool flip = false;
    off[x] = cubic_reflect(I - 1 + x, nc, &flip) * stride;
    sg[x] = flip ? -1.0f : 1.0f;
  }
}
/* dim as a template argument keeps the tap arrays in registers (no stack),
 * and __launch_bounds__ caps them at 64 for 4 blocks per SM: at 86 registers
 * the kernel ran at 22% warp occupancy (ncu), 1024^3 7.8 -> 4.7 ms. */
template <typename T, int dim> __global__ void __launch_bounds__(256, 4) k_prolong_cubic(int64_t nf, const T *__restrict__ uc, T *__restrict__ uf) {
  const int64_t nc = nf / 2;
  const int64_t I = blockIdx.x * (int64_t)blockDim.x + threadIdx.x, J = blockIdx.y * (int64_t)blockDim.y + threadIdx.y;
  const int64_t K = dim == 3 ? (int64_t)blockIdx.z : 0;
  if (I >= nc || J >= nc) return;
  const int64_t f1 = nf + 1, f2 = f1 * f1, c1 = nc + 1, c2 = c1 * c1;
  int64_t ox[4], oy[4], oz[4] = {0, 0, 0, 0};
  float sx[4], sy[4], sz[4] = {1, 1, 1, 1};
  cubic_taps(I, nc, 1, ox, sx);
  cubic_taps(J, nc, c1, oy, sy);
  if (dim == 3) cubic_taps(K, nc, c2, oz, sz);
  /* [c][b][a]: fine offsets in z, y, x; the odd z offset is cub over the
   * four coarse planes, accumulated as cub_fin(z0 + z3, z1 + z2) */
  T acc[2][2][2], s03[2][2], s12[2][2];
  const int nz = dim == 3 ? 4 : 1;
#pragma unroll
  for (int z = 0; z < 4; z++) {
    if (z >= nz) break;
    T ry[4][2];                              /* after x: [y][a] */
#pragma unroll
    for (int y = 0; y < 4; y++) {
      const T *row = uc + oz[z] + oy[y];
      const T syz = (T)(sz[z] * sy[y]);
      T v[4];
#pragma unroll
      for (int x = 0; x < 4; x++) v[x] = syz * (T)sx[x] * row[ox[x]]; /* signs: exact */
      ry[y][0] = v[1];
      ry[y][1] = cub(v[0], v[1], v[2], v[3]);
    }
#pragma unroll
    for (int r = 0; r < 2; r++) { /* x offset a = r */
      const T rz[2] = {ry[1][r], cub(ry[0][r], ry[1][r], ry[2][r], ry[3][r])}; /* after y: [b] */
#pragma unroll
      for (int q = 0; q < 2; q++) { /* y offset b = q */
        if (dim == 2 || z == 1) acc[0][q][r] = rz[q];
        if (z == 0) s03[q][r] = rz[q];
        if (z == 1) s12[q][r] = rz[q];
        if (z == 2) s12[q][r] = add_rn(s12[q][r], rz[q]);
        if (z == 3) s03[q][r] = add_rn(s03[q][r], rz[q]);
      }
    }
  }
  if (dim == 3)
#pragma unroll
    for (int q = 0; q < 2; q++)
#pragma unroll
      for (int r = 0; r < 2; r++) acc[1][q][r] = cub_fin(s03[q][r], s12[q][r]);
  const int ncz = dim == 3 ? 2 : 1;
  for (int c = 0; c < ncz; c++) {
    const int64_t k = dim == 3 ? 2 * K + c : 0;
    if (dim == 3 && (k < 1 || k > nf - 1)) continue;
    for (int q = 0; q < 2; q++) {
      const int64_t j = 2 * J + q;
      if (j < 1 || j > nf - 1) continue;
      for (int r = 0; r < 2; r++) {
        const int64_t i = 2 * I + r;
        if (i < 1 || i > nf - 1) continue;
        uf[i + j * f1 + k * f2] = acc[c][q][r];
      }
    }
  }
}

double *g_acc = nullptr; /* device accumulator for reductions */
/* 3D multicolor GS uses k_mcgs_march from this n on (fd_cuda_set_gs_march_min) */
int64_t g_march_min = 256; /* with z-chunks it beats the row kernel from 256^3 on (H200: 0.339 vs 0.371 ms, 2 sweeps) */
/* planes per z-chunk of k_mcgs_march (fd_cuda_set_gs_march_zchunk; 0: march_zchunk's choice) */
int64_t g_march_zchunk = getenv("FD_MARCH_ZCHUNK") ? atoll(getenv("FD_MARCH_ZCHUNK")) : 0; /* env: A/B */
/* block rows per slab of interior_grid (A/B: FD_SLAB_BLOCKS) */
const int64_t g_slab_blocks = getenv("FD_SLAB_BLOCKS") ? atoll(getenv("FD_SLAB_BLOCKS")) : 16;

hpmg_error reduce_begin(void) {
  if (!g_acc) HPMG_CU(cudaMalloc(&g_acc, sizeof(double)));
  HPMG_CU(cudaMemsetAsync(g_acc, 0, sizeof(double)));
  return HPMG_SUCCESS;
}
hpmg_error reduce_end(double *out) {
  HPMG_CU(cudaMemcpy(out, g_acc, sizeof(double), cudaMemcpyDeviceToHost));
  return HPMG_SUCCESS;
}

/* the grid of point(): in 3D, slabs of g_slab_blocks block rows (16: 128
 * rows of points; more where gridDim.z would pass 65535) */
void interior_grid(int dim, int64_t n, dim3 *g, dim3 *b) {
  fd_grid3(n - 1, n - 1, dim == 3 ? n - 1 : 1, g, b);
  if (dim == 3) {
    const int64_t rows = g->y;
    int64_t per = rows < g_slab_blocks ? rows : g_slab_blocks;
    while ((rows + per - 1) / per * (n - 1) > 65535) per++;
    g->y = (unsigned)per;
    g->z = (unsigned)((rows + per - 1) / per * (n - 1));
  }
}

/* planes per z-chunk of k_mcgs_march: g_march_zchunk if set, else the
 * chunk count c that minimizes (waves of c * blocks over the resident
 * slots) x (steps per chunk, with the 2S-plane ring and the 2S-plane tail):
 * one chunk per column left the last wave 19% full at 1024^3 and 67% at
 * 512^3 on the H200's 132 SMs. */
int64_t march_zchunk(int64_t n, int S, int64_t blocks, int slots) {
  if (g_march_zchunk > 0) return g_march_zchunk;
  int64_t best = n - 1;
  double cost = 1e300;
  for (int64_t c = 1; c <= (n - 1) / 32; c++) {
    const int64_t cz = (n - 1 + c - 1) / c, waves = (c * blocks + slots - 1) / slots;
    const double t = (double)waves * (double)(cz + (c > 1 ? 4 * S : 2 * S));
    if (t < cost * 0.999) { cost = t; best = cz; }
  }
  return best;
}

template <typename T, int S, int TY, int M, int P>
hpmg_error march_launch(int64_t n, double om, const void *u, const void *f, void *out, const void *uc) {
  static bool attr = false;
  constexpr size_t sm = march_smem<T, S, TY, M>();
  if (!attr) {
    HPMG_CU(cudaFuncSetAttribute(k_mcgs_march<T, S, TY, M, P>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)sm));
    attr = true;
  }
  constexpr int OX = 64 - 4 * S, OY = TY - 4 * S;
  static int slots = 0; /* blocks resident on the whole GPU */
  if (!slots) {
    int dev, sms, per;
    HPMG_CU(cudaGetDevice(&dev));
    HPMG_CU(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    HPMG_CU(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, k_mcgs_march<T, S, TY, M, P>, 16 * TY, sm));
    slots = sms * (per > 0 ? per : 1);
  }
  const int64_t bx = (n - 1 + OX - 1) / OX, by = (n - 1 + OY - 1) / OY;
  const int cz = (int)march_zchunk(n, S, bx * by, slots);
  const dim3 grid((unsigned)bx, (unsigned)by, (unsigned)((n - 1 + cz - 1) / cz)), block(32u, (unsigned)(TY / 2), 1u);
  const gs_weights<T> gw(3, om);
  k_mcgs_march<T, S, TY, M, P><<<grid, block, sm>>>(n, cz, gw.kw, gw.w, (const T *)u, (const T *)f, (T *)out, (const T *)uc);
  HPMG_CU_LAUNCH();
  return HPMG_SUCCESS;
}
/* mode M as in k_mcgs_march; M = 2 is forward only */
template <typename T, int S, int TY, int M>
hpmg_error march_dir(int64_t n, double om, int backward, const void *u, const void *f, void *out, const void *uc) {
  if constexpr (M == 2) {
    if (backward) return hpmg_error_set(HPMG_ERR_ARG, "fd: the interpolating GS pass is forward only");
    return march_launch<T, S, TY, M, 0>(n, om, u, f, out, uc);
  } else {
    return backward ? march_launch<T, S, TY, M, 1>(n, om, u, f, out, uc) : march_launch<T, S, TY, M, 0>(n, om, u, f, out, uc);
  }
}
/* S = 1 or 2 sweeps per pass, in 32-row tiles (1024^3 on the H200: S = 1
 * in 16-row tiles took 10.5 ms against 8.8, docs/design-decisions.md).
 * What enters: u
 * (mode 0), u + P uc (1), Pc uc (2). */
template <typename T, int S> hpmg_error march_mode(int64_t n, double om, int backward, const void *u, const void *f, void *out,
                                                   const void *uc, int mode) {
  if (mode == 2) return march_dir<T, S, 32, 2>(n, om, backward, u, f, out, uc);
  if (mode == 1) return march_dir<T, S, 32, 1>(n, om, backward, u, f, out, uc);
  return march_dir<T, S, 32, 0>(n, om, backward, u, f, out, nullptr);
}
template <typename T> hpmg_error march(int64_t n, int S, double om, int backward, const void *u, const void *f, void *out,
                                       const void *uc, int mode) {
  return S == 2 ? march_mode<T, 2>(n, om, backward, u, f, out, uc, mode) : march_mode<T, 1>(n, om, backward, u, f, out, uc, mode);
}

/* the z-marching pass: 3D, n from g_march_min on, below 46000 (32-bit
 * offsets in a plane), out of place (needs tmp) */
bool march_ok(int dim, int64_t n, void **tmp) { return dim == 3 && n >= g_march_min && n < 46000 && tmp && *tmp; }
/* one pass of S sweeps (what enters: mode, as in march) into *tmp, then swap u and tmp */
template <typename T> hpmg_error march_pass(int64_t n, int S, double om, int backward, void **u, const void *f, void **tmp,
                                            const void *uc, int mode) {
  HPMG_CALL(march<T>(n, S, om, backward, *u, f, *tmp, uc, mode));
  void *t = *u; *u = *tmp; *tmp = t;
  return HPMG_SUCCESS;
}

template <typename T> struct Ops {
  static hpmg_error residual(int dim, int64_t n, const void *u, const void *f, void *r) {
    dim3 g, b;
    interior_grid(dim, n, &g, &b);
    k_stencil<T><<<g, b>>>(dim, n, 0, (T)0, (const T *)u, (const T *)f, (T *)r);
    HPMG_CU_LAUNCH();
    return HPMG_SUCCESS;
  }
  static hpmg_error residual_norm(int dim, int64_t n, const void *u, const void *f, double *nrm) {
    dim3 g, b;
    fd_grid3(n - 1, n - 1, dim == 3 ? (n - 1 < FD_REDUCE_PLANES ? n - 1 : FD_REDUCE_PLANES) : 1, &g, &b);
    if (g.y > FD_REDUCE_ROWS) g.y = FD_REDUCE_ROWS;
    HPMG_CALL(reduce_begin());
    k_resnorm<T><<<g, b>>>(dim, n, (const T *)u, (const T *)f, g_acc);
    HPMG_CU_LAUNCH();
    HPMG_CALL(reduce_end(nrm));
    *nrm = sqrt(*nrm);
    return HPMG_SUCCESS;
  }
  static hpmg_error apply(int dim, int64_t n, const void *u, void *y) {
    dim3 g, b;
    interior_grid(dim, n, &g, &b);
    k_stencil<T><<<g, b>>>(dim, n, 1, (T)0, (const T *)u, nullptr, (T *)y);
    HPMG_CU_LAUNCH();
    return HPMG_SUCCESS;
  }
  static hpmg_error smooth(int dim, int64_t n, fd_smoother_kind kind, double omega, int sweeps, int backward, void **u,
                           const void *f, void **tmp) {
    dim3 g, b;
    const gs_weights<T> gw(dim, omega); /* the GS kernels' SOR weights */
    for (int s = 0; s < sweeps; s++) {
      if (kind == FD_SMOOTH_JACOBI) {
        interior_grid(dim, n, &g, &b);
        k_stencil<T><<<g, b>>>(dim, n, 2, (T)(omega / (2 * dim)), (const T *)*u, (const T *)f, (T *)*tmp);
        HPMG_CU_LAUNCH();
        void *t = *u; *u = *tmp; *tmp = t;
      } else if (kind == FD_SMOOTH_RBGS) {
        fd_grid3(n / 2, n - 1, dim == 3 ? n - 1 : 1, &g, &b);
        for (int p = 0; p < 2; p++) {
          k_redblack<T><<<g, b>>>(dim, n, backward ? 1 - p : p, gw.kw, gw.w, (T *)*u, (const T *)f);
          HPMG_CU_LAUNCH();
        }
      } else if (march_ok(dim, n, tmp)) {
        /* 2 sweeps per pass (k_mcgs_march), out of place */
        const int S = sweeps - s >= 2 ? 2 : 1;
        HPMG_CALL(march_pass<T>(n, S, omega, backward, u, f, tmp, nullptr, 0));
        s += S - 1;
      } else {
        /* row pairs in color order: (cj,ck) = (0,0),(1,0),(0,1),(1,1); reversed backward */
        const int R = dim == 2 ? 2 : 4;
        const dim3 grid((unsigned)(n / 2), dim == 3 ? (unsigned)(n / 2) : 1u, 1u);
        const unsigned W = n - 1 >= 256 ? 256u : (unsigned)((n - 1 + 31) / 32 * 32);
        for (int p = 0; p < R; p++) {
          const int q = backward ? R - 1 - p : p;
          k_mcgs_rows<T><<<grid, W, sizeof(T) * (2 * W + 4)>>>(dim, n, q & 1, (q >> 1) & 1, backward, gw.kw, gw.w,
                                                               (T *)*u, (const T *)f);
          HPMG_CU_LAUNCH();
        }
      }
    }
    return HPMG_SUCCESS;
  }
  /* k_resrestrict3's pair loads: nf even, u aligned to a pair */
  static bool aligned_pairs(int64_t nf, const void *u) { return nf % 2 == 0 && (uintptr_t)u % (2 * sizeof(T)) == 0; }
  static hpmg_error restrict_rhs(int dim, int64_t nf, const void *rf, void *fc) {
    if (nf / 2 < 2) return HPMG_SUCCESS;
    dim3 g, b;
    interior_grid(dim, nf / 2, &g, &b);
    k_restrict<T, 0><<<g, b>>>(dim, nf, (const T *)rf, nullptr, (T *)fc);
    HPMG_CU_LAUNCH();
    return HPMG_SUCCESS;
  }
  /* k_restrict's mode M = 1 (4R(f - Au)) or 2 (fc += 4R(-Au), f unread):
   * k_resrestrict3 in 3D */
  template <int M> static hpmg_error resrestrict(int dim, int64_t nf, const void *u, const void *f, void *fc) {
    if (nf / 2 < 2) return HPMG_SUCCESS;
    dim3 g, b;
    interior_grid(dim, nf / 2, &g, &b);
    const T *tu = (const T *)u, *tf = (const T *)f;
    if (dim == 3 && aligned_pairs(nf, u)) k_resrestrict3<T, M == 2, true><<<g, b>>>(nf, tf, tu, (T *)fc);
    else if (dim == 3) k_resrestrict3<T, M == 2, false><<<g, b>>>(nf, tf, tu, (T *)fc);
    else k_restrict<T, M><<<g, b>>>(dim, nf, tf, tu, (T *)fc);
    HPMG_CU_LAUNCH();
    return HPMG_SUCCESS;
  }
  static hpmg_error residual_restrict(int dim, int64_t nf, const void *u, const void *f, void *fc) {
    return resrestrict<1>(dim, nf, u, f, fc);
  }
  static hpmg_error restrict_update(int dim, int64_t nf, const void *u, void *fc) {
    return resrestrict<2>(dim, nf, u, nullptr, fc);
  }
  static hpmg_error prolong(int dim, int64_t nf, const void *uc, void *uf, int add) {
    dim3 g, b;
    interior_grid(dim, nf, &g, &b);
    k_prolong<T><<<g, b>>>(dim, nf, (const T *)uc, (T *)uf, add);
    HPMG_CU_LAUNCH();
    return HPMG_SUCCESS;
  }
  static hpmg_error prolong_cubic(int dim, int64_t nf, const void *uc, void *uf) {
    dim3 g, b;
    fd_grid3(nf / 2, nf / 2, dim == 3 ? nf / 2 : 1, &g, &b);
    if (dim == 2) k_prolong_cubic<T, 2><<<g, b>>>(nf, (const T *)uc, (T *)uf);
    else k_prolong_cubic<T, 3><<<g, b>>>(nf, (const T *)uc, (T *)uf);
    HPMG_CU_LAUNCH();
    return HPMG_SUCCESS;
  }
  /* correct_smooth and interp_smooth: where the first sweeps run as a
   * z-marching pass, what enters it (mode 1: u + P uc, 2: Pc uc) is computed
   * inside that pass of min(2, sweeps) sweeps, and the rest follow */
  static bool fusable(int dim, int64_t n, fd_smoother_kind kind, int sweeps, void **tmp) {
    return sweeps >= 1 && kind == FD_SMOOTH_MCGS && march_ok(dim, n, tmp);
  }
  static hpmg_error fused_smooth(int dim, int64_t n, int mode, const void *uc, double omega, int sweeps, int backward,
                                 void **u, const void *f, void **tmp) {
    const int S = sweeps >= 2 ? 2 : 1;
    HPMG_CALL(march_pass<T>(n, S, omega, backward, u, f, tmp, uc, mode));
    return smooth(dim, n, FD_SMOOTH_MCGS, omega, sweeps - S, backward, u, f, tmp);
  }
  static hpmg_error correct_smooth(int dim, int64_t n, const void *uc, fd_smoother_kind kind, double omega, int sweeps,
                                   int backward, void **u, const void *f, void **tmp) {
    if (fusable(dim, n, kind, sweeps, tmp)) return fused_smooth(dim, n, 1, uc, omega, sweeps, backward, u, f, tmp);
    HPMG_CALL(prolong(dim, n, uc, *u, 1));
    return smooth(dim, n, kind, omega, sweeps, backward, u, f, tmp);
  }
  static hpmg_error interp_smooth(int dim, int64_t n, const void *uc, fd_smoother_kind kind, double omega, int sweeps,
                                  void **u, const void *f, void **tmp) {
    if (fusable(dim, n, kind, sweeps, tmp)) return fused_smooth(dim, n, 2, uc, omega, sweeps, 0, u, f, tmp);
    HPMG_CALL(prolong_cubic(dim, n, uc, *u));
    return smooth(dim, n, kind, omega, sweeps, 0, u, f, tmp);
  }
};

#define FD_CUDA_TABLE(T, P)                                                                                  \
  {"cuda", P, Ops<T>::residual, Ops<T>::residual_norm, Ops<T>::apply, Ops<T>::smooth, Ops<T>::restrict_rhs,   \
   Ops<T>::residual_restrict, Ops<T>::restrict_update, Ops<T>::prolong, Ops<T>::prolong_cubic,              \
   Ops<T>::correct_smooth, Ops<T>::interp_smooth}
const fd_ops cuda_ops_d = FD_CUDA_TABLE(double, FD_DOUBLE);
const fd_ops cuda_ops_f = FD_CUDA_TABLE(float, FD_FLOAT);

} // namespace

extern "C" hpmg_error fd_cuda_check_device(void) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0)
    return hpmg_error_set(HPMG_ERR_BACKEND, "fd: --device cuda: no CUDA GPU is visible (%s)",
                          e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
  return HPMG_SUCCESS;
}

__global__ void fd_k_empty(void) {}
__global__ void fd_k_copy(const double2 *__restrict__ x, double2 *__restrict__ y, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    y[i] = x[i];
}

extern "C" hpmg_error fd_cuda_calibrate(double *launch_s, double *gpu_bw, double *link_latency_s, double *link_bw) {
  HPMG_CALL(fd_cuda_check_device());
  const int64_t n2 = (int64_t)1 << 22; /* 64 MiB of double2 per buffer */
  const size_t bytes = sizeof(double2) * (size_t)n2;
  double2 *x = nullptr, *y = nullptr;
  void *h = malloc(bytes);
  if (!h) return hpmg_error_set(HPMG_ERR_MEMORY, "fd: calibration buffer");
  memset(h, 0, bytes);
  hpmg_error e = cudaMalloc(&x, bytes) == cudaSuccess && cudaMalloc(&y, bytes) == cudaSuccess
                     ? HPMG_SUCCESS
                     : hpmg_error_set(HPMG_ERR_MEMORY, "fd: calibration buffers do not fit on the GPU");
  if (!e) e = cudaMemset(x, 0, bytes) == cudaSuccess ? HPMG_SUCCESS : hpmg_error_set(HPMG_ERR_BACKEND, "cudaMemset");
  /* median of 5 (qk_time_median): 100 empty launches, a copy kernel, and
   * pageable copies of 8 bytes (latency) and 64 MiB (bandwidth) down and up */
  auto checked = [](cudaError_t c) {
    return c == cudaSuccess && cudaGetLastError() == cudaSuccess
               ? HPMG_SUCCESS
               : hpmg_error_set(HPMG_ERR_BACKEND, "fd: calibration: %s", cudaGetErrorString(c));
  };
  double t;
  if (!e) e = qk_time_median(5, [&](int) { for (int i = 0; i < 100; i++) fd_k_empty<<<1, 32>>>(); return checked(cudaSuccess); }, &t);
  if (!e) *launch_s = t / 100;
  if (!e) e = qk_time_median(5, [&](int) { fd_k_copy<<<1024, 256>>>(x, y, n2); return checked(cudaSuccess); }, &t);
  if (!e) *gpu_bw = 2.0 * (double)bytes / t;
  if (!e)
    e = qk_time_median(5, [&](int) {
      cudaError_t c = cudaMemcpy(h, x, 8, cudaMemcpyDeviceToHost);
      return checked(c == cudaSuccess ? cudaMemcpy(x, h, 8, cudaMemcpyHostToDevice) : c);
    }, &t);
  if (!e) *link_latency_s = t / 2;
  if (!e)
    e = qk_time_median(5, [&](int) {
      cudaError_t c = cudaMemcpy(h, y, bytes, cudaMemcpyDeviceToHost);
      return checked(c == cudaSuccess ? cudaMemcpy(y, h, bytes, cudaMemcpyHostToDevice) : c);
    }, &t);
  if (!e) *link_bw = 2.0 * (double)bytes / t;
  cudaFree(x);
  cudaFree(y);
  free(h);
  return e;
}

extern "C" int64_t fd_cuda_set_gs_march_min(int64_t n) {
  const int64_t old = g_march_min;
  g_march_min = n;
  return old;
}

extern "C" int64_t fd_cuda_set_gs_march_zchunk(int64_t planes) {
  const int64_t old = g_march_zchunk;
  g_march_zchunk = planes;
  return old;
}

extern "C" hpmg_error fd_ops_cuda(fd_prec prec, const fd_ops **ops) {
  *ops = nullptr;
  HPMG_CALL(fd_cuda_check_device());
  *ops = prec == FD_DOUBLE ? &cuda_ops_d : &cuda_ops_f;
  return HPMG_SUCCESS;
}
